/* Task reductions (taskgroup task_reduction, task in_reduction, taskloop
 * reduction, parallel and worksharing reduction(task, ...)) and the thread
 * identity they rest on: a thread number is one thread's at a time, so
 * per-thread data indexed by omp_get_thread_num() inside tasks is never
 * written by two tasks at once. Run with every scheduler, and with more
 * workers than the team has threads (omp.reductions.more-workers). */
#include "check_omp.h"

#include <stdatomic.h>

#define MAXT 64

/* Burn a little time with the slot held, so that two holders overlap. */
static void hold(void) {
    for (volatile int i = 0; i < 5000; i++)
        ;
}

static _Atomic int busy[MAXT];
static _Atomic int clashes, out_of_range;

static void use_slot(void) {
    int t = omp_get_thread_num();
    if (t < 0 || t >= omp_get_num_threads() || t >= MAXT) {
        atomic_fetch_add(&out_of_range, 1);
        return;
    }
    if (atomic_exchange(&busy[t], 1))
        atomic_fetch_add(&clashes, 1);
    hold();
    atomic_store(&busy[t], 0);
}

/* A team smaller than the machine: tasks run only on its threads. */
static void test_thread_identity(void) {
    atomic_store(&clashes, 0);
    atomic_store(&out_of_range, 0);
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        for (int i = 0; i < 4000; i++) {
#pragma omp task
            use_slot();
        }
#pragma omp for schedule(dynamic)
        for (int i = 0; i < 400; i++) {
#pragma omp task
            use_slot();
        }
    }
    CHECK_EQ(atomic_load(&clashes), 0);
    CHECK_EQ(atomic_load(&out_of_range), 0);
}

/* taskgroup task_reduction with in_reduction tasks, from one creator;
 * items of three types and operators. */
static void test_taskgroup(void) {
    long sum = 0;
    double prod = 1;
    int mx = -1;
#pragma omp parallel num_threads(2)
#pragma omp single
#pragma omp taskgroup task_reduction(+ : sum) task_reduction(* : prod) task_reduction(max : mx)
    for (int i = 1; i <= 3000; i++) {
#pragma omp task in_reduction(+ : sum) in_reduction(* : prod) in_reduction(max : mx) firstprivate(i)
        {
            sum += i;
            if (i % 100 == 0)
                prod *= 2;
            if (i > mx)
                mx = i;
            use_slot();
        }
    }
    CHECK_EQ(sum, 3000L * 3001 / 2);
    CHECK(prod == 1073741824.0); /* 2^30 */
    CHECK_EQ(mx, 3000);
}

/* in_reduction tasks that create in_reduction tasks (recursion), and a
 * nested taskgroup reducing the same item and another. The item is a
 * scalar at file scope, which clang 14 compiles right in an orphaned
 * in_reduction: for an array element it updates the original instead of
 * the thread's copy (lost updates), and for acc[0] of a pointer parameter
 * it asks the runtime for the item at NULL, whatever the runtime. */
static long acc;
static void tree(int depth) {
#pragma omp task in_reduction(+ : acc) firstprivate(depth)
    {
        acc += 1;
        if (depth > 0) {
            tree(depth - 1);
            tree(depth - 1);
        }
    }
}

static long tree_count(int depth) {
    return depth < 0 ? 0 : 1 + 2 * tree_count(depth - 1);
}

static void test_recursive(void) {
    acc = 0;
    long inner = 0, outer_again = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp taskgroup task_reduction(+ : acc)
        {
            tree(9);
#pragma omp taskgroup task_reduction(+ : inner)
            for (int i = 0; i < 100; i++) {
#pragma omp task in_reduction(+ : inner) in_reduction(+ : acc)
                {
                    inner += 2;
                    acc += 1;
                }
            }
            /* the inner group has ended: its result is in */
            outer_again = inner;
        }
    }
    CHECK_EQ(acc, tree_count(9) + 100);
    CHECK_EQ(inner, 200);
    CHECK_EQ(outer_again, 200);
}

/* taskloop reduction: bodies reach their copy by thread number. */
static void test_taskloop(void) {
    long s = 0, none = 5;
    unsigned long long u = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp taskloop reduction(+ : s) grainsize(7)
        for (int i = 0; i < 10000; i++)
            s += i;
#pragma omp taskloop reduction(+ : none) num_tasks(4)
        for (int i = 0; i < 0; i++) /* no iteration: nothing combined */
            none += 100;
#pragma omp taskloop reduction(+ : u)
        for (unsigned long long i = 10; i < 1000; i += 3)
            u += i;
    }
    CHECK_EQ(s, 10000L * 9999 / 2);
    CHECK_EQ(none, 5);
    unsigned long long want = 0;
    for (unsigned long long i = 10; i < 1000; i += 3)
        want += i;
    CHECK_EQ(u, want);
}

