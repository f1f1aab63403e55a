/* Task synchronisation: mutex, condition variable, barrier. Each suspends
 * only the calling task (herd__block), never the worker.
 *
 * Pattern (park with unlock): the object's spinlock is taken by the task that
 * decides to wait, and released by the `arm` action that runs on the worker's
 * next stack after the task's context is saved. A waker takes the same lock,
 * so it either sees the waiter on the list (and can resume it at once, on any
 * worker) or runs before the waiter decided to wait. */
#include "core/runtime.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

static void list_push(herd__ult **head, herd__ult **tail, herd__ult *u) {
    u->next = NULL;
    if (*tail)
        (*tail)->next = u;
    else
        *head = u;
    *tail = u;
}

static herd__ult *list_pop(herd__ult **head, herd__ult **tail) {
    herd__ult *u = *head;
    if (u) {
        *head = u->next;
        if (!*head)
            *tail = NULL;
    }
    return u;
}

/* The public structs keep their fields as opaque storage; these views give
 * them types. */
typedef struct mutex_view {
    herd__spin lock;
    int held;
    herd__ult *head, *tail;
} mutex_view;
_Static_assert(sizeof(mutex_view) <= sizeof(herd_mutex), "herd_mutex storage");

typedef struct cond_view {
    herd__spin lock;
    herd__ult *head, *tail;
} cond_view;
_Static_assert(sizeof(cond_view) <= sizeof(herd_cond), "herd_cond storage");

static int in_task(void) {
    herd__worker *w = herd__self();
    return w && w->hot.frame;
}

/* ------------------------------------------------------------------ mutex */

HERD_API void herd_mutex_init(herd_mutex *m) {
    mutex_view *v = (mutex_view *)(void *)m;
    atomic_init(&v->lock.v, 0);
    v->held = 0;
    v->head = v->tail = NULL;
}

static void arm_mutex(herd__worker *w, herd__ult *u, void *p) {
    (void)w;
    mutex_view *v = p;
    list_push(&v->head, &v->tail, u);
    herd__spin_unlock(&v->lock);
}

/* A waiter that was woken and found the mutex taken again waits at the
 * head: it keeps its place in the queue. */
static void arm_mutex_again(herd__worker *w, herd__ult *u, void *p) {
    (void)w;
    mutex_view *v = p;
    u->next = v->head;
    v->head = u;
    if (!v->tail)
        v->tail = u;
    herd__spin_unlock(&v->lock);
}

HERD_API int herd_mutex_lock(herd_mutex *m) {
    if (!in_task())
        return HERD_ENOTASK;
    mutex_view *v = (mutex_view *)(void *)m;
    void *ra = __builtin_return_address(0);
    herd__spin_lock(&v->lock);
    /* M1: the unlocker does not hand the mutex over; it frees it and wakes
     * the oldest waiter, which takes it here unless a running task took it
     * first. A hand-over gave the mutex to a task that was not running yet,
     * and tasks that back off when a try fails (std::lock over two herd
     * mutexes: lock one, try the other, release and retry the other way)
     * then found each mutex held by a task waiting to run behind them:
     * four such tasks on one worker livelocked (cpp.sync@lifo, whose
     * resumed tasks all gathered on one worker). */
    int woken = 0;
    while (v->held) {
        /* The arm action releases the spinlock, after our context is saved. */
        herd__block_on(HERD__WAIT_MUTEX, m, ra, woken ? arm_mutex_again : arm_mutex, v);
        woken = 1;
        herd__spin_lock(&v->lock);
    }
    v->held = 1;
    herd__spin_unlock(&v->lock);
    return 0;
}

HERD_API int herd_mutex_trylock(herd_mutex *m) {
    if (!in_task())
        return HERD_ENOTASK;
    mutex_view *v = (mutex_view *)(void *)m;
    herd__spin_lock(&v->lock);
    int got = !v->held;
    v->held = 1;
    herd__spin_unlock(&v->lock);
    return got ? 0 : HERD_EBUSY;
}

