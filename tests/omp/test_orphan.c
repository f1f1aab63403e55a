/* Orphaned worksharing constructs met outside any parallel region bind to
 * a team of one (the encountering thread): every schedule of a loop (long
 * and unsigned long long, ordered, doacross, reduction(task, ...),
 * lastprivate(conditional:)), sections, single with copyprivate, barrier and
 * the loop construct run all their iterations on that thread. The same
 * functions are then called inside a region. */
#include "check_omp.h"

#include <stdbool.h>
#include <stdint.h>

enum { N = 1000 };
static int hits[N], hits_nowait[N];
static int order[N], norder;
static long sum; /* shared by the team, as a reduction's item must be */

static void clear(void) {
    for (int i = 0; i < N; i++)
        hits[i] = hits_nowait[i] = 0;
    norder = 0;
}

static void expect_each_once(void) {
    for (int i = 0; i < N; i++)
        CHECK_EQ(hits[i], 1);
}

__attribute__((noinline)) static void loops(void) {
#pragma omp single
    sum = 0;
#pragma omp for schedule(static)
    for (int i = 0; i < N; i++)
        hits[i]++;
#pragma omp for schedule(static, 7)
    for (int i = 0; i < N; i++)
        hits[i]++;
#pragma omp for schedule(dynamic, 3) nowait
    for (int i = 0; i < N; i++)
        hits_nowait[i]++; /* the next loop may overlap it: an array of its own */
#pragma omp for schedule(guided, 2)
    for (int i = N - 1; i >= 0; i--)
        hits[i]++;
#pragma omp for schedule(runtime) reduction(+ : sum)
    for (int i = 0; i < N; i++)
        sum += i;
#pragma omp single
    CHECK_EQ(sum, (long)N * (N - 1) / 2);
#pragma omp for schedule(auto)
    for (unsigned long long u = 1ULL << 63; u < (1ULL << 63) + N; u++)
        hits[u - (1ULL << 63)]++;
#pragma omp for schedule(dynamic) ordered
    for (int i = 0; i < N; i++) {
#pragma omp ordered
        order[__atomic_fetch_add(&norder, 1, __ATOMIC_RELAXED)] = i;
    }
}

static void test_loops_outside(void) {
    clear();
    loops();
    for (int i = 0; i < N; i++) {
        CHECK_EQ(hits[i], 4);
        CHECK_EQ(hits_nowait[i], 1);
    }
    CHECK_EQ(norder, N);
    for (int i = 0; i < N; i++)
        CHECK_EQ(order[i], i);
}

static void test_loops_inside(void) {
    clear();
#pragma omp parallel num_threads(2)
    loops();
    for (int i = 0; i < N; i++) {
        CHECK_EQ(hits[i], 4);
        CHECK_EQ(hits_nowait[i], 1);
    }
    for (int i = 0; i < N; i++)
        CHECK_EQ(order[i], i);
}

/* A team of one: omp_get_thread_num() is 0 and a thread's block of a
 * static loop is the whole loop. */
static void test_team_of_one(void) {
    int who[N];
#pragma omp for schedule(static)
    for (int i = 0; i < N; i++)
        who[i] = omp_get_thread_num() + 10 * omp_get_num_threads();
    for (int i = 0; i < N; i++)
        CHECK_EQ(who[i], 10);
}

/* ordered depend: each row waits for the one above and to the left. */
static int grid[40][40];
__attribute__((noinline)) static void doacross(void) {
#pragma omp for ordered(2)
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < 40; j++) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
            grid[i][j] = 1 + (i ? grid[i - 1][j] : 0) + (j ? grid[i][j - 1] : 0);
#pragma omp ordered depend(source)
        }
}

static void test_doacross(void) {
    doacross();
    CHECK_EQ(grid[0][0], 1);
    CHECK_EQ(grid[0][39], 40);
    CHECK_EQ(grid[1][1], 5);
    for (int i = 1; i < 40; i++)
        for (int j = 1; j < 40; j++)
            CHECK_EQ(grid[i][j], 1 + grid[i - 1][j] + grid[i][j - 1]);
}

