/* Teams as large as asked, beyond the workers: with 2 workers (OMP_NUM_THREADS=2,
 * or HERD_WORKERS=2 with OMP_NUM_THREADS=4), num_threads(4) gets 4 members with
 * distinct thread numbers and distinct kernel threads, threadprivate data that
 * persists across regions of the same size, exact critical/lock/atomic
 * counts, and members that spin on each other's flags (no yield) complete,
 * in the outermost team and in nested 2x2 and 4x2 teams, whose threads
 * herd keeps from region to region; application threads running regions
 * at once each get their team. With
 * OMP_THREAD_LIMIT set, teams are capped by it as libgomp caps them. */
#include "check_omp.h"

#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAXT 64
#define ROUNDS 3 /* few: oversubscribed spinners hand over once per time slice */

static int tp = -1;
#pragma omp threadprivate(tp)

static long my_tid(void) {
    return (long)syscall(SYS_gettid);
}

/* Member i waits for member i-1's flag to reach round r (member 0 for the
 * last member's r-1), with relaxed loads and no yield, then sets its own. */
static void ring(_Atomic int *flags, int i, int n) {
    for (int r = 1; r <= ROUNDS; r++) {
        if (i == 0) {
            while (atomic_load_explicit(&flags[n - 1], memory_order_relaxed) != r - 1)
                ;
        } else {
            while (atomic_load_explicit(&flags[i - 1], memory_order_relaxed) != r)
                ;
        }
        atomic_store_explicit(&flags[i], r, memory_order_relaxed);
    }
}

static int distinct(const long *v, int n) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (v[i] == v[j])
                return 0;
    return 1;
}

/* The expected size of a team that asks for n threads. */
static int expect(int n) {
    const char *l = getenv("OMP_THREAD_LIMIT");
    int limit = l && *l ? atoi(l) : 0;
    return limit && limit < n ? limit : n;
}

static void test_outer(int asked) {
    int want = expect(asked);
    long tids[MAXT] = {0};
    int nums[MAXT] = {0}, size = 0;
    static _Atomic int flags[MAXT];
    for (int i = 0; i < MAXT; i++)
        atomic_store(&flags[i], 0);
#pragma omp parallel num_threads(asked)
    {
        int i = omp_get_thread_num(), n = omp_get_num_threads();
#pragma omp single
        size = n;
        nums[i]++;
        tids[i] = my_tid();
        tp = 1000 + i;
        ring(flags, i, n);
    }
    CHECK_EQ(size, want);
    for (int i = 0; i < want; i++)
        CHECK_EQ(nums[i], 1);
    CHECK(distinct(tids, want));
    /* The same size again: threadprivate persists (OpenMP 5.1, 2.21.2). */
    int ok = 1;
#pragma omp parallel num_threads(asked) reduction(&& : ok)
    ok = tp == 1000 + omp_get_thread_num() && tids[omp_get_thread_num()] == my_tid();
    CHECK(ok);
}

static void test_sync(int asked) {
    int want = expect(asked);
    long crit = 0, locked = 0, atom = 0;
    omp_lock_t l;
    omp_init_lock(&l);
#pragma omp parallel num_threads(asked)
    {
        for (int k = 0; k < 2000; k++) {
#pragma omp critical
            crit++;
            omp_set_lock(&l);
            locked++;
            omp_unset_lock(&l);
#pragma omp atomic
            atom++;
        }
#pragma omp barrier
#pragma omp single
        CHECK_EQ(crit, 2000L * want);
    }
    omp_destroy_lock(&l);
    CHECK_EQ(crit, 2000L * want);
    CHECK_EQ(locked, 2000L * want);
    CHECK_EQ(atom, 2000L * want);
}

/* outer x inner: every member of every inner team alive at once (each
 * waits, spinning, until all have arrived), on distinct kernel threads,
 * with a ring inside each inner team. */
