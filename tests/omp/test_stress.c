/* The stress cases, at full size: 10^6 tasks in flight (all queued
 * before the first wait), deep task recursion (each level a task waiting
 * for its child), tasks inside nested regions 3 levels deep, and a random
 * dependence DAG over many addresses compared with the sequential order.
 * About a second per scheduler configuration. */
#include "check_omp.h"

#include <omp.h>

#define DEPTH 10000

/* Each member of the team creates its half of N tasks before any wait
 * (under herd they are all queued at once; libgomp may run some undeferred,
 * which OpenMP allows, so the test does not depend on it). */
static void test_in_flight(void) {
    enum { N = 1000000 };
    static unsigned char seen[N];
    long created = 0;
#pragma omp parallel reduction(+ : created)
    {
        int T = omp_get_num_threads(), me = omp_get_thread_num();
        for (int i = me; i < N; i += T) {
#pragma omp task firstprivate(i)
            seen[i]++;
            created++;
        }
#pragma omp taskwait
    }
    CHECK_EQ(created, N);
    for (int i = 0; i < N; i++)
        if (seen[i] != 1)
            CHECK_EQ(seen[i], 1);
}

static long chain(int d) {
    if (d == 0)
        return 0;
    long r;
#pragma omp task shared(r)
    r = chain(d - 1);
#pragma omp taskwait
    return r + 1;
}

static void test_deep(void) {
    long d = 0;
#pragma omp parallel
#pragma omp single
    d = chain(DEPTH);
    CHECK_EQ(d, DEPTH);
}

static void test_nested_tasks(void) {
    omp_set_max_active_levels(3);
    long total = 0;
#pragma omp parallel num_threads(2) reduction(+ : total)
#pragma omp parallel num_threads(2) reduction(+ : total)
#pragma omp parallel num_threads(2) reduction(+ : total)
    {
        CHECK_EQ(omp_get_level(), 3);
        long local = 0;
        for (int i = 0; i < 1000; i++) {
#pragma omp task shared(local)
            {
#pragma omp atomic
                local += 1;
            }
        }
#pragma omp taskwait
        total += local;
    }
    CHECK_EQ(total, 8 * 1000);
    omp_set_max_active_levels(1);
}

#define CELLS 256
#define TASKS 50000
static unsigned long mix(unsigned long x, unsigned long y) {
    return x * 31 + y + 7;
}

static void test_dag(void) {
    static unsigned long par[CELLS], seq[CELLS];
    static int in1[TASKS], in2[TASKS], out[TASKS];
    unsigned seed = 4242;
    for (int c = 0; c < CELLS; c++)
        par[c] = seq[c] = (unsigned long)c;
    for (int t = 0; t < TASKS; t++) {
        seed = seed * 1103515245 + 12345;
        in1[t] = (seed >> 4) % CELLS;
        in2[t] = (seed >> 12) % CELLS;
        out[t] = (seed >> 20) % CELLS;
        seq[out[t]] = mix(seq[out[t]], seq[in1[t]] + seq[in2[t]]);
    }
#pragma omp parallel
#pragma omp single
    for (int t = 0; t < TASKS; t++) {
        unsigned long *i1 = &par[in1[t]], *i2 = &par[in2[t]], *o = &par[out[t]];
#pragma omp task depend(in : i1[0], i2[0]) depend(inout : o[0])
        *o = mix(*o, *i1 + *i2);
    }
    for (int c = 0; c < CELLS; c++)
        CHECK(par[c] == seq[c]);
}

int main(void) {
    test_in_flight();
    test_deep();
    test_nested_tasks();
    test_dag();
    printf("omp stress: ok\n");
    return 0;
}
