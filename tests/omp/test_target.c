/* target regions on the host: each runs as the initial task of a new
 * device data environment (a team of one at level 0, outside any league,
 * with the initial ICVs, whatever team encounters it); firstprivate data
 * (arrays too) is copied when the construct is met; target, target update
 * and target enter/exit data order with depend, and nowait defers the
 * region as a task that taskwait waits for. */
#include "check_omp.h"

enum { N = 64, REPS = 200 };

/* Not in clang builds: there the region is the encountering task's own
 * code (OMP_TEST_TARGET_INLINE, check_omp.h), whatever the runtime. */
#ifndef OMP_TEST_TARGET_INLINE
static void check_initial_task(int *bad) {
    if (omp_get_level() != 0 || omp_get_active_level() != 0 || omp_in_parallel() ||
        omp_get_num_threads() != 1 || omp_get_thread_num() != 0 || omp_get_num_teams() != 1 ||
        omp_get_team_num() != 0)
        (*bad)++;
}

static void test_environment(void) {
    int initial = omp_get_max_threads();
    omp_set_num_threads(1); /* the host task's ICV: not the device's */
    int bad = 0, max = 0;
#pragma omp target map(tofrom : bad, max)
    {
        check_initial_task(&bad);
        max = omp_get_max_threads();
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(max, initial);
    omp_set_num_threads(initial);
    int inside = 0;
#pragma omp parallel num_threads(2) reduction(+ : bad, inside)
    {
#pragma omp target map(tofrom : bad)
        check_initial_task(&bad);
        inside++;
    }
    CHECK_EQ(bad, 0);
    CHECK(inside >= 1);
#pragma omp teams num_teams(2)
    {
#pragma omp parallel if (0)
#pragma omp target map(tofrom : bad)
        check_initial_task(&bad);
    }
    CHECK_EQ(bad, 0);
#ifndef OMP_TEST_NO_TARGET_THREAD_LIMIT
    int limit = 0;
#pragma omp target thread_limit(1) map(from : limit)
    limit = omp_get_thread_limit();
    CHECK_EQ(limit, 1);
#endif
}
#endif

static void test_firstprivate(void) {
    int a[N], seen[N], s = 5;
    for (int i = 0; i < N; i++)
        a[i] = i;
#pragma omp target firstprivate(a, s) map(from : seen)
    {
        for (int i = 0; i < N; i++) {
            seen[i] = a[i] + s;
            a[i] = -1; /* the region's copy */
        }
        s = 0;
    }
    for (int i = 0; i < N; i++) {
        CHECK_EQ(a[i], i);
        CHECK_EQ(seen[i], i + 5);
    }
    CHECK_EQ(s, 5);
    /* a deferred region gets the values the construct saw */
    int out[N];
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp target nowait firstprivate(a) map(from : out)
        for (int i = 0; i < N; i++)
            out[i] = a[i];
        for (int i = 0; i < N; i++)
            a[i] = 1000;
#pragma omp taskwait
    }
    for (int i = 0; i < N; i++)
        CHECK_EQ(out[i], i);
}

static void test_depend(void) {
    int wrong = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    for (int r = 0; r < REPS; r++) {
        int x = 0, y = 0, a = 0, b = 0;
        (void)a, (void)b; /* named by depend and map clauses only (a too in clang builds) */
#pragma omp task depend(out : x) shared(x)
        x = 1;
#pragma omp target nowait depend(inout : x) map(tofrom : x)
        x *= 2;
#pragma omp task depend(in : x) shared(x, wrong)
        if (x != 2) {
#pragma omp atomic
            wrong++;
        }
        /* not nowait: the region waits for the task before it */
#pragma omp task depend(out : y) shared(y)
        y = 3;
#pragma omp target depend(in : y) map(tofrom : y)
        y += 1;
        if (y != 4)
            wrong++;
            /* target update orders like a task with these dependences (not in
             * clang builds, which drop the construct: OMP_TEST_TARGET_INLINE) */
#ifndef OMP_TEST_TARGET_INLINE
#pragma omp task depend(out : a) shared(a)
        a = 7;
#pragma omp target update to(a) depend(in : a) depend(out : b) nowait
#pragma omp task depend(in : b) shared(a, wrong)
        if (a != 7) {
#pragma omp atomic
            wrong++;
        }
#pragma omp target enter data map(to : b) depend(inout : b)
        if (a != 7)
            wrong++;
#endif
#pragma omp taskwait
    }
    CHECK_EQ(wrong, 0);
}

int main(void) {
#ifndef OMP_TEST_TARGET_INLINE
    test_environment();
#endif
    test_firstprivate();
    test_depend();
#ifndef OMP_TEST_TARGET_INLINE
    test_environment();
#endif
    puts("target: ok");
    return 0;
}