static void test_nested(int outer, int inner) {
    int want_o = expect(outer);
    omp_set_max_active_levels(2);
    long tids[MAXT] = {0};
    int seen[MAXT] = {0};
    static _Atomic int flags[MAXT][MAXT];
    static _Atomic int arrived;
    /* arrivals per inner team and barrier phase: a barrier of an inner
     * team opened by its primary, a guest thread or a herd task */
    enum { PHASES = 20 };
    static _Atomic int phase_in[MAXT][PHASES];
    atomic_store(&arrived, 0);
    for (int i = 0; i < MAXT; i++) {
        for (int j = 0; j < MAXT; j++)
            atomic_store(&flags[i][j], 0);
        for (int p = 0; p < PHASES; p++)
            atomic_store(&phase_in[i][p], 0);
    }
    int total = 0;
#pragma omp parallel num_threads(outer) reduction(+ : total)
    {
        int o = omp_get_thread_num();
        int no = omp_get_num_threads();
#pragma omp parallel num_threads(inner) reduction(+ : total)
        {
            int i = omp_get_thread_num(), ni = omp_get_num_threads();
            int slot = o * inner + i;
            seen[slot]++;
            tids[slot] = my_tid();
            total += ni;
            CHECK_EQ(omp_get_level(), 2);
            CHECK_EQ(omp_get_ancestor_thread_num(1), o);
            CHECK_EQ(omp_get_team_size(1), no);
            ring(flags[o], i, ni);
            for (int p = 0; p < PHASES; p++) {
                atomic_fetch_add_explicit(&phase_in[o][p], 1, memory_order_relaxed);
#pragma omp barrier
                /* every member of this team arrived before any left */
                CHECK_EQ(atomic_load_explicit(&phase_in[o][p], memory_order_relaxed), ni);
            }
            atomic_fetch_add_explicit(&arrived, 1, memory_order_relaxed);
            /* (With a thread limit the inner teams differ in size.) */
            while (!getenv("OMP_THREAD_LIMIT") &&
                   atomic_load_explicit(&arrived, memory_order_relaxed) < no * ni)
                ;
#pragma omp barrier
        }
    }
    omp_set_max_active_levels(1);
    /* OMP_THREAD_LIMIT caps the inner teams too: count what each got. */
    int members = 0;
    for (int s = 0; s < want_o * inner; s++)
        members += seen[s];
    CHECK_EQ(members, atomic_load(&arrived));
    if (!getenv("OMP_THREAD_LIMIT")) {
        CHECK_EQ(total, outer * inner * inner);
        for (int s = 0; s < outer * inner; s++)
            CHECK_EQ(seen[s], 1);
        CHECK(distinct(tids, outer * inner));
    }
}

/* herd keeps a nested team's threads: member i of the inner team that
 * outer member o encounters is the same kernel thread at every region
 * (its encountering thread's hot guest, src/omp/guest.c). libgomp and
 * libomp 14 (hot teams at level 1 only, by default) give other threads,
 * which OpenMP allows: checked under herd only. */
static void test_hot_nested(void) {
    omp_set_max_active_levels(2);
    long first[4][2] = {{0}};
    int moved = 0;
    for (int r = 0; r < 20; r++) {
#pragma omp parallel num_threads(2) reduction(+ : moved)
        {
            int o = omp_get_thread_num();
#pragma omp parallel num_threads(2) reduction(+ : moved)
            {
                int i = omp_get_thread_num();
                if (r == 0)
                    first[o][i] = my_tid();
                else
                    moved += first[o][i] != my_tid();
            }
        }
    }
    omp_set_max_active_levels(1);
    if (omp_test_on_herd() && !getenv("OMP_THREAD_LIMIT")) /* (a limit shrinks some teams) */
        CHECK_EQ(moved, 0);
}

/* nthreads-var: the default team, and omp_set_num_threads growing it. */
static void test_icvs(void) {
    int max = omp_get_max_threads(), size = 0;
#pragma omp parallel
#pragma omp single
    size = omp_get_num_threads();
    CHECK_EQ(size, expect(max));
    omp_set_num_threads(2);
#pragma omp parallel
#pragma omp single
    size = omp_get_num_threads();
    CHECK_EQ(size, expect(2));
    omp_set_num_threads(5);
    CHECK_EQ(omp_get_max_threads(), 5);
#pragma omp parallel
#pragma omp single
    size = omp_get_num_threads();
    CHECK_EQ(size, expect(5));
    omp_set_num_threads(max);
    const char *l = getenv("OMP_THREAD_LIMIT");
    if (l && *l)
        CHECK_EQ(omp_get_thread_limit(), atoi(l));
}

/* Application threads running outermost regions at once: one holds herd's
 * worker 0, the others run member 0 themselves, and every team still gets
 * its 3 threads (herd gave the others a team of one before). */
static void *app_thread(void *p) {
    (void)p;
    for (int r = 0; r < 50; r++) {
        int n = 0, cnt = 0;
#pragma omp parallel num_threads(3) reduction(+ : cnt)
        {
            cnt++;
#pragma omp barrier
#pragma omp single
            n = omp_get_num_threads();
        }
        CHECK_EQ(n, expect(3));
        CHECK_EQ(cnt, expect(3));
    }
    return NULL;
}

static void test_app_threads(void) {
    if (getenv("OMP_THREAD_LIMIT"))
        return; /* the threads' teams share the limit: their sizes vary */
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        CHECK(pthread_create(&t[i], NULL, app_thread, NULL) == 0);
    for (int i = 0; i < 3; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
}

int main(void) {
    for (int rep = 0; rep < 2; rep++) {
        test_outer(4);
        test_outer(7);
        test_outer(4);
        test_sync(4);
        test_nested(2, 2);
        test_nested(4, 2);
        test_hot_nested();
        test_icvs();
        test_app_threads();
    }
    printf("omp team_size: ok\n");
    return 0;
}
