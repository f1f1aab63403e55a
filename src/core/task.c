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
#include "core/rescue.h"
#include "core/runtime.h"
#include "core/trace.h"
#include "core/watchdog.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void herd__join_done(herd__join *j) {
    /* J3. ORDER: acq_rel; release: the finished task's writes (its results)
     * happen before whatever observes pending complete; acquire: pairs with
     * the release half of the J2 add, so J4 sees `waiter`. A subtraction that
     * does not see 1 must not touch *j again: the waiter may return (J1) and
     * its frame, which holds *j, may be gone. */
    if (atomic_fetch_sub_explicit(&j->pending, 1, memory_order_acq_rel) != 1)
        return;
    /* J4. The waiter armed (J2) and stays suspended until this exchange
     * hands it back. ORDER: acq_rel; pairs with the J2 store of `waiter`
     * (published by the J2 add) and with the J2 clear when J2 saw 0. */
    herd__ult *u = atomic_exchange_explicit(&j->waiter, NULL, memory_order_acq_rel);
    if (u == HERD__WAITER_EXTERNAL) {
        /* ORDER: release; pairs with the acquire load in herd_run(). */
        atomic_store_explicit(&j->futex, 1, memory_order_release);
        herd__futex_wake(&j->futex, INT_MAX);
        return;
    }
    if (u)
        herd__ult_ready(u);
}

static void publish(herd__worker *w) {
    const herd__sched_ops *sched = w->rt->sched;
    if (sched->share) {
        /* S7 copies slots out, calls malloc and takes the queue's lock,
         * then drops the slots: a poke that published in between would
         * let thieves run them twice. */
        herd__rescue_hold(w);
        sched->share(w->sched_self);
        herd__rescue_release(w);
    } else if (herd__sdq_publish(&w->hot.q)) {
        herd__wake_one(w->rt); /* W3 */
    }
}

static void group_done(void *g);

/* A task that did not run as its parent's plain call reports back. */
static void fork_done(herd__worker *home);

static void task_done(const herd__taskcopy *t) {
    if (t->kind == HERD__KIND_GROUP) {
        group_done(t->parent);
    } else if (t->kind == HERD__KIND_INJECTED) {
        group_done(t->parent);
        herd__run_end(); /* after: herd_stop may free the runtime once it is counted out */
    } else if (t->kind == HERD__KIND_FORK)
        fork_done(t->parent);
    else
        herd__join_done(t->parent);
}

static void run_inline(herd__worker *w, herd__frame *f, herd__taskcopy *t) {
    int own = t->parent == &f->join;
    if (own)
        f->nspawned--; /* J0: this child needs no notification */
    herd__frame fr;
    herd__frame_open(&fr, &w->hot, t->fn, f);
    w->hot.frame = &fr;
    herd__count(&w->hot.inlined);
    t->fn(t->arg);
    w = herd__self(); /* fn may have suspended and resumed elsewhere */
    /* The child's implicit wait, as herd_wait's inline path tests it: only
     * a child that left tasks queued or spawned has one to do. */
    if (w->hot.q.head > fr.base || fr.nspawned != 0) {
        herd__frame_wait(&fr);
        w = herd__self();
    }
    w->hot.frame = f;
    if (!own)
        task_done(t);
}

typedef struct arm_frame_arg {
    herd__frame *f;
    int64_t n;
} arm_frame_arg;

