/* The shared-queue schedulers of paper 000: `fifo` ("Q"), `lifo` ("L") and
 * `central` ("CQ").
 *
 *  fifo, lifo  one queue per shepherd (by default one shepherd per core,
 *              as in the paper; HERD_SHEPHERD changes the level). A new
 *              task goes to the next shepherd round robin; a worker takes
 *              from its own shepherd's queue only, oldest first (fifo) or
 *              newest first (lifo). No stealing: load balance comes from
 *              the round-robin placement alone. Tasks never go to a
 *              worker's own deque: herd_spawn's inline path is closed
 *              (runtime.c) and every spawn lands in a queue.
 *  central     one LIFO queue for all workers, filled on demand as mts's
 *              shepherd queues are (mts.c): a spawn goes to the worker's
 *              deque, and a worker that finds the queue empty asks every
 *              other worker to share the older half of its queued tasks
 *              into it. Tasks suspended and resumed on a busy worker may
 *              also be taken by any idle one.
 *
 * A task queued for another shepherd may find that shepherd's workers
 * asleep, and only they may take it: such pushes wake every sleeper
 * (herd__wake_for_shepherd). */
#include "sched/victims.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct queues {
    int nqueues;
    int take_front; /* fifo */
    herd__tq q[];
} queues;

static queues *data_of(const herd__sched_env *env) {
    return (queues *)env->data;
}

static int queues_init(herd__sched_env *env, int nqueues, int take_front) {
    queues *d =
        aligned_alloc(64, (sizeof(queues) + (size_t)nqueues * sizeof(herd__tq) + 63) / 64 * 64);
    if (!d)
        return HERD_ENOMEM;
    d->nqueues = nqueues;
    d->take_front = take_front;
    for (int i = 0; i < nqueues; i++)
        herd__tq_init(&d->q[i]);
    env->data = d;
    return 0;
}

static void queues_fini(herd__sched_env *env) {
    queues *d = data_of(env);
    for (int i = 0; i < env->nworkers; i++)
        env->workers[i].shares_into = NULL; /* central's */
    for (int i = 0; i < d->nqueues; i++) {
        /* herd_stop runs after every run finished: the queues are empty. */
        HERD_ASSERT(herd__tq_size(&d->q[i]) == 0);
        herd__tq_fini(&d->q[i]);
    }
    free(d);
    env->data = NULL;
}

/* The queue worker w takes from. */
static herd__tq *own_queue(herd__sched_worker *w) {
    queues *d = data_of(w->env);
    return &d->q[d->nqueues == 1 ? 0 : w->shepherd];
}

/* fifo's bounded breadth: a queue that holds this many tasks takes new
 * ones at its front, where its workers take next. Breadth-first order made
 * every task started wait for children queued behind all the others, each
 * waiting parent holding a stack: the 10^7-task random tree (stress_dag, 2
 * workers) peaked at 717 MB. Past the bound the queue goes depth-first,
 * and the frontier stops growing. Nothing runs out of turn: a task still
 * starts only when a worker takes it. */
#define FIFO_BREADTH 1024u

static int push_at(herd__sched_worker *w, int qi, herd_fn fn, void *parent, uint16_t kind,
                   const void *arg, size_t size) {
    queues *d = data_of(w->env);
    herd__tq *q = &d->q[qi];
    int at_front = d->take_front && herd__tq_size(q) >= FIFO_BREADTH;
    return herd__qtask_push_at(q, at_front, fn, parent, kind, arg, size);
}

static int queues_take(herd__sched_worker *w, herd__work *out) {
    return herd__qtask_pop(own_queue(w), data_of(w->env)->take_front, out);
}

/* lifo, central: the back of the worker's queue is what it takes next. */
static int lifo_take_child(herd__sched_worker *w, const void *join, herd__taskcopy *out) {
    return herd__qtask_pop_child(own_queue(w), join, out);
}

static int queues_has_work(herd__sched_worker *w) {
    return herd__tq_size(own_queue(w)) != 0;
}

/* ---------------------------------------------------------- fifo, lifo */

