/* Task synchronisation (src/core/sync.c): mutex, condition variable and
 * barrier, each with more tasks than workers, so that tasks really suspend
 * and resume, possibly on other workers.
 *
 * Checks are on exact outcomes: a non-atomic counter's total, items consumed
 * exactly once, barrier phase invariants; none depends on timing. */
// herd-test-matrix: unit
// herd-test-env: HERD_WORKERS=1
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=4 HERD_IDLE=sleep
// herd-test-env: HERD_WORKERS=8 HERD_IDLE=spin
// herd-test-env: HERD_WORKERS=3 HERD_STACK=64K
// herd-test-env: HERD_WORKERS=2 HERD_TRACE=unit_sync_trace.json
// herd-test-timeout: 120
#include "../common/check.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------- mutex */

#define MUTEX_TASKS CHECK_SIZE(10000, 1000) /* all but one suspend */
static herd_mutex mtx;
static long plain_counter; /* guarded by mtx only */
static _Atomic int inside; /* mutual exclusion witness */

static void mutex_task(void *p) {
    uint32_t i;
    memcpy(&i, p, sizeof i);
    CHECK_OK(herd_mutex_lock(&mtx));
    CHECK_EQ(atomic_exchange(&inside, 1), 0);
    long v = plain_counter;
    if (i % 16 == 0)
        CHECK_OK(herd_yield()); /* suspended while holding it: others must queue */
    plain_counter = v + 1;
    atomic_store(&inside, 0);
    CHECK_OK(herd_mutex_unlock(&mtx));
}

static void mutex_root(void *p) {
    (void)p;
    herd_mutex_init(&mtx);
    for (uint32_t i = 0; i < MUTEX_TASKS; i++)
        CHECK_OK(herd_spawn(mutex_task, &i, sizeof i));
    CHECK_OK(herd_wait());
    CHECK_EQ(plain_counter, MUTEX_TASKS);
}

static void trylock_root(void *p) {
    (void)p;
    herd_mutex m;
    herd_mutex_init(&m);
    CHECK_RC(herd_mutex_unlock(&m), HERD_EINVAL); /* never held */
    CHECK_OK(herd_mutex_trylock(&m));
    CHECK_RC(herd_mutex_trylock(&m), HERD_EBUSY); /* not recursive */
    CHECK_OK(herd_mutex_unlock(&m));
    CHECK_RC(herd_mutex_unlock(&m), HERD_EINVAL); /* released already */
    CHECK_OK(herd_mutex_lock(&m));
    CHECK_RC(herd_mutex_trylock(&m), HERD_EBUSY);
    CHECK_OK(herd_mutex_unlock(&m));
    CHECK_OK(herd_mutex_trylock(&m));
    CHECK_OK(herd_mutex_unlock(&m));
}

/* FIFO: tasks queued on a held mutex get it in arrival order. With
 * one worker the arrival order is known: each waiter announces itself just
 * before it suspends, and the root only resumes when the waiter is queued. */
#define FIFO_N 50
static herd_mutex fifo_m;
static _Atomic int fifo_arrived;
static int fifo_order[FIFO_N], fifo_pos; /* guarded by fifo_m */

static void fifo_task(void *p) {
    int i = *(int *)p;
    atomic_fetch_add(&fifo_arrived, 1);
    CHECK_OK(herd_mutex_lock(&fifo_m));
    fifo_order[fifo_pos++] = i;
    CHECK_OK(herd_mutex_unlock(&fifo_m));
}

static void fifo_root(void *p) {
    (void)p;
    herd_mutex_init(&fifo_m);
    fifo_pos = 0;
    CHECK_OK(herd_mutex_lock(&fifo_m));
    for (int i = 0; i < FIFO_N; i++) {
        CHECK_OK(herd_spawn(fifo_task, &i, sizeof i));
        while (atomic_load(&fifo_arrived) <= i)
            CHECK_OK(herd_yield());
    }
    CHECK_OK(herd_mutex_unlock(&fifo_m));
    CHECK_OK(herd_wait());
    CHECK_EQ(fifo_pos, FIFO_N);
    for (int i = 0; i < FIFO_N; i++)
        CHECK_EQ(fifo_order[i], i);
}

/* No hand-off (M1 in src/core/sync.c): an unlock wakes the oldest waiter
 * but leaves the mutex free, so the running task may take it again first;
 * the waiter then waits again at the head, ahead of later arrivals. One
 * worker, so the woken waiter runs only when the root yields. The FIFO
 * case's tasks, numbered 1 and 2. */