static void arm_frame(herd__worker *w, herd__ult *u, void *p) {
    /* Copy the argument out first: it lives on u's stack, and once the add
     * below publishes `waiter`, u may be resumed elsewhere and its stack
     * reused (the same holds for the frame itself). */
    arm_frame_arg *a = p;
    herd__join *j = &a->f->join;
    int64_t n = a->n;
    /* J2. ORDER: relaxed store, published by the release half of the add. */
    atomic_store_explicit(&j->waiter, u, memory_order_relaxed);
    /* ORDER: acq_rel; release: pairs with the acquire half of the children's
     * J3 subtraction (they then see `waiter`); acquire: if this brings
     * pending to 0, we see every child's writes. */
    int64_t r = atomic_fetch_add_explicit(&j->pending, n, memory_order_acq_rel) + n;
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
static void drain_deque(herd__frame *f, void *j) {
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

/* J0 for the schedulers' own queues: while the task the scheduler would give this
 * worker next is one of j's, run it here as a plain call. That is the task
 * the worker's loop would take after the parent suspended, so the order of
 * the queue is kept; what is saved is the parent's suspension, the child's
 * stack, and its report back (J3). Only j's own tasks, as above. */
static void drain_queue(herd__frame *f, void *j) {
    herd__taskcopy t;
    for (;;) {
        herd__worker *w = herd__self();
        if ((char *)__builtin_frame_address(0) < w->hot.stack_limit ||
            !w->rt->sched->take_child(w->sched_self, j, &t))
            return;
        herd__count_shared_take(w, &t); /* shared by a worker the parent left */
        run_inline(w, f, &t);
    }
}

/* fifo (HERD__SCHED_OLDEST_FIRST): a wait runs its children oldest first.
 * The run of j's children on top of the deque is reversed in place, so
 * that the pops of drain_deque, newest first, take them in the order they
 * were spawned; what the drain leaves (low on stack, suspended) is taken
 * in that order too. Only private slots move, and only the top run of j's:
 * a slot of another join ends it, as it ends the drain. Held against a
 * poke (R5): the reversal calls memcpy, outside herd's code. */
static void order_oldest_first(herd__worker *w, const herd__frame *f, const void *j) {
    herd__sdq *q = &w->hot.q;
    if (q->head < f->base + 2)
        return; /* fewer than two queued above the frame */
    uint32_t floor = f->base > q->split ? f->base : q->split, lo = q->head;
    while (lo > floor && q->slots[lo - 1].parent == j)
        lo--;
    if (q->head - lo < 2)
        return;
    herd__rescue_hold(w);
    herd__sdq_reverse(q, lo, q->head);
    herd__rescue_release(w);
}

static void drain(herd__frame *f, void *j) {
    herd__worker *w = herd__self();
    if (w->rt->sched->flags & HERD__SCHED_OLDEST_FIRST)
        order_oldest_first(w, f, j);
    drain_deque(f, j);
    /* Children not run above went through the scheduler's queue (or were
     * stolen): only then is its lock worth taking. */
    if (f->nspawned && herd__self()->rt->sched->take_child)
        drain_queue(f, j);
}

static void frame_wait_at(herd__frame *f, void *ra) {
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
    herd__block_on(HERD__WAIT_CHILDREN, f, ra, arm_frame, &a);
}

void herd__frame_wait(herd__frame *f) {
    frame_wait_at(f, __builtin_return_address(0));
}

uint32_t herd__frame_hand_up(herd__frame *f,
                             int (*visit)(herd_fn fn, unsigned char *arg, size_t size, int move,
                                          void *ctx),
                             void *ctx) {
    herd__worker *w = herd__self();
    herd__sdq *q = &w->hot.q;
    herd__frame *up = f->up;
    HERD_ASSERT(w->hot.frame == f);
    /* J6. First the slots are only read, whether public or stolen: thieves
     * write nothing in a slot but its `taken` mark, and a stolen slot keeps
     * its contents until S6 reuses it, so a refusal changes nothing. Then
     * S9 makes f's queued slots private; slots in [split, head) are the
     * owner's alone (S1): no thief reads them before a publish, which only
     * this thread makes (S3; a poke's handler publishes only when the
     * thread is outside herd's code, R5), so their parents and arguments
     * change without ordering. f's slots below the tail S9 saw were stolen:
     * f still waits for them (J1). */
    if (!up || q->head <= f->base)
        return 0;
    for (uint32_t i = f->base; i < q->head; i++) {
        herd__slot *s = &q->slots[i];
        if (s->parent != &f->join || s->kind != HERD__KIND_TASK ||
            !visit(s->fn, herd__sdq_argp(q, s, s->size), s->size, 0, ctx))
            return 0;
    }
    uint32_t tail = herd__sdq_retract(q, f->base); /* S9 */
    uint32_t lo = tail > f->base ? tail : f->base; /* below: stolen, f's to wait for */
    uint32_t n = q->head - lo;
    for (uint32_t i = lo; i < q->head; i++) {
        herd__slot *s = &q->slots[i];
        s->parent = &up->join;
        visit(s->fn, herd__sdq_argp(q, s, s->size), s->size, 1, ctx);
    }
    f->nspawned -= n; /* J1 counts only its children taken elsewhere now */
    up->nspawned += n;
    f->base = q->head;
    return n;
}

/* Does the scheduler place the children of this root itself (paper 004's
 * first level of parallelism)? Only herd_run roots, and only help-first:
 * under work-first the child runs at once. */
static int places_first_level(const herd__worker *w, const herd__taskcopy *t) {
    return t->kind == HERD__KIND_ROOT && w->rt->sched->place_first_level &&
           w->rt->set.spawn == HERD__SPAWN_HELP_FIRST;
}

/* Run t as a root on the current stack, with its descendants; its report
 * back is the caller's (herd__run_root's, or K3/K4 of a work-first child). */
static void run_root_body(herd__worker *w, herd__taskcopy *t) {
    herd__frame fr;
    w->cur->ran_task = 1; /* its stack may go deep: trim it when recycled */
    herd__frame_open(&fr, &w->hot, t->fn, NULL);
    w->hot.frame = &fr;
    int first_level = places_first_level(w, t);
    if (first_level)
        herd__set_first_level(w, &fr);
    herd__trace_run(w, t->fn, t->kind);
    t->fn(t->arg);
    w = herd__self(); /* fn may have suspended and resumed elsewhere */
    if (w->hot.q.head > fr.base || fr.nspawned != 0) { /* its implicit wait, as run_inline's */
        herd__frame_wait(&fr);
        w = herd__self();
    }
    if (first_level)
        herd__set_first_level(w, NULL);
    w->hot.frame = NULL;
    HERD__COUNT(w, roots);
    herd__trace_task_end(w, HERD__TRACE_FINISHED);
}

void herd__run_root(herd__worker *w, herd__taskcopy *t) {
    run_root_body(w, t);
    task_done(t);
}

/* A full deque may hold many slots that thieves emptied: the deque's
 * indices only go down when the frames above them end. Rather than refuse
 * the spawn, move the queued tasks of the innermost frame down over the
 * gone ones (S8), when that frees at least this fraction of the deque (a
 * move costs one copy of every queued slot: never one per spawn). */
#define COMPACT_MIN_FRACTION 16

static int push_on_deque(herd__worker *w, herd_fn fn, void *parent, uint16_t kind, const void *arg,
                         size_t size) {
    herd__sdq *q = &w->hot.q;
    int rc = herd__sdq_push(q, fn, parent, kind, arg, size);
    if (__builtin_expect(rc != 0, 0) && q->head == q->cap && w->hot.frame) {
        /* S8 calls memmove half-way, with the owner's split and ts apart. */
        herd__rescue_hold(w);
        uint32_t freed = herd__sdq_compact(q, w->hot.frame->base, q->cap / COMPACT_MIN_FRACTION);
        herd__rescue_release(w);
        if (freed)
            rc = herd__sdq_push(q, fn, parent, kind, arg, size);
    }
    return rc;
}

/* Queue a new task on the worker's own deque; a share asked for goes out
 * at once (S3 or the scheduler's S7). */
static inline int push_task(herd__worker *w, herd_fn fn, void *parent, uint16_t kind,
                            const void *arg, size_t size) {
    int rc = push_on_deque(w, fn, parent, kind, arg, size);
    if (__builtin_expect(rc != 0, 0))
        return rc;
    herd__count(&w->hot.spawned);
    if (__builtin_expect(herd__sdq_wants_publish(&w->hot.q), 0))
        publish(w);
    return 0;
}

/* X1: put the task in `to`'s box if it is free (see herd__box). 1: done.
 * Context: worker 0, the only placer (no claim: a CAS per box serialised a
 * 16-member fork on 15 cache misses). */
static int box_put(herd__worker *to, herd_fn fn, void *parent, uint16_t kind, const void *arg,
                   size_t size) {
    herd__box *b = &to->box;
    if (size > HERD__BOX_ARG)
        return 0;
    /* ORDER: acquire; pairs with the taker's release store of EMPTY (X2):
     * its copy-out of the last task is done before we overwrite it. */
    if (atomic_load_explicit(&b->state, memory_order_acquire) != HERD__BOX_EMPTY)
        return 0;
    b->fn = fn;
    b->parent = parent;
    b->kind = kind;
    b->size = (uint16_t)size;
    if (size)
        memcpy(b->arg, arg, size);
    /* ORDER: release; pairs with the taker's acquire load (X2). */
    atomic_store_explicit(&b->state, HERD__BOX_FULL, memory_order_release);
    return 1;
}

/* F2: the last fork, if w has not looked at it and it holds a task for w. */
static int take_fork(herd__worker *w, herd__work *out) {
    herd__fork_rec *f = &w->rt->fork;
    /* ORDER: acquire; pairs with the placer's release store of the even
     * seq (F1): the range and the task written before it are visible. */
    uint64_t s = atomic_load_explicit(&f->seq, memory_order_acquire);
    if ((s & 1) || s == atomic_load_explicit(&w->fork.seen, memory_order_relaxed))
        return 0;
    uint64_t r = atomic_load_explicit(&f->range, memory_order_relaxed);
    /* ORDER: acquire fence; a range written by a later fork (after its
     * placer's release fence, F1) makes the load below read that fork's
     * odd or later seq: then the range is not trusted. */
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&f->seq, memory_order_relaxed) != s)
        return 0; /* rewritten meanwhile: look again */
    /* ORDER: relaxed; w's own word (debug builds' F3 check reads it after
     * the join, which orders it). */
    atomic_store_explicit(&w->fork.seen, s, memory_order_relaxed);
    if (!herd__fork_covers(r, w->id))
        return 0;
    /* Ours: by F3 nobody writes the task until we have copied it. */
    out->ult = NULL;
    out->task.fn = f->fn;
    out->task.parent = w; /* F4: its end marks w's done word */
    out->task.kind = HERD__KIND_FORK;
    out->task.size = f->size;
    memcpy(out->task.arg, f->arg, f->size);
    return 1;
}

