/* OMP_SCHEDULE sets run-sched-var: omp_get_schedule reports the kind and
 * chunk it gave (unset: the ABI's runtime's default, libgomp's dynamic,1
 * for the gcc build, libomp's static for the clang one), and a
 * schedule(runtime) loop runs every iteration once under it. The program runs itself again with
 * each value (the library reads OMP_SCHEDULE when it loads). libomp's own kinds, trapezoidal
 * (reported as its kind 101) and static_steal (reported as dynamic), are
 * checked under herd and libomp; GCC's libgomp refuses them (it warns and
 * keeps its default), so not there. */
#include "check_omp.h"

#include <string.h>

#define N 1000

static void check(int want_kind, int want_chunk) {
    omp_sched_t kind;
    int chunk;
    omp_get_schedule(&kind, &chunk);
    if (want_kind == omp_sched_static) /* static is monotonic: libgomp says so, libomp not */
        kind = (omp_sched_t)((int)kind & ~(int)omp_sched_monotonic);
    if ((int)kind != want_kind || chunk != want_chunk)
        fprintf(stderr, "OMP_SCHEDULE=%s: omp_get_schedule gives (%d, %d), want (%d, %d)\n",
                getenv("OMP_SCHEDULE") ? getenv("OMP_SCHEDULE") : "(unset)", (int)kind, chunk,
                want_kind, want_chunk);
    CHECK_EQ((int)kind, want_kind);
    CHECK_EQ(chunk, want_chunk);
    static int hits[N];
#pragma omp parallel
    {
#pragma omp for schedule(runtime)
        for (int i = 0; i < N; i++)
            hits[i]++;
    }
    for (int i = 0; i < N; i++)
        CHECK_EQ(hits[i], 1);
}

int main(int argc, char **argv) {
    if (argc > 3 && !strcmp(argv[1], "child")) {
        check(atoi(argv[2]), atoi(argv[3]));
        return 0;
    }
    static const struct {
        const char *value;
        int kind, chunk, libomp_own;
    } cases[] = {
    /* unset: the implementation's default, each ABI's runtime's own */
#ifdef __clang__
        {NULL, omp_sched_static, 0, 0},
#else
        {NULL, omp_sched_dynamic, 1, 0},
#endif
        {"static,10", omp_sched_static, 10, 0},
        {"dynamic", omp_sched_dynamic, 1, 0},
        {"dynamic,11", omp_sched_dynamic, 11, 0},
        {"guided,12", omp_sched_guided, 12, 0},
        {"monotonic:dynamic,3", omp_sched_dynamic | omp_sched_monotonic, 3, 0},
        {"trapezoidal", 101, 1, 1},
        {"trapezoidal,13", 101, 13, 1},
        {"static_steal,14", omp_sched_dynamic, 14, 1},
    };
    int libgomp = !omp_test_on_herd() && !omp_test_on_llvm_libomp();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].libomp_own && libgomp)
            continue;
        char env0[64], kind[16], chunk[16];
        snprintf(env0, sizeof env0, "OMP_SCHEDULE%s%s", cases[i].value ? "=" : "",
                 cases[i].value ? cases[i].value : "");
        snprintf(kind, sizeof kind, "%d", cases[i].kind);
        snprintf(chunk, sizeof chunk, "%d", cases[i].chunk);
        const char *env[] = {env0, NULL};
        if (!omp_test_rerun(env, "child", kind, chunk)) {
            fprintf(stderr, "OMP_SCHEDULE=%s: the child's checks failed\n", cases[i].value);
            return 1;
        }
    }
    puts("runtime schedule: ok");
    return 0;
}
