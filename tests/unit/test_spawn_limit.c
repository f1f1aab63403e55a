/* The spawn limit counts the tasks queued, not the slots a deque ever used
 * (issue 15; split-deque.md, S8). A deque's indices only go down when the
 * frames above them end, so one task that spawns more children than the
 * deque has slots used to be refused at the last slot even when thieves had
 * taken most of them:
 * - two workers: the root fills its deque to one slot short, waits until
 *   the other worker has taken a quarter of them, then spawns an eighth
 *   more; every spawn must succeed (the queued tasks move down over the
 *   taken ones) and every child must run exactly once;
 * - one worker: nobody takes anything, so the spawn after the last slot is
 *   refused with HERD_ENOMEM, and the wait still runs every child queued.
 * Checks are on counts, never on timing; the wait for the thief is bounded
 * by a deadline. */
// herd-test-timeout: 300
#include "../common/check.h"
#include "queue/split_deque.h" /* herd__sdq_wants_publish */

#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

static _Atomic uint64_t ran;

static void child(void *arg) {
    (void)arg;
    atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct limit_run {
    int thieves;      /* another worker takes tasks meanwhile */
    uint64_t spawned; /* out: spawns that succeeded */
    int refused;      /* out: the first refusal's code, 0 if none */
    uint32_t cap;     /* out: the deque's slots */
} limit_run;

static void root(void *p) {
    limit_run *r = *(limit_run **)p; /* herd_run passes a copy of its argument */
    uint32_t cap = herd__tls->q.cap;
    CHECK(cap > 1024);
    r->cap = cap;
    for (uint32_t i = 0; i + 1 < cap; i++)
        CHECK_OK(herd_spawn(child, NULL, 0));
    r->spawned = cap - 1;
    if (r->thieves) {
        double deadline = now_s() + 120;
        while (atomic_load_explicit(&ran, memory_order_relaxed) < cap / 4 && now_s() < deadline) {
            /* A task shares its queued children when a thief asks, at its
             * next spawn or wait (S3); this one spins instead, so it
             * answers here, as a spawn would. */
            if (herd__sdq_wants_publish(&herd__tls->q))
                herd__publish_slow();
            sched_yield();
        }
        CHECK(atomic_load_explicit(&ran, memory_order_relaxed) >= cap / 4);
    }
    for (uint32_t i = 0; i < cap / 8; i++) {
        int rc = herd_spawn(child, NULL, 0);
        if (rc != 0) {
            r->refused = rc;
            break;
        }
        r->spawned++;
    }
    CHECK_OK(herd_wait());
}

static void run(int workers, limit_run *r) {
    herd_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.workers = workers;
    cfg.sched = "ws";
    cfg.stats = "0";
    atomic_store(&ran, 0);
    CHECK_OK(herd_start(&cfg));
    CHECK_OK(herd_run(root, &r, sizeof r));
    CHECK_OK(herd_stop());
    CHECK_EQ(atomic_load(&ran), r->spawned);
}

int main(void) {
    STEP("two workers: a full deque whose tasks a thief took keeps taking spawns");
    limit_run two = {.thieves = 1};
    run(2, &two);
    CHECK_EQ(two.refused, 0);

    STEP("one worker: nothing taken, the spawn after the last slot is refused");
    limit_run one = {.thieves = 0};
    run(1, &one);
    CHECK_EQ(one.refused, HERD_ENOMEM);
    CHECK_EQ(one.spawned, (uint64_t)one.cap); /* every slot, then the refusal */
    return 0;
}
