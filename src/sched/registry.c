/* The scheduler table: every scheduler exports one herd__sched_ops. */
#include "sched/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const herd__sched_ops herd__sched_ws, herd__sched_ws_nearest, herd__sched_numa,
    herd__sched_numa_random, herd__sched_hier, herd__sched_mts, herd__sched_central,
    herd__sched_lifo, herd__sched_fifo;

/* The one list of herd's schedulers: HERD_SCHED's names (with "auto"),
 * `herd --help`, the refusal messages below and the test matrix's check
 * (unit.sched) all come from it. */
static const herd__sched_ops *const schedulers[] = {
    &herd__sched_ws,          &herd__sched_ws_nearest, &herd__sched_numa,
    &herd__sched_numa_random, &herd__sched_hier,       &herd__sched_mts,
    &herd__sched_central,     &herd__sched_lifo,       &herd__sched_fifo,
};
#define NSCHED (sizeof schedulers / sizeof schedulers[0])

int herd__sched_names(const char **out, int max, unsigned need_flags) {
    int n = 0;
    if (!need_flags && n < max)
        out[n++] = "auto";
    for (size_t i = 0; i < NSCHED && n < max; i++)
        if ((schedulers[i]->flags & need_flags) == need_flags)
            out[n++] = schedulers[i]->name;
    return n;
}

void herd__sched_names_joined(char *buf, size_t len, unsigned need_flags) {
    const char *names[HERD__SCHED_MAX];
    int n = herd__sched_names(names, HERD__SCHED_MAX, need_flags);
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && o < len; i++) {
        int w = snprintf(buf + o, len - o, "%s%s", i ? ", " : "", names[i]);
        if (w < 0)
            break;
        o += (size_t)w;
    }
}

/* `auto`: ws when all the workers sit in one domain of the shepherd level
 * (one L3 by default): there is no locality between them for a smarter
 * victim order to keep, and ws's random victims spread the thieves best.
 * Otherwise hier, which keeps ws's spawn path and steals within the
 * innermost shared domain before crossing to the next (paper 004).
 * This rule comes from the design, not from measurements on a multi-socket
 * machine (none was available); docs/reference/environment.md, HERD_SCHED, says so. */
static const char *auto_choice(const herd__sched_env *env, herd__level level) {
    const int *dom = env->topo->domain[level];
    for (int i = 1; i < env->nworkers; i++)
        if (dom[env->pu_of_worker[i]] != dom[env->pu_of_worker[0]])
            return "hier";
    return "ws";
}

const herd__sched_ops *herd__sched_find(const char *name, const herd__sched_env *env,
                                        herd__level level) {
    if (!name || !*name || strcmp(name, "auto") == 0)
        name = env ? auto_choice(env, level) : "ws";
    for (size_t i = 0; i < NSCHED; i++)
        if (strcmp(schedulers[i]->name, name) == 0)
            return schedulers[i];
    return NULL;
}

static void free_orders(herd__sched_env *env) {
    for (int i = 0; i < env->nworkers; i++) {
        herd__sched_worker *sw = &env->workers[i];
        free(sw->order);
        free(sw->class_end);
        sw->order = sw->class_end = NULL;
        sw->norder = sw->nclasses = 0;
    }
}

int herd__sched_start(const herd__sched_ops *s, herd__sched_env *env) {
    if (s->init(env) != 0) {
        free_orders(env);
        return HERD_ENOMEM;
    }
    env->ready = 1;
    return 0;
}

void herd__sched_stop(const herd__sched_ops *s, herd__sched_env *env) {
    if (env->ready)
        s->fini(env);
    env->ready = 0;
    if (env->workers)
        free_orders(env);
}