int herd__take_placed_mine(herd__worker *w, herd__work *out) {
    HERD_ASSERT_OWNER(w);
    if (take_fork(w, out))
        return 1;
    herd__box *b = &w->box;
    /* ORDER: acquire; pairs with the placer's release store of FULL (X1). */
    if (atomic_load_explicit(&b->state, memory_order_acquire) == HERD__BOX_FULL) {
        out->ult = NULL;
        out->task.fn = b->fn;
        out->task.parent = b->parent;
        out->task.kind = b->kind;
        out->task.size = b->size;
        memcpy(out->task.arg, b->arg, b->size);
        /* ORDER: release; pairs with the next placer's acquire load (X1). */
        atomic_store_explicit(&b->state, HERD__BOX_EMPTY, memory_order_release);
        return 1;
    }
    return herd__tq_size(&w->mine) != 0 && herd__qtask_pop(&w->mine, 1, out);
}

/* Queue a task on a shepherd's placement queue, where only that shepherd's
 * workers take it (core/worker.c, take_placed). */
static int place_task(herd__worker *w, herd__tq *q, int shepherd, herd_fn fn, void *parent,
                      uint16_t kind, const void *arg, size_t size) {
    if (herd__qtask_push(q, fn, parent, kind, arg, size) != 0)
        return HERD_ENOMEM;
    herd__count(&w->hot.spawned);
    herd__wake_for_shepherd(w->rt, shepherd); /* W3 */
    return 0;
}