/* taskloop reduction with in_reduction tasks inside its bodies. */
static void test_taskloop_nested_tasks(void) {
    long s = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
#pragma omp taskloop reduction(+ : s) grainsize(10)
    for (int i = 0; i < 500; i++) {
        s += 1;
#pragma omp task in_reduction(+ : s) firstprivate(i)
        s += i;
    }
    CHECK_EQ(s, 500 + 500L * 499 / 2);
}

/* parallel reduction(task, ...): members and their tasks reduce. */
static void test_parallel(void) {
    long r = 0;
    int members = 0;
#pragma omp parallel num_threads(2) reduction(task, + : r) reduction(+ : members)
    {
        members++;
        r += 1000;
#pragma omp for
        for (int i = 0; i < 200; i++) {
#pragma omp task in_reduction(+ : r) firstprivate(i)
            r += i;
        }
    }
    CHECK_EQ(r, 1000L * members + 200L * 199 / 2);
}

/* Worksharing loops and sections with reduction(task, ...): the members
 * share the copies, and so do the tasks they create. */
static void test_worksharing(void) {
    long s = 0, t = 0;
    unsigned long long u = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp for reduction(task, + : s) schedule(dynamic, 3)
        for (int i = 0; i < 300; i++) {
            s += 1;
#pragma omp task in_reduction(+ : s) firstprivate(i)
            {
                s += i;
                use_slot();
            }
        }
#pragma omp for reduction(task, + : u)
        for (unsigned long long i = 0; i < 100; i++) {
#pragma omp task in_reduction(+ : u) firstprivate(i)
            u += i;
        }
#pragma omp sections reduction(task, + : t)
        {
#pragma omp section
            {
#pragma omp task in_reduction(+ : t)
                t += 10;
            }
#pragma omp section
            {
                t += 1;
#pragma omp task in_reduction(+ : t)
                t += 100;
            }
        }
    }
    CHECK_EQ(s, 300 + 300L * 299 / 2);
    CHECK_EQ(u, 4950);
    CHECK_EQ(t, 111);
}

/* scope with reduction(task, ...) (not in clang 14: check_omp.h). */
static void test_scope(void) {
#ifndef OMP_TEST_NO_SCOPE
    long x = 0;
    int members = 0;
#pragma omp parallel num_threads(2) reduction(+ : members)
    {
        members++;
#pragma omp scope reduction(task, + : x)
        {
            x += 1;
#pragma omp task in_reduction(+ : x)
            x += 10;
        }
    }
    CHECK_EQ(x, 11L * members);
#endif
}

/* Outside any region (taskgroup, scope). The system libgomp then keeps the initial thread in
 * a team of its own (its "artificial team"), which changes how later
 * regions nest there (a nested region of 2 x 2 ran 2 threads, not 4, and
 * test_nested hung): the last test of the program. */
static void test_orphaned(void) {
    long r = 0;
#pragma omp taskgroup task_reduction(+ : r)
    for (int i = 0; i < 100; i++) {
#pragma omp task in_reduction(+ : r) firstprivate(i)
        r += i;
    }
    CHECK_EQ(r, 4950);
#ifndef OMP_TEST_NO_SCOPE
    static long y; /* shared: a scope's reduction item */
    y = 0;
#pragma omp scope reduction(task, + : y)
    {
#pragma omp task in_reduction(+ : y)
        y += 5;
    }
    CHECK_EQ(y, 5);
#endif
}

/* In nested teams (whose tasks that see a registration run at once). */
static void test_nested(void) {
    long per[2] = {0, 0};
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
    {
        int o = omp_get_thread_num();
        long mine = 0;
#pragma omp parallel num_threads(2) reduction(task, + : mine)
        {
#pragma omp single
            for (int i = 0; i < 300; i++) {
#pragma omp task in_reduction(+ : mine) firstprivate(i)
                {
                    mine += i;
                    use_slot();
                }
            }
        }
        long s = 0;
#pragma omp taskloop reduction(+ : s) grainsize(5)
        for (int i = 0; i < 100; i++)
            s += i;
        if (o < 2)
            per[o] = mine + s;
    }
    omp_set_max_active_levels(1);
    CHECK_EQ(per[0], 300L * 299 / 2 + 4950);
    CHECK_EQ(per[1], 300L * 299 / 2 + 4950);
}

int main(void) {
    for (int rep = 0; rep < 4; rep++)
        test_thread_identity();
    for (int rep = 0; rep < 3; rep++) {
        test_taskgroup();
        test_recursive();
        test_taskloop();
        test_taskloop_nested_tasks();
        test_parallel();
        test_worksharing();
        test_scope();
        test_nested();
    }
    test_orphaned();
    printf("omp reductions: ok\n");
    return 0;
}
