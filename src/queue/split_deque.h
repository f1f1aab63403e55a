/* Split deque of task slots: the per-worker queue behind herd_spawn/herd_wait.
 *
 * The protocol and its proof sketch are in docs/design/split-deque.md; the
 * step numbers (S1..S8) below refer to it. In short: slots [0, cap) hold
 * tasks in place (function, parent, inline argument copy). Three indexes
 * split them:
 *
 *     gone          public            private
 *   [0, tail)    [tail, split)      [split, head)      [head, cap) free
 *
 * The owner pushes and pops at `head` with no atomic operation and no fence
 * while the private part is non-empty (S1, S2). Thieves take the oldest
 * public slot by a CAS on the packed word `ts` = (split << 32 | tail) (S4).
 * When thieves find no public work they raise `split_req`; the owner, at its
 * next push, publishes half of its private part with a release CAS that moves
 * `split` up (S3). When the owner's private part is empty it takes back half
 * of the public part with a CAS that moves `split` down (S2'). A thief marks
 * a slot `taken` after copying it out, and the owner waits for that mark
 * before it writes over a stolen slot (S5, reset). A push that finds the
 * deque full moves the queued tasks down over the stolen ones (S8). Under a
 * scheduler whose workers share through a queue of its own (mts, central),
 * no thief reads the deque: the owner hands its oldest private slots to
 * that queue (S7).
 *
 * Owner-only steps check their caller in debug builds (HERD__SDQ_OWNER:
 * split-deque.md, "Who the owner is").
 */
#ifndef HERD_SPLIT_DEQUE_H
#define HERD_SPLIT_DEQUE_H

#include "arch/assert.h"
#include "herd/herd.h" /* herd__slot, herd__sdq: herd/herd_fast.h */

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* A task copied out of a slot: what a worker runs. */
typedef struct herd__taskcopy {
    herd_fn fn;
    void *parent;
    uint16_t size;
    uint16_t kind;
    int32_t from; /* a task of a scheduler's shared queue: the worker that queued it there
                     (-1: none; sched/qtask.c), for the steal counts. Unset for others. */
    unsigned char arg[HERD_ARG_MAX] __attribute__((aligned(16)));
} herd__taskcopy;

typedef enum herd__steal_result {
    HERD__STEAL_EMPTY = 1, /* no public work (a split request was raised if useful) */
    HERD__STEAL_OK,        /* *out holds the task */
    HERD__STEAL_RETRY,     /* lost a race with another thief or the owner; try again */
} herd__steal_result;

typedef enum herd__pop_result {
    HERD__POP_OK = 1, /* *out holds the task */
    HERD__POP_NONE,   /* head <= base: nothing queued above base */
    HERD__POP_STOLEN, /* every slot in [base, head) was stolen: call herd__sdq_reset(q, base) */
} herd__pop_result;

/* The owner of a worker's deque is the thread running that worker
 * (herd__tls points at the worker's herd__hot): its pthread, or in adopt
 * mode whichever application thread holds worker 0 now. A deque of no
 * worker (the deque tests) is owned by the thread whose latest
 * herd__sdq_own named it. Debug builds abort when an owner-only step comes
 * from another thread; release builds check nothing, and herd__sdq_own
 * does nothing. */
#if HERD_ASSERTS
#define HERD__SDQ_OWNER(q) HERD_ASSERT(herd__sdq_is_owner(q) && "owner only")
int herd__sdq_is_owner(const herd__sdq *q);
/* Make the calling thread q's owner (NULL: none) for a deque of no worker. */
void herd__sdq_own(herd__sdq *q);
#else
#define HERD__SDQ_OWNER(q) ((void)0)
static inline void herd__sdq_own(herd__sdq *q) {
    (void)q;
}
#endif

/* Map cap slots lazily (the big-argument area waits for its first use:
 * herd__sdq_map_big). Returns 0 or HERD_ENOMEM. */
int herd__sdq_init(herd__sdq *q, uint32_t cap);
/* The address space herd__sdq_init reserves for cap slots (for messages). */
size_t herd__sdq_reserved(uint32_t cap);
/* Owner only: reserve the big-argument area (cap * HERD_ARG_MAX bytes of
 * address space) if it is not yet. Returns 0, or HERD_ENOMEM after saying
 * so on stderr. */
int herd__sdq_map_big(herd__sdq *q);
void herd__sdq_fini(herd__sdq *q);

static inline uint32_t herd__ts_tail(uint64_t ts) {
    return (uint32_t)ts;
}
static inline uint32_t herd__ts_split(uint64_t ts) {
    return (uint32_t)(ts >> 32);
}
static inline uint64_t herd__ts_make(uint32_t tail, uint32_t split) {
    return ((uint64_t)split << 32) | tail;
}

