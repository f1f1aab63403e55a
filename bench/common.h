/* bench/common.h -- pieces shared by the herd benchmarks: option parsing,
 * timing and the one-line JSON result every benchmark ends with.
 *
 * Nothing here calls herd, so the sequential twins and the tree generator
 * build and run without the runtime. Each benchmark prints exactly one JSON
 * line on stdout (tools/bench_table.py reads the last line); anything meant
 * for humans goes to stderr. */
#ifndef HERD_BENCH_COMMON_H
#define HERD_BENCH_COMMON_H

#include <stdio.h>

/** Seconds on CLOCK_MONOTONIC: immune to wall-clock steps during a run. */
double bench_now(void);

/** Median of n >= 1 values; v is left untouched (sorted in a copy). */
double bench_median(const double *v, int n);

/** Parse argv[*i + 1] as an integer in [lo, hi] for option argv[*i] and
 *  advance *i past it; prints `usage` and exits 2 on a missing or bad value. */
long bench_int_arg(int argc, char **argv, int *i, long lo, long hi, const char *usage);

/** Return argv[*i + 1] for option argv[*i] and advance *i; exits 2 if absent. */
const char *bench_str_arg(int argc, char **argv, int *i, const char *usage);

/** Print a usage error and exit 2 (the conventional status for bad usage). */
void bench_usage_error(const char *usage, const char *what, const char *arg)
    __attribute__((noreturn));

/** Print "usage: <usage>" on stdout and exit 0 (for --help / -h). */
void bench_help(const char *usage) __attribute__((noreturn));

/** Write `"times":[t0,t1,...]` (no surrounding comma) to f. */
void bench_print_times(FILE *f, const double *t, int n);

#endif /* HERD_BENCH_COMMON_H */
