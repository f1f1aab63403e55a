/* bench/dist/idle.c -- what idle ranks cost while one rank works, and how
 * fast they pick up work that appears (the steal latency).
 *
 * A chain of --rounds "hold" tasks starts on rank 0. Each hold spins
 * --hold-ms, then queues the next hold and then one probe: the second push
 * releases the oldest, the next hold, which an idle rank steals (the chain
 * hops) while the probe, which spins as long, runs where it was made. At any
 * time two ranks work and the others are idle (run with 4 ranks or more). Every task carries its
 * creation time and rank. Printed on rank 0: idle_cpu_pct   CPU time (user + system, getrusage) of
 * each rank over its herd_pool_process(), minus the CPU time it spent in holds and probes, in % of
 * the wall time: median and max over the ranks; steal_us       for tasks started on another rank
 * than their creator's: start time - creation time (CLOCK_MONOTONIC, one machine), median and max:
 * the steal latency. The work is checked: every probe and hold ran exactly once.
 *
 * usage: mpirun -np N bench_pool_idle [--rounds 10] [--hold-ms 100] */
#include "pool_bench.h"

#include <stdint.h>
#include <string.h>
#include <sys/resource.h>

static int HOLD, PROBE;
static int rounds = 10, hold_ms = 100;
typedef struct stamp {
    double t;
    int creator, i;
} stamp;

static uint64_t holds_run, probes_run;
static double busy_s;
static double lat[4096];
static int nlat;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static void record(herd_pool *p, const stamp *s) {
    if (herd_pool_rank(p) != s->creator && nlat < (int)(sizeof lat / sizeof lat[0]))
        lat[nlat++] = now() - s->t;
}

static void probe(herd_pool *p, void *arg, size_t size) {
    stamp s;
    memcpy(&s, arg, sizeof s);
    record(p, &s);
    probes_run++;
    double c0 = cpu_seconds();
    pool_bench_spin_us(hold_ms * 1000.0);
    busy_s += cpu_seconds() - c0;
}

static void hold(herd_pool *p, void *arg, size_t size) {
    stamp s;
    memcpy(&s, arg, sizeof s);
    record(p, &s);
    holds_run++;
    double c0 = cpu_seconds();
    pool_bench_spin_us(hold_ms * 1000.0);
    busy_s += cpu_seconds() - c0;
    if (s.i + 1 < rounds) {
        stamp next = {now(), herd_pool_rank(p), s.i + 1};
        herd_pool_add(p, HOLD, &next, sizeof next);
        stamp pr = {now(), herd_pool_rank(p), s.i};
        herd_pool_add(p, PROBE, &pr, sizeof pr);
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--hold-ms"))
            hold_ms = atoi(argv[i + 1]);
    }
    herd_pool *p = pool_bench_create();
    herd_pool_register(p, "hold", hold, &HOLD);
    herd_pool_register(p, "probe", probe, &PROBE);
    int rank = herd_pool_rank(p), size = herd_pool_size(p);
    if (rank == 0) {
        stamp first = {now(), 0, 0};
        herd_pool_add(p, HOLD, &first, sizeof first);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double c0 = cpu_seconds(), t0 = now();
    herd_pool_process(p);
    double cpu = cpu_seconds() - c0, wall = now() - t0;
    double pct = 100.0 * (cpu - busy_s) / wall;
    double *pcts = rank == 0 ? calloc((size_t)size, sizeof *pcts) : NULL;
    MPI_Gather(&pct, 1, MPI_DOUBLE, pcts, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int counts[1] = {nlat}, *all_n = rank == 0 ? calloc((size_t)size, sizeof *all_n) : NULL;
    MPI_Gather(counts, 1, MPI_INT, all_n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int *displs = NULL, total = 0;
    double *all_lat = NULL;
    if (rank == 0) {
        displs = calloc((size_t)size, sizeof *displs);
        for (int r = 0; r < size; r++) {
            displs[r] = total;
            total += all_n[r];
        }
        all_lat = calloc((size_t)total + 1, sizeof *all_lat);
    }
    MPI_Gatherv(lat, nlat, MPI_DOUBLE, all_lat, all_n, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    uint64_t mine[2] = {holds_run, probes_run}, tot[2];
    MPI_Reduce(mine, tot, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int ok = tot[0] == (uint64_t)rounds && tot[1] == (uint64_t)rounds - 1;
        qsort(pcts, (size_t)size, sizeof *pcts, cmp);
        qsort(all_lat, (size_t)total, sizeof *all_lat, cmp);
        printf("bench=idle ranks=%d rounds=%d hold_ms=%d idle_cpu_pct_median=%.1f "
               "idle_cpu_pct_max=%.1f tasks_stolen=%d steal_us_median=%.0f steal_us_max=%.0f "
               "verified=%s\n",
               size, rounds, hold_ms, pcts[size / 2], pcts[size - 1], total,
               total ? 1e6 * all_lat[total / 2] : 0.0, total ? 1e6 * all_lat[total - 1] : 0.0,
               ok ? "yes" : "NO");
    }
    int ok = 1;
    if (rank == 0) ok = tot[0] == (uint64_t)rounds && tot[1] == (uint64_t)rounds - 1;
    herd_pool_destroy(p);
    MPI_Finalize();
    return ok ? 0 : 1;
}
