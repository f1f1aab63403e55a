/* bench/omp/omp_bench.h -- what the OpenMP task kernels share: the common
 * options, the thread count and OpenMP library actually in use, and the one
 * JSON line each kernel ends with.
 *
 * Every kernel here is plain C with `#pragma omp`, built with gcc -fopenmp,
 * so the same binary runs on libgomp, on LLVM's libomp (a libgomp.so.1 that
 * is libomp) and on herd's libgomp-compatible library; and again with clang
 * -fopenmp as omp_<kernel>_clang (LLVM's __kmpc_* ABI), which runs on
 * libomp.so.5 and on herd's lib/herd/libomp.so.5. Common options:
 *
 *   --input small|medium|large   the problem size (small: well under a
 *                                second, for tests; medium: a few seconds on
 *                                2 cores; large: the papers' sizes)
 *   --variant V                  the kernel's variants (first is default)
 *   --seq                        run the sequential twin, no OpenMP at all
 *   --reps R                     repetitions in this process (default 1)
 *   --n N, --cutoff C            override the input's size / cut-off
 *   --list-inputs                print {"kernel", "variants", "inputs"} as
 *                                one JSON line and exit: the sizes each input
 *                                stands for, where the kernel publishes them
 *                                (the harness checks its own copy against it)
 *
 * The JSON line: {"kernel", "variant", "input", "mode": "seq"|"omp",
 * "workers" (= "threads", the team size the runtime gave; 0 for --seq),
 * "omp_lib" (the file that provides omp_get_num_threads, so a run cannot
 * silently use another runtime than the one asked for), "seconds" (median
 * of the reps), "times", "verified", and the kernel's own figures}. */
#ifndef HERD_BENCH_OMP_BENCH_H
#define HERD_BENCH_OMP_BENCH_H

#include "common.h"

#include <stdint.h>
#include <stdlib.h>

enum { INPUT_SMALL = 0, INPUT_MEDIUM = 1, INPUT_LARGE = 2 };

typedef struct omp_opts {
    const char *kernel;
    const char *input;   /* small, medium, large */
    int input_index;     /* INPUT_* */
    const char *variant; /* one of the kernel's variants */
    int seq;             /* 1: the sequential twin */
    int reps;
    long n;      /* -1: the input's */
    long cutoff; /* -1: the input's */
    long seed;
    /* Set by the kernel before omp_bench_parse(): its input table as a JSON
     * object, printed by --list-inputs (NULL: printed as null). */
    const char *inputs;
} omp_opts;

/** Parse the common options; variants is NULL-terminated, its first entry
 *  the default. Exits 2 on a bad option (usage printed). */
void omp_bench_parse(int argc, char **argv, omp_opts *o, const char *usage,
                     const char *const *variants);

/** The team size a parallel region gets (0 under --seq). */
int omp_bench_threads(const omp_opts *o);

/** Path of the library providing the OpenMP API in this process. */
const char *omp_bench_lib(void);

/** Figures of one kernel, printed after the common fields: a JSON fragment
 *  without braces, e.g. "\"n\":40,\"result\":102334155" (may be ""). */
void omp_bench_result(const omp_opts *o, const double *times, int done, int verified,
                      const char *figures);

/** splitmix64: the seeded generator every kernel draws its input from. */
static inline uint64_t omp_bench_rand(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/** A double on [0, 1) from the generator. */
static inline double omp_bench_unit(uint64_t *state) {
    return (double)(omp_bench_rand(state) >> 11) * (1.0 / 9007199254740992.0);
}

/** malloc or exit(1) with a message. */
void *omp_bench_alloc(size_t bytes);

/** The cache line the per-thread blocks below are aligned and padded to. */
#define OMP_BENCH_LINE 64

/** As omp_bench_alloc, aligned to OMP_BENCH_LINE: for blocks that threads
 *  write, one per thread. From plain malloc such a block may straddle two
 *  lines and share one with its neighbour, and whether it does depends on
 *  the heap's layout, which each runtime's start-up leaves different (the
 *  OpenMP UTS's counters: 16 bytes into a line under libgomp, 48 under
 *  herd-omp, where the two threads' counters shared a line). */
void *omp_bench_alloc_lines(size_t bytes);

#endif /* HERD_BENCH_OMP_BENCH_H */
