/* EPCC-style synchronisation and scheduling overheads (paper 004 §4; after
 * the EPCC OpenMP micro-benchmarks): the time of `reps` constructs around a
 * small delay, minus the time of the same delays run alone, per construct.
 * Constructs: parallel, barrier, for (static, dynamic, guided), single,
 * critical, lock, task creation (every thread creates tasks), and a
 * nested parallel (outer x inner: OMP_NUM_THREADS threads outside, the third
 * argument inside). Each measurement is the median of
 * `outer` repetitions; each checks what its construct did (counts), the
 * sequential twin being the reference loop itself.
 *
 * Usage: epcc [reps] [outer] [inner threads of the nested case]
 * Prints one line per construct: name, threads, overhead in microseconds;
 * with EPCC_JSON=1 one JSON object per line. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int delay_len = 100;

static void delay(int n) {
    volatile double a = 0.0;
    for (int i = 0; i < n; i++)
        a += i * 0.5;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static void fail(const char *what, long got, long want) {
    fprintf(stderr, "epcc %s: count %ld, expected %ld\n", what, got, want);
    exit(1);
}

static int reps = 2000, outer = 5, inner_threads = 2;

/* Each returns the number of delays it ran (for the check) and its time. */
typedef long (*construct_fn)(double *secs);

static long c_reference(double *secs) {
    double t0 = omp_get_wtime();
    for (int r = 0; r < reps; r++)
        delay(delay_len);
    *secs = omp_get_wtime() - t0;
    return reps;
}

static long c_parallel(double *secs) {
    long n = 0;
    double t0 = omp_get_wtime();
    for (int r = 0; r < reps; r++) {
#pragma omp parallel reduction(+ : n)
        {
            delay(delay_len);
            n++;
        }
    }
    *secs = omp_get_wtime() - t0;
    return n / omp_get_max_threads();
}

static long c_barrier(double *secs) {
    long n = 0;
    double t0 = omp_get_wtime();
#pragma omp parallel reduction(+ : n)
    for (int r = 0; r < reps; r++) {
        delay(delay_len);
        n++;
#pragma omp barrier
    }
    *secs = omp_get_wtime() - t0;
    return n / omp_get_max_threads();
}

