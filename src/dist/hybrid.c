/* src/dist/hybrid.c -- the pool's hybrid mode: one rank per node (or NUMA
 * domain), its tasks run by every worker of the herd runtime, ranks stealing
 * from each other only when a rank's queue runs dry (docs/design/pool.md,
 * steps H1-H7).
 *
 * Roles. The thread that calls herd_pool_process() is the comm thread: it
 * makes every MPI call (releases, reacquires, steals, termination votes) and
 * runs no task. Each herd worker runs one pool worker, a herd task that pops
 * tasks from the rank's private part under the local lock and runs them.
 * herd_run() blocks its caller, so a helper thread calls it and the comm
 * thread stays free.
 *
 * Rejected: the comm thread running tasks too (a long task would delay the
 * node's releases and steals); one herd task per pool task (a pool task must
 * stay stealable by other ranks until it starts, and no rank can read a herd
 * deque); MPI_THREAD_MULTIPLE with workers publishing their own releases
 * (an MPI call per push, inside the local lock). */
#include "dist/pool_internal.h"

#include "arch/spin.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *thread_level_name(int level) {
    switch (level) {
    case MPI_THREAD_SINGLE:
        return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
        return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
        return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
        return "MPI_THREAD_MULTIPLE";
    default:
        return "an unknown level";
    }
}

int herd__pool_hybrid_check(herd_pool *p) {
    if (herd_num_workers() <= 0) {
        fprintf(stderr,
                "herd pool: rank %d: hybrid mode (HERD_POOL_HYBRID=1 or "
                "herd_pool_config.hybrid) runs tasks on the herd workers: call "
                "herd_start() before herd_pool_create()\n",
                p->rank);
        return HERD_EINVAL;
    }
    int level = MPI_THREAD_SINGLE, main_thread = 0;
    MPI_Query_thread(&level);
    MPI_Is_thread_main(&main_thread);
    if (level < MPI_THREAD_FUNNELED || (level == MPI_THREAD_FUNNELED && !main_thread)) {
        fprintf(stderr,
                "herd pool: rank %d: hybrid mode needs MPI_Init_thread with "
                "MPI_THREAD_FUNNELED or better (the pool's thread makes the MPI calls while "
                "herd workers run tasks); this process has %s%s\n",
                p->rank, thread_level_name(level),
                level == MPI_THREAD_FUNNELED ? " and the pool is not on the main thread" : "");
        return HERD_EINVAL;
    }
    return HERD_OK;
}

/* An idle pool worker: let the herd tasks of this worker run (H8), spin a
 * little (a task may come at once), then give the CPU away, then sleep in
 * short naps (H7). */
