/* Assertions for the OpenMP programs: they build with gcc -fopenmp (the
 * libgomp ABI) and with clang -fopenmp (LLVM's __kmpc ABI), and run against
 * the system libgomp or libomp or herd's library, so no herd header is used. */
#ifndef HERD_CHECK_OMP_H
#define HERD_CHECK_OMP_H
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                  \
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

/* What the clang builds leave out, each where it is used (whole programs
 * left out are listed in tests/omp/CMakeLists.txt). First, syntax clang 14
 * (the clang checked besides gcc 12) does not take: the bound names that
 * version, so a newer clang compiles these parts, and a compile error there
 * means the bound wants raising, not lowering. */
#if defined(__clang__) && __clang_major__ <= 14
#define OMP_TEST_NO_SCOPE 1               /* the scope directive (OpenMP 5.1) */
#define OMP_TEST_NO_STRICT 1              /* grainsize/num_tasks(strict: ...) (5.1) */
#define OMP_TEST_NO_TARGET_THREAD_LIMIT 1 /* thread_limit on target (5.1) */
#endif
/* Then what clang compiles otherwise than the program says, whatever the
 * runtime (the compiler's code is wrong or makes no runtime call). */
#if defined(__clang__)
/* "cannot be of variably-modified type": a VLA in a taskloop's firstprivate. */
#define OMP_TEST_NO_TASKLOOP_VLA 1
/* Without -fopenmp-targets clang compiles a target region as plain host
 * code run by the encountering task (no runtime call unless nowait or
 * depend: no new data environment, no initial task, the host's ICVs), and
 * drops target update and target enter/exit data, depend clauses too. */
#define OMP_TEST_TARGET_INLINE 1
/* scan in a worksharing loop: clang 14 gives garbage to the iterations past
 * the first thread's (llvm-project issue 87466, open in 2024) and does not
 * copy the final value out (issue 53344). */
#define OMP_TEST_NO_SCAN 1
/* lastprivate(conditional:) in C: clang does not record which iteration
 * assigned (llvm-project pull request 156004, August 2025), so the value
 * copied out is any thread's. */
#define OMP_TEST_NO_LASTPRIVATE_CONDITIONAL 1
#endif

/* OMP_TEST_EXPECT_LIB=NAME: the run must use that OpenMP library: the
 * program's omp_* calls and the compiler's entry point for parallel regions
 * resolve into a file whose real name (symbolic links resolved) contains
 * NAME: herd-omp (herd's libherd-omp, whichever name the loader found it
 * by: libgomp.so.1, libomp.so.5) or libomp (LLVM's). */
#include <dlfcn.h>
#include <limits.h>
#include <omp.h>
#include <string.h>
#if defined(__clang__)
void __kmpc_fork_call(void *loc, int argc, void *microtask, ...);
#define OMP_TEST_FORK_ENTRY "__kmpc_fork_call"
#define OMP_TEST_FORK_FN ((void *)__kmpc_fork_call)
#else
void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);
#define OMP_TEST_FORK_ENTRY "GOMP_parallel"
#define OMP_TEST_FORK_FN ((void *)GOMP_parallel)
#endif
static void check_omp_symbol_in(const char *name, void *fn, const char *want) {
    Dl_info info;
    char real[PATH_MAX];
    CHECK(dladdr(fn, &info) && info.dli_fname);
    CHECK(realpath(info.dli_fname, real));
    const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
    if (!strstr(base, want)) {
        fprintf(stderr, "OpenMP library in use for %s: %s, expected %s\n", name, real, want);
        _exit(1);
    }
}
/* Whether this run uses herd's library, or LLVM's libomp (for the few
 * checks where libomp 14 differs; each use says how): the file
 * omp_get_thread_num is in, found by the constructor below, before any
 * thread of the runtime's. */
static int omp_test_herd, omp_test_llvm_libomp;
__attribute__((unused)) static int omp_test_on_herd(void) {
    return omp_test_herd;
}
__attribute__((unused)) static int omp_test_on_llvm_libomp(void) {
    return omp_test_llvm_libomp;
}
/* Whether ThreadSanitizer's runtime is in the process (omp-san preloads it
 * for herd's TSan build): it runs a signal handler only at the thread's
 * next intercepted call, so herd installs no rescue handler there
 * (core/rescue.c), and a test leaves out what needs one. */
__attribute__((unused)) static int omp_test_under_tsan(void) {
    return dlsym(RTLD_DEFAULT, "__tsan_init") != NULL;
}
__attribute__((constructor)) static void check_omp_library(void) {
    Dl_info info;
    char real[PATH_MAX];
    CHECK(dladdr((void *)omp_get_thread_num, &info) && info.dli_fname);
    CHECK(realpath(info.dli_fname, real));
    const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
    omp_test_herd = strstr(base, "herd-omp") != NULL;
    omp_test_llvm_libomp = strncmp(base, "libomp", 6) == 0;
    const char *want = getenv("OMP_TEST_EXPECT_LIB");
    if (!want || !*want)
        return;
    check_omp_symbol_in("omp_get_thread_num", (void *)omp_get_thread_num, want);
    check_omp_symbol_in(OMP_TEST_FORK_ENTRY, OMP_TEST_FORK_FN, want);
}

/* Run this program again with arguments a1, a2, a3 (a NULL ends them) and
 * the environment changed by env: NULL-terminated "NAME=VALUE" (set) or
 * "NAME" (unset) items (the library reads OMP_* when it loads); whether the
 * child exited with status 0. */
#include <sys/wait.h>
__attribute__((unused)) static int omp_test_rerun(const char *const *env, const char *a1,
                                                  const char *a2, const char *a3) {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(n > 0);
    self[n] = '\0';
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        for (; *env; env++) {
            const char *eq = strchr(*env, '=');
            if (!eq) {
                unsetenv(*env);
                continue;
            }
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(eq - *env), *env);
            setenv(name, eq + 1, 1);
        }
        execl(self, self, a1, a2, a3, (char *)NULL);
        _exit(127);
    }
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