static void no_handoff_root(void *p) {
    (void)p;
    herd_mutex_init(&fifo_m);
    atomic_store(&fifo_arrived, 0);
    fifo_pos = 0;
    CHECK_OK(herd_mutex_lock(&fifo_m));
    int first = 1, second = 2;
    CHECK_OK(herd_spawn(fifo_task, &first, sizeof first));
    while (atomic_load(&fifo_arrived) < 1)
        CHECK_OK(herd_yield());
    CHECK_OK(herd_mutex_unlock(&fifo_m));  /* wakes the first waiter ... */
    CHECK_OK(herd_mutex_trylock(&fifo_m)); /* ... which does not own it yet */
    for (int i = 0; i < 20; i++)
        CHECK_OK(herd_yield()); /* it runs, finds it held, waits again */
    CHECK_EQ(fifo_pos, 0);
    CHECK_OK(herd_spawn(fifo_task, &second, sizeof second));
    while (atomic_load(&fifo_arrived) < 2)
        CHECK_OK(herd_yield());
    CHECK_OK(herd_mutex_unlock(&fifo_m));
    CHECK_OK(herd_wait());
    CHECK_EQ(fifo_pos, 2);
    CHECK_EQ(fifo_order[0], 1); /* it kept its place at the head */
    CHECK_EQ(fifo_order[1], 2);
}

/* -------------------------------------------- condition: bounded queue */

#define PRODUCERS 24
#define CONSUMERS 17
#define ITEMS_PER_PRODUCER CHECK_SIZE(400, 40)
#define TOTAL_ITEMS (PRODUCERS * ITEMS_PER_PRODUCER)
#define QCAP 8

static herd_mutex qm;
static herd_cond not_empty, not_full;
static int qbuf[QCAP], qhead, qcount; /* guarded by qm */
static long consumed;                 /* guarded by qm */
static _Atomic unsigned char item_seen[TOTAL_ITEMS];
static _Atomic long per_consumer_sum;

static void producer(void *p) {
    int id = *(int *)p;
    for (int k = 0; k < ITEMS_PER_PRODUCER; k++) {
        CHECK_OK(herd_mutex_lock(&qm));
        while (qcount == QCAP)
            CHECK_OK(herd_cond_wait(&not_full, &qm));
        CHECK(qcount < QCAP);
        qbuf[(qhead + qcount) % QCAP] = id * ITEMS_PER_PRODUCER + k;
        qcount++;
        CHECK_OK(herd_cond_signal(&not_empty));
        CHECK_OK(herd_mutex_unlock(&qm));
    }
}

static void consumer(void *p) {
    (void)p;
    long mine = 0;
    for (;;) {
        CHECK_OK(herd_mutex_lock(&qm));
        while (qcount == 0 && consumed < TOTAL_ITEMS)
            CHECK_OK(herd_cond_wait(&not_empty, &qm));
        if (qcount == 0) { /* everything consumed: let the others see it too */
            CHECK_OK(herd_cond_broadcast(&not_empty));
            CHECK_OK(herd_mutex_unlock(&qm));
            break;
        }
        int item = qbuf[qhead];
        qhead = (qhead + 1) % QCAP;
        qcount--;
        consumed++;
        if (consumed == TOTAL_ITEMS)
            CHECK_OK(herd_cond_broadcast(&not_empty));
        CHECK_OK(herd_cond_signal(&not_full));
        CHECK_OK(herd_mutex_unlock(&qm));
        CHECK(item >= 0 && item < TOTAL_ITEMS);
        atomic_fetch_add(&item_seen[item], 1);
        mine++;
    }
    atomic_fetch_add(&per_consumer_sum, mine);
}

static void queue_root(void *p) {
    (void)p;
    herd_mutex_init(&qm);
    herd_cond_init(&not_empty);
    herd_cond_init(&not_full);
    /* Consumers first, so that many of them wait on an empty queue. */
    for (int i = 0; i < CONSUMERS; i++)
        CHECK_OK(herd_spawn(consumer, &i, sizeof i));
    for (int i = 0; i < PRODUCERS; i++)
        CHECK_OK(herd_spawn(producer, &i, sizeof i));
    CHECK_OK(herd_wait());
    CHECK_EQ(consumed, TOTAL_ITEMS);
    CHECK_EQ(qcount, 0);
    CHECK_EQ(atomic_load(&per_consumer_sum), TOTAL_ITEMS);
    for (int i = 0; i < TOTAL_ITEMS; i++)
        CHECK_EQ(atomic_load(&item_seen[i]), 1);
}

/* --------------------------------------------------------------- broadcast */

#define BC_WAITERS 300
static herd_mutex bm;
static herd_cond bc;
static int bc_go, bc_waiting; /* guarded by bm */
static _Atomic int bc_released;

static void bc_waiter(void *p) {
    (void)p;
    CHECK_OK(herd_mutex_lock(&bm));
    bc_waiting++;
    while (!bc_go)
        CHECK_OK(herd_cond_wait(&bc, &bm));
    CHECK_OK(herd_mutex_unlock(&bm));
    atomic_fetch_add(&bc_released, 1);
}

