/* bench/dist/pool_bench.h -- what the pool benchmarks share: one result
 * line per run on rank 0, with the pool's settings and counters.
 *
 *   kernel=uts tree=T1 ranks=4 lock=aborting steal=half tasks=4130071
 *   seconds=1.234 mtasks_per_s=3.35 efficiency=0.97 steals=... verified=yes
 *
 * Lock and split come from HERD_POOL_LOCK / HERD_POOL_STEAL. */
#ifndef HERD_BENCH_POOL_BENCH_H
#define HERD_BENCH_POOL_BENCH_H

#include "herd/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline void pool_bench_spin_us(double us) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3 < us);
}

/* MPI_Init, or in hybrid mode (HERD_POOL_HYBRID=1) MPI_Init_thread with
 * FUNNELED and herd_start() (HERD_WORKERS workers run each rank's tasks). */
static inline void pool_bench_init(int *argc, char ***argv) {
    const char *h = getenv("HERD_POOL_HYBRID");
    if (h && h[0] == '1') {
        int level;
        MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &level);
        int rc = herd_start(NULL);
        if (rc) {
            fprintf(stderr, "pool bench: herd_start: %s\n", herd_strerror(rc));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    } else {
        MPI_Init(argc, argv);
    }
}

static inline void pool_bench_finish(void) {
    if (herd_num_workers() > 0) herd_stop();
    MPI_Finalize();
}

static inline herd_pool *pool_bench_create(void) {
    herd_pool *p;
    int rc = herd_pool_create(MPI_COMM_WORLD, NULL, &p);
    if (rc) {
        fprintf(stderr, "pool bench: herd_pool_create: %s\n", herd_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* Time one herd_pool_process() (wall clock of the slowest rank) and print
 * the result line; `extra` is the kernel's own fields. */
static inline void pool_bench_report(herd_pool *p, const char *fields, double seconds, int ok) {
    herd_pool_stats all;
    herd_pool_stats_get(p, NULL, &all);
    double slowest = 0;
    MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (herd_pool_rank(p) != 0) return;
    herd_pool_config c;
    herd_pool_config_get(p, &c);
    printf("%s ranks=%d workers=%d lock=%s steal=%s tasks=%llu seconds=%.4f mtasks_per_s=%.4f "
           "efficiency=%.4f steals=%llu stolen=%llu failed=%llu aborted=%llu bytes=%llu "
           "verified=%s\n",
           fields, herd_pool_size(p), c.hybrid == 1 ? herd_num_workers() : 1,
           herd_pool_lock_name(c.lock), herd_pool_split_name(c.split),
           (unsigned long long)all.tasks_executed, slowest,
           slowest > 0 ? (double)all.tasks_executed / slowest / 1e6 : 0.0,
           all.time_total > 0 ? all.time_active / all.time_total : 0.0,
           (unsigned long long)all.steals, (unsigned long long)all.tasks_stolen,
           (unsigned long long)all.steals_failed, (unsigned long long)all.steals_aborted,
           (unsigned long long)all.bytes_stolen, ok ? "yes" : "NO");
    fflush(stdout);
}

#endif