#define LOOP(name, sched)                                                                          \
    static long c_##name(double *secs) {                                                           \
        long n = 0;                                                                                \
        double t0 = omp_get_wtime();                                                               \
        _Pragma("omp parallel reduction(+ : n)") {                                                 \
            int T = omp_get_num_threads();                                                         \
            for (int r = 0; r < reps; r++) {                                                       \
                _Pragma(sched) for (int i = 0; i < T; i++) {                                       \
                    delay(delay_len);                                                              \
                    n++;                                                                           \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        *secs = omp_get_wtime() - t0;                                                              \
        return n / omp_get_max_threads();                                                          \
    }
LOOP(for_static, "omp for schedule(static)")
LOOP(for_dynamic, "omp for schedule(dynamic)")
LOOP(for_guided, "omp for schedule(guided)")

static long c_single(double *secs) {
    long n = 0;
    double t0 = omp_get_wtime();
#pragma omp parallel
    for (int r = 0; r < reps; r++) {
#pragma omp single
        {
            delay(delay_len);
            n++;
        }
    }
    *secs = omp_get_wtime() - t0;
    return n;
}

/* critical and lock: reps constructs in all, spread over the threads. */
static long c_critical(double *secs) {
    long n = 0;
    double t0 = omp_get_wtime();
#pragma omp parallel
    {
        int T = omp_get_num_threads();
        for (int r = omp_get_thread_num(); r < reps; r += T) {
#pragma omp critical
            {
                delay(delay_len);
                n++;
            }
        }
    }
    *secs = omp_get_wtime() - t0;
    return n;
}

static long c_lock(double *secs) {
    long n = 0;
    omp_lock_t l;
    omp_init_lock(&l);
    double t0 = omp_get_wtime();
#pragma omp parallel
    {
        int T = omp_get_num_threads();
        for (int r = omp_get_thread_num(); r < reps; r += T) {
            omp_set_lock(&l);
            delay(delay_len);
            n++;
            omp_unset_lock(&l);
        }
    }
    *secs = omp_get_wtime() - t0;
    omp_destroy_lock(&l);
    return n;
}

/* Task creation (EPCC's parallel task generation): every thread creates
 * reps tasks, so each thread has reps delays to run, as in the reference. */
static long c_task(double *secs) {
    long n = 0;
    double t0 = omp_get_wtime();
#pragma omp parallel shared(n)
    {
        for (int r = 0; r < reps; r++) {
#pragma omp task shared(n)
            {
                delay(delay_len);
#pragma omp atomic
                n++;
            }
        }
    }
    *secs = omp_get_wtime() - t0;
    return n / omp_get_max_threads();
}

/* Nested: an outer team of the default size, each member an inner team.
 * Counted once per outer member (by each inner team's thread 0): a runtime
 * may give an inner team fewer threads than asked for. */
static long c_nested(double *secs) {
    long n = 0, outer_size = 1;
    double t0 = omp_get_wtime();
    for (int r = 0; r < reps; r++) {
#pragma omp parallel reduction(+ : n)
        {
            if (omp_get_thread_num() == 0) outer_size = omp_get_num_threads();
#pragma omp parallel num_threads(inner_threads) reduction(+ : n)
            {
                delay(delay_len);
                if (omp_get_thread_num() == 0) n++;
            }
        }
    }
    *secs = omp_get_wtime() - t0;
    return n / outer_size;
}

typedef struct bench {
    const char *name;
    construct_fn fn;
} bench;

int main(int argc, char **argv) {
    if (argc > 1) reps = atoi(argv[1]);
    if (argc > 2) outer = atoi(argv[2]);
    if (argc > 3) inner_threads = atoi(argv[3]);
    if (reps < 1 || outer < 1 || outer > 99 || inner_threads < 1) {
        fprintf(stderr, "usage: epcc [reps] [outer <= 99] [inner threads]\n");
        return 2;
    }
    const char *json = getenv("EPCC_JSON");
    int as_json = json && strcmp(json, "1") == 0;
    static const bench benches[] = {
        {"parallel", c_parallel},
        {"barrier", c_barrier},
        {"for_static", c_for_static},
        {"for_dynamic", c_for_dynamic},
        {"for_guided", c_for_guided},
        {"single", c_single},
        {"critical", c_critical},
        {"lock", c_lock},
        {"task", c_task},
        {"nested", c_nested},
    };
    omp_set_max_active_levels(2);
    double ref[99], t[99];
    for (int o = 0; o < outer; o++)
        c_reference(&ref[o]);
    double ref_us = median(ref, outer) / reps * 1e6;
    int T = omp_get_max_threads();
    if (!as_json)
        printf("%-12s %8s %12s   (delay %.3f us)\n", "construct", "threads", "overhead_us", ref_us);
    for (size_t b = 0; b < sizeof benches / sizeof *benches; b++) {
        for (int o = 0; o < outer; o++) {
            long got = benches[b].fn(&t[o]);
            if (got != reps) fail(benches[b].name, got, reps);
        }
        double us = median(t, outer) / reps * 1e6 - ref_us;
        char threads[32];
        if (benches[b].fn == c_nested)
            snprintf(threads, sizeof threads, "%dx%d", T, inner_threads);
        else
            snprintf(threads, sizeof threads, "%d", T);
        if (as_json)
            printf("{\"construct\":\"%s\",\"threads\":\"%s\",\"overhead_us\":%.4f,\"delay_us\":%."
                   "4f}\n",
                   benches[b].name, threads, us, ref_us);
        else
            printf("%-12s %8s %12.3f\n", benches[b].name, threads, us);
    }
    return 0;
}