/* Where a task of `size` argument bytes in slot s keeps its arguments. */
static inline unsigned char *herd__sdq_argp(herd__sdq *q, herd__slot *s, size_t size) {
    if (size <= HERD__SLOT_INLINE_ARG)
        return s->arg;
    return q->big + (size_t)(s - q->slots) * HERD_ARG_MAX;
}

/* Copy an argument block; the common small sizes become fixed-size moves
 * instead of a call to memcpy (we may not read past the caller's block). */
static inline void herd__copy_arg(void *dst, const void *src, size_t size) {
    switch (size) {
    case 0:
        return;
    case 8:
        memcpy(dst, src, 8);
        return;
    case 16:
        memcpy(dst, src, 16);
        return;
    case 24:
        memcpy(dst, src, 24);
        return;
    case 32:
        memcpy(dst, src, 32);
        return;
    case 40:
        memcpy(dst, src, 40);
        return;
    default:
        memcpy(dst, src, size);
    }
}

/* S1, owner only: fill the slot at head and make it the newest private task.
 * Returns 0, or HERD_ENOMEM when the deque is full. */
static inline int herd__sdq_push(herd__sdq *q, herd_fn fn, void *parent, uint16_t kind,
                                 const void *arg, size_t size) {
    HERD__SDQ_OWNER(q);
    uint32_t h = q->head;
    if (__builtin_expect(h == q->cap, 0))
        return HERD_ENOMEM;
    if (__builtin_expect(size > HERD__SLOT_INLINE_ARG && !q->big, 0) && herd__sdq_map_big(q))
        return HERD_ENOMEM;
    herd__slot *s = &q->slots[h];
    herd__slot_set(s, fn, parent, kind, size);
    herd__copy_arg(herd__sdq_argp(q, s, size), arg, size);
    q->head = h + 1;
    return 0;
}

/* Is a thief asking q's owner for work? (one relaxed load; the owner's
 * answer is S3 or S7; anyone may look) */
static inline int herd__sdq_wants_publish(herd__sdq *q) {
    /* ORDER: relaxed; a late view only delays publication, it never loses a task. */
    return atomic_load_explicit(&q->split_req, memory_order_relaxed) != 0;
}

/* Is nothing of q public (every queued task private, or none queued)?
 * Owner only; one relaxed load of the word thieves change. */
static inline int herd__sdq_public_empty(herd__sdq *q) {
    HERD__SDQ_OWNER(q);
    /* ORDER: relaxed; a hint for publishing early, S3's CAS synchronises. */
    uint64_t ts = atomic_load_explicit(&q->ts, memory_order_relaxed);
    return herd__ts_tail(ts) >= q->split;
}

/* S4a's request, by anyone but the owner: ask the owner to share (S3 or
 * S7). Read first, so that askers do not keep the owner's line bouncing. */
static inline void herd__sdq_ask(herd__sdq *q) {
    /* ORDER: relaxed, see herd__sdq_wants_publish(). */
    if (!atomic_load_explicit(&q->split_req, memory_order_relaxed))
        atomic_store_explicit(&q->split_req, 1, memory_order_relaxed);
}

/* S7, owner only, for a deque no thief reads (a scheduler that shares
 * through a queue of its own, mts): the oldest private slot, or NULL when
 * the private part is empty or some of the deque is public. */
static inline herd__slot *herd__sdq_oldest_private(herd__sdq *q) {
    HERD__SDQ_OWNER(q);
    /* ORDER: relaxed; the owner's own word unless a thief moved tail. */
    uint64_t ts = atomic_load_explicit(&q->ts, memory_order_relaxed);
    if (q->head == q->split || herd__ts_tail(ts) != q->split)
        return NULL;
    return &q->slots[q->split];
}
/* S7: give up the slot herd__sdq_oldest_private returned (the caller has
 * copied it out): it becomes gone, as if stolen. */
void herd__sdq_drop_oldest(herd__sdq *q);

/* S3, owner only: publish half of the private part (at least one slot).
 * Returns the number of slots published. */
uint32_t herd__sdq_publish(herd__sdq *q);

/* S9, owner only: make every queued slot at or above floor private again
 * (S2''s CAS without the halving). Returns the tail it saw: the slots in
 * [max(tail, floor), head) are then private, and those below tail are gone
 * (stolen, or being copied by their thief). */
uint32_t herd__sdq_retract(herd__sdq *q, uint32_t floor);

/* S2/S2', owner only: pop the newest task if it lies at or above base. */
herd__pop_result herd__sdq_pop_slow(herd__sdq *q, uint32_t base, herd__taskcopy *out);

/* A bit of a slot's kind: the slot is one of a run that a fifo wait
 * reversed (herd__sdq_reverse). Cleared on the way out of the deque. */