/* ------------------------------------------------------------ work-first
 * HERD_SPAWN=work-first: the child runs at once, and the parent's
 * continuation waits where thieves look for work. A continuation cannot
 * leave the stack it runs on, so the parent suspends and the child starts
 * on a fresh stack. Protocol K1..K4:
 *  K1 the parent counts the child (nspawned, as for any child), writes
 *     it at the top of a fresh stack and suspends (herd__spawn_switch,
 *     which leaves its nsuspend alone): its context is saved as any
 *     suspended task's, and the worker calls the child's entry on the
 *     fresh stack (herd__ctx_call: a call, not a switch);
 *  K2 there (child_first_entry) the worker pushes the continuation on its
 *     own deque as a slot of kind CONT (S1: no atomic operation),
 *     publishing it if a thief asks (S3), and runs the child. A thief that
 *     steals the slot (S4), or this worker's loop if it pops it while the
 *     child is suspended, resumes the parent (the continuation is stolen);
 *  K3 the child done, the worker pops the slot back (S2/S2') if it is
 *     still there and on top: same worker, the child's ULT never suspended
 *     (nsuspend unchanged: otherwise the loop ran meanwhile and the slot at
 *     that index may be another continuation), and no group task the child
 *     queued above it. Then the parent went nowhere: it uncounts the child
 *     (J0), and the entry returns straight into the parent's spawn
 *     (herd__spawn_return; sanitizer builds switch instead), the child's
 *     stack going back to the cache;
 *  K4 otherwise the continuation went on elsewhere: the child reports back
 *     through the join (J3), and the worker goes to its loop.
 * Under tied mode, or on a thread's own stack (adopt mode), the parent may
 * resume only where it suspended: its continuation goes to the front of
 * the worker's home or ready queue instead, and the child reports back. */

static void arm_child_first(herd__worker *w, herd__ult *parent, void *p) {
    /* The task record lives on the parent's stack, which may run again on
     * another worker as soon as the parent is queued: copy it first. */
    herd__taskcopy t;
    const herd__taskcopy *src = p;
    memcpy(&t, src, offsetof(herd__taskcopy, arg) + src->size);
    if (parent->home) {
        /* Tied mode: the continuation stays here, first in line. */
        herd__readyq_push_front(&w->home, parent);
    } else {
        herd__readyq_push_front(&w->ready, parent);
        herd__wake_for_ready(w); /* W3: the continuation is stealable */
    }
    herd__run_root(w, &t);
}

/* What a work-first child starts from, at the top of its fresh stack
 * (herd__ult_start): the child, and the parent whose continuation K2
 * queues. The parent writes it before it suspends; nobody else reads it. */
typedef struct child_first {
    herd__ult *parent;
    herd__taskcopy t;
} child_first;