/* Also called by arm_cond(), between tasks (no frame is current there). */
static int mutex_unlock(herd_mutex *m) {
    mutex_view *v = (mutex_view *)(void *)m;
    herd__spin_lock(&v->lock);
    if (!v->held) {
        herd__spin_unlock(&v->lock);
        return HERD_EINVAL;
    }
    /* M1: free it, and wake the oldest waiter to take it. */
    herd__ult *next = list_pop(&v->head, &v->tail);
    v->held = 0;
    herd__spin_unlock(&v->lock);
    if (next)
        herd__ult_ready(next);
    return 0;
}

HERD_API int herd_mutex_unlock(herd_mutex *m) {
    if (!in_task())
        return HERD_ENOTASK; /* it may wake a task: that needs a worker */
    return mutex_unlock(m);
}

/* ------------------------------------------------------------- condition */

HERD_API void herd_cond_init(herd_cond *c) {
    cond_view *v = (cond_view *)(void *)c;
    atomic_init(&v->lock.v, 0);
    v->head = v->tail = NULL;
}

typedef struct cond_arm {
    cond_view *c;
    herd_mutex *m;
} cond_arm;

static void arm_cond(herd__worker *w, herd__ult *u, void *p) {
    (void)w;
    /* Copy the argument first: it lives on u's stack, and once the lock is
     * released a signal may resume u, which then returns. */
    cond_arm *a = p;
    cond_view *c = a->c;
    herd_mutex *m = a->m;
    list_push(&c->head, &c->tail, u);
    herd__spin_unlock(&c->lock);
    /* Release the mutex only now: a signal sent after the waiter's unlock
     * finds it on the list. */
    mutex_unlock(m);
}

HERD_API int herd_cond_wait(herd_cond *c, herd_mutex *m) {
    if (!in_task())
        return HERD_ENOTASK;
    mutex_view *mv = (mutex_view *)(void *)m;
    herd__spin_lock(&mv->lock);
    int held = mv->held;
    herd__spin_unlock(&mv->lock);
    if (!held)
        return HERD_EINVAL;
    cond_view *v = (cond_view *)(void *)c;
    cond_arm a = {v, m};
    herd__spin_lock(&v->lock);
    herd__block_on(HERD__WAIT_COND, c, __builtin_return_address(0), arm_cond, &a);
    return herd_mutex_lock(m);
}

HERD_API int herd_cond_signal(herd_cond *c) {
    if (!in_task())
        return HERD_ENOTASK;
    cond_view *v = (cond_view *)(void *)c;
    herd__spin_lock(&v->lock);
    herd__ult *u = list_pop(&v->head, &v->tail);
    herd__spin_unlock(&v->lock);
    if (u)
        herd__ult_ready(u);
    return 0;
}

HERD_API int herd_cond_broadcast(herd_cond *c) {
    if (!in_task())
        return HERD_ENOTASK;
    cond_view *v = (cond_view *)(void *)c;
    herd__spin_lock(&v->lock);
    herd__ult *u = v->head;
    v->head = v->tail = NULL;
    herd__spin_unlock(&v->lock);
    while (u) {
        herd__ult *next = u->next;
        herd__ult_ready(u);
        u = next;
    }
    return 0;
}

/* ---------------------------------------------------------------- barrier
 * Paper 004 §2.3: arrivals register in an array at the index of their
 * arrival; the last arrival collects every slot and makes the tasks ready.
 * No list is shared by all arrivals, so arrivals do not contend on a lock.
 *
 * An arrival first waits by spinning on the phase (herd__spin_wait,
 * core/worker.c) and touches no slot while it spins: when the others come
 * within the spin, the barrier costs each arrival its RMW of the count and
 * the last one a store of the phase and a look at the slots (clean lines:
 * nobody wrote them). Only an arrival that stops spinning registers:
 * - B1 (arrival i of phase p, not the last): read the phase before arriving
 *   (it cannot move until we arrive), arrive, spin while the phase is p. If
 *   it moved, done. Otherwise block; the arm marks slot i of parity p ARMING
 *   and reads the phase (both seq_cst). Moved: the last arrival may have
 *   looked at the slot before the mark, so the arm clears the slot and
 *   readies the ULT itself. Still p: it stores the ULT in the slot
 *   (release) and touches the barrier no more: from then on the last
 *   arrival may wake the ULT, which may leave and free the barrier.
 * - B2 (last arrival): reopen (arrived = 0), move the phase (seq_cst), then
 *   look at every slot of parity p (seq_cst): ARMING is waited out (an arm
 *   between its two stores), a ULT is taken (slot cleared) and made ready.
 *   B1's mark-then-load against B2's store-then-load: one of the two sees
 *   the other's write, so no ULT is left asleep, and no arm reads the
 *   barrier after its ULT was published.
 * - B3: the slots of phase p are all NULL again before phase p + 2 begins:
 *   B2 of phase p empties what it sees before its thread arrives at p + 1,
 *   and a ULT whose arm cleared its slot runs, and arrives at p + 1, only
 *   after that. Arrivals of p + 1 use the other parity's slots, so a late
 *   look of B2 at phase p's slots never meets them. */
