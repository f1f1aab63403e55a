/* Tasks: spawn, wait, groups, futures, yield; the join protocol (J0..J4 in
 * docs/design/tasks.md).
 *
 * A child is a slot in its worker's split deque (in-place creation: no
 * allocation). The parent's wait pops its own children from the top of the
 * deque and runs them as plain calls on its own stack (J0): no atomic
 * operation, no fence, no stack switch. Children that a thief took, or that
 * the worker ran as roots after the parent suspended, notify the parent's
 * join record when they finish (J3); the parent counts how many children it
 * did not run itself (nspawned) and, if some still run, suspends (J2). */
#include "core/runtime.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Below this much stack left, a wait stops running children as plain calls
 * and suspends instead, so that they run on fresh stacks: task depth is then
 * bounded by memory, not by one stack's size. */
#define SPILL_BYTES (16 * 1024)

static inline void frame_init(herd__frame *f, herd__worker *w, herd_fn fn, herd__frame *up) {
    atomic_init(&f->join.pending, 0);
    atomic_init(&f->join.waiter, NULL);
    f->join.kind = HERD__JOIN_TASK;
    f->base = w->q.head;
    f->epoch = w->cur->epoch;
    f->nspawned = 0;
    f->up = up;
    f->fn = fn;
}

void herd__join_done(herd__join *j) {
    /* J3. ORDER: seq_cst (acq_rel would do for frames); release: the finished
     * task's writes (its results) happen before whatever observes pending
     * reach 0; acquire: pairs with the release of the waiter's arming add
     * (J2), so we see `waiter`; seq_cst: the group wait's store-then-load of
     * arm_group() needs this RMW in the single total order. */
    if (atomic_fetch_sub_explicit(&j->pending, 1, memory_order_seq_cst) != 1)
        return;
    if (j->kind == HERD__JOIN_EXTERNAL) {
        /* ORDER: release; pairs with the acquire load in herd_run(). */
        atomic_store_explicit(&j->futex, 1, memory_order_release);
        syscall(SYS_futex, &j->futex, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
        return;
    }
    /* J4. ORDER: acq_rel; pairs with the release store of `waiter` in
     * arm_frame()/arm_group(): exactly one party takes the waiter. */
    herd__ult *u = atomic_exchange_explicit(&j->waiter, NULL, memory_order_seq_cst);
    if (u)
        herd__ult_ready(u);
}

static void run_inline(herd__worker *w, herd__frame *f, herd__taskcopy *t) {
    int own = t->parent == &f->join;
    if (own)
        f->nspawned--; /* J0: this child needs no notification */
    herd__frame fr;
    frame_init(&fr, w, t->fn, f);
    w->frame = &fr;
    HERD__COUNT(w, inlined);
    t->fn(t->arg);
    herd__frame_wait(&fr);
    w = herd__self();
    w->frame = f;
    HERD__COUNT(w, executed);
    if (!own)
        herd__join_done(t->parent);
}

typedef struct arm_frame_arg {
    herd__frame *f;
    int64_t n;
} arm_frame_arg;

static void arm_frame(herd__worker *w, herd__ult *u, void *p) {
    arm_frame_arg *a = p;
    herd__join *j = &a->f->join;
    /* J2. ORDER: relaxed store, published by the release half of the add. */
    atomic_store_explicit(&j->waiter, u, memory_order_relaxed);
    /* ORDER: acq_rel; release: pairs with the acquire half of the children's
     * J3 subtraction (they then see `waiter`); acquire: if this brings
     * pending to 0, we see every child's writes. */
    int64_t r = atomic_fetch_add_explicit(&j->pending, a->n, memory_order_acq_rel) + a->n;
    if (r == 0) {
        /* Every child finished before the add: none will touch the record. */
        atomic_store_explicit(&j->waiter, NULL, memory_order_relaxed);
        herd__ult_ready(u);
    }
}

/* Run f's queued children (and tasks f queued into groups) as plain calls. */
static void drain(herd__frame *f) {
    herd__taskcopy t;
    for (;;) {
        herd__worker *w = herd__self();
        herd__ult *u = w->cur;
        uint32_t base = f->epoch == u->epoch ? f->base : u->seg_base;
        if (herd__stack_left(u->stack, __builtin_frame_address(0)) < SPILL_BYTES)
            break; /* the rest runs on other stacks; we suspend below */
        herd__pop_result r = herd__sdq_pop(&w->q, base, &t);
        if (r == HERD__POP_OK) {
            run_inline(w, f, &t);
            continue;
        }
        if (r == HERD__POP_STOLEN)
            herd__sdq_reset(&w->q, base);
        break;
    }
}

void herd__frame_wait(herd__frame *f) {
    drain(f);
    int64_t n = f->nspawned;
    if (n == 0)
        return;
    f->nspawned = 0;
    /* J1: the n children not run here each subtract 1 when done. If all of
     * them already have, there is nothing to wait for. ORDER: acquire; pairs
     * with their J3 release, so their results are visible. */
    if (atomic_load_explicit(&f->join.pending, memory_order_acquire) == -n) {
        atomic_store_explicit(&f->join.pending, 0, memory_order_relaxed);
        return;
    }
    arm_frame_arg a = {f, n};
    herd__block(arm_frame, &a);
}

void herd__run_root(herd__worker *w, herd__taskcopy *t) {
    herd__frame fr;
    frame_init(&fr, w, t->fn, NULL);
    w->frame = &fr;
    t->fn(t->arg);
    herd__frame_wait(&fr);
    w = herd__self();
    w->frame = NULL;
    HERD__COUNT(w, executed);
    herd__join_done(t->parent);
}

static void publish(herd__worker *w) {
    if (herd__sdq_publish(&w->q))
        herd__wake_one(w->rt); /* W3 */
}

static inline int push_task(herd__worker *w, herd_fn fn, void *parent, uint16_t kind,
                            const void *arg, size_t size) {
    int rc = herd__sdq_push(&w->q, fn, parent, kind, arg, size);
    if (__builtin_expect(rc != 0, 0))
        return rc;
    HERD__COUNT(w, spawned);
    if (__builtin_expect(herd__sdq_wants_publish(&w->q), 0))
        publish(w);
    return 0;
}

HERD_API int herd_spawn(herd_fn fn, const void *arg, size_t arg_size) {
    herd__worker *w = herd__self();
    if (__builtin_expect(!w || !w->frame, 0))
        return HERD_ENOTASK;
    if (__builtin_expect(!fn || arg_size > HERD_ARG_MAX || (arg_size && !arg), 0))
        return HERD_EINVAL;
    herd__frame *f = w->frame;
    int rc = push_task(w, fn, &f->join, HERD__KIND_TASK, arg, arg_size);
    if (rc == 0)
        f->nspawned++;
    return rc;
}

HERD_API int herd_wait(void) {
    herd__worker *w = herd__self();
    if (!w || !w->frame)
        return HERD_ENOTASK;
    herd__frame_wait(w->frame);
    return 0;
}

static void arm_yield(herd__worker *w, herd__ult *u, void *arg) {
    (void)w;
    (void)arg;
    herd__ult_ready(u);
}

HERD_API int herd_yield(void) {
    herd__worker *w = herd__self();
    if (!w || !w->frame)
        return HERD_ENOTASK;
    herd__block(arm_yield, NULL);
    return 0;
}

/* ----------------------------------------------------------------- groups */

/* A group's join record lives in the public struct's storage: pending and
 * waiter map onto herd__pending and herd__waiter. */
_Static_assert(sizeof(herd_group) >= sizeof(herd__join), "herd_group must hold a join");

static herd__join *group_join_of(herd_group *g) {
    return (herd__join *)(void *)g;
}

HERD_API void herd_group_init(herd_group *g) {
    herd__join *j = group_join_of(g);
    atomic_init(&j->pending, 0);
    atomic_init(&j->waiter, NULL);
    j->kind = HERD__JOIN_TASK;
    atomic_init(&j->futex, 0);
}

HERD_API int herd_group_spawn(herd_group *g, herd_fn fn, const void *arg, size_t arg_size) {
    herd__worker *w = herd__self();
    if (!w || !w->frame)
        return HERD_ENOTASK;
    if (!g || !fn || arg_size > HERD_ARG_MAX || (arg_size && !arg))
        return HERD_EINVAL;
    herd__join *j = group_join_of(g);
    /* ORDER: relaxed; the increment happens before the task is queued, and the
     * queueing (publish or a pop by this worker) orders it before the task's
     * J3 subtraction. */
    atomic_fetch_add_explicit(&j->pending, 1, memory_order_relaxed);
    int rc = push_task(w, fn, j, HERD__KIND_GROUP, arg, arg_size);
    if (rc)
        atomic_fetch_sub_explicit(&j->pending, 1, memory_order_relaxed);
    return rc;
}

static void arm_group(herd__worker *w, herd__ult *u, void *p) {
    (void)w;
    herd__join *j = p;
    /* Announce, then recheck (Dekker with J3's sub + exchange).
     * ORDER: seq_cst store and load; pairs with the seq_cst RMWs in
     * herd__join_done(): either the last task sees us in
     * `waiter`, or we see pending == 0. */
    atomic_store_explicit(&j->waiter, u, memory_order_seq_cst);
    if (atomic_load_explicit(&j->pending, memory_order_seq_cst) == 0) {
        herd__ult *expect = u;
        if (atomic_compare_exchange_strong_explicit(&j->waiter, &expect, NULL,
                                                    memory_order_acq_rel, memory_order_relaxed))
            herd__ult_ready(u);
    }
}

HERD_API int herd_group_wait(herd_group *g) {
    herd__worker *w = herd__self();
    if (!w || !w->frame)
        return HERD_ENOTASK;
    herd__join *j = group_join_of(g);
    if (atomic_load_explicit(&j->waiter, memory_order_relaxed) != NULL)
        return HERD_EBUSY;
    /* Group tasks this task queued are still on top of our deque: run them
     * here first, like our own children. */
    drain(w->frame);
    /* ORDER: acquire; pairs with J3's release: the tasks' writes are visible. */
    while (atomic_load_explicit(&j->pending, memory_order_acquire) != 0)
        herd__block(arm_group, j);
    return 0;
}
