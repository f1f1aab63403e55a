/* bench/fib.c -- naive Fibonacci on herd, and its sequential twin.
 *
 *   bench_fib [--n N] [--shape one|both|seq] [--cutoff DEPTH] [--workers W] [--reps R]
 *
 * Without --cutoff every call is a task, so this measures what a spawn and a
 * wait cost, not arithmetic. Two task shapes:
 *   one   spawn fib(n-1), compute fib(n-2) by calling the task function
 *         directly, then herd_wait(): the Cilk shape, half the spawns.
 *   both  spawn fib(n-1) and fib(n-2), then herd_wait().
 * The sequential twin `seq` is the serial elision of `one`: the same
 * function with the herd calls removed -- same argument block, results
 * through the same output pointers -- so the ratio of the two is what the
 * runtime adds, not a difference in how results travel. It is noinline and
 * n comes from argv, so the compiler can neither fold it to a constant nor
 * flatten the recursion into the caller.
 *
 * --cutoff DEPTH (with `both`) is BOTS's manual cut-off, as in
 * bench/omp/fib.c's `cutoff` variant: calls at recursion depth DEPTH or
 * deeper run a plain recursive function and spawn nothing, so tasks exist
 * only near the root (2^DEPTH leaves of work). The harness's `fib/cutoff`
 * herd row runs this against the OpenMP kernel's rows.
 *
 * Results flow through pointers because herd_spawn() copies the argument
 * block: a child writes its result into its parent's frame, which stays
 * valid until the parent's herd_wait() has returned.
 *
 * The last line on stdout is one JSON object (see tools/bench_table.py). */
#include "common.h"

#include <herd/herd.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "bench_fib [--n N] [--shape one|both|seq] [--cutoff DEPTH] [--workers W] [--reps R] "
    "[--stack BYTES]";

typedef struct fib_arg {
    int n;
    int depth;     /* recursion depth, for --cutoff; fits the padding before out */
    uint64_t *out; /* in the parent's frame */
} fib_arg;

/* --cutoff: the depth from which fib_cut() stops spawning. Set once before
 * herd_start(), read-only afterwards. */
static int cutoff_depth;

/* Children that could not be queued (queue full) and ran inline instead.
 * Only touched on that slow path, hence the atomic add is harmless. */
static uint64_t spawn_fallbacks;

static void spawn_or_call(herd_fn fn, fib_arg *a) {
    if (herd_spawn(fn, a, sizeof *a) != HERD_OK) {
        __atomic_fetch_add(&spawn_fallbacks, 1, __ATOMIC_RELAXED);
        fn(a);
    }
}

static void fib_one(void *arg) {
    const fib_arg *a = arg;
    if (a->n < 2) {
        *a->out = (uint64_t)a->n;
        return;
    }
    uint64_t x, y;
    fib_arg c1 = {a->n - 1, 0, &x};
    spawn_or_call(fib_one, &c1);
    fib_arg c2 = {a->n - 2, 0, &y};
    fib_one(&c2);
    herd_wait();
    *a->out = x + y;
}

static void fib_both(void *arg) {
    const fib_arg *a = arg;
    if (a->n < 2) {
        *a->out = (uint64_t)a->n;
        return;
    }
    uint64_t x, y;
    fib_arg c1 = {a->n - 1, 0, &x};
    spawn_or_call(fib_both, &c1);
    fib_arg c2 = {a->n - 2, 0, &y};
    spawn_or_call(fib_both, &c2);
    herd_wait();
    *a->out = x + y;
}

/* Below the cut-off: bench/omp/fib.c's fib_seq, a plain recursion on values. */
__attribute__((noinline)) static uint64_t fib_plain(int n) {
    return n < 2 ? (uint64_t)n : fib_plain(n - 1) + fib_plain(n - 2);
}

/* `both` with BOTS's cut-off: spawn both children above cutoff_depth. */
static void fib_cut(void *arg) {
    const fib_arg *a = arg;
    if (a->n < 2) {
        *a->out = (uint64_t)a->n;
        return;
    }
    if (a->depth >= cutoff_depth) {
        *a->out = fib_plain(a->n);
        return;
    }
    uint64_t x, y;
    fib_arg c1 = {a->n - 1, a->depth + 1, &x};
    spawn_or_call(fib_cut, &c1);
    fib_arg c2 = {a->n - 2, a->depth + 1, &y};
    spawn_or_call(fib_cut, &c2);
    herd_wait();
    *a->out = x + y;
}

