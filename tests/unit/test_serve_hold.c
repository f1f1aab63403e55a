/* Serving workers across regions (core/worker.c, G1..G4; docs/design/tasks.md):
 * - while a holder (the adopter of worker 0, as an OpenMP outermost team)
 *   holds the limit at 2, the tasks it spawns run on workers 0 and 1 only;
 * - the limit outlives the hold (G4): after herd__serve_release, `serving`
 *   is still 2, and holding at 2 again changes nothing;
 * - work from outside while the limit is held (herd_run from another
 *   thread) does not widen it;
 * - work from outside once the hold is released (herd_run) lets every
 *   worker serve again: `serving` is back at the worker count, and (with
 *   HERD_IDLE=spin, where no worker sleeps through the work) a worker at
 *   or above the old limit other than the root's own steals one of its
 *   tasks: the root spawns batches until one has (bounded: 30 s).
 * Mutations: restoring every worker at release fails the G4 check; an
 * herd__inject that does not call herd__serve_unheld fails the last one
 * (the root's children then go to workers below the limit only: worker 0
 * has no thread between holds); one that ignores the hold fails the
 * remote check. */
// herd-test-env: HERD_WORKERS=4 HERD_IDLE=spin
// herd-test-env: HERD_WORKERS=4
// herd-test-env: HERD_WORKERS=4 HERD_IDLE=sleep
// herd-test-timeout: 120
#include "../common/check.h"
#include "core/runtime.h"
#include "core/seam_omp.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HELD 2
#define TASKS 400

static _Atomic int max_worker;           /* highest worker id a held task ran on */
static _Atomic int remote_done;          /* the other thread's herd_run returned */
static _Atomic int serving_after_remote; /* `serving` right after it returned */

static herd__rt *rt(void) {
    return herd__rt_started();
}

static int serving(void) {
    return atomic_load(&rt()->serving);
}

static void held_task(void *p) {
    (void)p;
    int id = herd_worker_id();
    for (int cur = atomic_load(&max_worker); id > cur;)
        if (atomic_compare_exchange_weak(&max_worker, &cur, id))
            break;
    for (volatile int i = 0; i < 2000; i++)
        ;
}

static void noop(void *p) {
    (void)p;
}

static void *remote_thread(void *p) {
    (void)p;
    CHECK_OK(herd_run(noop, NULL, 0));
    atomic_store(&serving_after_remote, serving());
    atomic_store(&remote_done, 1);
    return NULL;
}

/* One region held at HELD, with a herd_run from another thread in it when
 * remote is set. */
static void held_region(int remote) {
    herd__frame fr;
    CHECK_OK(herd__adopt_enter(&fr));
    herd__serve_hold(rt(), HELD);
    CHECK_EQ(serving(), HELD);
    pthread_t t;
    if (remote) {
        atomic_store(&remote_done, 0);
        CHECK(pthread_create(&t, NULL, remote_thread, NULL) == 0);
    }
    for (int i = 0; i < TASKS; i++)
        CHECK_OK(herd_spawn(held_task, NULL, 0));
    CHECK_OK(herd_wait());
    if (remote) {
        while (!atomic_load(&remote_done)) /* its root may need a worker of ours */
            CHECK_OK(herd_yield());
        CHECK(pthread_join(t, NULL) == 0);
        CHECK_EQ(atomic_load(&serving_after_remote), HELD); /* not widened */
    }
    herd__adopt_leave(&fr);
    herd__serve_release(rt());
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double deadline; /* 0: one batch only (HERD_IDLE other than spin) */
static _Atomic int root_worker;
static _Atomic int stolen_above; /* a worker >= HELD, not the root's, ran a task */

static void spread_task(void *p) {
    (void)p;
    int id = herd_worker_id();
    if (id >= HELD && id != atomic_load(&root_worker))
        atomic_store(&stolen_above, 1);
    for (volatile int i = 0; i < 5000; i++)
        ;
}

/* Batches of short tasks until a worker at or above HELD (not this one)
 * has run one, or the deadline: every spawn lets an asking thief have work
 * (the root never spins with its tasks private). */
static void spread_root(void *p) {
    (void)p;
    atomic_store(&root_worker, herd_worker_id());
    do {
        for (int i = 0; i < 64; i++)
            CHECK_OK(herd_spawn(spread_task, NULL, 0));
        CHECK_OK(herd_wait());
    } while (deadline && !atomic_load(&stolen_above) && now_s() < deadline);
}

int main(void) {
    CHECK_OK(herd__start_ex(NULL, HERD__START_ADOPT | HERD__START_SERVING, NULL));
    int n = herd_num_workers();
    CHECK(n > HELD);
    CHECK_EQ(serving(), n);
    for (int r = 0; r < 3; r++) {
        held_region(r == 1);
        STEP("round %d: held tasks ran on workers 0..%d; serving %d after the release", r,
             atomic_load(&max_worker), serving());
        CHECK(atomic_load(&max_worker) < HELD);
        CHECK_EQ(serving(), HELD); /* G4: the limit stays */
    }
    const char *idle = getenv("HERD_IDLE");
    int spin = idle && !strcmp(idle, "spin");
    deadline = spin ? now_s() + 30 : 0;
    CHECK_OK(herd_run(spread_root, NULL, 0));
    STEP("outside work after the release: serving %d; root on worker %d; a worker at or above "
         "%d stole: %d%s",
         serving(), atomic_load(&root_worker), HELD, atomic_load(&stolen_above),
         spin ? "" : " (checked under HERD_IDLE=spin only)");
    CHECK_EQ(serving(), n);
    if (spin)
        CHECK_EQ(atomic_load(&stolen_above), 1);
    CHECK_OK(herd_stop());
    STEP("ok");
    return 0;
}