static void worker_pause(unsigned dry) {
    herd_yield();
    if (dry < 64) {
        for (int i = 0; i < 64; i++)
            herd__cpu_relax();
    } else if (dry < 1024) {
        sched_yield();
    } else {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

/* One per herd worker: run the rank's tasks until the pool terminates. */
static void pool_worker(void *arg) {
    herd_pool *p = *(herd_pool **)arg;
    char *buf = malloc(p->slot_size);
    if (!buf) {
        fprintf(stderr, "herd pool: rank %d: no memory for a worker's task buffer\n", p->rank);
        MPI_Abort(MPI_COMM_WORLD, 2); /* only the comm thread may call MPI, but we are dying */
    }
    uint64_t executed = 0;
    double active = 0;
    unsigned dry = 0;
    int finished = 0;
    /* ORDER: acquire; pairs with the release store of done in
     * herd__pool_process_hybrid() (H6); nothing is read after it but our own. */
    while (!atomic_load_explicit(&p->done, memory_order_acquire)) {
        /* H3: running++ under lq when a task is taken; running-- for the
         * task we finished, in the same hold: after that task's pushes (each
         * under lq), so that "empty and nothing running" (H6) means no task
         * can appear but by a steal. */
        int got = herd__pool_pop_after(p, buf, finished);
        finished = 0;
        if (!got) {
            worker_pause(++dry);
            continue;
        }
        dry = 0;
        herd__pool_run(p, buf, &active);
        finished = 1;
        /* H8: a pool task that waited for herd tasks may be ready again
         * behind us; let it (and herd tasks) run now and then. */
        if (++executed % 16 == 0)
            herd_yield();
    }
    /* done is set only when the rank was idle (H6): nothing left to count out. */
    pthread_mutex_lock(&p->lq);
    p->st.tasks_executed += executed;
    p->st.time_active += active;
    pthread_mutex_unlock(&p->lq);
    free(buf);
}

/* The helper thread's root task: one pool worker per herd worker, each a
 * task of its own (H8: a pool task's herd_wait() then waits for that pool
 * worker's children only, never for a sibling pool worker). */
static void workers_root(void *arg) {
    herd_pool *p = *(herd_pool **)arg;
    int spawned = 0;
    for (int i = 0; i < herd_num_workers(); i++)
        spawned += herd_spawn(pool_worker, &p, sizeof p) == HERD_OK;
    if (spawned == 0)
        pool_worker(arg); /* no descriptor at all: run one here */
    herd_wait();
}

static void *helper_main(void *arg) {
    herd_pool *p = arg;
    int rc = herd_run(workers_root, &p, sizeof p);
    if (rc != HERD_OK) {
        fprintf(stderr, "herd pool: rank %d: herd_run of the pool workers failed: %s\n", p->rank,
                herd_strerror(rc));
        abort();
    }
    return NULL;
}

static void nap(long ns) {
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

/* The comm thread's loop (H4-H7). Returns when the pool terminated. */
void herd__pool_process_hybrid(herd_pool *p) {
    double t0 = herd__pool_now();
    p->comm_thread = pthread_self();
    atomic_store_explicit(&p->done, 0, memory_order_relaxed);
    pthread_t helper;
    if (pthread_create(&helper, NULL, helper_main, p) != 0) {
        fprintf(stderr, "herd pool: rank %d: cannot start the pool workers' thread\n", p->rank);
        MPI_Abort(p->comm, 2);
    }
    uint64_t fails = 0, turns = 0;
    for (;;) {
        turns++;
        pthread_mutex_lock(&p->lq);
        int64_t nlocal = p->head - p->split, pending = p->pending;
        int running = p->running;
        pthread_mutex_unlock(&p->lq);
        if (pending)
            herd__pool_insert_pending(p); /* H5 */
        int want = atomic_exchange_explicit(&p->want_tail, 0, memory_order_relaxed);
        int64_t seen = atomic_load_explicit(&p->tail_seen, memory_order_relaxed);
        if (want || (seen < p->wsplit && nlocal >= p->cfg.release_min && turns % 4 == 0)) {
            herd__pool_read_tail(p);
            /* ORDER: release; pairs with the acquire loads in the waiting
             * worker (queue.c, worker_ring_full): it sees our tail_seen. */
            if (want)
                atomic_fetch_add_explicit(&p->tail_epoch, 1, memory_order_release);
            seen = atomic_load_explicit(&p->tail_seen, memory_order_relaxed);
        }
        if (nlocal > 0) {
            /* H4: publish half when the public part is empty (Q2). */
            if (nlocal >= p->cfg.release_min && nlocal >= 2 && seen >= p->wsplit) {
                herd__pool_release(p, nlocal / 2);
                continue;
            }
            herd__pool_term_poll(p);
            fails = 0;
            nap(50000); /* H7: the workers are busy; nothing for MPI to do */
            continue;
        }
        if (pending)
            continue;
        /* The private part is empty: take back public work (Q4) first. */
        if (herd__pool_reacquire(p) > 0)
            continue;
        if (running == 0) {
            /* H6: empty, nothing running, nothing pending: only our own steals
             * can add work now, so we may vote. */
            if (herd__pool_term_idle(p))
                break;
        } else {
            herd__pool_term_poll(p);
        }
        /* H5: the rank's queue is dry: steal across ranks. */
        if (p->size > 1 && herd__pool_steal(p, herd__pool_random_victim(p)) > 0) {
            fails = 0;
            continue;
        }
        if (++fails < (uint64_t)p->size * 64)
            sched_yield();
        else
            nap(20000);
    }
    /* ORDER: release; pairs with the workers' acquire loads (H6). */
    atomic_store_explicit(&p->done, 1, memory_order_release);
    pthread_join(helper, NULL);
    double wall = herd__pool_now() - t0;
    /* Worker-seconds: efficiency = active / total as in flat mode. */
    p->st.time_total = wall * herd_num_workers();
    p->st.time_search = p->st.time_total - p->st.time_active;
}
