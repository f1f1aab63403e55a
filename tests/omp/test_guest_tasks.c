/* Explicit tasks in teams whose threads may be more than herd's workers
 * (the members beyond them are guest threads: src/omp/guest.c, pool.c),
 * under the system library and herd alike:
 *  - a thread that creates a task and then waits, spinning, for another
 *    thread of the team to start it (LLVM's taskdep_if0_2.c does): the
 *    creator chosen by single (often member 0, a worker), and the last
 *    member (a guest when the team is larger than the workers); the others
 *    have gone on to the region's end, where they still run the team's
 *    tasks, or wait at a barrier;
 *  - a task, explicit or implicit, that creates several tasks and spins
 *    until one of them (the newest, the oldest) has started: under herd
 *    the newest wait in the private part of the creator's deque, and a
 *    thief pokes the creator (core/rescue.c);
 *  - a task reports the number of the thread that runs it;
 *  - no task is lost: trees of tasks with taskwait, created by every
 *    member, complete by the barrier; a taskgroup waits for its tasks'
 *    descendants; dependences order a member's tasks.
 * Run with teams of 2 and 4 (num_threads); ctest runs it with 1 and 2
 * workers too (guests then run members 1.. or 2..).
 * Under HERD_SPAWN=work-first, which never moves a task off its creator's
 * thread by itself (the creator runs its task first, and a tied task's
 * continuation stays on its thread), the spinning cases cannot hold, as
 * under any runtime that runs every task undeferred: they are left out
 * there, and say so. fifo and lifo, which never steal, run them: an idle
 * worker rescues a task from the queue or deque of a worker that makes no
 * progress (sched/queues.c, core/rescue.c). */
#include "check_omp.h"

#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAIT_S 30 /* a hang detector, not a timing: the flags are set within ms */

static int member = -1; /* the member number of this thread in the current team */
#pragma omp threadprivate(member)

static void wait_flag(_Atomic int *flag, const char *what) {
    time_t start = time(NULL);
    while (!atomic_load(flag)) {
        if (time(NULL) - start > WAIT_S) {
            fprintf(stderr, "FAIL: no other thread %s within %d s\n", what, WAIT_S);
            exit(1);
        }
        sched_yield(); /* no task scheduling point: a plain spin */
    }
}

/* The creator (member `who`, or the single's winner when who < 0) makes a
 * task and spins until another thread has started it; the task then waits
 * for the creator's go. */
static void spin_for_taker(int n, int who) {
    _Atomic int grabbed = 0, go = 0, ran_by = -1;
#pragma omp parallel num_threads(n)
    {
        int mine = who < 0 ? 0 : omp_get_thread_num() == who;
        if (who < 0) {
#pragma omp single nowait
            mine = 1;
        }
        if (mine && omp_get_num_threads() > 1) {
            int me = omp_get_thread_num();
#pragma omp task shared(grabbed, go, ran_by)
            {
                atomic_store(&ran_by, omp_get_thread_num());
                atomic_store(&grabbed, 1);
                wait_flag(&go, "let the task go on");
            }
            wait_flag(&grabbed, "started the task");
            CHECK(atomic_load(&ran_by) != me);
            atomic_store(&go, 1);
        }
    }
    CHECK(atomic_load(&go) == 1 || n == 1);
}

/* The same with the others waiting at a barrier, not at the region's end. */
static void spin_at_barrier(int n) {
    _Atomic int grabbed = 0, go = 0;
#pragma omp parallel num_threads(n)
    {
        if (omp_get_thread_num() == n - 1 && omp_get_num_threads() > 1) {
#pragma omp task shared(grabbed, go)
            {
                atomic_store(&grabbed, 1);
                wait_flag(&go, "let the task go on");
            }
            wait_flag(&grabbed, "started the task at a barrier");
            atomic_store(&go, 1);
        }
#pragma omp barrier
        CHECK(atomic_load(&go) == 1 || omp_get_num_threads() == 1);
    }
}

/* A task (explicit or implicit) creates `nchild` tasks and spins until
 * child `which` has started; the children count themselves in. Every
 * thread of the team is at the region's end but the creator's, whose
 * worker (under herd) keeps the newest tasks in the private part of its
 * deque until a thief asks and it publishes: the creator, spinning, never
 * gets there, and a thief pokes it (core/rescue.c). */
static void spin_in_task(int n, int nchild, int which, int explicit_task) {
    _Atomic int started[8] = {0}, done = 0;
#pragma omp parallel num_threads(n)
#pragma omp single
    {
        if (explicit_task == 2) { /* the children in a taskgroup */
#pragma omp task shared(started, done)
#pragma omp taskgroup
            {
                for (int i = 0; i < nchild; i++) {
#pragma omp task shared(started, done) firstprivate(i)
                    {
                        atomic_store(&started[i], 1);
                        atomic_fetch_add(&done, 1);
                    }
                }
                wait_flag(&started[which], "started a taskgroup's task");
            }
        } else if (explicit_task) {
#pragma omp task shared(started, done)
            {
                for (int i = 0; i < nchild; i++) {
#pragma omp task shared(started, done) firstprivate(i)
                    {
                        atomic_store(&started[i], 1);
                        atomic_fetch_add(&done, 1);
                    }
                }
                wait_flag(&started[which], "started a task's child");
            }
        } else {
            for (int i = 0; i < nchild; i++) {
#pragma omp task shared(started, done) firstprivate(i)
                {
                    atomic_store(&started[i], 1);
                    atomic_fetch_add(&done, 1);
                }
            }
            wait_flag(&started[which], "started a member's task");
        }
    }
    CHECK(atomic_load(&done) == nchild);
}