/* The fresh stack's entry: K2..K4. */
static void child_first_entry(void *transfer) {
    (void)transfer;
    herd__ult_entered();
    herd__worker *w = herd__self();
    herd__ult *me = w->cur;
    child_first *c = /* herd__ult_start's area */
        (child_first *)(((uintptr_t)herd__stack_top(me->stack) - sizeof *c) & ~(uintptr_t)63);
    herd__ult *parent = c->parent;
    uint32_t cont = w->hot.q.head;
    if (herd__sdq_push(&w->hot.q, NULL, parent, HERD__KIND_CONT, NULL, 0) != 0) {
        arm_child_first(w, parent, &c->t); /* a full deque: by the ready queue */
        herd__sched_loop(herd__self());
    }
    if (herd__sdq_wants_publish(&w->hot.q))
        publish(w); /* K2 */
    herd__worker *home = w;
    uint32_t nsuspend = me->nsuspend;
    run_root_body(w, &c->t); /* no first level: t is a child (places_first_level) */
    w = herd__self();
    if (w == home && me->nsuspend == nsuspend) {
        herd__taskcopy k;
        herd__pop_result r = herd__sdq_pop(&w->hot.q, cont, &k);
        if (r == HERD__POP_OK && k.kind == HERD__KIND_CONT) { /* K3 */
            HERD_ASSERT(k.parent == parent);
            parent->frame->nspawned--;
            herd__spawn_return(w, parent);
            return; /* into the parent's spawn: nothing here may run after */
        }
        /* A group task the child queued lies on top: the loop runs it, and
         * then takes the continuation (K4). */
        if (r == HERD__POP_OK)
            herd__sdq_unpop(&w->hot.q);
        if (r == HERD__POP_STOLEN)
            herd__sdq_reset(&w->hot.q, cont);
    }
    task_done(&c->t); /* K4 */
    herd__sched_loop(herd__self());
}

/* A work-first child's record: fn(arg), reporting to frame f. */
static void child_record(herd__taskcopy *t, herd_fn fn, herd__frame *f, const void *arg,
                         size_t size) {
    t->fn = fn;
    t->parent = &f->join;
    t->kind = HERD__KIND_TASK;
    t->size = (uint16_t)size;
    if (size)
        memcpy(t->arg, arg, size);
}

static int spawn_work_first(herd__worker *w, herd_fn fn, const void *arg, size_t size) {
    herd__frame *f = w->hot.frame;
    f->nspawned++; /* K1: the child reports back through the join (J3) or K3 uncounts it */
    herd__count(&w->hot.spawned);
    if (w->rt->tied || w->cur->stack->native) {
        herd__taskcopy t;
        child_record(&t, fn, f, arg, size);
        herd__block(arm_child_first, &t);
        return 0;
    }
    /* K1: the child's record goes straight to its stack, which nobody else
     * sees before the switch. */
    void *area;
    herd__ult *next = herd__ult_start(w, sizeof(child_first), &area);
    child_first *c = area;
    c->parent = w->cur;
    child_record(&c->t, fn, f, arg, size);
    herd__spawn_switch(next, area, child_first_entry);
    return 0;
}

/* The inline paths (herd/herd_fast.h) handle the common cases; these take
 * the rest: errors, large arguments, a full deque, public or stolen
 * children, group tasks on top of the deque, low stack, suspension, and
 * every spawn when the inline path is closed (work-first, a first level). */
HERD_API int herd__spawn_slow(herd_fn fn, const void *arg, size_t arg_size) {
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
        return HERD_ENOTASK;
    if (!fn || arg_size > HERD_ARG_MAX || (arg_size && !arg))
        return HERD_EINVAL;
    if (w->rt->set.spawn == HERD__SPAWN_WORK_FIRST)
        return spawn_work_first(w, fn, arg, arg_size);
    herd__frame *f = w->hot.frame;
    int rc;
    if (f == w->first_level) {
        rc = w->rt->sched->place_first_level(w->sched_self, fn, &f->join, arg, arg_size);
        if (rc == 0)
            herd__count(&w->hot.spawned);
    } else {
        rc = push_task(w, fn, &f->join, HERD__KIND_TASK, arg, arg_size);
    }
    if (rc == 0)
        f->nspawned++;
    return rc;
}

HERD_API int herd__wait_slow(void) {
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
        return HERD_ENOTASK;
    frame_wait_at(w->hot.frame, __builtin_return_address(0)); /* herd_wait's caller */
    return 0;
}

HERD_API void herd__publish_slow(void) {
    publish(herd__self());
}

HERD_API void herd__frame_finish(herd__frame *f) {
    frame_wait_at(f, __builtin_return_address(0));
}

HERD_API int herd_spawn_fn(herd_fn fn, const void *arg, size_t arg_size) {
    return herd_spawn(fn, arg, arg_size);
}

HERD_API int herd_wait_fn(void) {
    return herd_wait();
}

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

