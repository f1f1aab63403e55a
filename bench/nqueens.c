/* bench/nqueens.c -- count the n-queens solutions on herd, and the twin.
 *
 *   bench_nqueens [--n N] [--cutoff DEPTH] [--workers W] [--reps R] [--seq]
 *                 [--stack BYTES]
 *
 * Backtracking one row at a time. Above the cut-off depth (default 3, the
 * same as bench/omp/nqueens.c; --cutoff N makes every placement a task)
 * each legal column of the next row is a child task whose argument block
 * carries the partial board (the columns so far, one byte each) and where
 * to put its count; the parent waits and adds the counts up. Below it, the
 * search is the plain recursive function that the sequential twin --seq
 * runs from the root. Verification: the known number of solutions.
 *
 * The last line on stdout is one JSON object (see tools/herd_bench). */
#include "common.h"

#include <herd/herd.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "bench_nqueens [--n N] [--cutoff DEPTH] [--workers W] [--reps R] "
                            "[--seq] [--stack BYTES]";

#define MAXN 17

/* Solutions for n = 0..17 (OEIS A000170). */
static const uint64_t solutions[MAXN + 1] = {
    1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512,
    95815104};

static int n_queens, cutoff = 3;
static uint64_t spawn_fallbacks;

typedef struct q_arg {
    uint64_t *out;          /* in the parent's frame */
    int8_t row;             /* queens placed so far */
    int8_t cols[MAXN];      /* their columns */
} q_arg; /* 8 + 1 + 17 = 26 bytes: inline in a queue slot */

static inline int safe(const int8_t *cols, int row, int col) {
    for (int r = 0; r < row; r++) {
        int d = cols[r] - col;
        if (d == 0 || d == row - r || d == r - row)
            return 0;
    }
    return 1;
}

__attribute__((noinline)) static uint64_t queens_seq(int row, int8_t *cols) {
    if (row == n_queens)
        return 1;
    uint64_t count = 0;
    for (int c = 0; c < n_queens; c++)
        if (safe(cols, row, c)) {
            cols[row] = (int8_t)c;
            count += queens_seq(row + 1, cols);
        }
    return count;
}

static void queens_task(void *p) {
    const q_arg *a = p;
    int row = a->row;
    if (row >= cutoff || row == n_queens) {
        int8_t cols[MAXN];
        memcpy(cols, a->cols, sizeof cols);
        *a->out = queens_seq(row, cols);
        return;
    }
    uint64_t counts[MAXN] = {0};
    for (int c = 0; c < n_queens; c++) {
        if (!safe(a->cols, row, c))
            continue;
        q_arg child = {&counts[c], (int8_t)(row + 1), {0}};
        memcpy(child.cols, a->cols, sizeof child.cols);
        child.cols[row] = (int8_t)c;
        if (herd_spawn(queens_task, &child, sizeof child) != HERD_OK) {
            __atomic_fetch_add(&spawn_fallbacks, 1, __ATOMIC_RELAXED);
            queens_task(&child);
        }
    }
    herd_wait();
    uint64_t total = 0;
    for (int c = 0; c < n_queens; c++)
        total += counts[c];
    *a->out = total;
}

int main(int argc, char **argv) {
    long workers = 0, reps = 1, stack = 0;
    int seq = 0;
    n_queens = 12;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n"))
            n_queens = (int)bench_int_arg(argc, argv, &i, 1, MAXN, usage);
        else if (!strcmp(argv[i], "--cutoff"))
            cutoff = (int)bench_int_arg(argc, argv, &i, 0, MAXN, usage);
        else if (!strcmp(argv[i], "--workers"))
            workers = bench_int_arg(argc, argv, &i, 0, 4096, usage);
        else if (!strcmp(argv[i], "--reps"))
            reps = bench_int_arg(argc, argv, &i, 1, 100000, usage);
        else if (!strcmp(argv[i], "--stack"))
            stack = bench_int_arg(argc, argv, &i, 0, 1L << 30, usage);
        else if (!strcmp(argv[i], "--seq"))
            seq = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            bench_help(usage);
        else
            bench_usage_error(usage, "unknown option", argv[i]);
    }
    if (!seq) {
        herd_config cfg = {.workers = (int)workers, .stack_size = (size_t)stack};
        int rc = herd_start(&cfg);
        if (rc != HERD_OK) {
            fprintf(stderr, "herd_start: %s\n", herd_strerror(rc));
            printf("{\"kernel\":\"nqueens\",\"params\":{\"n\":%d,\"cutoff\":%d},\"workers\":%ld,"
                   "\"verified\":false,\"error\":\"herd_start: %s\"}\n",
                   n_queens, cutoff, workers, herd_strerror(rc));
            return 1;
        }
        workers = herd_num_workers();
    } else {
        workers = 0;
    }
    double *times = malloc((size_t)reps * sizeof *times);
    if (!times) {
        perror("malloc");
        return 1;
    }
    int verified = 1, done = 0;
    uint64_t result = 0;
    for (long r = 0; r < reps; r++) {
        q_arg root = {&result, 0, {0}};
        double t0 = bench_now();
        if (seq) {
            result = queens_seq(0, root.cols);
        } else {
            int rc = herd_run(queens_task, &root, sizeof root);
            if (rc != HERD_OK) {
                fprintf(stderr, "herd_run: %s\n", herd_strerror(rc));
                verified = 0;
                break;
            }
        }
        times[r] = bench_now() - t0;
        done++;
        if (result != solutions[n_queens]) {
            fprintf(stderr, "nqueens(%d): %llu solutions, expected %llu\n", n_queens,
                    (unsigned long long)result, (unsigned long long)solutions[n_queens]);
            verified = 0;
        }
    }
    if (spawn_fallbacks)
        fprintf(stderr, "note: %llu children ran inline (queue full)\n",
                (unsigned long long)spawn_fallbacks);
    if (!seq)
        herd_stop();
    printf("{\"kernel\":\"nqueens\",\"params\":{\"n\":%d,\"cutoff\":%d},\"workers\":%ld,"
           "\"seconds\":%.9f,\"verified\":%s,\"reps\":%ld,\"solutions\":%llu,",
           n_queens, cutoff, workers, done ? bench_median(times, done) : 0.0,
           verified ? "true" : "false", reps, (unsigned long long)result);
    bench_print_times(stdout, times, done);
    printf("}\n");
    free(times);
    return verified ? 0 : 1;
}
