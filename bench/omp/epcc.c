/* OpenMP construct overheads by the EPCC microbenchmarks' method (paper 004
 * §4; the public suite is EPCCed/epcc-openmp-microbenchmarks, v3.1), so that
 * herd's figures and the public syncbench's agree (bench/omp/epcc_agree.sh
 * checks that against a local build of the public suite):
 *  - the delay inside each construct is calibrated in time (DELAY_US,
 *    0.10 us by default) by growing an iteration count until one delay
 *    takes that long;
 *  - each construct runs `inner` times per measurement, inner doubled from
 *    10 until one measurement takes at least the test time (1000 us);
 *  - a measurement is repeated `outer` times (20) after one warm-up, and
 *    its time per construct is the mean over them, with the standard
 *    deviation;
 *  - overhead = test mean - reference mean, where the reference runs the
 *    same delays with no construct (atomic and reduction have their own
 *    references, as in the suite), with a 95% interval of
 *    1.96 x (sd test + sd reference).
 * The construct shapes are the suite's: parallel around one delay; for
 * over one iteration per thread inside a region; parallel for; a barrier
 * after each delay; single; critical, lock and atomic with inner / threads
 * entries per thread; ordered over a static,1 loop; a parallel region with
 * a one-variable reduction. herd's extras follow the same method: for with
 * dynamic and guided schedules, task creation (every thread creates inner
 * tasks: the suite's PARALLEL TASK), and a nested region (the default team
 * outside, `--inner-threads` inside).
 * Each measurement also counts what its construct did and stops on a wrong
 * count, so a runtime that skips work cannot look fast.
 *
 * Usage: epcc [--outer N] [--test-time US] [--delay-time US]
 *             [--inner-threads N] [--only NAME[,NAME...]]
 * Prints one line per construct: name, threads, overhead (us), its 95%
 * interval, the inner repetitions; EPCC_JSON=1 prints one JSON object per
 * line instead. Both name the OpenMP library that provides
 * omp_get_num_threads in this process ("omp_lib"), so that a harness can
 * tell a run on another runtime than the one it asked for (gcc builds call
 * GOMP_*, clang builds __kmpc_*: the same source measures either ABI). */
#define _GNU_SOURCE 1 /* dladdr */
#include <dlfcn.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double delay_us = 0.10, test_time_us = 1000.0;
static int outer = 20, inner_threads = 2, nthreads;
static long delay_len, inner;
static omp_lock_t lock;

/* The delay: a float sum the compiler must keep (its result is tested). */
static void delay(long n) {
    float a = 0.0f;
    for (long i = 0; i < n; i++)
        a += (float)i;
    if (a < 0.0f)
        printf("%f\n", a);
}

static long calibrate_delay(double us) {
    long n = 0;
    for (double each = 0.0; each < us * 1e-6;) {
        n = n + n / 10 + 1;
        double t0 = omp_get_wtime();
        for (int r = 0; r < 1000; r++)
            delay(n);
        each = (omp_get_wtime() - t0) / 1000.0;
    }
    return n;
}

static void fail(const char *what, long got, long want) {
    fprintf(stderr, "epcc %s: count %ld, expected %ld\n", what, got, want);
    exit(1);
}

/* Each construct runs `inner` times and returns how many times its body
 * ran, for the check against want(). */
typedef long (*construct_fn)(void);

static long ref_delay(void) {
    for (long j = 0; j < inner; j++)
        delay(delay_len);
    return inner;
}

static long ref_atomic(void) {
    double sum = 0.0, b = 1.0, c = 1.0 + 1e-15;
    for (long j = 0; j < inner; j++) {
        sum += b;
        b *= c;
    }
    return sum > 0.0 ? inner : 0;
}

static long ref_reduction(void) {
    long n = 0;
    for (long j = 0; j < inner; j++) {
        delay(delay_len);
        n += 1;
    }
    return n;
}

static long c_parallel(void) {
    long n = 0;
    for (long j = 0; j < inner; j++) {
#pragma omp parallel
        {
            delay(delay_len);
            if (omp_get_thread_num() == 0)
                n++;
        }
    }
    return n;
}

#define FOR_LOOP(name, schedule)                                                                   \
    static long c_##name(void) {                                                                   \
        long n = 0;                                                                                \
        _Pragma("omp parallel reduction(+ : n)") for (long j = 0; j < inner; j++) {                \
            _Pragma(schedule) for (int i = 0; i < nthreads; i++) {                                 \
                delay(delay_len);                                                                  \
                if (i == 0)                                                                        \
                    n++;                                                                           \
            }                                                                                      \
        }                                                                                          \
        return n;                                                                                  \
    }