/* ----------------------------------------------------------------- groups
 * One state word: (tasks pending << 1) | WAITING, and the waiting task.
 * A finishing task subtracts 2; only if the value it replaced was exactly
 * "one pending, a waiter parked" may it touch the record again, to take the
 * waiter (by CAS of WAITING -> 0, so a spawn racing in keeps it parked). A
 * waiter parks by setting WAITING with a CAS while pending is non-zero, after
 * storing itself in `waiter`. A waiter that sees zero returns at once, and
 * then the group may be freed: no finishing task touches it after making
 * zero visible unless WAITING told it the waiter is parked. */

#define GROUP_WAITING 1
#define GROUP_ONE 2

typedef struct group_rec {
    _Atomic uint64_t state;
    _Atomic(herd__ult *) waiter;
} group_rec;
_Static_assert(sizeof(group_rec) <= sizeof(herd_group), "herd_group storage");

static group_rec *group_of(herd_group *g) {
    return (group_rec *)(void *)g;
}

HERD_API void herd_group_init(herd_group *g) {
    group_rec *r = group_of(g);
    atomic_init(&r->state, 0);
    atomic_init(&r->waiter, NULL);
}

static void group_done(void *p) {
    group_rec *r = p;
    /* ORDER: acq_rel; release: this task's writes happen before the waiter's
     * acquire of a zero count; acquire: see the parked waiter's store. */
    uint64_t old = atomic_fetch_sub_explicit(&r->state, GROUP_ONE, memory_order_acq_rel);
    if (old != (GROUP_ONE | GROUP_WAITING))
        return;
    uint64_t expect = GROUP_WAITING;
    /* ORDER: acq_rel; pairs with the release CAS in arm_group(), so `waiter`
     * is the parked task. Fails if a new spawn raised the count: the waiter
     * stays parked for that task's completion. */
    if (atomic_compare_exchange_strong_explicit(&r->state, &expect, 0, memory_order_acq_rel,
                                                memory_order_relaxed))
        herd__ult_ready(atomic_load_explicit(&r->waiter, memory_order_relaxed));
}

HERD_API int herd_group_spawn(herd_group *g, herd_fn fn, const void *arg, size_t arg_size) {
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
        return HERD_ENOTASK;
    if (!g || !fn || arg_size > HERD_ARG_MAX || (arg_size && !arg))
        return HERD_EINVAL;
    group_rec *r = group_of(g);
    /* ORDER: relaxed; the queueing of the task (publish, or a pop by this
     * worker) orders this before the task's subtraction. */
    atomic_fetch_add_explicit(&r->state, GROUP_ONE, memory_order_relaxed);
    int rc = push_task(w, fn, r, HERD__KIND_GROUP, arg, arg_size);
    if (rc)
        atomic_fetch_sub_explicit(&r->state, GROUP_ONE, memory_order_relaxed);
    return rc;
}

/* The group of the injected tasks nobody waits for (herd__inject_group's
 * g NULL): counted like any group's, never waited on. */
static group_rec detached;

int herd__inject_group(herd_group *g, herd_fn fn, const void *arg, size_t arg_size) {
    group_rec *r = g ? group_of(g) : &detached;
    /* ORDER: relaxed; the injector's lock orders it before the task's
     * subtraction (group_done), as the queueing does in herd_group_spawn. */
    atomic_fetch_add_explicit(&r->state, GROUP_ONE, memory_order_relaxed);
    int rc = herd__inject(fn, arg, arg_size, HERD__KIND_INJECTED, r);
    if (rc)
        atomic_fetch_sub_explicit(&r->state, GROUP_ONE, memory_order_relaxed);
    return rc;
}

int herd__group_place(herd_group *g, int shepherd, herd_fn fn, const void *arg, size_t arg_size) {
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
        return HERD_ENOTASK;
    if (!g || !fn || arg_size > HERD_ARG_MAX || (arg_size && !arg) || shepherd < 0 ||
        shepherd >= w->rt->nshepherds)
        return HERD_EINVAL;
    group_rec *r = group_of(g);
    /* ORDER: relaxed, as in herd_group_spawn (the queue's lock orders it). */
    atomic_fetch_add_explicit(&r->state, GROUP_ONE, memory_order_relaxed);
    int rc = place_task(w, &w->rt->shepherds[shepherd].placed, shepherd, fn, r, HERD__KIND_GROUP,
                        arg, arg_size);
    if (rc)
        atomic_fetch_sub_explicit(&r->state, GROUP_ONE, memory_order_relaxed);
    return rc;
}

