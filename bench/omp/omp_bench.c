/* bench/omp/omp_bench.c -- see omp_bench.h. */
#define _GNU_SOURCE 1
#include "omp_bench.h"

#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void omp_bench_parse(int argc, char **argv, omp_opts *o, const char *usage,
                     const char *const *variants) {
    o->input = "small";
    o->input_index = INPUT_SMALL;
    o->variant = variants[0];
    o->seq = 0;
    o->reps = 1;
    o->n = -1;
    o->cutoff = -1;
    o->seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--input")) {
            o->input = bench_str_arg(argc, argv, &i, usage);
            if (!strcmp(o->input, "small"))
                o->input_index = INPUT_SMALL;
            else if (!strcmp(o->input, "medium"))
                o->input_index = INPUT_MEDIUM;
            else if (!strcmp(o->input, "large"))
                o->input_index = INPUT_LARGE;
            else
                bench_usage_error(usage, "--input takes small, medium or large", o->input);
        } else if (!strcmp(argv[i], "--variant")) {
            const char *v = bench_str_arg(argc, argv, &i, usage);
            int k = 0;
            while (variants[k] && strcmp(variants[k], v))
                k++;
            if (!variants[k])
                bench_usage_error(usage, "unknown --variant", v);
            o->variant = variants[k];
        } else if (!strcmp(argv[i], "--seq")) {
            o->seq = 1;
        } else if (!strcmp(argv[i], "--reps")) {
            o->reps = (int)bench_int_arg(argc, argv, &i, 1, 100000, usage);
        } else if (!strcmp(argv[i], "--n")) {
            o->n = bench_int_arg(argc, argv, &i, 1, 1L << 40, usage);
        } else if (!strcmp(argv[i], "--cutoff")) {
            o->cutoff = bench_int_arg(argc, argv, &i, 0, 1L << 40, usage);
        } else if (!strcmp(argv[i], "--seed")) {
            o->seed = bench_int_arg(argc, argv, &i, 0, 1L << 40, usage);
        } else if (!strcmp(argv[i], "--list-inputs")) {
            printf("{\"kernel\":\"%s\",\"variants\":[", o->kernel);
            for (int k = 0; variants[k]; k++)
                printf("%s\"%s\"", k ? "," : "", variants[k]);
            printf("],\"inputs\":%s}\n", o->inputs ? o->inputs : "null");
            exit(0);
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            bench_help(usage);
        } else {
            bench_usage_error(usage, "unknown option", argv[i]);
        }
    }
}

int omp_bench_threads(const omp_opts *o) {
    if (o->seq)
        return 0;
    int n = 0;
#pragma omp parallel
#pragma omp single
    n = omp_get_num_threads();
    return n;
}

/* In a position-independent program (gcc's and clang's default here, and
 * CMake's), the address of an imported function is its definition's, so
 * dladdr names the library the dynamic linker bound omp_* to: libgomp.so.1
 * or libomp.so.5 or herd's, whichever ABI the compiler emitted. A non-PIE
 * program's is a stub inside the program itself; that is said, and the
 * harness, which wants a library, fails the run rather than guess. */
const char *omp_bench_lib(void) {
    Dl_info info, self;
    if (!dladdr((void *)omp_get_num_threads, &info) || !info.dli_fname)
        return "unknown";
    if (dladdr((void *)omp_bench_lib, &self) && self.dli_fbase == info.dli_fbase)
        return "unknown (a non-PIE program: omp_get_num_threads is a stub in it)";
    return info.dli_fname;
}

void omp_bench_result(const omp_opts *o, const double *times, int done, int verified,
                      const char *figures) {
    int threads = omp_bench_threads(o);
    printf("{\"kernel\":\"%s\",\"variant\":\"%s\",\"input\":\"%s\",\"mode\":\"%s\","
           "\"workers\":%d,\"threads\":%d,\"omp_lib\":\"%s\",\"seconds\":%.9f,\"verified\":%s,"
           "\"reps\":%d,",
           o->kernel, o->variant, o->input, o->seq ? "seq" : "omp", threads, threads,
           o->seq ? "" : omp_bench_lib(), done ? bench_median(times, done) : 0.0,
           verified ? "true" : "false", o->reps);
    bench_print_times(stdout, times, done);
    if (figures && *figures)
        printf(",%s", figures);
    printf("}\n");
    fflush(stdout);
}

static void *got(void *p, size_t bytes) {
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

void *omp_bench_alloc(size_t bytes) {
    return got(malloc(bytes ? bytes : 1), bytes);
}

void *omp_bench_alloc_lines(size_t bytes) {
    size_t lines = bytes ? (bytes + OMP_BENCH_LINE - 1) / OMP_BENCH_LINE : 1;
    return got(aligned_alloc(OMP_BENCH_LINE, lines * OMP_BENCH_LINE), bytes);
}
