/* The shared-queue schedulers of paper 000: `fifo` ("Q"), `lifo` ("L") and
 * `central` ("CQ").
 *
 *  lifo        one LIFO queue per shepherd (by default one shepherd per
 *              core, as in the paper; HERD_SHEPHERD changes the level),
 *              filled on demand as central's is: a spawn goes to the
 *              worker's deque (newest first, as the paper's LIFO queue),
 *              and a worker that finds its shepherd's queue empty asks
 *              every other worker to share. The asked worker deals the
 *              older half of its queued tasks round robin over the
 *              shepherds' queues, in contiguous parts (herd__share_dealt),
 *              leaving out its own shepherd when it is its only worker;
 *              with nothing on its deque, the older half of its shepherd's
 *              queue (redeal). A worker takes from its deque and its own
 *              shepherd's queue only, newest first. No stealing: the
 *              round-robin deal is the load balance. Placing every task
 *              round robin as it was created (the paper's Qthreads did)
 *              made half of all spawns write another core's queue and half
 *              of all waits suspend for a child running elsewhere: fib(35)
 *              both on 2 workers took 246x ws's time, and the 10^7-task
 *              random tree held up to 69 MB of suspended parents' stacks.
 *  fifo        lifo's queues and deals, in the other order: a worker takes
 *              its shepherd's queue oldest first, a wait runs its task's
 *              children oldest first (HERD__SCHED_OLDEST_FIRST: the wait
 *              reverses them on the deque, core/task.c), and what a wait
 *              reversed is dealt in spawn order (herd__sdq_spawn_order).
 *              Until round 25 fifo placed every task round robin at its
 *              creation and a wait suspended for children queued behind
 *              all older tasks: about 60x ws's time on fib, and the random
 *              tree's suspended parents peaked at 40-66 MB.
 *  central     one LIFO queue for all workers, filled on demand as mts's
 *              shepherd queues are (mts.c): a spawn goes to the worker's
 *              deque, and a worker that finds the queue empty asks every
 *              other worker to share the older half of its queued tasks
 *              into it. Tasks suspended and resumed on a busy worker may
 *              also be taken by any idle one.
 *
 * A task queued for another shepherd may find that shepherd's workers
 * asleep, and only they may take it: such pushes wake every sleeper
 * (herd__wake_for_shepherd). All three take what a rescue published on a
 * deque (herd__steal_rescued): a worker that spins in user code would
 * otherwise keep its deque's tasks from everyone; fifo and lifo rescue a
 * queue's tasks likewise (queue_rescue). */
#include "sched/victims.h"

#include "arch/os.h"

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
    for (int i = 0; i < env->nworkers; i++) {
        env->workers[i].shares_into = NULL;
        env->workers[i].nshares_into = 0;
    }
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

static int queues_take(herd__sched_worker *w, herd__work *out) {
    return herd__qtask_pop(own_queue(w), data_of(w->env)->take_front, out);
}

/* lifo, central: the back of the worker's queue is what it takes next. */
static int lifo_take_child(herd__sched_worker *w, const void *join, herd__taskcopy *out) {
    return herd__qtask_pop_child(own_queue(w), join, out);
}

/* The queue rescue (fifo, lifo; only where idle workers may rescue at
 * all, env->rescue_after_ns: the OpenMP layer's runtime). A worker takes
 * tasks only from its own shepherd's queue, but OpenMP lets a task spin,
 * with no scheduling point, until another thread has started a task it
 * created: if that task sits in the spinning worker's own queue (dealt
 * there), only another thread can start it,
 * and none may. So, as the deque rescue does for a deque's private tasks
 * (core/rescue.c: after rescue_after_ns of searching in vain), a worker
 * that finds no other work watches the next other shepherd's queue that
 * holds tasks; when nothing was taken from it for rescue_after_ns, it
 * takes its oldest task (the first not held: redeal), and watches
 * again. From outside, a worker spinning for such a task and one running
 * a long task look the same: both lose a task after that long, as under
 * the deque rescue. */
static int queue_rescue_on(const herd__sched_worker *w) {
    return w->env->rescue_after_ns && data_of(w->env)->nqueues > 1;
}

/* Another shepherd's queue that holds tasks, the next after `from`. */
static int next_loaded(herd__sched_worker *w, int from) {
    queues *d = data_of(w->env);
    for (int k = 1; k <= d->nqueues; k++) {
        int s = (from + k) % d->nqueues;
        if (s != w->shepherd && herd__tq_size(&d->q[s]))
            return s;
    }
    return -1;
}

