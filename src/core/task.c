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

static inline void frame_init(herd__frame *f, herd__worker *w, herd_fn fn, herd__frame *up) {
    herd__frame_open(f, &w->hot, fn, up);
}

void herd__join_done(herd__join *j) {
    /* J3. ORDER: seq_cst (acq_rel would do for frames); release: the finished
     * task's writes (its results) happen before whatever observes pending
     * reach 0; acquire: pairs with the release of the waiter's arming add
     * (J2), so we see `waiter`; seq_cst: the group wait's store-then-load of
     * arm_group() needs this RMW in the single total order. */
    if (atomic_fetch_sub_explicit(&j->pending, 1, memory_order_seq_cst) != 1)
        return;
    /* J4. ORDER: seq_cst; pairs with the store of `waiter` in arm_frame() /
     * arm_group() (published by their release or seq_cst operations): exactly
     * one party takes the waiter. */
    herd__ult *u = atomic_exchange_explicit(&j->waiter, NULL, memory_order_seq_cst);
    if (u == HERD__WAITER_EXTERNAL) {
        /* ORDER: release; pairs with the acquire load in herd_run(). */
        atomic_store_explicit(&j->futex, 1, memory_order_release);
        syscall(SYS_futex, &j->futex, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
        return;
    }
    if (u)
        herd__ult_ready(u);
}

static void publish(herd__worker *w) {
    if (herd__sdq_publish(&w->hot.q))
        herd__wake_one(w->rt); /* W3 */
}

static void run_inline(herd__worker *w, herd__frame *f, herd__taskcopy *t) {
    int own = t->parent == &f->join;
    if (own)
        f->nspawned--; /* J0: this child needs no notification */
    herd__frame fr;
    frame_init(&fr, w, t->fn, f);
    w->hot.frame = &fr;
    herd__count(&w->hot.inlined);
    t->fn(t->arg);
    herd__frame_wait(&fr);
    w = herd__self();
    w->hot.frame = f;
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

/* Run the tasks of join j queued on top of the deque above f's base as plain
 * calls (J0). Only tasks the caller waits for anyway may run on its stack: a
 * task of another join (a group task the caller queued) could wait for
 * something the caller does only after this wait, so at the first such task
 * the drain stops and leaves it, and everything under it, to run as roots. */
static void drain(herd__frame *f, herd__join *j) {
    herd__taskcopy t;
    for (;;) {
        herd__worker *w = herd__self(); /* again: run_inline may have moved us */
        if ((char *)__builtin_frame_address(0) < w->hot.stack_limit)
            break; /* low on stack: the rest run as roots elsewhere; we suspend */
        if (herd__sdq_wants_publish(&w->hot.q))
            publish(w); /* S3: thieves are idle; share before running alone */
        herd__pop_result r = herd__sdq_pop(&w->hot.q, f->base, &t);
        if (r == HERD__POP_OK) {
            if (t.parent != j) {
                herd__sdq_unpop(&w->hot.q);
                break;
            }
            run_inline(w, f, &t);
            continue;
        }
        if (r == HERD__POP_STOLEN)
            herd__sdq_reset(&w->hot.q, f->base);
        break;
    }
}

void herd__frame_wait(herd__frame *f) {
    drain(f, &f->join);
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
    w->hot.frame = &fr;
    t->fn(t->arg);
    herd__frame_wait(&fr);
    w = herd__self();
    w->hot.frame = NULL;
    HERD__COUNT(w, roots);
    herd__join_done(t->parent);
}

static inline int push_task(herd__worker *w, herd_fn fn, void *parent, uint16_t kind,
                            const void *arg, size_t size) {
    int rc = herd__sdq_push(&w->hot.q, fn, parent, kind, arg, size);
    if (__builtin_expect(rc != 0, 0))
        return rc;
    herd__count(&w->hot.spawned);
    if (__builtin_expect(herd__sdq_wants_publish(&w->hot.q), 0))
        publish(w);
    return 0;
}

/* The inline paths (herd/herd_fast.h) handle the common cases; these take
 * the rest: errors, large arguments, a full deque, public or stolen
 * children, group tasks on top of the deque, low stack, suspension. */
HERD_API int herd__spawn_slow(herd_fn fn, const void *arg, size_t arg_size) {
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
        return HERD_ENOTASK;
    if (!fn || arg_size > HERD_ARG_MAX || (arg_size && !arg))
        return HERD_EINVAL;
    herd__frame *f = w->hot.frame;
    int rc = push_task(w, fn, &f->join, HERD__KIND_TASK, arg, arg_size);
    if (rc == 0)
        f->nspawned++;
    return rc;
}

HERD_API int herd__wait_slow(void) {
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
        return HERD_ENOTASK;
    herd__frame_wait(w->hot.frame);
    return 0;
}

HERD_API void herd__publish_slow(void) { publish(herd__self()); }

HERD_API void herd__frame_finish(herd__frame *f) { herd__frame_wait(f); }

HERD_API int herd_spawn_fn(herd_fn fn, const void *arg, size_t arg_size) {
    return herd_spawn(fn, arg, arg_size);
}

HERD_API int herd_wait_fn(void) { return herd_wait(); }

static void arm_yield(herd__worker *w, herd__ult *u, void *arg) {
    (void)arg;
    w->yielded = 1;
    herd__ult_ready(u);
}

HERD_API int herd_yield(void) {
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
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
    atomic_init(&j->futex, 0);
}

HERD_API int herd_group_spawn(herd_group *g, herd_fn fn, const void *arg, size_t arg_size) {
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
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
    if (!w || !w->hot.frame)
        return HERD_ENOTASK;
    herd__join *j = group_join_of(g);
    if (atomic_load_explicit(&j->waiter, memory_order_relaxed) != NULL)
        return HERD_EBUSY;
    /* Group tasks this task queued on top of our deque run here first. */
    drain(w->hot.frame, j);
    /* ORDER: acquire; pairs with J3's release: the tasks' writes are visible. */
    while (atomic_load_explicit(&j->pending, memory_order_acquire) != 0)
        herd__block(arm_group, j);
    return 0;
}
