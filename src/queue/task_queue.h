/* A locked double-ended queue of pointers: the shared queues of the queue
 * schedulers (a shepherd's queue, the central queue) and the per-shepherd
 * placement queues. Any thread may use any end; one spin lock guards the
 * ring, which doubles when full. `size` mirrors the count for lock-free
 * emptiness probes: a probe that sees 0 may miss a concurrent push, which
 * the sleep protocol's recheck covers (docs/design/tasks.md, W2/W3). */
#ifndef HERD_TASK_QUEUE_H
#define HERD_TASK_QUEUE_H

#include "arch/spin.h"

#include <stdatomic.h>
#include <stdint.h>

typedef struct herd__tq {
    herd__spin lock;
    void **ring;
    uint32_t cap;   /* a power of two, or 0 before the first push */
    uint32_t first; /* index of the front item */
    uint32_t count;
    /* The first `held` items are held by one thread (herd__tq_hold_front):
     * no other removal takes them until it releases them. */
    uint32_t held;
    _Atomic uint32_t size; /* ORDER: relaxed; == count, readable without the lock */
    /* Items removed so far, wrapping: the queue's progress, for a rescue
     * that watches it (sched/queues.c). ORDER: relaxed; written under the
     * lock, read without it as a hint. */
    _Atomic uint32_t taken;
} __attribute__((aligned(64))) herd__tq;

void herd__tq_init(herd__tq *q);
void herd__tq_fini(herd__tq *q);
/* Add item at the front (of a queue with nothing held) or the back.
 * Returns 0 or HERD_ENOMEM. */
int herd__tq_push(herd__tq *q, void *item, int at_front);
/* Add n items at the back, in order, under one acquisition of the lock.
 * Returns 0, or HERD_ENOMEM with nothing added. */
int herd__tq_push_many(herd__tq *q, void *const *items, uint32_t n);
/* Remove the item at the front (the first one not held) or the back; NULL
 * when there is none (held items do not count). */
void *herd__tq_pop(herd__tq *q, int from_front);
/* Remove the item at the back if ok(item, ctx) says so (called with the
 * lock held: it must only read the item); NULL when empty, held or refused. */
void *herd__tq_pop_back_if(herd__tq *q, int (*ok)(const void *item, const void *ctx),
                           const void *ctx);
/* Copy up to max items from the front, oldest first, into out, and hold
 * them: they stay queued, and no removal but the holder's release takes
 * them. One holder at a time (the caller's protocol: lifo's redeal, by the
 * only worker of the queue's shepherd). Returns how many; 0 when empty. */
uint32_t herd__tq_hold_front(herd__tq *q, void **out, uint32_t max);
/* The holder: remove the first n held items (n at most what it holds) and
 * let go of the others. */
void herd__tq_release_front(herd__tq *q, uint32_t n);
/* Remove up to max items from the front, oldest first, into out, on a
 * queue with nothing held. Returns how many; 0 when empty. */
uint32_t herd__tq_take_front(herd__tq *q, void **out, uint32_t max);
/* Lock-free emptiness hint (see the file comment). */
static inline uint32_t herd__tq_size(herd__tq *q) {
    return atomic_load_explicit(&q->size, memory_order_relaxed);
}

#endif