static int per_shepherd_push(herd__sched_worker *w, herd_fn fn, void *parent, uint16_t kind,
                             const void *arg, size_t size) {
    const herd__sched_env *env = w->env;
    /* While an OpenMP team has only workers 0..serving-1 take shared work
     * (G1, core/worker.c), the round robin goes over those workers'
     * shepherds: a task queued at a shepherd with none of them waited for
     * the region's end, which waited for the task (a team of one thread
     * on two shepherds: omp.detach@fifo hung). ORDER: relaxed; pairs with
     * the seq_cst store of herd__serve_hold, which the team's encountering
     * thread makes before it places the members (a box's release, X1, or
     * a queue's lock, taken by the member), so every task of the region
     * pushes under its value; it changes again only at the next hold or
     * when work comes from outside a team (G4), after the region's tasks
     * ended. */
    int serving = atomic_load_explicit(env->serving, memory_order_relaxed);
    int s = serving < env->nworkers ? env->workers[w->rr++ % (unsigned)serving].shepherd
                                    : (int)(w->rr++ % (unsigned)env->nshepherds);
    int rc = push_at(w, s, fn, parent, kind, arg, size);
    if (rc == 0)
        herd__wake_for_shepherd(env->rt, s); /* W3 */
    return rc;
}

static int fifo_init(herd__sched_env *env) {
    return queues_init(env, env->nshepherds, 1);
}
static int lifo_init(herd__sched_env *env) {
    return queues_init(env, env->nshepherds, 0);
}

static void no_victims(const herd__sched_env *env, int worker, char *buf, size_t len) {
    (void)env;
    (void)worker;
    snprintf(buf, len, "none (no stealing; new tasks go round robin over the shepherds)");
}

const herd__sched_ops herd__sched_fifo = {
    .name = "fifo",
    .shepherd_level = HERD__LVL_CORE,
    .init = fifo_init,
    .fini = queues_fini,
    .push = per_shepherd_push,
    .take = queues_take,
    .has_work = queues_has_work,
    .describe_victims = no_victims,
};

const herd__sched_ops herd__sched_lifo = {
    .name = "lifo",
    .shepherd_level = HERD__LVL_CORE,
    .init = lifo_init,
    .fini = queues_fini,
    .push = per_shepherd_push,
    .take = queues_take,
    .take_child = lifo_take_child,
    .has_work = queues_has_work,
    .describe_victims = no_victims,
};

/* ------------------------------------------------------------- central */

static int central_init(herd__sched_env *env) {
    int rc = queues_init(env, 1, 0);
    for (int i = 0; rc == 0 && i < env->nworkers; i++)
        env->workers[i].shares_into = &data_of(env)->q[0];
    return rc;
}

/* Filled on demand, as mts's shepherd queues are (mts.c): a spawn goes to
 * the worker's deque, and a worker that finds the queue empty asks the
 * others to share. */
static void central_share(herd__sched_worker *w) {
    herd__share_into(w, &data_of(w->env)->q[0]);
}

static int central_take(herd__sched_worker *w, herd__work *out) {
    if (queues_take(w, out))
        return 1;
    herd__ask_share(w->env, NULL, w->env->nworkers, w->id);
    return 0;
}

/* Resumed tasks waiting on another worker's ready queue, then what a
 * rescue published on a deque. */
static int central_steal(herd__sched_worker *w, herd__work *out) {
    int n = w->env->nworkers;
    for (int k = 1; k < n; k++) {
        if (herd__steal_ready(w, (w->id + k) % n, out)) {
            herd__sched_count(w->attempts);
            return 1;
        }
    }
    return herd__steal_rescued(w, out);
}

static void central_describe(const herd__sched_env *env, int worker, char *buf, size_t len) {
    (void)env;
    (void)worker;
    snprintf(buf, len, "one shared queue; resumed tasks from the next worker ids on");
}

const herd__sched_ops herd__sched_central = {
    .name = "central",
    .flags = HERD__SCHED_DEQUE,
    .init = central_init,
    .fini = queues_fini,
    .share = central_share,
    .take = central_take,
    .take_child = lifo_take_child,
    .steal = central_steal,
    .has_work = queues_has_work,
    .describe_victims = central_describe,
};