static int queue_rescue(herd__sched_worker *w, herd__work *out) {
    if (!queue_rescue_on(w))
        return 0;
    queues *d = data_of(w->env);
    uint64_t now = herd__now_ns();
    int s = w->watch_q - 1;
    /* ORDER: relaxed; taken and size are hints: a stale view delays a
     * rescue or re-arms a watch, and the pop below takes the lock. */
    if (s < 0 || !herd__tq_size(&d->q[s]) ||
        atomic_load_explicit(&d->q[s].taken, memory_order_relaxed) != w->watch_taken) {
        s = next_loaded(w, s < 0 ? w->shepherd : s);
        w->watch_q = s + 1;
        if (s >= 0) {
            w->watch_taken = atomic_load_explicit(&d->q[s].taken, memory_order_relaxed);
            w->watch_since = now;
        }
        return 0;
    }
    if (now - w->watch_since < w->env->rescue_after_ns || !herd__qtask_pop(&d->q[s], 1, out))
        return 0;
    w->watch_q = 0; /* our own take moved `taken`: watch afresh */
    out->victim = -1;
    out->victim_shepherd = s;
    out->ntasks = 1;
    return 1;
}

static int queues_has_work(herd__sched_worker *w) {
    if (herd__tq_size(own_queue(w)))
        return 1;
    /* Under the queue rescue a worker stays awake while another shepherd's
     * queue holds tasks: sleeping, it would never look again. */
    return queue_rescue_on(w) && next_loaded(w, w->shepherd) >= 0;
}

/* fifo's and lifo's steal: no stealing, only rescues (what a rescue
 * published on a deque; a queue that made no progress). */
static int dealt_steal(herd__sched_worker *w, herd__work *out) {
    return herd__steal_rescued(w, out) || queue_rescue(w, out);
}

/* ---------------------------------------------------------- fifo, lifo */

/* The next shepherd of the round robin (fifo's and lifo's deal). */
static int next_shepherd(herd__sched_worker *w) {
    const herd__sched_env *env = w->env;
    /* While an OpenMP team has only workers 0..serving-1 take shared work
     * (G1, core/worker.c), the round robin goes over those workers'
     * shepherds: a task queued at a shepherd with none of them waited for
     * the region's end, which waited for the task (a team of one thread
     * on two shepherds: omp.detach@fifo hung). ORDER: relaxed; pairs with
     * the seq_cst store of herd__serve_hold, which the team's encountering
     * thread makes before it places the members (a box's release, X1, or
     * a queue's lock, taken by the member), so every task of the region
     * is placed under its value; it changes again only at the next hold or
     * when work comes from outside a team (G4), after the region's tasks
     * ended. */
    int serving = atomic_load_explicit(env->serving, memory_order_relaxed);
    return serving < env->nworkers ? env->workers[w->rr++ % (unsigned)serving].shepherd
                                   : (int)(w->rr++ % (unsigned)env->nshepherds);
}

static int dealt_init(herd__sched_env *env, int take_front) {
    int rc = queues_init(env, env->nshepherds, take_front);
    /* The OpenMP throttle's count (herd__self_queued_reach): every shepherd's
     * queue, where the worker deals its tasks, with the others' deals. Its
     * own shepherd's alone missed what it dealt elsewhere: a creator whose
     * mate took one task and then spun in it dealt it all 2,000 tasks and
     * never ran one itself (LLVM's omp_fill_taskqueue.c, throttling on). */
    for (int i = 0; rc == 0 && i < env->nworkers; i++) {
        env->workers[i].shares_into = data_of(env)->q;
        env->workers[i].nshares_into = data_of(env)->nqueues;
    }
    return rc;
}
static int fifo_init(herd__sched_env *env) {
    return dealt_init(env, 1);
}
static int lifo_init(herd__sched_env *env) {
    return dealt_init(env, 0);
}

/* Is w its shepherd's only worker, with other shepherds to deal to? */
static int alone(const herd__sched_worker *w) {
    return data_of(w->env)->nqueues > 1 && w->env->shepherds[w->shepherd].nworkers == 1;
}

/* A shepherd of the deal: the round robin's next, but never the sharer's
 * own when it is that shepherd's only worker (the task would only come
 * back to it, and a creator that spins until another thread starts its
 * task, as OpenMP allows, would wait forever). */
