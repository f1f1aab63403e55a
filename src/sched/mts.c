/* `mts`: multithreaded shepherds (paper 000 §3.2, "MTS"). One shepherd per
 * chip by default (HERD_SHEPHERD's level, L3); the workers of a shepherd
 * share one LIFO queue, which keeps them close to serial order on the cache
 * they share. When a shepherd's queue runs dry, only the first of its
 * workers to notice steals (a flag taken by CAS), and it steals in bulk
 * from the old end of another shepherd's queue, nearest shepherd first:
 * enough tasks for the whole shepherd (by default one per worker;
 * HERD_STEAL=one, half or chunk:N to tune). It keeps one and puts the rest
 * on its own shepherd's queue; the other workers of the shepherd, which
 * found the flag taken, spin in the idle loop until the stolen work
 * appears. Stealing is only between shepherds; within a shepherd the
 * workers share the queue, and take each other's resumed tasks.
 *
 * The shared queue is filled on demand (docs/design/scheduler-seam.md,
 * "mts"). A spawn goes to the worker's own deque, on the inline path, and
 * the worker's waits run its children from there as plain calls, newest
 * first: the queue's LIFO order for the worker's own tasks, at ws's cost.
 * A worker that finds the shared queue empty asks its shepherd-mates (their
 * deques' split_req); a remote thief that finds a shepherd's queue empty
 * asks that shepherd's workers. An asked worker, at its next spawn or wait,
 * moves the older half of its queued tasks to its shepherd's queue (S7 in
 * docs/design/split-deque.md): no thief ever touches a deque, and every
 * task another worker runs has passed through a shepherd's queue, LIFO
 * within the shepherd, the oldest first to other shepherds. Putting every
 * spawn on the shared queue costs a lock, an allocation and most often a
 * suspension of the parent per task, because a shepherd-mate takes the
 * newest task as soon as it is queued: 30-55x ws on fib(27) on 2 workers. */
#include "sched/victims.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct mts_shepherd {
    herd__tq q;
    _Atomic int stealing; /* 1 while one of the shepherd's workers steals */
    int *order;           /* other shepherds, nearest first */
} mts_shepherd;

static mts_shepherd *shep_of(const herd__sched_env *env, int s) {
    return &((mts_shepherd *)env->data)[s];
}

/* Distance between two shepherds: between their first workers' PUs. */
static int shep_distance(const herd__sched_env *env, int a, int b) {
    return herd__dist_topology(env, NULL, env->shepherds[a].workers[0],
                               env->shepherds[b].workers[0]);
}

static void mts_fini(herd__sched_env *env) {
    for (int i = 0; i < env->nworkers; i++) {
        env->workers[i].shares_into = NULL;
        env->workers[i].nshares_into = 0;
    }
    for (int s = 0; s < env->nshepherds; s++) {
        HERD_ASSERT(herd__tq_size(&shep_of(env, s)->q) == 0);
        herd__tq_fini(&shep_of(env, s)->q);
        free(shep_of(env, s)->order);
    }
    free(env->data);
    env->data = NULL;
}

static int mts_init(herd__sched_env *env) {
    int n = env->nshepherds;
    size_t bytes = ((size_t)n * sizeof(mts_shepherd) + 63) / 64 * 64;
    env->data = aligned_alloc(64, bytes);
    if (!env->data)
        return HERD_ENOMEM;
    for (int s = 0; s < n; s++) {
        mts_shepherd *sh = shep_of(env, s);
        herd__tq_init(&sh->q);
        atomic_init(&sh->stealing, 0);
        sh->order = malloc((size_t)(n > 1 ? n - 1 : 1) * sizeof(int));
    }
    for (int i = 0; i < env->nworkers; i++) {
        env->workers[i].shares_into = &shep_of(env, env->workers[i].shepherd)->q;
        env->workers[i].nshares_into = 1;
    }
    for (int s = 0; s < n; s++) {
        int *order = shep_of(env, s)->order, k = 0;
        if (!order) {
            mts_fini(env);
            return HERD_ENOMEM;
        }
        /* Insertion sort by (distance, index). */
        for (int v = 0; v < n; v++) {
            if (v == s)
                continue;
            int j = k++;
            while (j > 0 && shep_distance(env, s, order[j - 1]) > shep_distance(env, s, v)) {
                order[j] = order[j - 1];
                j--;
            }
            order[j] = v;
        }
    }
    return 0;
}

/* Ask every worker of shepherd s but `self` to share. */
static void ask_shepherd(const herd__sched_env *env, int s, int self) {
    herd__ask_share(env, env->shepherds[s].workers, env->shepherds[s].nworkers, self);
}

static void mts_share(herd__sched_worker *w) {
    herd__share_into(w, &shep_of(w->env, w->shepherd)->q);
}

static int mts_take(herd__sched_worker *w, herd__work *out) {
    if (herd__qtask_pop(&shep_of(w->env, w->shepherd)->q, 0, out))
        return 1;
    ask_shepherd(w->env, w->shepherd, w->id);
    return 0;
}

/* The shared queue is LIFO: a waiting task's newest child is next for w. */
static int mts_take_child(herd__sched_worker *w, const void *join, herd__taskcopy *out) {
    return herd__qtask_pop_child(&shep_of(w->env, w->shepherd)->q, join, out);
}