static void bc_root(void *p) {
    (void)p;
    herd_mutex_init(&bm);
    herd_cond_init(&bc);
    CHECK_OK(herd_cond_signal(&bc)); /* nobody waits: no effect */
    CHECK_OK(herd_cond_broadcast(&bc));
    for (int i = 0; i < BC_WAITERS; i++)
        CHECK_OK(herd_spawn(bc_waiter, NULL, 0));
    /* Once we hold bm and see every waiter counted, each of them is on the
     * condition's list (cond_wait releases bm only after queueing). */
    CHECK_OK(herd_mutex_lock(&bm));
    while (bc_waiting < BC_WAITERS) {
        CHECK_OK(herd_mutex_unlock(&bm));
        CHECK_OK(herd_yield());
        CHECK_OK(herd_mutex_lock(&bm));
    }
    CHECK_EQ(atomic_load(&bc_released), 0);
    bc_go = 1;
    CHECK_OK(herd_cond_broadcast(&bc)); /* one broadcast must release all */
    CHECK_OK(herd_mutex_unlock(&bm));
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&bc_released), BC_WAITERS);

    /* cond_wait with a mutex the caller does not hold. */
    herd_mutex m;
    herd_mutex_init(&m);
    CHECK_RC(herd_cond_wait(&bc, &m), HERD_EINVAL);
}

/* ----------------------------------------------------------------- barrier */

#define BAR_TASKS CHECK_SIZE(1000, 300)
#define BAR_PHASES 5
static herd_barrier bar;
static _Atomic long arrived[BAR_PHASES], departed[BAR_PHASES], serial[BAR_PHASES];

static void bar_task(void *p) {
    (void)p;
    for (int k = 0; k < BAR_PHASES; k++) {
        /* Nobody may be in phase k+1 before everybody left phase k... */
        if (k > 0)
            CHECK_EQ(atomic_load(&arrived[k - 1]), BAR_TASKS);
        atomic_fetch_add(&arrived[k], 1);
        int rc = herd_barrier_wait(&bar);
        CHECK(rc == 0 || rc == 1);
        /* ...and nobody passes phase k before all arrived at it. */
        CHECK_EQ(atomic_load(&arrived[k]), BAR_TASKS);
        if (rc == 1)
            atomic_fetch_add(&serial[k], 1);
        atomic_fetch_add(&departed[k], 1);
    }
}

static void bar_root(void *p) {
    (void)p;
    herd_barrier b;
    CHECK_RC(herd_barrier_init(&b, 0), HERD_EINVAL);
    CHECK_RC(herd_barrier_init(&b, -5), HERD_EINVAL);
    /* A barrier of one: every wait returns at once, always serial. */
    CHECK_OK(herd_barrier_init(&b, 1));
    for (int i = 0; i < 3; i++)
        CHECK_RC(herd_barrier_wait(&b), 1);
    herd_barrier_destroy(&b);

    CHECK_OK(herd_barrier_init(&bar, BAR_TASKS));
    for (int i = 0; i < BAR_TASKS; i++)
        CHECK_OK(herd_spawn(bar_task, NULL, 0));
    CHECK_OK(herd_wait());
    for (int k = 0; k < BAR_PHASES; k++) {
        CHECK_EQ(atomic_load(&arrived[k]), BAR_TASKS);
        CHECK_EQ(atomic_load(&departed[k]), BAR_TASKS);
        CHECK_EQ(atomic_load(&serial[k]), 1);
    }
    herd_barrier_destroy(&bar);
}

int main(void) {
    CHECK_OK(herd_start(NULL));
    STEP("mutex: trylock, unlock of an unheld mutex");
    CHECK_OK(herd_run(trylock_root, NULL, 0));
    STEP("mutex: %d tasks increment a plain counter", MUTEX_TASKS);
    CHECK_OK(herd_run(mutex_root, NULL, 0));
    if (herd_num_workers() == 1) {
        STEP("mutex: waiters served in arrival order");
        CHECK_OK(herd_run(fifo_root, NULL, 0));
        STEP("mutex: no hand-off; a woken waiter that lost it waits again first in line");
        CHECK_OK(herd_run(no_handoff_root, NULL, 0));
    }
    STEP("condition: bounded queue, %d producers, %d consumers", PRODUCERS, CONSUMERS);
    CHECK_OK(herd_run(queue_root, NULL, 0));
    STEP("condition: broadcast releases %d waiters", BC_WAITERS);
    CHECK_OK(herd_run(bc_root, NULL, 0));
    STEP("barrier: %d tasks, %d phases", BAR_TASKS, BAR_PHASES);
    CHECK_OK(herd_run(bar_root, NULL, 0));
    CHECK_OK(herd_stop());
    STEP("ok");
    return 0;
}