#define ARMING ((void *)(uintptr_t)1) /* never a ULT */

/* The barrier's words, on one allocation of whole cache lines. A team of
 * two keeps the arrival count, the phase and its slots on one line, so its
 * last arrival misses the cache once, as a central counter barrier's does
 * (with the slot on a line of its own it missed twice: EPCC SINGLE, 2
 * threads, 0.33 -> 0.18 us). A larger team keeps the count, the phase and
 * the slots on lines of their own: spinners read the phase, and an
 * arrival's RMW of the count on that line took it from every spinner once
 * more (16 threads, the 16-core device: BARRIER 1.9 -> 3.4 us). */
typedef struct barrier_state {
    int64_t arrived;
    uint64_t pair_phase; /* count <= 2: the phase */
    void *pair_slots[2]; /* count == 2: the slot, by parity */
} barrier_state;

#define PHASE_AT 64  /* count > 2: the phase's offset */
#define SLOTS_AT 128 /* count > 2: the slots' offset, (count - 1) per parity */

static uint64_t *phase_of(barrier_state *st, int64_t count) {
    return count <= 2 ? &st->pair_phase : (uint64_t *)(void *)((char *)st + PHASE_AT);
}

/* The count - 1 slots of phase p's parity. */
static void **slots_of(barrier_state *st, int64_t count, uint64_t p) {
    void **all = count <= 2 ? st->pair_slots : (void **)(void *)((char *)st + SLOTS_AT);
    return all + (p & 1) * (size_t)(count - 1);
}

static size_t state_bytes(int64_t count) {
    return count <= 2 ? sizeof(barrier_state) : SLOTS_AT + 2 * (size_t)(count - 1) * sizeof(void *);
}

#define STATE(b) ((barrier_state *)(b)->herd__state)

HERD_API int herd_barrier_init(herd_barrier *b, int64_t count) {
    if (count < 1)
        return HERD_EINVAL;
    size_t size = state_bytes(count);
    barrier_state *st = aligned_alloc(64, (size + 63) / 64 * 64);
    if (!st)
        return HERD_ENOMEM;
    return herd__barrier_init_at(b, count, st, size);
}

int herd__barrier_init_at(herd_barrier *b, int64_t count, void *mem, size_t bytes) {
    if (count < 1 || state_bytes(count) > bytes)
        return HERD_EINVAL;
    memset(mem, 0, state_bytes(count));
    b->herd__count = count;
    b->herd__state = mem;
    return 0;
}

HERD_API void herd_barrier_destroy(herd_barrier *b) {
    free(b->herd__state);
    b->herd__state = NULL;
}

typedef struct barrier_arm {
    void **slot;     /* the arrival's, of its phase's parity */
    uint64_t *phase; /* the barrier's */
    uint64_t p;      /* the phase it arrived in */
} barrier_arm;

