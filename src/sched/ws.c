/* `ws` and `ws-nearest`: flat work stealing (paper 000 "WS"). The owner
 * works LIFO on its own split deque (core/task.c); a thief takes the oldest
 * public task (FIFO) or a task waiting in the victim's ready queue. Paper
 * 000 probed victims two ways, with equivalent results: `ws` picks victims
 * uniformly at random, `ws-nearest` starts at the nearest worker id and
 * goes outwards. */
#include "sched/victims.h"

#include <stdio.h>

static int ws_init(herd__sched_env *env) {
    (void)env;
    return 0;
}

static int ws_steal(herd__sched_worker *w, herd__work *out) {
    int n = w->env->nworkers;
    for (int attempt = 0; attempt < 2 * n; attempt++) {
        int v = (int)(herd__rand(w) % (uint64_t)(n - 1));
        if (v >= w->id)
            v++;
        if (herd__steal_from(w, v, out) == HERD__STEAL_OK)
            return 1;
    }
    return 0;
}

static void ws_describe(const herd__sched_env *env, int worker, char *buf, size_t len) {
    (void)worker;
    if (env->nworkers < 2)
        snprintf(buf, len, "none (no other worker)");
    else
        snprintf(buf, len, "random, uniform over the other %d workers", env->nworkers - 1);
}

const herd__sched_ops herd__sched_ws = {
    .name = "ws",
    .flags = HERD__SCHED_STEALS | HERD__SCHED_WORK_FIRST,
    .init = ws_init,
    .fini = herd__sched_no_fini,
    .steal = ws_steal,
    .describe_victims = ws_describe,
};

static int nearest_init(herd__sched_env *env) {
    return herd__victims_sorted(env, herd__dist_ids, NULL);
}

static int nearest_steal(herd__sched_worker *w, herd__work *out) {
    return herd__steal_in_order(w, 0, out);
}

const herd__sched_ops herd__sched_ws_nearest = {
    .name = "ws-nearest",
    .flags = HERD__SCHED_STEALS | HERD__SCHED_WORK_FIRST,
    .init = nearest_init,
    .fini = herd__sched_no_fini,
    .steal = nearest_steal,
    .describe_victims = herd__victims_describe,
};