FOR_LOOP(for_static, "omp for")
FOR_LOOP(for_dynamic, "omp for schedule(dynamic)")
FOR_LOOP(for_guided, "omp for schedule(guided)")

static long c_parallel_for(void) {
    long n = 0;
    for (long j = 0; j < inner; j++) {
#pragma omp parallel for reduction(+ : n)
        for (int i = 0; i < nthreads; i++) {
            delay(delay_len);
            if (i == 0)
                n++;
        }
    }
    return n;
}

static long c_barrier(void) {
    long n = 0;
#pragma omp parallel reduction(+ : n)
    for (long j = 0; j < inner; j++) {
        delay(delay_len);
        if (omp_get_thread_num() == 0)
            n++;
#pragma omp barrier
    }
    return n;
}

static long c_single(void) {
    long n = 0;
#pragma omp parallel reduction(+ : n)
    for (long j = 0; j < inner; j++) {
#pragma omp single
        {
            delay(delay_len);
            n++;
        }
    }
    return n;
}

static long c_critical(void) {
    long n = 0;
#pragma omp parallel
    for (long j = 0; j < inner / nthreads; j++) {
#pragma omp critical
        {
            delay(delay_len);
            n++;
        }
    }
    return n;
}

static long c_lock(void) {
    long n = 0;
#pragma omp parallel
    for (long j = 0; j < inner / nthreads; j++) {
        omp_set_lock(&lock);
        delay(delay_len);
        n++;
        omp_unset_lock(&lock);
    }
    return n;
}

static long c_ordered(void) {
    long n = 0, last = -1;
#pragma omp parallel for ordered schedule(static, 1)
    for (long j = 0; j < inner; j++) {
#pragma omp ordered
        {
            delay(delay_len);
            if (j == last + 1) /* in order, or the count comes out short */
                n++;
            last = j;
        }
    }
    return n;
}

static long c_atomic(void) {
    double sum = 0.0;
    long per = inner / nthreads;
#pragma omp parallel
    {
        double b = 1.0, c = 1.0 + 1e-15;
        for (long j = 0; j < per; j++) {
#pragma omp atomic
            sum += b;
            b *= c;
        }
    }
    /* Each thread adds per terms of at least 1: exact count of entries. */
    return sum >= (double)(per * nthreads) ? per * nthreads : 0;
}

static long c_reduction(void) {
    long n = 0;
    for (long j = 0; j < inner; j++) {
#pragma omp parallel reduction(+ : n)
        {
            delay(delay_len);
            n += 1;
        }
    }
    return n / nthreads;
}

/* The suite's PARALLEL TASK: every thread creates inner tasks. */
static long c_task(void) {
    long n = 0;
#pragma omp parallel
    {
        for (long j = 0; j < inner; j++) {
#pragma omp task shared(n)
            {
                delay(delay_len);
#pragma omp atomic
                n++;
            }
        }
    }
    return n / nthreads;
}

/* The default team outside, inner_threads inside; counted by each inner
 * team's thread 0 of outer thread 0 (a runtime may give fewer threads). */
static long c_nested(void) {
    long n = 0;
    for (long j = 0; j < inner; j++) {
#pragma omp parallel
        {
            int outer_thread = omp_get_thread_num();
#pragma omp parallel num_threads(inner_threads)
            {
                delay(delay_len);
                if (outer_thread == 0 && omp_get_thread_num() == 0)
                    n++;
            }
        }
    }
    return n;
}

typedef struct construct {
    const char *name;
    construct_fn run;
    construct_fn reference;
    int per_thread; /* runs inner / threads times per thread */
} construct;

static const construct constructs[] = {
    {"parallel", c_parallel, ref_delay, 0},
    {"for", c_for_static, ref_delay, 0},
    {"parallel_for", c_parallel_for, ref_delay, 0},
    {"barrier", c_barrier, ref_delay, 0},
    {"single", c_single, ref_delay, 0},
    {"critical", c_critical, ref_delay, 1},
    {"lock", c_lock, ref_delay, 1},
    {"ordered", c_ordered, ref_delay, 0},
    {"atomic", c_atomic, ref_atomic, 1},
    {"reduction", c_reduction, ref_reduction, 0},
    {"for_dynamic", c_for_dynamic, ref_delay, 0},
    {"for_guided", c_for_guided, ref_delay, 0},
    {"task", c_task, ref_delay, 0},
    {"nested", c_nested, ref_delay, 0},
};
#define NCONSTRUCTS (sizeof constructs / sizeof constructs[0])

static long want(const construct *c) { return c->per_thread ? inner / nthreads * nthreads : inner; }

static void run_checked(const char *name, const construct *c, construct_fn fn) {
    long got = fn();
    long expect = fn == c->run ? want(c) : inner;
    if (got != expect)
        fail(name, got, expect);
}