int herd__fork(int first, int count, herd_fn fn, const void *arg, size_t arg_size) {
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
        return HERD_ENOTASK;
    herd__rt *rt = w->rt;
    if (!fn || arg_size > HERD__FORK_ARG || (arg_size && !arg) || first < 1 || count < 1 ||
        count > rt->nworkers - first)
        return HERD_EINVAL;
    HERD_ASSERT(w->id == 0); /* the only placer (F1) */
    herd__fork_rec *f = &rt->fork;
    uint64_t s = w->fork.placed; /* = f->seq: only this worker writes it */
#if HERD_ASSERTS
    /* F3: the last fork was joined. */
    for (int i = w->fork.first; i < w->fork.first + w->fork.count; i++)
        HERD_ASSERT(atomic_load_explicit(&rt->workers[i].fork.done, memory_order_relaxed) == s + 1);
#endif
    /* F1. ORDER: the odd seq, then a release fence, before the range: a
     * reader that sees the new range sees the odd (or a later) seq. */
    atomic_store_explicit(&f->seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&f->range, (uint64_t)first << 32 | (uint32_t)count, memory_order_relaxed);
    f->fn = fn;
    f->size = (uint16_t)arg_size;
    if (arg_size)
        memcpy(f->arg, arg, arg_size);
    /* ORDER: release; pairs with the takers' acquire load (F2). */
    atomic_store_explicit(&f->seq, s + 2, memory_order_release);
    w->fork.placed = s + 2;
    w->fork.first = first;
    w->fork.count = count;
    /* Owner-only counter, as herd__count. */
    __atomic_store_n(&w->hot.spawned,
                     __atomic_load_n(&w->hot.spawned, __ATOMIC_RELAXED) + (uint64_t)count,
                     __ATOMIC_RELAXED);
    /* W3 once for all of them: a sleeper may be any of them. */
    herd__wake_workers(rt, first + count - 1);
    return 0;
}

/* The end of home's task of the fork it last saw (F4, F5). */
static void fork_done(herd__worker *home) {
    herd__rt *rt = home->rt;
    /* ORDER: relaxed; home's own word, written when it took the task. */
    uint64_t s = atomic_load_explicit(&home->fork.seen, memory_order_relaxed);
    /* ORDER: acq_rel; release: the task's writes before the placer's
     * acquire load (F4) or CAS (F5); acquire: a watched mark means the
     * placer's `left` is set. */
    if (atomic_exchange_explicit(&home->fork.done, s + 1, memory_order_acq_rel) != s)
        return;
    /* ORDER: acq_rel; the decrements form one release sequence, and the
     * one that reaches zero sees the waiter the arm stored before it
     * removed the guard. */
    if (atomic_fetch_sub_explicit(&rt->fork_join.left, 1, memory_order_acq_rel) == 1)
        herd__ult_ready(atomic_load_explicit(&rt->fork_join.waiter, memory_order_relaxed));
}

typedef struct fork_scan {
    herd__rt *rt;
    uint64_t s;
    int next, end; /* workers next..end-1 are not known to be done */
} fork_scan;

/* F4: have the tasks of the range ended? Resumes where it last stopped. */
static int fork_ended(void *p) {
    fork_scan *fs = p;
    for (; fs->next < fs->end; fs->next++)
        /* ORDER: acquire; pairs with fork_done's exchange. */
        if (atomic_load_explicit(&fs->rt->workers[fs->next].fork.done, memory_order_acquire) !=
            fs->s + 1)
            return 0;
    return 1;
}

static void arm_fork(herd__worker *w, herd__ult *u, void *p) {
    (void)w;
    herd__fork_wait *j = p;
    /* ORDER: relaxed; the acq_rel removal of the guard below publishes it. */
    atomic_store_explicit(&j->waiter, u, memory_order_relaxed);
    /* F5: remove the guard. ORDER: acq_rel; release publishes the waiter
     * to the task that reaches zero; acquire: zero here means every task
     * ended, and their decrements' writes are visible. */
    if (atomic_fetch_sub_explicit(&j->left, 1, memory_order_acq_rel) == 1)
        herd__ult_ready(u);
}

void herd__fork_join(void) {
    herd__worker *w = herd__self();
    herd__rt *rt = w->rt;
    HERD_ASSERT(w->id == 0);
    fork_scan fs = {rt, w->fork.placed, w->fork.first, w->fork.first + w->fork.count};
    if (fork_ended(&fs) || herd__spin_wait(w, fork_ended, &fs))
        return;
    /* F5. ORDER: relaxed; no task reads `left` before it finds its word
     * watched, and the CAS that marks it is a release after this store. */
    atomic_store_explicit(&rt->fork_join.left, fs.end - fs.next + 1, memory_order_relaxed);
    int64_t done = 0;
    for (int i = fs.next; i < fs.end; i++) {
        _Atomic uint64_t *d = &rt->workers[i].fork.done;
        /* ORDER: acquire, as in fork_ended. */
        uint64_t v = atomic_load_explicit(d, memory_order_acquire);
        /* ORDER: acq_rel on success (release: `left` is set before the
         * task can see the mark); acquire on failure: it ended (seq + 1). */
        if (v == fs.s + 1 || !atomic_compare_exchange_strong_explicit(
                                 d, &v, fs.s, memory_order_acq_rel, memory_order_acquire))
            done++;
    }
    /* ORDER: relaxed; the guard keeps `left` above zero until the arm's
     * acq_rel removal, and the loads and failed CASes above acquired the
     * ended tasks' writes. */
    if (done)
        atomic_fetch_sub_explicit(&rt->fork_join.left, done, memory_order_relaxed);
    herd__block_on(HERD__WAIT_FORK, &rt->fork, __builtin_return_address(0), arm_fork,
                   &rt->fork_join);
}

