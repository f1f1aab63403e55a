/* Cancellation with OMP_CANCELLATION=true (this program sets it and runs
 * itself again): cancel parallel ends the region for every member (one
 * waiting at a barrier leaves it, code after it never runs), cancel for
 * and cancel sections end the construct for members at a cancellation
 * point (each waits at one until the cancel comes, so the check is exact),
 * cancel taskgroup discards the taskgroup's tasks that have not started
 * and ends those at a cancellation point, and a region after a cancelled
 * one runs whole. */
#include "check_omp.h"

#include <stdatomic.h>

static void test_parallel(void) {
    _Atomic int after_barrier = 0, members = 0;
#pragma omp parallel num_threads(2)
    {
        atomic_fetch_add(&members, 1);
        if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
        }
#pragma omp barrier
        atomic_fetch_add(&after_barrier, 1); /* thread 0 never came: nobody passes */
    }
    CHECK(atomic_load(&members) >= 1);
    CHECK_EQ(atomic_load(&after_barrier), 0);
}

static void test_for(void) {
    _Atomic int ran = 0, stuck_left = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp for schedule(static)
        for (int i = 0; i < 1000; i++) {
            if (i == 0) {
#pragma omp cancel for
            }
            if (i == 500) { /* the other member: waits for the cancel */
                for (;;) {
#pragma omp cancellation point for
                }
            }
            atomic_fetch_add(&ran, 1);
        }
        atomic_fetch_add(&stuck_left, 1);
    }
    CHECK_EQ(atomic_load(&ran), 0);
    CHECK(atomic_load(&stuck_left) >= 1);
}

static void test_sections(void) {
    _Atomic int after = 0;
#pragma omp parallel num_threads(2)
#pragma omp sections
    {
#pragma omp section
        {
#pragma omp cancel sections
            atomic_fetch_add(&after, 1);
        }
#pragma omp section
        {
            for (;;) {
#pragma omp cancellation point sections
            }
            atomic_fetch_add(&after, 1);
        }
    }
    CHECK_EQ(atomic_load(&after), 0);
}

/* cancel taskgroup: a task created in the taskgroup after the cancel (its
 * creator waited for the canceller) never runs, nor one its task creates
 * (it belongs to the same taskgroup), and the canceller goes to its end. */
static void test_taskgroup_after(void) {
    _Atomic int ran = 0, after_cancel = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
#pragma omp taskgroup
    {
#pragma omp task
        {
#pragma omp cancel taskgroup
            atomic_fetch_add(&after_cancel, 1);
        }
#pragma omp taskwait
        for (int i = 0; i < 50; i++) {
#pragma omp task
            atomic_fetch_add(&ran, 1);
        }
    }
    CHECK_EQ(atomic_load(&after_cancel), 0);
    CHECK_EQ(atomic_load(&ran), 0);

    _Atomic int outer = 0, inner = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
#pragma omp taskgroup
#pragma omp task
    {
#pragma omp task
        {
#pragma omp cancel taskgroup
        }
#pragma omp taskwait
        atomic_fetch_add(&outer, 1); /* started before the cancel: runs on */
#pragma omp task
        atomic_fetch_add(&inner, 1); /* created after it: discarded */
    }
    CHECK_EQ(atomic_load(&outer), 1);
    CHECK_EQ(atomic_load(&inner), 0);
}

/* Tasks queued before the cancel and not started are discarded. A team of
 * one thread defers its tasks (libgomp and herd, not libomp) and runs them at
 * the taskgroup's end; before that an undeferred task (it belongs to its
 * creator's taskgroup) cancels. Three tasks: under the creation throttle's
 * bound (HERD_OMP_THROTTLE, 4), so none runs at once. */
static void test_taskgroup_queued(void) {
    _Atomic int ran = 0;
#pragma omp parallel num_threads(1)
#pragma omp taskgroup
    {
        for (int i = 0; i < 3; i++) {
#pragma omp task
            atomic_fetch_add(&ran, 1);
        }
#pragma omp task if (0)
        {
#pragma omp cancel taskgroup
        }
    }
    /* libomp runs a team of one's tasks at once (its serialized team), so
     * they all ran before the cancel */
    CHECK_EQ(atomic_load(&ran), omp_test_on_llvm_libomp() ? 3 : 0);
}

/* A task that has started runs on until a cancellation point taskgroup,
 * which answers true once the taskgroup is cancelled: here by another task
 * of it, which waits (yielding) until the first has started. Created first,
 * so that a runtime whose taskyield runs queued tasks on the yielder's stack
 * (libomp) runs it above the spinning one, never below. Made by each member
 * in turn: with one worker (omp.cancel_on.guests) member 1 is a guest, whose
 * tasks in a cancellable taskgroup ran at once until round 19, so the
 * waiting task never let the other be created (a hang when a guest won the
 * `single` this test had). */
static void taskgroup_point_by(int who) {
    _Atomic int started = 0, past = 0;
#pragma omp parallel num_threads(2)
    if (omp_get_thread_num() == who)
#pragma omp taskgroup
    {
#pragma omp task
        {
            while (!atomic_load(&started)) {
#pragma omp taskyield
            }
#pragma omp cancel taskgroup
        }
#pragma omp task
        {
            atomic_store(&started, 1);
            for (;;) {
#pragma omp cancellation point taskgroup
#pragma omp taskyield
            }
            atomic_fetch_add(&past, 1);
        }
    }
    CHECK_EQ(atomic_load(&started), 1);
    CHECK_EQ(atomic_load(&past), 0);
}

static void test_taskgroup_point(void) {
    taskgroup_point_by(0);
    taskgroup_point_by(1);
}

static void test_after(void) {
    int sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
    {
#pragma omp for
        for (int i = 0; i < 100; i++)
            sum += i;
#pragma omp barrier
    }
    CHECK_EQ(sum, 4950);
}

int main(int argc, char **argv) {
    const char *c = getenv("OMP_CANCELLATION");
    if (!c || strcmp(c, "true")) {
        (void)argc;
        setenv("OMP_CANCELLATION", "true", 1);
        execv("/proc/self/exe", argv);
        CHECK(!"exec");
    }
    CHECK_EQ(omp_get_cancellation(), 1);
    for (int r = 0; r < 20; r++) {
        test_parallel();
        test_for();
        test_sections();
        test_taskgroup_after();
        test_taskgroup_queued();
        test_taskgroup_point();
        test_after();
    }
    puts("cancel on: ok");
    return 0;
}
