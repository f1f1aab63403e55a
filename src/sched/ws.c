/* `ws`: flat work stealing (paper 000 "WS"). The owner works LIFO on its own
 * split deque (core/task.c); a thief picks victims uniformly at random among
 * the other workers and takes the oldest public task (FIFO), or a resumed
 * task waiting in the victim's ready queue. */
#include "core/runtime.h"

#include <stdio.h>

static int ws_init(herd__rt *rt) {
    (void)rt;
    return 0;
}

static void ws_fini(herd__rt *rt) { (void)rt; }

static int ws_steal(herd__worker *w, herd__work *out) {
    herd__rt *rt = w->rt;
    int n = rt->nworkers;
    for (int attempt = 0; attempt < 2 * n; attempt++) {
        int v = (int)(herd__rand(w) % (uint64_t)(n - 1));
        if (v >= w->id)
            v++;
        herd__worker *victim = &rt->workers[v];
        HERD__COUNT(w, steal_attempts);
        herd__ult *u = herd__readyq_pop(&victim->ready);
        if (u) {
            out->ult = u;
            out->victim = v;
            out->taken = 1;
            return 1;
        }
        herd__steal_result r = herd__sdq_steal(&victim->hot.q, &out->task);
        if (r == HERD__STEAL_OK) {
            out->ult = NULL;
            out->victim = v;
            out->taken = 1;
            if (herd__sdq_public_size(&victim->hot.q))
                herd__wake_one(rt); /* W4 */
            return 1;
        }
        if (r == HERD__STEAL_RETRY)
            HERD__COUNT(w, failed_steals);
    }
    return 0;
}

static void ws_describe(herd__rt *rt, int worker, char *buf, size_t len) {
    (void)worker;
    snprintf(buf, len, "random, uniform over the other %d workers", rt->nworkers - 1);
}

const herd__sched_ops herd__sched_ws = {
    .name = "ws",
    .init = ws_init,
    .fini = ws_fini,
    .steal = ws_steal,
    .describe_victims = ws_describe,
};
