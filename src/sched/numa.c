/* `numa` and `numa-random`: NUMA-distance-ordered stealing (paper 002's
 * DFWSPT and DFWSRPT). Each worker visits the others nearest first, by the
 * topology distance between their PUs (herd__topo_distance: the number of
 * levels that separate them). `numa` breaks ties by worker id, so every
 * thief sweeps the same list; `numa-random` starts each class of equally
 * near victims at a random member, so thieves at the same distance spread
 * over their victims. Tasks are taken from the old end of a victim's deque
 * ("steal from the back"). Spawning stays the owner's LIFO split deque; with
 * HERD_SPAWN=work-first these are the papers' depth-first schedulers. */
#include "sched/victims.h"

static int numa_init(herd__rt *rt) { return herd__victims_sorted(rt, herd__dist_topology); }

static int numa_steal(herd__worker *w, herd__work *out) { return herd__steal_in_order(w, 0, out); }

static int numa_random_steal(herd__worker *w, herd__work *out) {
    return herd__steal_in_order(w, 1, out);
}

const herd__sched_ops herd__sched_numa = {
    .name = "numa",
    .flags = HERD__SCHED_DEQUE | HERD__SCHED_STEALS,
    .init = numa_init,
    .fini = herd__sched_no_fini,
    .steal = numa_steal,
    .describe_victims = herd__victims_describe,
};

const herd__sched_ops herd__sched_numa_random = {
    .name = "numa-random",
    .flags = HERD__SCHED_DEQUE | HERD__SCHED_STEALS,
    .init = numa_init,
    .fini = herd__sched_no_fini,
    .steal = numa_random_steal,
    .describe_victims = herd__victims_describe,
};
