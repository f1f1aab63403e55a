/* The cost of a worksharing loop's chunk, per schedule and chunk size
 * (issue 19: static, dynamic and guided at chunk sizes 1 to 128), measured
 * so that it is stable on a small, noisy machine, where the public
 * schedbench's spread exceeds its median:
 *  - one parallel region runs every measurement (no fork-join in them);
 *  - a loop of N iterations whose body is a short fixed computation (a
 *    few ns) runs under schedule(S, c), then the same loop under plain
 *    schedule(static) (one chunk a thread), back to back, R times each,
 *    alternating, every loop ending at its barrier;
 *  - the cost per chunk = (median time of the S,c loop - median time of the
 *    plain static loop) / (the chunks one thread takes: N / (threads x c));
 *    the body and the barrier are in both loops, so they cancel, and the
 *    medians of R keep one slow sample (a preemption, an interrupt) out.
 * Static and dynamic take ceil(N / c) chunks in all. Guided takes chunks of
 * ceil(remaining / threads) iterations, at least c (the rule libgomp and
 * herd follow): their number is simulated here (guided_chunks).
 * Each loop checks that every iteration ran once.
 *
 * Usage: loopsched [--n N] [--reps R] [--chunks c1,c2,...]
 * Prints one line per (schedule, chunk): the chunks a thread took, the loop
 * time, the plain static time, and the cost per chunk in ns; and the OpenMP
 * library that runs it. */
#define _GNU_SOURCE 1 /* dladdr */
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long n_iter = 1 << 16;
static int reps = 31;
static int chunks[16] = {1, 2, 4, 8, 16, 32, 64, 128};
static int nchunks = 8;
static unsigned char *seen; /* iteration i ran: seen[i] == round */
static volatile double sink;

/* The body: a few dependent floating-point operations (a few ns). */
static inline double body(long i, double acc) {
    double x = (double)(i & 1023) * 0.5;
    return acc + x * x * 0.25 + 1.0;
}

/* The chunks of a guided loop of n iterations on t threads, chunk c. */
static double guided_chunks(long n, int t, int c) {
    long a = 0, k = 0;
    while (a < n) {
        long q = (n - a + t - 1) / t;
        a += q < c ? c : q;
        k++;
    }
    return (double)k;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

enum { S_STATIC, S_DYNAMIC, S_GUIDED, S_PLAIN };
static const char *names[] = {"static", "dynamic", "guided", "plain"};

/* The loop, once per schedule clause (a clause is no run-time value). */
#define LOOP(clause)                                                                               \
    _Pragma(clause) for (long i = 0; i < n_iter; i++) {                                            \
        acc = body(i, acc);                                                                        \
        seen[i] = round;                                                                           \
    }

/* One loop of schedule s, chunk c, inside the region; returns its time (the
 * same on every thread: the loop ends at its barrier, timed by thread 0,
 * kept by the caller). */
static double one_loop(int s, int c, unsigned char round) {
    double acc = 0.0, t0 = 0.0;
#pragma omp barrier
    if (omp_get_thread_num() == 0)
        t0 = omp_get_wtime();
    switch (s) {
    case S_STATIC:
        LOOP("omp for schedule(static, c)")
        break;
    case S_DYNAMIC:
        LOOP("omp for schedule(dynamic, c)")
        break;
    case S_GUIDED:
        LOOP("omp for schedule(guided, c)")
        break;
    default:
        LOOP("omp for schedule(static)")
        break;
    }
    double t = omp_get_thread_num() == 0 ? omp_get_wtime() - t0 : 0.0;
    sink += acc; /* racy on purpose: only keeps the body */
    return t;
}

static void check_round(unsigned char round, const char *what, int c) {
    for (long i = 0; i < n_iter; i++)
        if (seen[i] != round) {
            fprintf(stderr, "loopsched: %s,%d: iteration %ld did not run once\n", what, c, i);
            exit(1);
        }
}

static const char *lib_name(void) {
    Dl_info info;
    if (dladdr((void *)omp_get_num_threads, &info) && info.dli_fname)
        return info.dli_fname;
    return "?";
}

static void usage(void) {
    fprintf(stderr, "usage: loopsched [--n N] [--reps R] [--chunks c1,c2,...]\n");
    exit(2);
}

int main(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--n") && a + 1 < argc)
            n_iter = atol(argv[++a]);
        else if (!strcmp(argv[a], "--reps") && a + 1 < argc)
            reps = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--chunks") && a + 1 < argc) {
            nchunks = 0;
            for (char *p = strtok(argv[++a], ","); p && nchunks < 16; p = strtok(NULL, ","))
                chunks[nchunks++] = atoi(p);
        } else
            usage();
    }
    if (n_iter < 1 || reps < 1 || nchunks < 1)
        usage();
    for (int k = 0; k < nchunks; k++)
        if (chunks[k] < 1)
            usage();
    seen = calloc((size_t)n_iter, 1);
    double *t_s = malloc((size_t)reps * sizeof *t_s), *t_p = malloc((size_t)reps * sizeof *t_p);
    if (!seen || !t_s || !t_p)
        return 1;
    int threads = 0;
    unsigned char round = 0;
    printf("# %ld iterations, median of %d, OpenMP library %s\n", n_iter, reps, lib_name());
    printf("%-8s %6s %8s %12s %12s %12s\n", "schedule", "chunk", "chunks", "loop_us", "plain_us",
           "per_chunk_ns");
    for (int s = S_STATIC; s <= S_GUIDED; s++) {
        for (int k = 0; k < nchunks; k++) {
            int c = chunks[k];
#pragma omp parallel shared(threads, round)
            {
#pragma omp single
                threads = omp_get_num_threads();
                for (int r = 0; r < reps; r++) {
#pragma omp single
                    round++;
                    double a = one_loop(s, c, round);
#pragma omp single
                    check_round(round, names[s], c);
#pragma omp single
                    round++;
                    double b = one_loop(S_PLAIN, 0, round);
#pragma omp single
                    check_round(round, "plain", 0);
                    if (omp_get_thread_num() == 0) {
                        t_s[r] = a;
                        t_p[r] = b;
                    }
                }
            }
            double ms = median(t_s, reps), mp = median(t_p, reps);
            /* chunks one thread took, on average over the threads */
            double per_thread = (s == S_GUIDED ? guided_chunks(n_iter, threads, c)
                                               : (double)((n_iter + c - 1) / c)) /
                                threads;
            double cost = per_thread > 1.0 ? (ms - mp) / (per_thread - 1.0) : 0.0;
            printf("%-8s %6d %8.1f %12.2f %12.2f %12.1f\n", names[s], c, per_thread, ms * 1e6,
                   mp * 1e6, cost * 1e9);
            fflush(stdout);
        }
    }
    free(seen);
    free(t_s);
    free(t_p);
    return 0;
}
