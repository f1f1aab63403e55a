/* parallel (num_threads, if, nesting 3 levels), barrier, single (+
 * copyprivate), master/masked, critical (unnamed, named), atomic,
 * threadprivate + copyin, locks (simple, nest), the query API. */
#include "check_omp.h"

#include <omp.h>
#include <pthread.h>
#include <string.h>

static int tp = -1;
#pragma omp threadprivate(tp)

static void test_team(void) {
    int n = omp_get_max_threads();
    int seen[64] = {0};
    pthread_t threads[64];
    int nt = 0;
#pragma omp parallel
    {
        int me = omp_get_thread_num();
        CHECK(me >= 0 && me < omp_get_num_threads());
        CHECK(omp_in_parallel() || omp_get_num_threads() == 1);
#pragma omp critical
        {
            seen[me]++;
            threads[me] = pthread_self();
        }
#pragma omp barrier
#pragma omp single
        nt = omp_get_num_threads();
    }
    CHECK_EQ(nt, n); /* nthreads-var threads (OMP_NUM_THREADS, within the workers) */
    for (int i = 0; i < nt; i++)
        CHECK_EQ(seen[i], 1);
    /* The outermost team's members are distinct kernel threads. */
    for (int i = 0; i < nt; i++)
        for (int j = i + 1; j < nt; j++)
            CHECK(!pthread_equal(threads[i], threads[j]));
    int ran = 0;
#pragma omp parallel if (0)
    {
        CHECK_EQ(omp_get_num_threads(), 1);
        ran++;
    }
    CHECK_EQ(ran, 1);
    int two = 0;
#pragma omp parallel num_threads(2) reduction(+ : two)
    two += omp_get_num_threads() == 2;
    if (n >= 2) /* the runs have at least 2 workers then; fewer is another test's */
        CHECK_EQ(two, 2);
}

static void test_barrier_phases(void) {
    enum { PHASES = 50 };
    static int arrived[PHASES];
    memset(arrived, 0, sizeof arrived);
#pragma omp parallel
    {
        int n = omp_get_num_threads();
        for (int p = 0; p < PHASES; p++) {
#pragma omp atomic
            arrived[p]++;
#pragma omp barrier
            CHECK_EQ(arrived[p], n); /* everyone arrived before anyone left */
#pragma omp barrier
        }
    }
}

static void test_single_master(void) {
    int singles = 0, masters = 0, got = 0, copies = 0;
#pragma omp parallel reduction(+ : got, copies)
    {
        for (int r = 0; r < 20; r++) {
#pragma omp single
            singles++;
#pragma omp single nowait
            {
#pragma omp atomic
                singles++;
            }
#pragma omp barrier
        }
#pragma omp master
        masters++;
#pragma omp masked
        masters++;
        int v = -1;
#pragma omp single copyprivate(v)
        v = 42;
        got += v == 42;
        copies++;
    }
    CHECK_EQ(singles, 40);
    CHECK_EQ(masters, 2);
    CHECK_EQ(got, copies);
}

static void test_critical_atomic(void) {
    long a = 0, b = 0, c = 0;
    long double ld = 0;
    int n = 0;
#pragma omp parallel
    {
#pragma omp single
        n = omp_get_num_threads();
        for (int i = 0; i < 1000; i++) {
#pragma omp critical
            a++;
#pragma omp critical(named_one)
            b += 2;
#pragma omp atomic
            c += 3;
#pragma omp atomic
            ld += 1.0L; /* long double: GOMP_atomic_start/end */
        }
    }
    CHECK_EQ(a, 1000L * n);
    CHECK_EQ(b, 2000L * n);
    CHECK_EQ(c, 3000L * n);
    CHECK_EQ((long)ld, 1000L * n);
}

static void test_threadprivate(void) {
    tp = 7;
#pragma omp parallel copyin(tp)
    {
        CHECK_EQ(tp, 7);
        tp = omp_get_thread_num();
    }
    int ok = 1;
#pragma omp parallel reduction(&& : ok)
    ok = tp == omp_get_thread_num() || omp_get_thread_num() == 0;
    CHECK(ok);
}

/* The locks have the sizes the compiler's omp.h declares (libgomp's, for
 * gcc: 4 and 16 bytes on x86-64; LLVM's, for clang: a pointer each), and
 * the library writes nothing past them: it keeps to the layout of the ABI
 * the program was built for. */
