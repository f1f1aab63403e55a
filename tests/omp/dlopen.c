/* herd's OpenMP library loaded the way an extension module loads it: by
 * dlopen after start-up (a Python extension built with -fopenmp, say), under
 * each of its names, and the omp_* routines found by dlsym (an unversioned
 * lookup, as ctypes does) and by dlvsym under both ABIs' versions (OMP_1.0:
 * libgomp's, what gcc-built code asks for; VERSION: LLVM libomp's, what
 * clang-built code asks for). All must name one routine in one copy.
 * usage: omp_dlopen LIBDIR (holding libgomp.so.1 and libomp.so.5) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "FAIL: %s (%s)\n", what, dlerror());
        failures++;
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s LIBDIR\n", argv[0]);
        return 2;
    }
    char gomp[4096], omp[4096];
    snprintf(gomp, sizeof gomp, "%s/libgomp.so.1", argv[1]);
    snprintf(omp, sizeof omp, "%s/libomp.so.5", argv[1]);
    void *hg = dlopen(gomp, RTLD_NOW | RTLD_GLOBAL);
    check(hg != NULL, "dlopen libgomp.so.1 after start-up (static TLS small enough)");
    void *ho = dlopen(omp, RTLD_NOW | RTLD_GLOBAL);
    check(ho != NULL, "dlopen libomp.so.5");
    if (!hg || !ho)
        return 1;
    check(hg == ho, "libgomp.so.1 and libomp.so.5 are one loaded copy");
    int (*plain)(void) = (int (*)(void))dlsym(hg, "omp_get_max_threads");
    check(plain != NULL, "dlsym omp_get_max_threads (one default version)");
    void *g = dlvsym(hg, "omp_get_max_threads", "OMP_1.0");
    void *l = dlvsym(ho, "omp_get_max_threads", "VERSION");
    check(g != NULL && g == (void *)plain, "dlvsym omp_get_max_threads@OMP_1.0 is the routine");
    check(l != NULL && l == (void *)plain, "dlvsym omp_get_max_threads@VERSION is the routine");
    check(dlvsym(ho, "__kmpc_fork_call", "VERSION") != NULL, "__kmpc_fork_call@VERSION");
    check(dlvsym(hg, "GOMP_parallel", "GOMP_4.0") != NULL, "GOMP_parallel@GOMP_4.0");
    if (plain) {
        int n = plain();
        check(n >= 1, "omp_get_max_threads() answers");
        printf("omp_get_max_threads() = %d through dlsym\n", n);
    }
    if (failures)
        return 1;
    printf("ok\n");
    return 0;
}
