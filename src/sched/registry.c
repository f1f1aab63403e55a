/* The scheduler table: every scheduler exports one herd__sched_ops. */
#include "core/runtime.h"

#include <stdio.h>
#include <string.h>

extern const herd__sched_ops herd__sched_ws, herd__sched_ws_nearest, herd__sched_numa,
    herd__sched_numa_random, herd__sched_hier, herd__sched_mts, herd__sched_central,
    herd__sched_lifo, herd__sched_fifo;

static const herd__sched_ops *const schedulers[] = {
    &herd__sched_ws,   &herd__sched_ws_nearest, &herd__sched_numa,
    &herd__sched_numa_random, &herd__sched_hier, &herd__sched_mts,
    &herd__sched_central, &herd__sched_lifo, &herd__sched_fifo,
};
#define NSCHED (sizeof schedulers / sizeof schedulers[0])

/* `auto`: ws when all the workers sit in one domain of the shepherd level
 * (one L3 by default): there is no locality between them for a smarter
 * victim order to keep, and ws's random victims spread the thieves best.
 * Otherwise hier, which keeps ws's spawn path and steals within the
 * innermost shared domain before crossing to the next (paper 004).
 * This rule comes from the design, not from measurements on a multi-socket
 * machine (none was available); README "Choosing a scheduler" says so. */
static const char *auto_choice(const herd__rt *rt) {
    const int *dom = rt->topo.domain[rt->set.shepherd];
    for (int i = 1; i < rt->nworkers; i++)
        if (dom[rt->pu_of_worker[i]] != dom[rt->pu_of_worker[0]])
            return "hier";
    return "ws";
}

const herd__sched_ops *herd__sched_find(const char *name, const herd__rt *rt) {
    if (!name || !*name || strcmp(name, "auto") == 0)
        name = rt ? auto_choice(rt) : "ws";
    for (size_t i = 0; i < NSCHED; i++)
        if (strcmp(schedulers[i]->name, name) == 0)
            return schedulers[i];
    return NULL;
}

#define STEALING_DEQUES "ws, ws-nearest, numa, numa-random, hier"

int herd__sched_check(const herd__sched_ops *s, const herd__settings *set) {
    int deque_stealer = (s->flags & HERD__SCHED_DEQUE) && (s->flags & HERD__SCHED_STEALS);
    if (set->spawn == HERD__SPAWN_WORK_FIRST && !deque_stealer) {
        fprintf(stderr,
                "herd: HERD_SPAWN=work-first: not with HERD_SCHED=%s, which queues new tasks "
                "in shared queues; work-first needs a work-stealing scheduler: %s\n",
                s->name, STEALING_DEQUES);
        return HERD_EINVAL;
    }
    if (set->steal != HERD__TAKE_DEFAULT && !(s->flags & HERD__SCHED_STEALS)) {
        fprintf(stderr,
                "herd: HERD_STEAL: not with HERD_SCHED=%s, which does not steal; HERD_STEAL "
                "applies to: %s, mts\n",
                s->name, STEALING_DEQUES);
        return HERD_EINVAL;
    }
    if (set->spawn == HERD__SPAWN_WORK_FIRST &&
        (set->steal == HERD__TAKE_HALF || set->steal == HERD__TAKE_CHUNK)) {
        fprintf(stderr, "herd: HERD_STEAL: with HERD_SPAWN=work-first a steal takes one "
                        "parent continuation (a suspended task); accepted: one\n");
        return HERD_EINVAL;
    }
    return 0;
}
