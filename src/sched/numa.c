/* `numa` and `numa-random`: NUMA-distance-ordered stealing (paper 002's
 * DFWSPT and DFWSRPT). Each worker visits the others nearest first:
 *  - across NUMA nodes by the machine's NUMA distance matrix (hwloc's
 *    latency matrix, the SLIT on real machines; an XML topology may carry
 *    one), ranked into hop classes by herd__prio_compute (topo/numaprio.c),
 *    so a machine with several hop classes is visited one class at a time;
 *  - within a class by herd's tree distance (the levels that separate two
 *    PUs: shared core, cache, node, package), so siblings come first.
 * Without a matrix covering every PU the hop classes are those of the tree
 * distance itself, and the order is the tree distance's alone. `numa`
 * breaks ties by worker id, so every thief sweeps the same list;
 * `numa-random` starts each class of equally near victims at a random
 * member (DFWSRPT), so thieves at the same distance spread over their
 * victims. Tasks are taken from the old end of a victim's deque ("steal
 * from the back"). Spawning stays the owner's LIFO split deque; with
 * HERD_SPAWN=work-first these are the papers' depth-first schedulers.
 * `herd topo --sched numa` prints each worker's classes. */
#include "sched/victims.h"

#include <stdio.h>

/* (hop class, tree distance) as one sortable key. */
static int dist_numa(const herd__sched_env *env, const void *ctx, int a, int b) {
    const herd__prio *pr = ctx;
    int pa = env->pu_of_worker[a], pb = env->pu_of_worker[b];
    int tree = herd__topo_distance(env->topo, pa, pb);
    if (pa == pb) /* oversubscribed: two workers on one PU are nearest */
        return tree;
    return (herd__prio_hop(pr, env->topo, pa, pb) + 1) * (HERD__NLEVELS + 1) + tree;
}

static int numa_init(herd__sched_env *env) {
    herd__prio pr;
    char err[256];
    int rc = herd__prio_compute(env->topo, &pr, err, sizeof err);
    if (rc) {
        fprintf(stderr, "herd: HERD_SCHED=numa: %s\n", err);
        return rc;
    }
    rc = herd__victims_sorted(env, dist_numa, &pr);
    herd__prio_free(&pr);
    return rc;
}

static int numa_steal(herd__sched_worker *w, herd__work *out) {
    return herd__steal_in_order(w, 0, out);
}

static int numa_random_steal(herd__sched_worker *w, herd__work *out) {
    return herd__steal_in_order(w, 1, out);
}

const herd__sched_ops herd__sched_numa = {
    .name = "numa",
    .flags = HERD__SCHED_STEALS | HERD__SCHED_WORK_FIRST,
    .init = numa_init,
    .fini = herd__sched_no_fini,
    .steal = numa_steal,
    .describe_victims = herd__victims_describe,
};

const herd__sched_ops herd__sched_numa_random = {
    .name = "numa-random",
    .flags = HERD__SCHED_STEALS | HERD__SCHED_WORK_FIRST,
    .init = numa_init,
    .fini = herd__sched_no_fini,
    .steal = numa_random_steal,
    .describe_victims = herd__victims_describe,
};
