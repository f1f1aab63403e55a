/* Chase-Lev work-stealing deque of pointer-sized elements, with the C11
 * memory orderings of Le, Pop, Cohen and Zappa Nardelli, "Correct and
 * Efficient Work-Stealing for Weak Memory Models" (PPoPP 2013).
 *
 * The protocol, the ordering argument and the proof sketch that every pushed
 * element is taken exactly once are in docs/design/chase-lev.md; the step
 * numbers (C1..C5) used in chase_lev.c refer to it. In short: elements live
 * in a circular array at logical positions [top, bottom). The owner pushes and
 * pops at `bottom` (LIFO); thieves take the oldest element at `top` by a CAS
 * that moves `top` up (FIFO). The only race between the owner and a thief is
 * over the last element, and it is settled by that same CAS on `top`.
 *
 * Roles: one owner thread calls herd__cl_push() and herd__cl_pop(); any
 * other thread may call herd__cl_steal(). herd__cl_init() and herd__cl_fini()
 * run while no other thread uses the deque.
 *
 * Compared with the split deque (split_deque.h) this one publishes every
 * element at once (no split requests), grows without bound, and pays a
 * seq_cst fence on every pop; it is the textbook reference the split deque
 * is measured against by the deque battery.
 */
#ifndef HERD_CHASE_LEV_H
#define HERD_CHASE_LEV_H

#include "herd/herd.h"
#include "queue/split_deque.h" /* herd__steal_result */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* One circular array. Immutable after publication except for its slots; an
 * array replaced by a bigger one is retired, never freed before fini. */
typedef struct herd__cl_array {
    struct herd__cl_array *retired_next; /* owner only: the list of retired arrays */
    int64_t mask;                        /* capacity - 1; capacity is a power of two */
    _Atomic(void *) slot[];              /* element at position i is in slot[i & mask] */
} herd__cl_array;

typedef struct herd__cl {
    /* Shared: thieves and the owner move it up, by CAS only (C3, C4). */
    _Alignas(64) _Atomic int64_t top;
    /* Written by the owner only; read by thieves. */
    _Alignas(64) _Atomic int64_t bottom;
    _Atomic(herd__cl_array *) array;
    /* Owner-private below. */
    herd__cl_array *retired; /* arrays replaced by a bigger one; freed by fini */
    pthread_t owner;         /* debug builds: the thread bound by the first owner op */
    int owner_bound;
} herd__cl;

/* Prepare an empty deque of 2^initial_log2_capacity slots (clamped to
 * [1, 30]). Context: no other thread uses q. Returns 0 or HERD_ENOMEM. */
int herd__cl_init(herd__cl *q, unsigned initial_log2_capacity);

/* Free the current array and every retired one. Context: no other thread
 * uses q any more (thieves joined). Elements still queued are dropped. */
void herd__cl_fini(herd__cl *q);

/* C1, owner only: push x as the newest element. Grows the array (C2) when it
 * is full. Never blocks. Returns 0, or HERD_ENOMEM when growing failed (the
 * deque is then unchanged). */
int herd__cl_push(herd__cl *q, void *x);

/* C3, owner only: take the newest element into *out. Never blocks.
 * Returns true, or false when the deque was empty (or its last element went
 * to a thief in the same instant). */
bool herd__cl_pop(herd__cl *q, void **out);

/* C4, any thread but the owner: take the oldest element into *out. Never
 * blocks. Returns HERD__STEAL_OK, HERD__STEAL_EMPTY, or HERD__STEAL_RETRY
 * when another thief or the owner took that element first. */
herd__steal_result herd__cl_steal(herd__cl *q, void **out);

/* Any thread: a racy estimate of the number of queued elements (>= 0). */
int64_t herd__cl_size_estimate(herd__cl *q);

#endif
