/* bench/omp/idle.c -- what an OpenMP runtime's threads cost once the
 * program stops using them, and how soon they stop costing.
 *
 *   omp_idle [--rounds R] [--ms N]
 *
 * Each round runs a parallel region in which every thread does a little
 * work, then the initial thread sleeps N ms (default 200) outside any
 * region. The process's CPU time (CLOCK_PROCESS_CPUTIME_ID: every thread's)
 * over the first 10 ms of that sleep and over the rest is the CPU the idle
 * threads used, printed as a percentage of one core: the median over R
 * rounds (default 7). The wait policy (OMP_WAIT_POLICY, GOMP_SPINCOUNT,
 * KMP_BLOCKTIME, HERD_IDLE) is the runtime's to read from the environment;
 * the other half of the trade-off, how fast a sleeping team starts again,
 * is EPCC's PARALLEL row under the same setting (omp_epcc).
 * One JSON line at the end. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(double ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000.0 * (long)(ms / 1000)) * 1e6)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static volatile double sink;

int main(int argc, char **argv) {
    int rounds = 7;
    double ms = 200;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ms") && i + 1 < argc)
            ms = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: omp_idle [--rounds R] [--ms N]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > 1000 || !(ms > 20)) {
        fprintf(stderr, "omp_idle: --rounds 1..1000, --ms above 20\n");
        return 2;
    }
    double *first = malloc(sizeof(double) * (size_t)rounds);
    double *rest = malloc(sizeof(double) * (size_t)rounds);
    if (!first || !rest)
        return 1;
    int threads = 0;
    for (int r = 0; r < rounds; r++) {
#pragma omp parallel
        {
            double a = 0;
            for (int k = 0; k < 100000; k++)
                a += k * 0.5;
            sink = a;
#pragma omp single
            threads = omp_get_num_threads();
        }
        double c0 = cpu_now();
        sleep_ms(10);
        double c1 = cpu_now();
        sleep_ms(ms - 10);
        double c2 = cpu_now();
        first[r] = 100 * (c1 - c0) / 0.010;
        rest[r] = 100 * (c2 - c1) / ((ms - 10) / 1000);
    }
    double f = median(first, rounds), s = median(rest, rounds);
    printf("threads %d: idle CPU %.2f%% of a core in the first 10 ms after a region, "
           "%.3f%% over the next %.0f ms (medians of %d)\n",
           threads, f, s, ms - 10, rounds);
    printf("{\"threads\": %d, \"idle_first_10ms_pct\": %.4f, \"idle_after_pct\": %.4f, "
           "\"after_ms\": %.0f, \"rounds\": %d}\n",
           threads, f, s, ms - 10, rounds);
    free(first);
    free(rest);
    return 0;
}
