/* `hier`: hierarchical work stealing over nested groups (paper 004 §2.2,
 * Figure 2). The groups are the topology's domains: the workers on the
 * same PU, core, L2, L3, NUMA node, package, machine (levels that do not
 * split the workers any further are skipped). An idle worker first visits
 * the other members of its innermost group, then the rest of each enclosing
 * group in turn. Within a group the visit starts at the member that sits
 * where the thief sits in its own subgroup, one subgroup on (Figure 2's
 * `(MyID + GroupSize[Level-1]) % GroupSize[Level]`), and wraps around: so
 * thieves of different subgroups start at different victims and the
 * accesses to a group's queues spread evenly. */
#include "sched/victims.h"

#include <stdlib.h>
#include <string.h>

/* First-level placement (paper 004 §2.2, the PSTHREADS scheme): a task that
 * a herd_run root spawns (the first level of parallelism) goes round robin
 * over the workers to the back of each worker's queue; every other task
 * goes to the front of its creator's queue (herd_spawn's own deque, as in
 * ws). A worker takes from the front: its deque first, then its
 * first-level tasks, oldest first. A thief takes from the back: a victim's
 * newest first-level task before anything in its deque. Inner tasks thus
 * stay on the worker that made them, and the first level spreads over the
 * machine as it is spawned rather than one steal at a time.
 *
 * The back of worker i's queue is back[i], a locked queue (task_queue.h);
 * the front is worker i's split deque. */
static herd__tq *back_of(const herd__sched_env *env) {
    return (herd__tq *)env->data;
}

static int hier_place_first_level(herd__sched_worker *w, herd_fn fn, void *parent, const void *arg,
                                  size_t size) {
    herd__sched_env *env = w->env;
    /* Round robin from the spawning worker on: the first child stays. */
    int target = (int)((unsigned)(w->id + (int)w->rr++) % (unsigned)env->nworkers);
    if (herd__qtask_push(&back_of(env)[target], fn, parent, HERD__KIND_TASK, arg, size) != 0)
        return HERD_ENOMEM;
    herd__wake_one(env->rt); /* W3: the target, or any thief, may take it */
    return 0;
}

static int hier_take(herd__sched_worker *w, herd__work *out) {
    return herd__qtask_pop(&back_of(w->env)[w->id], 1, out);
}

/* W2's recheck: a first-level task anywhere can be taken or stolen by w. */
static int hier_has_work(herd__sched_worker *w) {
    herd__tq *back = back_of(w->env);
    for (int i = 0; i < w->env->nworkers; i++)
        if (herd__tq_size(&back[i]))
            return 1;
    return 0;
}

/* Victim v: the back of its queue (its newest first-level task), then what
 * every stealing scheduler tries (its ready queue, its deque's old end). */
static herd__steal_result hier_attempt(herd__sched_worker *w, int v, herd__work *out) {
    if (!herd__qtask_pop(&back_of(w->env)[v], 0, out))
        return herd__steal_from(w, v, out);
    herd__sched_count(w->attempts);
    out->victim = v;
    out->victim_shepherd = w->env->workers[v].shepherd;
    out->ntasks = 1;
    return HERD__STEAL_OK;
}

/* The workers that share worker i's domain at level l, ascending; returns
 * their number and sets *pos to i's place among them. */
static int group_of(const herd__sched_env *env, int l, int i, int *members, int *pos) {
    const int *dom = env->topo->domain[l];
    int mine = dom[env->pu_of_worker[i]], m = 0;
    for (int v = 0; v < env->nworkers; v++) {
        if (dom[env->pu_of_worker[v]] != mine)
            continue;
        if (v == i)
            *pos = m;
        members[m++] = v;
    }
    return m;
}

/* Append worker i's visiting order; members and visited are scratch of
 * nworkers entries. Groups are taken smallest first: the levels of the
 * tree nest (PU in core in L3 in package), but a NUMA node may hold
 * several packages or sit inside one, so level order alone is not size
 * order. Equal sizes are the same group (nested sets). */
static void visit_order(herd__sched_env *env, int i, int *members, char *visited) {
    herd__sched_worker *w = &env->workers[i];
    int size[HERD__NLEVELS + 1], pos = 0;
    for (int l = HERD__LVL_MACHINE; l <= HERD__LVL_PU; l++)
        size[l] = group_of(env, l, i, members, &pos);
    memset(visited, 0, (size_t)env->nworkers);
    visited[i] = 1;
    int prev = 0;
    for (;;) {
        int next = 0; /* the innermost level of the smallest size above prev */
        for (int l = HERD__LVL_PU; l >= HERD__LVL_MACHINE; l--)
            if (size[l] > prev && (!next || size[l] < size[next]))
                next = l;
        if (!next)
            break;
        int m = group_of(env, next, i, members, &pos);
        int start = prev ? (pos + prev) % m : pos;
        for (int k = 0; k < m; k++) {
            int v = members[(start + k) % m];
            if (!visited[v]) {
                visited[v] = 1;
                herd__victims_add(w, v);
            }
        }
        herd__victims_close(w);
        prev = m;
    }
}

static void hier_fini(herd__sched_env *env);

static int hier_init(herd__sched_env *env) {
    int n = env->nworkers;
    herd__tq *back = aligned_alloc(64, (size_t)n * sizeof(herd__tq));
    if (!back)
        return HERD_ENOMEM;
    for (int i = 0; i < n; i++)
        herd__tq_init(&back[i]);
    env->data = back;
    int *members = malloc((size_t)n * sizeof(int));
    char *visited = malloc((size_t)n);
    int rc = members && visited ? 0 : HERD_ENOMEM;
    for (int i = 0; i < n && rc == 0; i++) {
        rc = herd__victims_alloc(&env->workers[i], n - 1);
        if (rc == 0)
            visit_order(env, i, members, visited);
    }
    free(members);
    free(visited);
    if (rc)
        hier_fini(env); /* herd__sched_stop runs fini only after a successful init */
    return rc;
}

static void hier_fini(herd__sched_env *env) {
    herd__tq *back = back_of(env);
    if (!back)
        return;
    for (int i = 0; i < env->nworkers; i++) {
        /* herd_stop runs after every run finished: the queues are empty. */
        HERD_ASSERT(herd__tq_size(&back[i]) == 0);
        herd__tq_fini(&back[i]);
    }
    free(back);
    env->data = NULL;
}

static int hier_steal(herd__sched_worker *w, herd__work *out) {
    return herd__steal_in_order_with(w, 0, hier_attempt, out);
}

const herd__sched_ops herd__sched_hier = {
    .name = "hier",
    .flags = HERD__SCHED_STEALS | HERD__SCHED_WORK_FIRST,
    .init = hier_init,
    .fini = hier_fini,
    .take = hier_take,
    .place_first_level = hier_place_first_level,
    .has_work = hier_has_work,
    .steal = hier_steal,
    .describe_victims = herd__victims_describe,
};