/* How many tasks one steal moves for a shepherd of n workers. */
static uint32_t chunk_for(const herd__sched_env *env, int n, uint32_t victim_size) {
    switch (env->steal) {
    case HERD__TAKE_ONE:
        return 1;
    case HERD__TAKE_CHUNK:
        return (uint32_t)env->steal_chunk;
    case HERD__TAKE_HALF:
        return (victim_size + 1) / 2;
    default:
        return (uint32_t)n;
    }
}

#define MTS_BATCH 256 /* tasks moved per lock acquisition */

/* Move up to want tasks from the front (oldest) of victim shepherd v's
 * queue: the oldest into out, the rest onto the back of our queue. */
static uint32_t steal_chunk(herd__sched_worker *w, int v, uint32_t want, herd__work *out) {
    herd__tq *mine = &shep_of(w->env, w->shepherd)->q, *theirs = &shep_of(w->env, v)->q;
    void *batch[MTS_BATCH];
    uint32_t got = 0;
    while (got < want) {
        uint32_t ask = want - got < MTS_BATCH ? want - got : MTS_BATCH;
        uint32_t n = herd__tq_take_front(theirs, batch, ask);
        if (n == 0)
            break;
        uint32_t i = 0;
        if (got == 0)
            herd__qtask_take(batch[i++], out);
        for (; i < n; i++) {
            /* Now this shepherd's: a mate's take of it counts as a steal
             * from w (this steal counts once, for all it moved). */
            ((herd__qtask *)batch[i])->from = w->id;
            if (herd__tq_push(mine, batch[i], 0) != 0) {
                /* Out of memory for the ring: give the rest back, in order. */
                for (uint32_t j = n; j-- > i;)
                    while (herd__tq_push(theirs, batch[j], 1) != 0)
                        herd__cpu_relax();
                return got + i;
            }
        }
        got += n;
    }
    return got;
}

static int mts_steal(herd__sched_worker *w, herd__work *out) {
    const herd__sched_env *env = w->env;
    const herd__shepherd *home = &env->shepherds[w->shepherd];
    /* Within the shepherd: resumed tasks of its other workers. */
    for (int k = 0; k < home->nworkers; k++) {
        int v = home->workers[k];
        if (v == w->id)
            continue;
        if (herd__steal_ready(w, v, out)) {
            herd__sched_count(w->attempts);
            return 1;
        }
    }
    mts_shepherd *sh = shep_of(env, w->shepherd);
    int expect = 0;
    /* One thief per shepherd. ORDER: acquire/release on the flag only
     * serialise the thieves; the tasks travel through the queues' locks. */
    if (atomic_load_explicit(&sh->stealing, memory_order_relaxed) ||
        !atomic_compare_exchange_strong_explicit(&sh->stealing, &expect, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return 0;
    int found = 0;
    for (int k = 0; k < env->nshepherds - 1 && !found; k++) {
        int v = sh->order[k];
        uint32_t size = herd__tq_size(&shep_of(env, v)->q);
        if (size == 0) {
            ask_shepherd(env, v, -1); /* its workers may hold tasks not shared yet */
            continue;
        }
        herd__sched_count(w->attempts);
        uint32_t got = steal_chunk(w, v, chunk_for(env, home->nworkers, size), out);
        if (got == 0) {
            herd__sched_count(w->failed); /* the probe saw work, the lock found none */
            continue;
        }
        out->victim = -1;
        out->victim_shepherd = v;
        out->ntasks = got;
        found = 1;
        if (got > 1)
            herd__wake_for_shepherd(env->rt, w->shepherd); /* W3 for the shepherd-mates */
    }
    atomic_store_explicit(&sh->stealing, 0, memory_order_release);
    return found || herd__steal_rescued(w, out);
}

static int mts_has_work(herd__sched_worker *w) {
    for (int s = 0; s < w->env->nshepherds; s++)
        if (herd__tq_size(&shep_of(w->env, s)->q))
            return 1;
    return 0;
}

static void mts_describe(const herd__sched_env *env, int worker, char *buf, size_t len) {
    int s = env->workers[worker].shepherd;
    size_t o = 0;
    int n = snprintf(buf, len, "shares shepherd %d's queue; steals for it from shepherds", s);
    if (n < 0 || (size_t)n >= len)
        return;
    o = (size_t)n;
    if (env->nshepherds == 1) {
        snprintf(buf + o, len - o, " (none: one shepherd)");
        return;
    }
    for (int k = 0; k < env->nshepherds - 1; k++) {
        n = snprintf(buf + o, len - o, " %d", shep_of(env, s)->order[k]);
        if (n < 0 || (size_t)n >= len - o)
            return;
        o += (size_t)n;
    }
}

const herd__sched_ops herd__sched_mts = {
    .name = "mts",
    .flags = HERD__SCHED_STEALS | HERD__SCHED_SHEPHERD_READY,
    .init = mts_init,
    .fini = mts_fini,
    .share = mts_share,
    .take = mts_take,
    .take_child = mts_take_child,
    .steal = mts_steal,
    .has_work = mts_has_work,
    .describe_victims = mts_describe,
};

/* For tests (tests/unit/test_sched.c): hold or release a shepherd's thief
 * flag, as a steal in progress would. */
void herd__mts_hold_steal(herd__sched_env *env, int shepherd, int held) {
    /* ORDER: release, as mts_steal's clearing store (pairs with its CAS). */
    atomic_store_explicit(&shep_of(env, shepherd)->stealing, held, memory_order_release);
}
