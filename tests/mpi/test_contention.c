/* Contention: many thieves on few tasks, under every lock x split scheme.
 *
 * Three chains of CHAIN_LEN steps start on rank 0; each step queues the next
 * step and then one leaf (at most 6 tasks exist at any time). So every rank
 * holds only a handful of tasks at a time, and the other ranks are nearly
 * always idle and stealing: release (Q2), reacquire (Q4) and steals (Q5)
 * interleave all the time, the chains hop from rank to rank, and the ring
 * (16 slots, the minimum) wraps every few tasks. Some tasks yield the CPU
 * (chosen by a hash of their id) to shake the schedule. Every task has a
 * dense index; each rank marks the tasks it ran, and the marks summed over
 * ranks must all be exactly 1 (exactly once, not just a matching count).
 * --hybrid: the same in hybrid mode, 2 herd workers per rank (pool.md
 * H1-H8): workers push and pop while the comm thread releases, reacquires
 * and steals. */
#include "../common/check.h"
#include "herd/pool.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { CHAINS = 3, CHAIN_LEN = 800, NTASKS = CHAINS * CHAIN_LEN * 2 };

typedef struct step {
    int32_t chain, i, leaf;
} step;

static int STEP_CLASS;
static _Atomic unsigned char seen[NTASKS];
static int hybrid;

static void spin_us(int us) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void run_step(herd_pool *p, void *arg, size_t size) {
    CHECK_EQ(size, sizeof(step));
    step s;
    memcpy(&s, arg, sizeof s);
    int idx = (s.chain * CHAIN_LEN + s.i) * 2 + s.leaf;
    CHECK(idx >= 0 && idx < NTASKS);
    atomic_fetch_add_explicit(&seen[idx], 1, memory_order_relaxed);
    if (check_mix64((uint64_t)idx) % 8 == 0)
        sched_yield();
    spin_us(s.leaf ? 40 : 2); /* while a leaf runs, the next step waits in the public part */
    if (s.leaf || s.i + 1 == CHAIN_LEN)
        return;
    step leaf = {s.chain, s.i, 1}, next = {s.chain, s.i + 1, 0};
    /* The next step deeper (thieves take the oldest: it bounces between
     * ranks), the leaf on top: at most two tasks per chain exist at once. */
    step *slot = herd_pool_task_alloc(p, STEP_CLASS, sizeof next);
    CHECK(slot != NULL);
    *slot = next;
    CHECK_OK(herd_pool_task_commit(p));
    CHECK_OK(herd_pool_add(p, STEP_CLASS, &leaf, sizeof leaf));
}

static void run(herd_pool_lock lock, herd_pool_split split, uint64_t attempts[1]) {
    herd_pool_config cfg;
    herd_pool_config_init(&cfg);
    cfg.lock = lock;
    cfg.split = split;
    cfg.queue_capacity = 16;
    cfg.release_min = 1;
    cfg.hybrid = hybrid ? 1 : -1;
    herd_pool *p;
    CHECK_OK(herd_pool_create(MPI_COMM_WORLD, &cfg, &p));
    CHECK_OK(herd_pool_register(p, "step", run_step, &STEP_CLASS));
    int rank = herd_pool_rank(p);
    for (int i = 0; i < NTASKS; i++)
        atomic_store_explicit(&seen[i], 0, memory_order_relaxed);
    if (rank == 0)
        for (int c = 0; c < CHAINS; c++) {
            step s = {c, 0, 0};
            CHECK_OK(herd_pool_add(p, STEP_CLASS, &s, sizeof s));
        }
    CHECK_OK(herd_pool_process(p));
    static unsigned char mine_seen[NTASKS], sum[NTASKS];
    for (int i = 0; i < NTASKS; i++)
        mine_seen[i] = atomic_load_explicit(&seen[i], memory_order_relaxed);
    MPI_Reduce(mine_seen, sum, NTASKS, MPI_UNSIGNED_CHAR, MPI_SUM, 0, MPI_COMM_WORLD);
    herd_pool_stats mine, all;
    CHECK_OK(herd_pool_stats_get(p, &mine, &all));
    if (rank == 0) {
        /* Leaves of the last step are never made: CHAINS of them. */
        for (int i = 0; i < NTASKS; i++)
            CHECK_EQ(sum[i], (i % 2 == 1 && (i / 2) % CHAIN_LEN == CHAIN_LEN - 1) ? 0 : 1);
        STEP("%slock %-8s steal %-4s: %llu tasks, %llu steals (%llu tasks), %llu failed, %llu "
             "aborted, %llu releases, %llu reacquires",
             hybrid ? "hybrid " : "", herd_pool_lock_name(lock), herd_pool_split_name(split),
             (unsigned long long)all.tasks_executed, (unsigned long long)all.steals,
             (unsigned long long)all.tasks_stolen, (unsigned long long)all.steals_failed,
             (unsigned long long)all.steals_aborted, (unsigned long long)all.releases,
             (unsigned long long)all.reacquires);
    }
    CHECK_EQ(all.tasks_executed, NTASKS - CHAINS);
    CHECK_EQ(all.tasks_added, NTASKS - CHAINS);
    attempts[0] += all.steals + all.steals_failed + all.steals_aborted;
    CHECK_OK(herd_pool_destroy(p));
}

int main(int argc, char **argv) {
    hybrid = argc > 1 && strcmp(argv[1], "--hybrid") == 0;
    if (hybrid) {
        int level;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &level);
        herd_config hc = {.workers = 2, .bind = "none"};
        CHECK_OK(herd_start(&hc));
    } else {
        MPI_Init(&argc, &argv);
    }
    uint64_t attempts = 0;
    for (int l = HERD_POOL_LOCK_TICKET; l <= HERD_POOL_LOCK_ABORTING; l++)
        for (int s = HERD_POOL_SPLIT_ONE; s <= HERD_POOL_SPLIT_HALF; s++)
            run((herd_pool_lock)l, (herd_pool_split)s, &attempts);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Idle ranks try to steal for the whole run: attempts cannot be zero. */
    if (size > 1)
        CHECK(attempts > 0);
    if (hybrid)
        CHECK_OK(herd_stop());
    MPI_Finalize();
    return 0;
}