/* Double inner from 10 until one run of fn takes the test time. */
static void size_inner(const construct *c, construct_fn fn) {
    inner = 10;
    for (;;) {
        double t0 = omp_get_wtime();
        run_checked(c->name, c, fn);
        if ((omp_get_wtime() - t0) * 1e6 >= test_time_us)
            return;
        inner *= 2;
    }
}

typedef struct stat {
    double mean, sd;
} stat;

/* outer timed runs after a warm-up, microseconds per construct. */
static stat measure(const construct *c, construct_fn fn) {
    double *t = malloc((size_t)outer * sizeof *t);
    if (!t) {
        perror("epcc");
        exit(1);
    }
    run_checked(c->name, c, fn);
    double sum = 0.0;
    for (int k = 0; k < outer; k++) {
        double t0 = omp_get_wtime();
        run_checked(c->name, c, fn);
        t[k] = (omp_get_wtime() - t0) * 1e6 / (double)inner;
        sum += t[k];
    }
    stat s = {sum / outer, 0.0};
    for (int k = 0; k < outer; k++)
        s.sd += (t[k] - s.mean) * (t[k] - s.mean);
    s.sd = outer > 1 ? sqrt(s.sd / (outer - 1)) : 0.0;
    free(t);
    return s;
}

static int selected(const char *only, const char *name) {
    if (!only)
        return 1;
    size_t len = strlen(name);
    for (const char *p = only; *p;) {
        size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, name, n) == 0)
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

static void usage(void) {
    fprintf(stderr, "usage: epcc [--outer N] [--test-time US] [--delay-time US] "
                    "[--inner-threads N] [--only NAME[,NAME...]]\n");
    exit(2);
}

static double number(const char *s, double lo) {
    char *end;
    double v = s ? strtod(s, &end) : 0.0;
    if (!s || *end || !(v >= lo))
        usage();
    return v;
}

/* The file the dynamic linker bound omp_get_num_threads to (a PIE's address
 * of an imported function is the definition's, not a stub in the program). */
static const char *omp_lib(void) {
    Dl_info info;
    if (dladdr((void *)omp_get_num_threads, &info) && info.dli_fname)
        return info.dli_fname;
    return "unknown";
}

int main(int argc, char **argv) {
    const char *only = NULL;
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "--outer") == 0)
            outer = (int)number(val, 2);
        else if (strcmp(arg, "--test-time") == 0)
            test_time_us = number(val, 1);
        else if (strcmp(arg, "--delay-time") == 0)
            delay_us = number(val, 0.001);
        else if (strcmp(arg, "--inner-threads") == 0)
            inner_threads = (int)number(val, 1);
        else if (strcmp(arg, "--only") == 0 && val)
            only = val;
        else
            usage();
    }
    const char *json = getenv("EPCC_JSON");
    int as_json = json && strcmp(json, "1") == 0;
    omp_set_max_active_levels(2);
    omp_init_lock(&lock);
#pragma omp parallel
#pragma omp master
    nthreads = omp_get_num_threads();
    delay_len = calibrate_delay(delay_us);
    if (!as_json)
        printf("# %d threads, %d outer repetitions, test time %.0f us, delay %.3f us (%ld "
               "iterations), OpenMP library %s\n%-12s %7s %12s %10s %10s\n",
               nthreads, outer, test_time_us, delay_us, delay_len, omp_lib(), "construct",
               "threads", "overhead_us", "ci95_us", "inner");
    for (size_t i = 0; i < NCONSTRUCTS; i++) {
        const construct *c = &constructs[i];
        if (!selected(only, c->name))
            continue;
        size_inner(c, c->reference);
        stat ref = measure(c, c->reference);
        size_inner(c, c->run);
        stat test = measure(c, c->run);
        double over = test.mean - ref.mean, ci = 1.96 * (test.sd + ref.sd);
        char threads[32];
        if (c->run == c_nested)
            snprintf(threads, sizeof threads, "%dx%d", nthreads, inner_threads);
        else
            snprintf(threads, sizeof threads, "%d", nthreads);
        if (as_json)
            printf("{\"construct\":\"%s\",\"threads\":\"%s\",\"overhead_us\":%.4f,\"ci95_us\":%.4f,"
                   "\"test_us\":%.4f,\"reference_us\":%.4f,\"inner\":%ld,\"delay_us\":%.3f,"
                   "\"omp_lib\":\"%s\"}\n",
                   c->name, threads, over, ci, test.mean, ref.mean, inner, delay_us, omp_lib());
        else
            printf("%-12s %7s %12.3f %10.3f %10ld\n", c->name, threads, over, ci, inner);
        fflush(stdout);
    }
    omp_destroy_lock(&lock);
    return 0;
}
