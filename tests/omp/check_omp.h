/* Assertions for the OpenMP programs: they build with gcc -fopenmp only,
 * against the system libgomp or herd's, so no herd header is used. */
#ifndef HERD_CHECK_OMP_H
#define HERD_CHECK_OMP_H
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                 \
            fflush(stderr);                                                                        \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)
#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long ca_ = (long long)(a), cb_ = (long long)(b);                                      \
        if (ca_ != cb_) {                                                                          \
            fprintf(stderr, "%s:%d: %s == %s: %lld != %lld\n", __FILE__, __LINE__, #a, #b, ca_,    \
                    cb_);                                                                          \
            fflush(stderr);                                                                        \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)
#endif

/* OMP_TEST_EXPECT_LIB=herd-omp: the run must use herd's library (the
 * program's omp_* calls resolve into a file whose real path contains it). */
#include <dlfcn.h>
#include <limits.h>
#include <omp.h>
#include <string.h>
__attribute__((constructor)) static void check_omp_library(void) {
    const char *want = getenv("OMP_TEST_EXPECT_LIB");
    if (!want || !*want)
        return;
    Dl_info info;
    char real[PATH_MAX];
    CHECK(dladdr((void *)omp_get_thread_num, &info) && info.dli_fname);
    CHECK(realpath(info.dli_fname, real));
    if (!strstr(real, want)) {
        fprintf(stderr, "OpenMP library in use: %s, expected %s\n", real, want);
        _exit(1);
    }
}