#define HERD__SLOT_REVERSED 0x8000u

static inline void herd__sdq_copy_out(herd__sdq *q, uint32_t idx, herd__taskcopy *out) {
    herd__slot *s = &q->slots[idx];
    out->fn = s->fn;
    out->parent = s->parent;
    out->size = s->size;
    out->kind = (uint16_t)(s->kind & ~HERD__SLOT_REVERSED);
    if (__builtin_expect(s->size <= HERD__SLOT_INLINE_ARG, 1))
        herd__arg_load(out->arg, s->arg); /* fixed size, in herd_spawn's pieces */
    else
        memcpy(out->arg, herd__sdq_argp(q, s, s->size), s->size);
}

static inline herd__pop_result herd__sdq_pop(herd__sdq *q, uint32_t base, herd__taskcopy *out) {
    HERD__SDQ_OWNER(q);
    uint32_t h = q->head;
    if (h <= base)
        return HERD__POP_NONE;
    if (__builtin_expect(h > q->split, 1)) { /* S2: private, no synchronisation */
        q->head = h - 1;
        herd__sdq_copy_out(q, h - 1, out);
        return HERD__POP_OK;
    }
    return herd__sdq_pop_slow(q, base, out);
}

/* Owner only, right after HERD__POP_OK: put the popped task back. Its slot
 * is untouched and private (a pop only returns private slots). */
static inline void herd__sdq_unpop(herd__sdq *q) {
    HERD__SDQ_OWNER(q);
    q->head++;
}

/* S6, owner only, after HERD__POP_STOLEN (or when the owner finds no work at
 * all): wait until the thieves of the slots in [new_head, head) have copied
 * them out, then make the deque empty at new_head. */
void herd__sdq_reset(herd__sdq *q, uint32_t new_head);

/* S8, owner only, when the deque is full (head == cap): if at least
 * min_gain slots in [base, tail) are gone (stolen, so the tasks of the
 * frame whose children start at base that thieves took), take the public
 * part back, wait out the thieves of the gone slots (S5), and move the
 * queued tasks down to base, in order. Returns the slots freed, 0 when
 * fewer than min_gain were gone (nothing changed). */
uint32_t herd__sdq_compact(herd__sdq *q, uint32_t base, uint32_t min_gain);

/* Owner only: reverse the order of the private slots [lo, hi) (split <=
 * lo < hi <= head), their big arguments with them, so that pops take them
 * oldest first (fifo's waits: core/task.c), and mark each with
 * HERD__SLOT_REVERSED. No thief reads a private slot, and their `taken`
 * marks are all clear (I4). */
void herd__sdq_reverse(herd__sdq *q, uint32_t lo, uint32_t hi);
/* Owner only, before the n oldest private slots leave (S7): put each run a
 * wait reversed back in spawn order within them, and clear its marks. A
 * run cut by the n-th slot is reversed only up to it: the slots that stay
 * keep the owner's order. */
void herd__sdq_spawn_order(herd__sdq *q, uint32_t n);

/* S4, any thread but the owner: take the oldest public task. */
herd__steal_result herd__sdq_steal(herd__sdq *q, herd__taskcopy *out);

/* S4 for several slots, any thread but q's owner, which owns `into` (an
 * empty deque): take the oldest public tasks in one CAS -- half of them
 * (rounded up) when `half`, else up to max (>= 1). The oldest goes to out,
 * the others onto `into`'s private part, oldest at the bottom. *got is the
 * number taken. */
herd__steal_result herd__sdq_steal_many(herd__sdq *q, uint32_t max, int half, herd__sdq *into,
                                        herd__taskcopy *out, uint32_t *got);

/* Owner only: the tasks queued and not taken, public or private (a racy
 * estimate: thieves move tail). */
static inline uint32_t herd__sdq_queued(herd__sdq *q) {
    HERD__SDQ_OWNER(q);
    /* ORDER: relaxed; a stale tail is at most a little low, never above head
     * (thieves move it up to split <= head); signed against a tail read
     * before a reset (S6) lowered head. */
    uint64_t ts = atomic_load_explicit(&q->ts, memory_order_relaxed);
    int32_t n = (int32_t)(q->head - herd__ts_tail(ts));
    return n > 0 ? (uint32_t)n : 0;
}

/* Any thread: a racy estimate of the public tasks (for victim selection). */
static inline uint32_t herd__sdq_public_size(herd__sdq *q) {
    /* ORDER: relaxed; an estimate only. */
    uint64_t ts = atomic_load_explicit(&q->ts, memory_order_relaxed);
    uint32_t t = herd__ts_tail(ts), s = herd__ts_split(ts);
    return s > t ? s - t : 0;
}

#endif
