/* bench/common.c -- see common.h. */
#include "common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(const double *v, int n) {
    double *s = malloc((size_t)n * sizeof *s);
    if (!s) {
        perror("malloc");
        exit(1);
    }
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double m = (n % 2) ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

void bench_usage_error(const char *usage, const char *what, const char *arg) {
    fprintf(stderr, "error: %s%s%s\nusage: %s\n", what, arg ? ": " : "", arg ? arg : "", usage);
    exit(2);
}

void bench_help(const char *usage) {
    printf("usage: %s\n", usage);
    exit(0);
}

const char *bench_str_arg(int argc, char **argv, int *i, const char *usage) {
    if (*i + 1 >= argc)
        bench_usage_error(usage, "missing value for option", argv[*i]);
    *i += 1;
    return argv[*i];
}

long bench_int_arg(int argc, char **argv, int *i, long lo, long hi, const char *usage) {
    const char *opt = argv[*i];
    const char *s = bench_str_arg(argc, argv, i, usage);
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        char what[128];
        snprintf(what, sizeof what, "option %s needs an integer in [%ld, %ld]", opt, lo, hi);
        bench_usage_error(usage, what, s);
    }
    return v;
}

void bench_print_times(FILE *f, const double *t, int n) {
    fputs("\"times\":[", f);
    for (int k = 0; k < n; k++)
        fprintf(f, "%s%.9f", k ? "," : "", t[k]);
    fputc(']', f);
}
