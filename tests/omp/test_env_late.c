/* The environment a program changes itself (setenv in main) before its
 * first region: libgomp reads OMP_* when it loads, so a gcc program keeps
 * what it started with; libomp reads them at the program's first call into
 * it, so a clang program sees its change. herd does as each program's own
 * runtime does (icv.c, herd__omp_env_again). What was read stands, under
 * both, once the program used it: after omp_set_num_threads, or after a
 * region. Each case runs in a child of its own (omp_test_rerun): the
 * library reads the environment once per process. */
#include "check_omp.h"

#include <string.h>

#if defined(__clang__)
#define READ_AT_FIRST_CALL 1 /* libomp's rule, and herd's for LLVM's ABI */
#else
#define READ_AT_FIRST_CALL 0 /* libgomp's */
#endif

static int team_size(void) {
    int n = 0;
#pragma omp parallel
#pragma omp single
    n = omp_get_num_threads();
    return n;
}

static void late(void) {
    const char *at_start = getenv("OMP_NUM_THREADS");
    CHECK(at_start != NULL); /* the parent set it */
    int before = atoi(at_start);
    setenv("OMP_NUM_THREADS", "3", 1);
    setenv("OMP_SCHEDULE", "guided,7", 1);
    omp_sched_t k;
    int c;
    int n = team_size();
    omp_get_schedule(&k, &c);
    if (READ_AT_FIRST_CALL) {
        CHECK_EQ(n, 3);
        CHECK_EQ(k & ~omp_sched_monotonic, omp_sched_guided);
        CHECK_EQ(c, 7);
    } else {
        CHECK_EQ(n, before);
        CHECK(k != omp_sched_guided || c != 7);
    }
    CHECK_EQ(omp_get_max_threads(), n);
}

/* the program set the ICV itself first: its value stands */
static void touched(void) {
    omp_set_num_threads(4);
    setenv("OMP_NUM_THREADS", "3", 1);
    CHECK_EQ(team_size(), 4);
}

/* a region ran first: the environment was used */
static void used(void) {
    int n = team_size();
    setenv("OMP_NUM_THREADS", n == 3 ? "4" : "3", 1);
    CHECK_EQ(team_size(), n);
}

int main(int argc, char **argv) {
    if (argc > 1) {
        if (!strcmp(argv[1], "late"))
            late();
        else if (!strcmp(argv[1], "touched"))
            touched();
        else if (!strcmp(argv[1], "used"))
            used();
        else
            CHECK(0);
        return 0;
    }
    static const char *const env[] = {"OMP_NUM_THREADS=2", "OMP_SCHEDULE", "OMP_DYNAMIC", NULL};
    CHECK(omp_test_rerun(env, "late", NULL, NULL));
    CHECK(omp_test_rerun(env, "touched", NULL, NULL));
    CHECK(omp_test_rerun(env, "used", NULL, NULL));
    puts("env_late: ok");
    return 0;
}