int herd__group_place_worker(herd_group *g, int worker, herd_fn fn, const void *arg,
                             size_t arg_size) {
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
        return HERD_ENOTASK;
    herd__rt *rt = w->rt;
    if (!g || !fn || arg_size > HERD_ARG_MAX || (arg_size && !arg) || worker < 0 ||
        worker >= rt->nworkers)
        return HERD_EINVAL;
    HERD_ASSERT(w->id == 0); /* the only placer (X1) */
    group_rec *r = group_of(g);
    /* ORDER: relaxed; the task's release (box, or the queue's lock) orders
     * it before the task's subtraction. */
    atomic_fetch_add_explicit(&r->state, GROUP_ONE, memory_order_relaxed);
    herd__worker *to = &rt->workers[worker];
    if (!box_put(to, fn, r, HERD__KIND_GROUP, arg, arg_size) &&
        herd__qtask_push(&to->mine, fn, r, HERD__KIND_GROUP, arg, arg_size) != 0) {
        atomic_fetch_sub_explicit(&r->state, GROUP_ONE, memory_order_relaxed);
        return HERD_ENOMEM;
    }
    herd__count(&w->hot.spawned);
    if (worker != w->id)
        herd__wake_worker(to); /* W3 */
    return 0;
}

void herd__call_task(herd_fn fn, void *arg) {
    herd__worker *w = herd__self();
    herd__frame *up = w->hot.frame;
    herd__frame fr;
    herd__frame_open(&fr, &w->hot, fn, up);
    w->hot.frame = &fr;
    fn(arg);
    herd__frame_wait(&fr);
    herd__self()->hot.frame = up; /* fn may have suspended: reload the worker */
}

static void arm_group(herd__worker *w, herd__ult *u, void *p) {
    (void)w;
    group_rec *r = p;
    atomic_store_explicit(&r->waiter, u, memory_order_relaxed);
    /* ORDER: acquire; pairs with group_done()'s release subtraction: if the
     * count is already zero, the tasks' writes are visible to us. */
    uint64_t s = atomic_load_explicit(&r->state, memory_order_acquire);
    for (;;) {
        if (s < GROUP_ONE) {
            /* Emptied meanwhile: nobody will wake us; resume ourselves. */
            herd__ult_ready(u);
            return;
        }
        /* ORDER: release; publishes `waiter` to the group_done() that sees
         * WAITING. After success we must not touch the group: it may be
         * finished, and freed by our own resumed task, at any moment. */
        if (atomic_compare_exchange_weak_explicit(&r->state, &s, s | GROUP_WAITING,
                                                  memory_order_release, memory_order_acquire))
            return;
    }
}

static int group_empty(void *p) {
    group_rec *r = p;
    /* ORDER: relaxed; herd_group_wait's acquire load follows (herd__spin_wait). */
    return atomic_load_explicit(&r->state, memory_order_relaxed) < GROUP_ONE;
}

HERD_API int herd_group_wait(herd_group *g) {
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
        return HERD_ENOTASK;
    group_rec *r = group_of(g);
    if (atomic_load_explicit(&r->state, memory_order_relaxed) & GROUP_WAITING)
        return HERD_EBUSY;
    /* Group tasks this task queued on top of our deque run here first; one
     * that blocks shows in the watchdog's dump as inside this wait. */
    herd__wait_ctx c;
    herd__wait_enter(&c, HERD__WAIT_GROUP, g, __builtin_return_address(0));
    drain(w->hot.frame, r);
    herd__wait_leave(&c);
    /* The last tasks may be about to finish on other workers (a parallel
     * region's members): spin a little before suspending. */
    herd__spin_wait(herd__self(), group_empty, r);
    /* ORDER: acquire; pairs with group_done()'s release: the tasks' writes
     * are visible when we see the count reach zero (at once after a
     * successful spin). */
    while (atomic_load_explicit(&r->state, memory_order_acquire) >= GROUP_ONE)
        herd__block_on(HERD__WAIT_GROUP, g, __builtin_return_address(0), arm_group, r);
    return 0;
}