static void arm_barrier(herd__worker *w, herd__ult *u, void *p) {
    (void)w;
    barrier_arm a = *(barrier_arm *)p; /* on u's stack: read before u can run */
    /* B1. ORDER: seq_cst, the mark and the load after it, against B2's
     * seq_cst store of the phase and load of the slot. The slot is NULL
     * (B3). */
    __atomic_store_n(a.slot, ARMING, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(a.phase, __ATOMIC_SEQ_CST) != a.p) {
        /* Moved: B2 looked before our mark, or waits for it to go. ORDER:
         * relaxed; our seq_cst load of the moved phase acquired B2's
         * writes, and u is ours to ready. */
        __atomic_store_n(a.slot, NULL, __ATOMIC_RELAXED);
        herd__ult_ready(u);
        return;
    }
    /* ORDER: release; pairs with B2's acquire load of the slot: u's saved
     * context is visible. Our last access to the barrier. */
    __atomic_store_n(a.slot, (void *)u, __ATOMIC_RELEASE);
}

typedef struct phase_wait {
    uint64_t *phase;
    uint64_t p;
} phase_wait;

static int phase_moved(void *arg) {
    phase_wait *pw = arg;
    /* ORDER: relaxed; herd_barrier_wait's acquire load follows. */
    return __atomic_load_n(pw->phase, __ATOMIC_RELAXED) != pw->p;
}

HERD_API int herd_barrier_wait(herd_barrier *b) {
    if (!in_task())
        return HERD_ENOTASK;
    /* The phase cannot move before this arrival. ORDER: relaxed; only
     * compared with later loads by this thread. */
    barrier_state *st = STATE(b);
    int64_t n = b->herd__count;
    uint64_t *phase = phase_of(st, n);
    uint64_t p = __atomic_load_n(phase, __ATOMIC_RELAXED);
    /* ORDER: acq_rel; the arrivals' RMWs form one release sequence, so the
     * last arrival sees every earlier arrival's writes. */
    int64_t idx = __atomic_fetch_add(&st->arrived, 1, __ATOMIC_ACQ_REL);
    if (idx < n - 1) {
        phase_wait pw = {phase, p};
        if (!herd__spin_wait(herd__self(), phase_moved, &pw)) {
            barrier_arm a = {&slots_of(st, n, p)[idx], phase, p};
            herd__block_on(HERD__WAIT_BARRIER, b, __builtin_return_address(0), arm_barrier, &a);
        }
        /* Released: the phase has moved (we saw it, or B2 woke us after
         * moving it, or our arm saw it). ORDER: acquire; pairs with B2's
         * store of the phase: every arrival's writes before the barrier
         * are visible. */
        (void)__atomic_load_n(phase, __ATOMIC_ACQUIRE);
        return 0;
    }
    /* B2. Last arrival: reopen, move the phase, then wake the ULTs that
     * registered. Released arrivals may arrive at the next phase at once:
     * they use the other parity's slots (B3). */
    /* ORDER: release; pairs with the next phase's acq_rel fetch_add. */
    __atomic_store_n(&st->arrived, 0, __ATOMIC_RELEASE);
    /* ORDER: seq_cst; release for every released arrival's acquire load
     * of the phase, and the store half of B1/B2's store-then-load. */
    __atomic_store_n(phase, p + 1, __ATOMIC_SEQ_CST);
    void **slots = slots_of(st, n, p);
    for (int64_t i = 0; i < n - 1; i++) {
        /* ORDER: seq_cst; the load half (B1). Usually NULL: a clean line. */
        void *v = __atomic_load_n(&slots[i], __ATOMIC_SEQ_CST);
        /* An arm between its mark and its ULT: a few instructions, unless
         * its worker lost the CPU. ORDER: relaxed in the spin (as in
         * herd__spin_wait), acquire once it changed. */
        for (unsigned spins = 0; v == ARMING;) {
            herd__spin_backoff(&spins);
            v = __atomic_load_n(&slots[i], __ATOMIC_RELAXED);
        }
        if (!v)
            continue;
        /* ORDER: acquire; pairs with the arm's release store of u. */
        herd__ult *u = __atomic_load_n(&slots[i], __ATOMIC_ACQUIRE);
        /* ORDER: relaxed; only we write the slot now (B3). */
        __atomic_store_n(&slots[i], NULL, __ATOMIC_RELAXED);
        herd__ult_ready(u);
    }
    return 1;
}
