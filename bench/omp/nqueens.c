/* bench/omp/nqueens.c -- count the n-queens solutions with OpenMP tasks.
 *
 *   omp_nqueens [--input small|medium|large] [--variant cutoff|nocutoff]
 *               [--seq] [--n N] [--cutoff DEPTH] [--reps R]
 *
 * Backtracking search, one row at a time: each legal column of the next row
 * is a task that gets its own copy of the partial board (the columns chosen
 * so far) and counts the solutions below it. `cutoff` stops creating tasks
 * below a depth (BOTS's manual cut-off) and searches sequentially there;
 * `nocutoff` makes every legal placement a task -- millions of tiny tasks.
 * Counts come back through a per-task slot array and a taskwait (the
 * fork-join reduction). Verification: the known number of solutions. */
#include "omp_bench.h"

#include <stdio.h>
#include <string.h>

static const char usage[] = "omp_nqueens [--input small|medium|large] "
                            "[--variant cutoff|nocutoff] [--seq] [--n N] [--cutoff DEPTH] "
                            "[--reps R]";
static const char *const variants[] = {"cutoff", "nocutoff", NULL};

static const int n_cutoff[3] = {10, 13, 14};
static const int n_nocutoff[3] = {9, 12, 14};
static const int default_cutoff = 3; /* tasks for the first rows only */

/* Solutions of the n-queens problem, n = 0..17 (OEIS A000170). */
static const uint64_t solutions[18] = {1,     1,      0,       0,        2,        10,
                                       4,     40,     92,      352,      724,      2680,
                                       14200, 73712,  365596,  2279184,  14772512, 95815104};

#define MAXN 17

/* Is a queen at (row, col) safe from the queens in rows 0..row-1? */
static inline int safe(const signed char *cols, int row, int col) {
    for (int r = 0; r < row; r++) {
        int d = cols[r] - col;
        if (d == 0 || d == row - r || d == r - row)
            return 0;
    }
    return 1;
}

__attribute__((noinline)) static uint64_t queens_seq(int n, int row, signed char *cols) {
    if (row == n)
        return 1;
    uint64_t count = 0;
    for (int c = 0; c < n; c++) {
        if (safe(cols, row, c)) {
            cols[row] = (signed char)c;
            count += queens_seq(n, row + 1, cols);
        }
    }
    return count;
}

static uint64_t queens_task(int n, int row, const signed char *cols_in, int cutoff) {
    if (row == n)
        return 1;
    signed char cols[MAXN];
    memcpy(cols, cols_in, (size_t)row);
    if (row >= cutoff)
        return queens_seq(n, row, cols);
    uint64_t counts[MAXN] = {0};
    for (int c = 0; c < n; c++) {
        if (!safe(cols, row, c))
            continue;
#pragma omp task firstprivate(c) shared(counts)
        {
            signed char mine[MAXN];
            memcpy(mine, cols, (size_t)row);
            mine[row] = (signed char)c;
            counts[c] = queens_task(n, row + 1, mine, cutoff);
        }
    }
#pragma omp taskwait
    uint64_t total = 0;
    for (int c = 0; c < n; c++)
        total += counts[c];
    return total;
}

int main(int argc, char **argv) {
    char inputs[160];
    snprintf(inputs, sizeof inputs,
             "{\"cutoff\":{\"n\":[%d,%d,%d],\"cutoff\":%d},\"nocutoff\":{\"n\":[%d,%d,%d]}}",
             n_cutoff[0], n_cutoff[1], n_cutoff[2], default_cutoff, n_nocutoff[0], n_nocutoff[1],
             n_nocutoff[2]);
    omp_opts o = {.kernel = "nqueens", .inputs = inputs};
    omp_bench_parse(argc, argv, &o, usage, variants);
    int nocut = !strcmp(o.variant, "nocutoff");
    int n = o.n > 0 ? (int)o.n : (nocut ? n_nocutoff : n_cutoff)[o.input_index];
    if (n > MAXN)
        bench_usage_error(usage, "--n is at most 17", NULL);
    int cutoff = nocut ? n : (o.cutoff >= 0 ? (int)o.cutoff : default_cutoff);
    double times[o.reps];
    uint64_t result = 0;
    int verified = 1;
    for (int r = 0; r < o.reps; r++) {
        signed char cols[MAXN] = {0};
        double t0 = bench_now();
        if (o.seq) {
            result = queens_seq(n, 0, cols);
        } else {
#pragma omp parallel
#pragma omp single
            result = queens_task(n, 0, cols, cutoff);
        }
        times[r] = bench_now() - t0;
        if (result != solutions[n]) {
            fprintf(stderr, "nqueens(%d): %llu solutions, expected %llu\n", n,
                    (unsigned long long)result, (unsigned long long)solutions[n]);
            verified = 0;
        }
    }
    char fig[128];
    snprintf(fig, sizeof fig, "\"n\":%d,\"cutoff\":%d,\"solutions\":%llu", n, nocut ? -1 : cutoff,
             (unsigned long long)result);
    omp_bench_result(&o, times, o.reps, verified, fig);
    return verified ? 0 : 1;
}
