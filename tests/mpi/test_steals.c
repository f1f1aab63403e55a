/* Cross-rank steals happen and move work, under every lock x split scheme.
 *
 * test_exact proves that every task runs exactly once; a pool whose steals
 * never succeed passes it (rank 0 runs everything). Here work can only reach
 * another rank by a steal: rank 0 holds every task, and its root task keeps
 * adding leaves (each add may publish some, paper 001's release policy) and
 * does not return until every other rank has run a leaf. So each scheme
 * passes only if thieves took tasks from rank 0's queue (or from each other)
 * while rank 0 was busy, and the counters must agree: the leaves run on
 * other ranks all came by steals, each counted by its thief.
 *
 * Rank 0 keeps at most OUTSTANDING leaves queued, adding one as another rank
 * runs one, so a rank the OS leaves unscheduled for a while still finds
 * work when it runs. The wait is bounded (WAIT_SECONDS): a pool that cannot
 * steal fails with a message instead of hanging. Rank 0 calls MPI while it waits
 * (it reads counters in its own window), which gives an MPI library that
 * needs the target's progress for passive-target operations that progress. */
#include "../common/check.h"
#include "herd/pool.h"

#include <string.h>
#include <time.h>

#define OUTSTANDING 64 /* leaves in rank 0's queue at most (far below its capacity) */
#define WAIT_SECONDS 60

static int ROOT, LEAF;
static int nranks;
static MPI_Win seen_win;      /* rank 0: leaves run by each rank so far */
static int64_t *seen;         /* its memory, one counter per rank (used on rank 0) */
static uint64_t leaves_here;  /* leaves this rank ran, this scheme */
static uint64_t leaves_added; /* rank 0: leaves its root added, this scheme */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rank 0: the leaves run on other ranks so far; *idle: ranks with none. */
static int64_t read_seen(int *idle) {
    int64_t total = 0, v, zero = 0;
    *idle = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, seen_win);
    for (int r = 1; r < nranks; r++) {
        MPI_Fetch_and_op(&zero, &v, MPI_INT64_T, 0, r, MPI_NO_OP, seen_win);
        MPI_Win_flush(0, seen_win);
        total += v;
        *idle += v == 0;
    }
    MPI_Win_unlock(0, seen_win);
    return total;
}

static void leaf(herd_pool *p, void *arg, size_t size) {
    (void)arg;
    CHECK_EQ(size, sizeof(int));
    leaves_here++;
    if (herd_pool_rank(p) != 0) {
        int64_t one = 1, old;
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, seen_win);
        MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, herd_pool_rank(p), MPI_SUM, seen_win);
        MPI_Win_unlock(0, seen_win);
    }
}

static void root(herd_pool *p, void *arg, size_t size) {
    (void)arg;
    (void)size;
    CHECK_EQ(herd_pool_rank(p), 0);
    /* The leaves sit in this rank's queue; only thieves can run them now. */
    double give_up = now() + WAIT_SECONDS;
    int idle;
    for (int64_t moved = read_seen(&idle); idle > 0; moved = read_seen(&idle)) {
        if ((int64_t)leaves_added - moved < OUTSTANDING) {
            int i = (int)leaves_added++;
            CHECK_OK(herd_pool_add(p, LEAF, &i, sizeof i));
        }
        if (now() > give_up) {
            fprintf(stderr,
                    "%d of %d other ranks ran no task of rank 0 within %d s (%llu added): "
                    "steals did not move work\n",
                    idle, nranks - 1, WAIT_SECONDS, (unsigned long long)leaves_added);
            CHECK(!"every rank stole");
        }
    }
}

static void run(herd_pool_lock lock, herd_pool_split split) {
    herd_pool_config cfg;
    herd_pool_config_init(&cfg);
    cfg.lock = lock;
    cfg.split = split;
    herd_pool *p;
    CHECK_OK(herd_pool_create(MPI_COMM_WORLD, &cfg, &p));
    CHECK_OK(herd_pool_register(p, "root", root, &ROOT));
    CHECK_OK(herd_pool_register(p, "leaf", leaf, &LEAF));
    int rank = herd_pool_rank(p);
    if (rank == 0) { /* a local access epoch makes the stores visible to RMA */
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, seen_win);
        memset(seen, 0, (size_t)nranks * sizeof *seen);
        MPI_Win_unlock(0, seen_win);
    }
    leaves_here = leaves_added = 0;
    MPI_Barrier(MPI_COMM_WORLD); /* the counter is zero before any rank runs */
    int unused = 0;
    if (rank == 0)
        CHECK_OK(herd_pool_add(p, ROOT, &unused, sizeof unused));
    CHECK_OK(herd_pool_process(p));

    uint64_t elsewhere = rank == 0 ? 0 : leaves_here, moved, total, added;
    MPI_Allreduce(&elsewhere, &moved, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&leaves_here, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&leaves_added, &added, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    uint64_t ran_none = rank != 0 && leaves_here == 0, idle_ranks;
    MPI_Allreduce(&ran_none, &idle_ranks, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    herd_pool_stats mine, all;
    CHECK_OK(herd_pool_stats_get(p, &mine, &all));
    if (rank == 0)
        STEP("lock %s steal %s: %llu of %llu leaves ran on other ranks; %llu steals moved %llu "
             "tasks (%llu failed, %llu aborted)",
             herd_pool_lock_name(lock), herd_pool_split_name(split), (unsigned long long)moved,
             (unsigned long long)added, (unsigned long long)all.steals,
             (unsigned long long)all.tasks_stolen, (unsigned long long)all.steals_failed,
             (unsigned long long)all.steals_aborted);
    CHECK_EQ(total, added);
    CHECK_EQ(idle_ranks, 0); /* every other rank ran a leaf */
    CHECK(moved >= (uint64_t)(nranks - 1));
    CHECK(all.steals >= 1);
    /* Every task of another rank came from rank 0 by a steal (a thief may
     * also have stolen from another thief, or rank 0 stolen back: >=). */
    CHECK(all.tasks_stolen >= moved);
    CHECK(all.steals <= all.tasks_stolen);
    if (rank == 0) {
        int idle;
        CHECK_EQ(read_seen(&idle), moved);
    }
    CHECK_OK(herd_pool_destroy(p));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(nranks >= 2);
    MPI_Win_allocate((MPI_Aint)(nranks * sizeof(int64_t)), sizeof(int64_t), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &seen, &seen_win);
    for (int l = HERD_POOL_LOCK_TICKET; l <= HERD_POOL_LOCK_ABORTING; l++)
        for (int s = HERD_POOL_SPLIT_ONE; s <= HERD_POOL_SPLIT_HALF; s++)
            run((herd_pool_lock)l, (herd_pool_split)s);
    MPI_Win_free(&seen_win);
    MPI_Finalize();
    return 0;
}
