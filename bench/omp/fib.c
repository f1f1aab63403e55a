/* bench/omp/fib.c -- naive Fibonacci with OpenMP tasks, and its twin.
 *
 *   omp_fib [--input small|medium|large] [--variant cutoff|nocutoff] [--seq]
 *           [--n N] [--cutoff DEPTH] [--reps R]
 *
 * Each call spawns fib(n-1) and fib(n-2) as tasks and waits for them.
 * `cutoff` (BOTS's manual cut-off) stops creating tasks below a recursion
 * depth and calls the sequential function there; `nocutoff` makes every call
 * a task, so it measures what a task costs in the runtime, not arithmetic.
 * Verification: the iterative value. */
#include "omp_bench.h"

#include <stdio.h>
#include <string.h>

static const char usage[] = "omp_fib [--input small|medium|large] [--variant cutoff|nocutoff] "
                            "[--seq] [--n N] [--cutoff DEPTH] [--reps R]";
static const char *const variants[] = {"cutoff", "nocutoff", NULL};

/*                                   small medium large */
static const int n_cutoff[3] = {30, 40, 50};
static const int n_nocutoff[3] = {22, 28, 35};
static const int default_cutoff = 12; /* tasks to this recursion depth */

__attribute__((noinline)) static uint64_t fib_seq(int n) {
    return n < 2 ? (uint64_t)n : fib_seq(n - 1) + fib_seq(n - 2);
}

static uint64_t fib_task(int n, int depth, int cutoff) {
    if (n < 2)
        return (uint64_t)n;
    if (depth >= cutoff)
        return fib_seq(n);
    uint64_t x, y;
#pragma omp task shared(x) firstprivate(n, depth, cutoff)
    x = fib_task(n - 1, depth + 1, cutoff);
#pragma omp task shared(y) firstprivate(n, depth, cutoff)
    y = fib_task(n - 2, depth + 1, cutoff);
#pragma omp taskwait
    return x + y;
}

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
    char inputs[160];
    snprintf(inputs, sizeof inputs,
             "{\"cutoff\":{\"n\":[%d,%d,%d],\"cutoff\":%d},\"nocutoff\":{\"n\":[%d,%d,%d]}}",
             n_cutoff[0], n_cutoff[1], n_cutoff[2], default_cutoff, n_nocutoff[0], n_nocutoff[1],
             n_nocutoff[2]);
    omp_opts o = {.kernel = "fib", .inputs = inputs};
    omp_bench_parse(argc, argv, &o, usage, variants);
    int nocut = !strcmp(o.variant, "nocutoff");
    int n = o.n > 0 ? (int)o.n : (nocut ? n_nocutoff : n_cutoff)[o.input_index];
    if (n > 92)
        bench_usage_error(usage, "fib(n) overflows 64 bits beyond n = 92", NULL);
    int cutoff = nocut ? 1 << 30 : (o.cutoff >= 0 ? (int)o.cutoff : default_cutoff);
    uint64_t expect = fib_iter(n), result = 0;
    double times[o.reps > 0 ? o.reps : 1];
    int verified = 1;
    for (int r = 0; r < o.reps; r++) {
        double t0 = bench_now();
        if (o.seq) {
            result = fib_seq(n);
        } else {
#pragma omp parallel
#pragma omp single
            result = fib_task(n, 0, cutoff);
        }
        times[r] = bench_now() - t0;
        if (result != expect) {
            fprintf(stderr, "fib(%d): got %llu, expected %llu\n", n, (unsigned long long)result,
                    (unsigned long long)expect);
            verified = 0;
        }
    }
    char fig[128];
    snprintf(fig, sizeof fig, "\"n\":%d,\"cutoff\":%d,\"result\":%llu", n, nocut ? -1 : cutoff,
             (unsigned long long)result);
    omp_bench_result(&o, times, o.reps, verified, fig);
    return verified ? 0 : 1;
}
