/* Tasks: fib with a task per call, taskwait, taskgroup, if(0), final,
 * mergeable, untied, priority, taskyield, tied thread identity across
 * waits, depend (in/out/inout/mutexinoutset) against a sequential order,
 * taskloop (grainsize, num_tasks), many tasks in flight, deep recursion. */
#include "check_omp.h"

#include <omp.h>
#include <string.h>

static long fib(int n) {
    if (n < 2)
        return n;
    long a, b;
#pragma omp task shared(a)
    a = fib(n - 1);
#pragma omp task shared(b)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

static int identity_broken;

static long fib_tied(int n) {
    if (n < 2)
        return n;
    int me = omp_get_thread_num();
    long a, b;
#pragma omp task shared(a)
    a = fib_tied(n - 1);
#pragma omp task shared(b)
    b = fib_tied(n - 2);
#pragma omp taskwait
    if (omp_get_thread_num() != me) {
#pragma omp atomic write
        identity_broken = 1;
    }
    return a + b;
}

static void test_fib(void) {
    long r = 0;
#pragma omp parallel
#pragma omp single
    r = fib(20);
    CHECK_EQ(r, 6765);
#pragma omp parallel
#pragma omp single
    r = fib_tied(18);
    CHECK_EQ(r, 2584);
    CHECK_EQ(identity_broken, 0);
}

static void test_clauses(void) {
    int count = 0, in_final = 0, undeferred_ran = 0;
#pragma omp parallel
#pragma omp single
    {
        for (int i = 0; i < 100; i++) {
#pragma omp task untied priority(3)
            {
#pragma omp atomic
                count++;
#pragma omp taskyield
            }
#pragma omp task mergeable
            {
#pragma omp atomic
                count++;
            }
        }
        int x = 0;
#pragma omp task if (0) shared(x, undeferred_ran)
        {
            x = 1;
            undeferred_ran = 1;
        }
        CHECK_EQ(x, 1); /* if(0): done before the encountering task goes on */
#pragma omp task final(1) shared(in_final)
        {
#pragma omp task shared(in_final)
            in_final = omp_in_final();
        }
#pragma omp taskwait
        CHECK_EQ(count, 200);
        CHECK_EQ(in_final, 1);
    }
    CHECK_EQ(undeferred_ran, 1);
    /* taskgroup waits for descendants. */
    int deep = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup
        {
#pragma omp task shared(deep)
            {
#pragma omp task shared(deep)
                {
#pragma omp atomic
                    deep++;
                }
            }
        }
        CHECK_EQ(deep, 1);
    }
    /* Tasks from every member, finished at the barrier. */
    int total = 0, n = 0;
#pragma omp parallel
    {
#pragma omp single
        n = omp_get_num_threads();
        for (int i = 0; i < 50; i++) {
#pragma omp task shared(total)
            {
#pragma omp atomic
                total++;
            }
        }
#pragma omp barrier
        CHECK_EQ(total, 50 * n);
    }
}

/* A DAG over a few cells: random in/out/inout/mutexinoutset tasks; each task
 * applies an order-sensitive update to its out cells from its in cells; the
 * result must equal the sequential execution's. */
#define CELLS 6
#define DTASKS 300
static unsigned long dag_par[CELLS], dag_seq[CELLS];

static unsigned long mix(unsigned long x, unsigned long y) { return x * 31 + y + 7; }

static void test_depend(void) {
    unsigned seed = 12345;
    int ins[DTASKS], outs[DTASKS], kinds[DTASKS];
    for (int t = 0; t < DTASKS; t++) {
        seed = seed * 1103515245 + 12345;
        ins[t] = (seed >> 8) % CELLS;
        outs[t] = (seed >> 16) % CELLS;
        kinds[t] = (seed >> 24) % 3;
    }
    for (int c = 0; c < CELLS; c++)
        dag_par[c] = dag_seq[c] = (unsigned long)c;
    for (int t = 0; t < DTASKS; t++) {
        if (kinds[t] == 2)
            dag_seq[outs[t]] += 1; /* commutative: mutexinoutset */
        else
            dag_seq[outs[t]] = mix(dag_seq[outs[t]], dag_seq[ins[t]]);
    }
#pragma omp parallel
#pragma omp single
    for (int t = 0; t < DTASKS; t++) {
        unsigned long *in = &dag_par[ins[t]], *out = &dag_par[outs[t]];
        if (kinds[t] == 0) {
#pragma omp task depend(in : in[0]) depend(inout : out[0])
            *out = mix(*out, *in);
        } else if (kinds[t] == 1) {
#pragma omp task depend(in : in[0]) depend(out : out[0]) depend(inout : out[0])
            *out = mix(*out, *in);
        } else {
#pragma omp task depend(mutexinoutset : out[0])
            *out += 1;
        }
    }
    for (int c = 0; c < CELLS; c++)
        CHECK(dag_par[c] == dag_seq[c]);
    int x = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task depend(out : x) shared(x)
        x = 5;
#pragma omp taskwait depend(in : x)
        CHECK_EQ(x, 5);
    }
}

static void test_taskloop(void) {
    static int hit[1000];
    memset(hit, 0, sizeof hit);
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskloop grainsize(7)
        for (int i = 0; i < 1000; i++)
            hit[i]++;
#pragma omp taskloop num_tasks(13)
        for (int i = 999; i >= 0; i--)
            hit[i]++;
#pragma omp taskloop
        for (int i = 0; i < 1000; i += 2)
            hit[i]++;
    }
    for (int i = 0; i < 1000; i++)
        CHECK_EQ(hit[i], 2 + (i % 2 == 0));
}

/* Many tasks in flight at once (queued before any wait), and deep recursion. */
static long chain(int d) {
    if (d == 0)
        return 0;
    long r;
#pragma omp task shared(r)
    r = chain(d - 1);
#pragma omp taskwait
    return r + 1;
}

static void test_many_deep(void) {
    enum { MANY = 100000 };
    long sum = 0;
#pragma omp parallel
#pragma omp single
    {
        for (int i = 0; i < MANY; i++) {
#pragma omp task shared(sum)
            {
#pragma omp atomic
                sum += 1;
            }
        }
#pragma omp taskwait
    }
    CHECK_EQ(sum, MANY);
    long d = 0;
#pragma omp parallel
#pragma omp single
    d = chain(3000);
    CHECK_EQ(d, 3000);
}

int main(void) {
    for (int rep = 0; rep < 2; rep++) {
        test_fib();
        test_clauses();
        test_depend();
        test_taskloop();
        test_many_deep();
    }
    printf("omp tasks: ok\n");
    return 0;
}