/* A doacross nest whose third loop is empty (d == 0): no iteration reaches
 * the ordered depends, and GCC leaves the counts after the empty loop unset
 * (stack garbage). The same through the ABI with a huge unset count, as
 * GCC may pass it: the loop runs its outer iterations, as in libgomp (gcc
 * builds only: a clang program has no business with libgomp's ABI). */
static volatile int zero;
static int inner_runs;

__attribute__((noinline)) static void doacross_empty(void) {
    int i, j, k, l, d = zero;
#pragma omp for collapse(2) ordered(4)
    for (i = 0; i < d + 3; i++)
        for (j = d + 3; j >= 0; j--)
            for (k = 0; k < d; k++)
                for (l = 0; l < d + 2; l++) {
#pragma omp ordered depend(sink : i, j, k - 1, l)
                    inner_runs++;
#pragma omp ordered depend(source)
                }
}

#ifndef __clang__
bool GOMP_loop_doacross_start(unsigned n, long *counts, long sched, long chunk, long *istart,
                              long *iend, uintptr_t *reductions, void **mem);
bool GOMP_loop_static_next(long *istart, long *iend);
void GOMP_loop_end_nowait(void);
#endif

static void test_doacross_empty(void) {
    inner_runs = 0;
    doacross_empty();
#pragma omp parallel num_threads(2)
    doacross_empty();
    CHECK_EQ(inner_runs, 0);
#ifndef __clang__
    long counts[3] = {3, 0, 0x7f7f7f7f7f7f7f7fL}, s, e, outer = 0;
    if (GOMP_loop_doacross_start(3, counts, 1 /* static */, 0, &s, &e, NULL, NULL))
        do
            outer += e - s;
        while (GOMP_loop_static_next(&s, &e));
    GOMP_loop_end_nowait();
    CHECK_EQ(outer, 3);
#endif
}

__attribute__((noinline)) static int sections(int *a) {
    int first = -1;
#pragma omp sections
    {
#pragma omp section
        a[0]++;
#pragma omp section
        a[1]++;
#pragma omp section
        a[2]++;
    }
#pragma omp single copyprivate(first)
    first = 42;
#pragma omp barrier
    return first;
}

static void test_sections_single(void) {
    int a[3] = {0, 0, 0};
    CHECK_EQ(sections(a), 42);
    CHECK(a[0] == 1 && a[1] == 1 && a[2] == 1);
}

/* reduction(task, ...) on an orphaned loop, and lastprivate(conditional:). */
static long x;
static int l;
__attribute__((noinline)) static void task_reduction(long *s, int *last) {
    x = 0;
    l = -1;
#pragma omp for reduction(task, + : x) lastprivate(conditional : l)
    for (int i = 0; i < 100; i++) {
#pragma omp task in_reduction(+ : x)
        x += i;
        if (i % 7 == 0)
            l = i;
    }
    *s = x;
    *last = l;
}

static void test_task_reduction(void) {
    long s = 0;
    int last = 0;
    task_reduction(&s, &last);
    CHECK_EQ(s, 4950);
    CHECK_EQ(last, 98);
}

__attribute__((noinline)) static void loop_construct(void) {
#pragma omp loop bind(parallel)
    for (int i = 0; i < N; i++)
        hits[i]++;
}

static void test_loop_construct(void) {
    clear();
    loop_construct();
    expect_each_once();
}

int main(void) {
    test_loops_outside();
    test_team_of_one();
    test_doacross();
    test_doacross_empty();
    test_sections_single();
    test_task_reduction();
    test_loop_construct();
    test_loops_inside();
    test_loops_outside(); /* after herd started */
    test_doacross();
    test_sections_single();
    test_task_reduction();
    puts("orphan: ok");
    return 0;
}