static int deal_shepherd(herd__sched_worker *w) {
    int s = next_shepherd(w);
    for (int k = 0; s == w->shepherd && alone(w) && k < w->env->nworkers; k++)
        s = next_shepherd(w); /* the serving workers may all be on this one */
    return s;
}

/* The answer of a worker asked while its deque is empty (it takes from its
 * queue): the older half of its shepherd's queue, where deals put tasks,
 * dealt over the other shepherds as a share is. Without it a worker that
 * had been dealt many tasks kept them all, and the one that asked idled
 * (no stealing). The tasks stay queued, held, while they are dealt (a
 * rescue, queue_rescue, may take from the queue meanwhile, but not them),
 * then the dealt ones leave: out of memory, the rest simply stay. Only the
 * shepherd's only worker does it, so there is one holder at a time. */
static void redeal(herd__sched_worker *w) {
    queues *d = data_of(w->env);
    herd__tq *own = own_queue(w);
    uint32_t n = herd__tq_size(own) / 2; /* keeps the last one: giving it away gains nothing */
    if (n == 0)
        return; /* the request stands: a worker that asked may sleep until it is answered (W2) */
    if (n > HERD__SHARE_BATCH)
        n = HERD__SHARE_BATCH;
    /* ORDER: relaxed; cleared before the moves, as S3 does: a request
     * raised after this is seen at a later take. */
    atomic_store_explicit(&w->q->split_req, 0, memory_order_relaxed);
    void *batch[HERD__SHARE_BATCH];
    n = herd__tq_hold_front(own, batch, n);
    for (uint32_t i = 0; i < n; i++)
        ((herd__qtask *)batch[i])->from = w->id; /* held: nobody else takes them now */
    uint32_t queued = herd__deal(w, batch, n, d->q, d->nqueues - 1, deal_shepherd);
    herd__tq_release_front(own, queued);
}

/* The owner's answer to a request, at a spawn or a wait: deal its older
 * tasks over the shepherds, one part per shepherd it deals to; with none
 * queued on its deque, the older half of its shepherd's queue (a task that
 * runs a queued task and ends, as most leaves do, answers here, and a
 * request it answered from an empty deque was lost: one worker ran 4,726
 * of OpenMP alignment's 4,950 tasks while the other idled). */
static void dealt_share(herd__sched_worker *w) {
    queues *d = data_of(w->env);
    if (alone(w) && !herd__sdq_oldest_private(w->q))
        redeal(w);
    else
        herd__share_dealt(w, d->q, d->nqueues - alone(w), deal_shepherd);
}

static int dealt_take(herd__sched_worker *w, herd__work *out) {
    /* ORDER: relaxed; a hint, as the spawn path's S3 check reads it. */
    if (atomic_load_explicit(&w->q->split_req, memory_order_relaxed) && alone(w))
        redeal(w);
    if (queues_take(w, out))
        return 1;
    herd__ask_share(w->env, NULL, w->env->nworkers, w->id);
    return 0;
}

static void dealt_describe(const herd__sched_env *env, int worker, char *buf, size_t len) {
    (void)env;
    (void)worker;
    snprintf(buf, len, "none (no stealing; shared tasks are dealt round robin over the shepherds)");
}

const herd__sched_ops herd__sched_fifo = {
    .name = "fifo",
    .flags = HERD__SCHED_OLDEST_FIRST,
    .shepherd_level = HERD__LVL_CORE,
    .init = fifo_init,
    .fini = queues_fini,
    .share = dealt_share,
    .take = dealt_take,
    .steal = dealt_steal,
    .has_work = queues_has_work,
    .describe_victims = dealt_describe,
};

const herd__sched_ops herd__sched_lifo = {
    .name = "lifo",
    .shepherd_level = HERD__LVL_CORE,
    .init = lifo_init,
    .fini = queues_fini,
    .share = dealt_share,
    .take = dealt_take,
    .take_child = lifo_take_child,
    .steal = dealt_steal,
    .has_work = queues_has_work,
    .describe_victims = dealt_describe,
};

/* ------------------------------------------------------------- central */

static int central_init(herd__sched_env *env) {
    int rc = queues_init(env, 1, 0);
    for (int i = 0; rc == 0 && i < env->nworkers; i++) {
        env->workers[i].shares_into = &data_of(env)->q[0];
        env->workers[i].nshares_into = 1;
    }
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
    .init = central_init,
    .fini = queues_fini,
    .share = central_share,
    .take = central_take,
    .take_child = lifo_take_child,
    .steal = central_steal,
    .has_work = queues_has_work,
    .describe_victims = central_describe,
};