__attribute__((noinline)) static void fib_seq(const fib_arg *a) {
    if (a->n < 2) {
        *a->out = (uint64_t)a->n;
        return;
    }
    uint64_t x, y;
    fib_arg c1 = {a->n - 1, 0, &x};
    fib_seq(&c1);
    fib_arg c2 = {a->n - 2, 0, &y};
    fib_seq(&c2);
    *a->out = x + y;
}

/* The reference value, computed a different way. */
static uint64_t fib_iter(int n) {
    uint64_t a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        uint64_t t = a + b;
        a = b;
        b = t;
    }
    return a;
}

int main(int argc, char **argv) {
    int n = 35, workers = 0, reps = 1, cutoff = -1;
    long stack = 0;
    const char *shape = "one";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n"))
            n = (int)bench_int_arg(argc, argv, &i, 0, 92, usage); /* fib(93) overflows */
        else if (!strcmp(argv[i], "--shape"))
            shape = bench_str_arg(argc, argv, &i, usage);
        else if (!strcmp(argv[i], "--cutoff"))
            cutoff = (int)bench_int_arg(argc, argv, &i, 0, 92, usage);
        else if (!strcmp(argv[i], "--workers"))
            workers = (int)bench_int_arg(argc, argv, &i, 0, 4096, usage);
        else if (!strcmp(argv[i], "--reps"))
            reps = (int)bench_int_arg(argc, argv, &i, 1, 100000, usage);
        else if (!strcmp(argv[i], "--stack"))
            stack = bench_int_arg(argc, argv, &i, 0, 1L << 30, usage);
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            bench_help(usage);
        else
            bench_usage_error(usage, "unknown option", argv[i]);
    }
    herd_fn fn = NULL;
    int seq = !strcmp(shape, "seq");
    if (!strcmp(shape, "one"))
        fn = fib_one;
    else if (!strcmp(shape, "both"))
        fn = fib_both;
    else if (!seq)
        bench_usage_error(usage, "--shape takes one, both or seq", shape);
    if (cutoff >= 0) {
        if (fn != fib_both)
            bench_usage_error(usage, "--cutoff goes with --shape both (the OpenMP kernel's shape)",
                              shape);
        fn = fib_cut;
        cutoff_depth = cutoff;
    }

    if (!seq) {
        herd_config cfg = {.workers = workers, .stack_size = (size_t)stack};
        int rc = herd_start(&cfg);
        if (rc != HERD_OK) {
            fprintf(stderr, "herd_start: %s\n", herd_strerror(rc));
            printf("{\"kernel\":\"fib\",\"params\":{\"n\":%d,\"shape\":\"%s\"},\"workers\":%d,"
                   "\"verified\":false,\"error\":\"herd_start: %s\"}\n",
                   n, shape, workers, herd_strerror(rc));
            return 1;
        }
        workers = herd_num_workers();
    } else {
        workers = 0;
    }

    const uint64_t expect = fib_iter(n);
    double *times = malloc((size_t)reps * sizeof *times);
    if (!times) {
        perror("malloc");
        return 1;
    }
    int verified = 1, done = 0;
    for (int r = 0; r < reps; r++) {
        uint64_t result = 0;
        fib_arg root = {n, 0, &result};
        double t0 = bench_now();
        if (seq) {
            fib_seq(&root);
        } else {
            int rc = herd_run(fn, &root, sizeof root);
            if (rc != HERD_OK) {
                fprintf(stderr, "herd_run: %s\n", herd_strerror(rc));
                verified = 0;
                break;
            }
        }
        times[r] = bench_now() - t0;
        done++;
        if (result != expect) {
            fprintf(stderr, "fib(%d) rep %d: got %llu, expected %llu\n", n, r,
                    (unsigned long long)result, (unsigned long long)expect);
            verified = 0;
        }
        fprintf(stderr, "fib(%d) %s w=%d rep %d: %.6f s\n", n, shape, workers, r, times[r]);
    }
    if (spawn_fallbacks)
        fprintf(stderr, "note: %llu children ran inline (queue full)\n",
                (unsigned long long)spawn_fallbacks);
    if (!seq)
        herd_stop();

    printf("{\"kernel\":\"fib\",\"params\":{\"n\":%d,\"shape\":\"%s\",\"cutoff\":%d},"
           "\"workers\":%d,\"seconds\":%.9f,\"verified\":%s,\"reps\":%d,",
           n, shape, cutoff, workers, done ? bench_median(times, done) : 0.0,
           verified ? "true" : "false", reps);
    bench_print_times(stdout, times, done);
    printf("}\n");
    free(times);
    return verified ? 0 : 1;
}