static void test_locks(void) {
    struct {
        omp_lock_t l;
        unsigned char after_l[64];
        omp_nest_lock_t nl;
        unsigned char after_nl[64];
    } m;
    memset(&m, 0xa5, sizeof m);
#ifdef KMP_VERSION_MAJOR /* LLVM's omp.h */
    CHECK_EQ(sizeof m.l, sizeof(void *));
    CHECK_EQ(sizeof m.nl, sizeof(void *));
#else
    CHECK_EQ(sizeof m.l, 4);
    CHECK_EQ(sizeof m.nl, 16);
#endif
    omp_lock_t *l = &m.l;
    omp_nest_lock_t *nl = &m.nl;
    omp_init_lock(l);
    omp_init_nest_lock(nl);
    long count = 0, ncount = 0;
    int n = 0;
#pragma omp parallel
    {
#pragma omp single
        n = omp_get_num_threads();
        for (int i = 0; i < 500; i++) {
            omp_set_lock(l);
            count++;
            omp_unset_lock(l);
            omp_set_nest_lock(nl);
            omp_set_nest_lock(nl);
            CHECK(omp_test_nest_lock(nl) == 3);
            ncount++;
            omp_unset_nest_lock(nl);
            omp_unset_nest_lock(nl);
            omp_unset_nest_lock(nl);
        }
    }
    CHECK_EQ(count, 500L * n);
    CHECK_EQ(ncount, 500L * n);
    CHECK(omp_test_lock(l));
    CHECK(!omp_test_lock(l));
    omp_unset_lock(l);
    omp_destroy_lock(l);
    omp_destroy_nest_lock(nl);
    for (size_t i = 0; i < sizeof m.after_l; i++) {
        CHECK_EQ(m.after_l[i], 0xa5);
        CHECK_EQ(m.after_nl[i], 0xa5);
    }
}

static void test_nested(void) {
    omp_set_max_active_levels(3);
    int total = 0, levels_ok = 1;
#pragma omp parallel num_threads(2) reduction(+ : total) reduction(&& : levels_ok)
    {
#pragma omp parallel num_threads(2) reduction(+ : total) reduction(&& : levels_ok)
        {
#pragma omp parallel num_threads(3) reduction(+ : total) reduction(&& : levels_ok)
            {
                total++;
                levels_ok = omp_get_level() == 3 && omp_get_team_size(3) == omp_get_num_threads() &&
                            omp_get_ancestor_thread_num(3) == omp_get_thread_num() &&
                            omp_get_ancestor_thread_num(0) == 0;
#pragma omp barrier
            }
        }
    }
    CHECK(levels_ok);
    /* Team sizes: outer may be limited by the thread limit; inner ones not. */
    CHECK(total == 12 || total == 6);
    omp_set_max_active_levels(1);
#pragma omp parallel num_threads(2)
    {
#pragma omp parallel num_threads(2)
        CHECK_EQ(omp_get_num_threads(), 1); /* inactive: max-active-levels 1 */
    }
}

static void test_api(void) {
    CHECK_EQ(omp_get_thread_num(), 0);
    CHECK_EQ(omp_get_num_threads(), 1);
    CHECK(!omp_in_parallel());
    CHECK_EQ(omp_get_level(), 0);
    CHECK(omp_get_num_procs() >= 1);
    double t0 = omp_get_wtime();
    CHECK(omp_get_wtick() > 0);
    CHECK(omp_get_wtime() >= t0);
    omp_set_num_threads(2);
    CHECK_EQ(omp_get_max_threads(), 2);
    int n = 0;
#pragma omp parallel
    n = omp_get_num_threads();
    CHECK(n <= 2);
    omp_sched_t k;
    int c;
    omp_set_schedule(omp_sched_guided, 3);
    omp_get_schedule(&k, &c);
    CHECK(k == omp_sched_guided && c == 3);
    CHECK(!omp_in_final());
    CHECK(omp_is_initial_device());
}

int main(void) {
    test_api();
    omp_set_num_threads(omp_get_thread_limit() < 64 ? omp_get_thread_limit() : 64);
    for (int rep = 0; rep < 3; rep++) {
        test_team();
        test_barrier_phases();
        test_single_master();
        test_critical_atomic();
        test_threadprivate();
        test_locks();
        test_nested();
        omp_set_max_active_levels(1);
    }
    printf("omp parallel: ok\n");
    return 0;
}
