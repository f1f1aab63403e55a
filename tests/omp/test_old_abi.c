/* The pre-4.9 parallel ABI (GOMP_1.0), called directly as old binaries and
 * GCC's own libgomp tests call it: GOMP_parallel_start starts the team, the
 * caller runs the body itself as member 0, then GOMP_parallel_end; the
 * combined loop and sections starts set up the construct first, and the
 * members take its chunks with GOMP_loop_*_next / GOMP_sections_next. */
#include "check_omp.h"

#include <omp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

extern void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned nthreads);
extern void GOMP_parallel_end(void);
extern void GOMP_parallel_loop_static_start(void (*fn)(void *), void *data, unsigned nthreads,
                                            long start, long end, long incr, long chunk);
extern void GOMP_parallel_loop_dynamic_start(void (*fn)(void *), void *data, unsigned nthreads,
                                             long start, long end, long incr, long chunk);
extern void GOMP_parallel_loop_guided_start(void (*fn)(void *), void *data, unsigned nthreads,
                                            long start, long end, long incr, long chunk);
extern void GOMP_parallel_loop_runtime_start(void (*fn)(void *), void *data, unsigned nthreads,
                                             long start, long end, long incr);
extern void GOMP_parallel_sections_start(void (*fn)(void *), void *data, unsigned nthreads,
                                         unsigned count);
extern bool GOMP_loop_static_next(long *s, long *e);
extern bool GOMP_loop_dynamic_next(long *s, long *e);
extern bool GOMP_loop_guided_next(long *s, long *e);
extern bool GOMP_loop_runtime_next(long *s, long *e);
extern void GOMP_loop_end_nowait(void);
extern unsigned GOMP_sections_next(void);
extern void GOMP_sections_end_nowait(void);
extern void GOMP_barrier(void);
extern void GOMP_critical_start(void);
extern void GOMP_critical_end(void);

#define N 1000
#define INCR 3

static _Atomic int hits[N];
static _Atomic int members[64];
static int team_size;
static long counter;

static void clear(void) {
    for (int i = 0; i < N; i++)
        atomic_store(&hits[i], 0);
    for (int i = 0; i < 64; i++)
        atomic_store(&members[i], 0);
}

static void check_team(int want) {
    CHECK_EQ(team_size, want);
    for (int i = 0; i < 64; i++)
        CHECK_EQ(atomic_load(&members[i]), i < want);
}

static void check_loop(void) {
    for (int i = 0; i < N; i++)
        CHECK_EQ(atomic_load(&hits[i]), i % INCR == 0);
}

static void enter(void) {
    atomic_fetch_add(&members[omp_get_thread_num()], 1);
    if (omp_get_thread_num() == 0)
        team_size = omp_get_num_threads();
}

/* A plain region: every member counts itself, meets the others at a
 * barrier, and bumps a counter in a critical section. */
static void body(void *arg) {
    CHECK_EQ((long)arg, 42);
    CHECK_EQ(omp_in_parallel(), omp_get_num_threads() > 1);
    enter();
    GOMP_barrier();
    for (int k = 0; k < 100; k++) {
        GOMP_critical_start();
        counter++;
        GOMP_critical_end();
    }
}

static void test_parallel(unsigned n, int want) {
    clear();
    counter = 0;
    GOMP_parallel_start(body, (void *)42L, n);
    body((void *)42L);
    GOMP_parallel_end();
    check_team(want);
    CHECK_EQ(counter, 100L * want);
    CHECK(!omp_in_parallel());
    CHECK_EQ(omp_get_thread_num(), 0);
    CHECK_EQ(omp_get_num_threads(), 1);
}

#define LOOP_BODY(kind)                                                                            \
    static void loop_##kind(void *arg) {                                                           \
        (void)arg;                                                                                 \
        enter();                                                                                   \
        long s, e;                                                                                 \
        while (GOMP_loop_##kind##_next(&s, &e))                                                    \
            for (long i = s; i < e; i += INCR)                                                     \
                atomic_fetch_add(&hits[i], 1);                                                     \
        GOMP_loop_end_nowait();                                                                    \
    }
LOOP_BODY(static)
LOOP_BODY(dynamic)
LOOP_BODY(guided)
LOOP_BODY(runtime)

static void test_loops(unsigned n, int want) {
    for (long chunk = 0; chunk < 8; chunk += 7) {
        clear();
        GOMP_parallel_loop_static_start(loop_static, NULL, n, 0, N, INCR, chunk);
        loop_static(NULL);
        GOMP_parallel_end();
        check_loop();
        check_team(want);
    }
    clear();
    GOMP_parallel_loop_dynamic_start(loop_dynamic, NULL, n, 0, N, INCR, 5);
    loop_dynamic(NULL);
    GOMP_parallel_end();
    check_loop();
    check_team(want);
    clear();
    GOMP_parallel_loop_guided_start(loop_guided, NULL, n, 0, N, INCR, 2);
    loop_guided(NULL);
    GOMP_parallel_end();
    check_loop();
    check_team(want);
    clear();
    omp_set_schedule(omp_sched_dynamic, 3);
    GOMP_parallel_loop_runtime_start(loop_runtime, NULL, n, 0, N, INCR);
    loop_runtime(NULL);
    GOMP_parallel_end();
    check_loop();
    check_team(want);
}

#define SECTIONS 37
static void sections(void *arg) {
    (void)arg;
    enter();
    unsigned s;
    while ((s = GOMP_sections_next()) != 0) {
        CHECK(s >= 1 && s <= SECTIONS);
        atomic_fetch_add(&hits[s], 1);
    }
    GOMP_sections_end_nowait();
}

static void test_sections(unsigned n, int want) {
    clear();
    GOMP_parallel_sections_start(sections, NULL, n, SECTIONS);
    sections(NULL);
    GOMP_parallel_end();
    for (int i = 0; i < N; i++)
        CHECK_EQ(atomic_load(&hits[i]), i >= 1 && i <= SECTIONS);
    check_team(want);
}

/* A region inside a region, both of the old ABI: inactive (one thread)
 * under max-active-levels 1, and active with 2. */
static _Atomic int inner_total;
static void inner(void *arg) {
    (void)arg;
    CHECK_EQ(omp_get_level(), 2);
    atomic_fetch_add(&inner_total, omp_get_num_threads());
}
static void outer(void *arg) {
    (void)arg;
    GOMP_parallel_start(inner, NULL, 2);
    inner(NULL);
    GOMP_parallel_end();
    CHECK_EQ(omp_get_level(), 1);
}

static void test_nested(int want) {
    for (int active = 1; active <= 2; active++) {
        omp_set_max_active_levels(active);
        atomic_store(&inner_total, 0);
        GOMP_parallel_start(outer, NULL, 2);
        outer(NULL);
        GOMP_parallel_end();
        CHECK_EQ(atomic_load(&inner_total), want * (active == 2 ? 2 * 2 : 1));
    }
    omp_set_max_active_levels(1);
}

int main(void) {
    for (int rep = 0; rep < 3; rep++) {
        test_parallel(0, omp_get_max_threads());
        test_parallel(1, 1);
        test_parallel(2, 2);
        test_parallel(4, 4);
        test_loops(2, 2);
        test_loops(4, 4);
        test_sections(2, 2);
        test_sections(3, 3);
        test_nested(2);
    }
    printf("omp old_abi: ok\n");
    return 0;
}