static int creator_keeps_tasks(void) {
    const char *spawn = getenv("HERD_SPAWN");
    return omp_test_on_herd() && spawn && !strcmp(spawn, "work-first");
}

/* Under ThreadSanitizer herd pokes no worker (docs/design/split-deque.md,
 * "Rescue"), so only the first of a spinning creator's tasks, shared at
 * once, is sure to reach another thread. */
static int creator_not_rescued(void) {
    return creator_keeps_tasks() || (omp_test_on_herd() && omp_test_under_tsan());
}

static _Atomic long nodes;
static _Atomic int bad_num;

static void tree(int depth) {
    atomic_fetch_add(&nodes, 1);
    if (omp_get_thread_num() != member)
        atomic_store(&bad_num, 1);
    if (depth == 0)
        return;
    for (int i = 0; i < 2; i++) {
#pragma omp task
        tree(depth - 1);
    }
#pragma omp taskwait
}

#define TREES 8
#define DEPTH 6 /* 127 nodes a tree */

static void trees(int n) {
    atomic_store(&nodes, 0);
    atomic_store(&bad_num, 0);
    long got = -1;
    int size = 0;
#pragma omp parallel num_threads(n)
    {
        member = omp_get_thread_num();
#pragma omp barrier
        for (int t = 0; t < TREES; t++) {
#pragma omp task
            tree(DEPTH);
        }
#pragma omp barrier
        /* the barrier completes every task of the team */
#pragma omp single
        {
            got = atomic_load(&nodes);
            size = omp_get_num_threads();
        }
    }
    CHECK(got == (long)size * TREES * ((1L << (DEPTH + 1)) - 1));
    CHECK(atomic_load(&bad_num) == 0);
}

static void groups(int n) {
    _Atomic int fails = 0;
#pragma omp parallel num_threads(n)
    {
        member = omp_get_thread_num();
        _Atomic long count = 0;
#pragma omp taskgroup
        {
            for (int t = 0; t < 4; t++) {
#pragma omp task shared(count)
                {
                    atomic_fetch_add(&count, 1);
#pragma omp task shared(count)
                    atomic_fetch_add(&count, 1); /* a descendant: the taskgroup waits for it */
                }
            }
        }
        if (atomic_load(&count) != 8)
            atomic_store(&fails, 1);
    }
    CHECK(atomic_load(&fails) == 0);
}

static void dependences(int n) {
    _Atomic int fails = 0;
#pragma omp parallel num_threads(n)
    {
        int x = 0, y = 0;
        for (int k = 0; k < 4; k++) {
#pragma omp task depend(out : x) shared(x)
            x = k + 1;
#pragma omp task depend(in : x) depend(out : y) shared(x, y, fails)
            {
                if (x != k + 1)
                    atomic_store(&fails, 1);
                y = x * 10;
            }
#pragma omp task depend(in : y) shared(y, fails)
            if (y != (k + 1) * 10)
                atomic_store(&fails, 1);
        }
#pragma omp taskwait
        if (x != 4 || y != 40)
            atomic_store(&fails, 1);
    }
    CHECK(atomic_load(&fails) == 0);
}

int main(void) {
    int spin = !creator_keeps_tasks(), rescued = !creator_not_rescued();
    if (!spin)
        printf("omp guest_tasks: HERD_SCHED=%s HERD_SPAWN=%s keep a task on its creator's thread: "
               "no spinning cases\n",
               getenv("HERD_SCHED") ? getenv("HERD_SCHED") : "",
               getenv("HERD_SPAWN") ? getenv("HERD_SPAWN") : "");
    else if (!rescued)
        printf("omp guest_tasks: HERD_SCHED=%s%s: no spinning on a task's later children\n",
               getenv("HERD_SCHED") ? getenv("HERD_SCHED") : "",
               omp_test_under_tsan() ? " under ThreadSanitizer" : " shares through its own queues");
    for (int n = 2; n <= 4; n += 2) {
        if (spin) {
            spin_for_taker(n, -1);
            spin_for_taker(n, 0);
            spin_for_taker(n, n - 1);
            spin_at_barrier(n);
        }
        if (rescued) {
            for (int round = 0; round < 20; round++) {
                spin_in_task(n, 4, 3, 1); /* the newest child */
                spin_in_task(n, 4, 0, 1); /* the oldest */
                spin_in_task(n, 1, 0, 1); /* the only one */
                spin_in_task(n, 4, 3, 0); /* a member's newest task */
                spin_in_task(n, 4, 3, 2); /* a taskgroup's newest task */
            }
        }
        trees(n);
        groups(n);
        dependences(n);
    }
    printf("omp guest_tasks: ok\n");
    return 0;
}
