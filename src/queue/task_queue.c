/* Locked double-ended pointer queue (see task_queue.h). */
#include "queue/task_queue.h"

#include "arch/assert.h"

#include "herd/herd.h"

#include <stdlib.h>
#include <string.h>

void herd__tq_init(herd__tq *q) {
    memset(q, 0, sizeof *q);
    atomic_init(&q->size, 0);
    atomic_init(&q->taken, 0);
}

void herd__tq_fini(herd__tq *q) {
    free(q->ring);
    q->ring = NULL;
    q->cap = q->count = q->first = 0;
}

/* Double the ring, unrolling it so the front lands at index 0. Lock held. */
static int grow(herd__tq *q) {
    uint32_t cap = q->cap ? q->cap * 2 : 64;
    void **ring = malloc((size_t)cap * sizeof *ring);
    if (!ring)
        return HERD_ENOMEM;
    for (uint32_t i = 0; i < q->count; i++)
        ring[i] = q->ring[(q->first + i) & (q->cap - 1)];
    free(q->ring);
    q->ring = ring;
    q->cap = cap;
    q->first = 0;
    return 0;
}

static void set_count(herd__tq *q, uint32_t n) {
    if (n < q->count) /* ORDER: relaxed; see taken. Lock held: one writer. */
        atomic_store_explicit(&q->taken,
                              atomic_load_explicit(&q->taken, memory_order_relaxed) + q->count - n,
                              memory_order_relaxed);
    q->count = n;
    /* ORDER: relaxed; a hint for probes. The lock's release orders the item
     * itself; the sleep protocol orders this against a sleeper's recheck. */
    atomic_store_explicit(&q->size, n, memory_order_relaxed);
}

int herd__tq_push(herd__tq *q, void *item, int at_front) {
    herd__spin_lock(&q->lock);
    if (q->count == q->cap && grow(q) != 0) {
        herd__spin_unlock(&q->lock);
        return HERD_ENOMEM;
    }
    uint32_t mask = q->cap - 1;
    if (at_front) {
        HERD_ASSERT(q->held == 0); /* held items stay first */
        q->first = (q->first - 1) & mask;
        q->ring[q->first] = item;
    } else {
        q->ring[(q->first + q->count) & mask] = item;
    }
    set_count(q, q->count + 1);
    herd__spin_unlock(&q->lock);
    return 0;
}

int herd__tq_push_many(herd__tq *q, void *const *items, uint32_t n) {
    herd__spin_lock(&q->lock);
    while (q->count + n > q->cap) {
        if (grow(q) != 0) {
            herd__spin_unlock(&q->lock);
            return HERD_ENOMEM;
        }
    }
    uint32_t mask = q->cap - 1;
    for (uint32_t i = 0; i < n; i++)
        q->ring[(q->first + q->count + i) & mask] = items[i];
    set_count(q, q->count + n);
    herd__spin_unlock(&q->lock);
    return 0;
}

void *herd__tq_pop(herd__tq *q, int from_front) {
    if (herd__tq_size(q) == 0)
        return NULL;
    void *item = NULL;
    herd__spin_lock(&q->lock);
    if (q->count > q->held) {
        uint32_t mask = q->cap - 1;
        if (from_front) {
            /* The first item not held; the held ones move up over it. */
            item = q->ring[(q->first + q->held) & mask];
            for (uint32_t i = q->held; i > 0; i--)
                q->ring[(q->first + i) & mask] = q->ring[(q->first + i - 1) & mask];
            q->first = (q->first + 1) & mask;
        } else {
            item = q->ring[(q->first + q->count - 1) & mask];
        }
        set_count(q, q->count - 1);
    }
    herd__spin_unlock(&q->lock);
    return item;
}

void *herd__tq_pop_back_if(herd__tq *q, int (*ok)(const void *item, const void *ctx),
                           const void *ctx) {
    if (herd__tq_size(q) == 0)
        return NULL;
    void *item = NULL;
    herd__spin_lock(&q->lock);
    if (q->count > q->held) {
        void *back = q->ring[(q->first + q->count - 1) & (q->cap - 1)];
        if (ok(back, ctx)) {
            item = back;
            set_count(q, q->count - 1);
        }
    }
    herd__spin_unlock(&q->lock);
    return item;
}

uint32_t herd__tq_hold_front(herd__tq *q, void **out, uint32_t max) {
    if (herd__tq_size(q) == 0 || max == 0)
        return 0;
    herd__spin_lock(&q->lock);
    HERD_ASSERT(q->held == 0); /* one holder at a time */
    uint32_t n = q->count < max ? q->count : max;
    for (uint32_t i = 0; i < n; i++)
        out[i] = q->ring[(q->first + i) & (q->cap - 1)];
    q->held = n;
    herd__spin_unlock(&q->lock);
    return n;
}

void herd__tq_release_front(herd__tq *q, uint32_t n) {
    herd__spin_lock(&q->lock);
    HERD_ASSERT(n <= q->held);
    q->first = (q->first + n) & (q->cap ? q->cap - 1 : 0);
    q->held = 0;
    set_count(q, q->count - n);
    herd__spin_unlock(&q->lock);
}

uint32_t herd__tq_take_front(herd__tq *q, void **out, uint32_t max) {
    if (herd__tq_size(q) == 0 || max == 0)
        return 0;
    herd__spin_lock(&q->lock);
    HERD_ASSERT(q->held == 0);
    uint32_t n = q->count < max ? q->count : max;
    for (uint32_t i = 0; i < n; i++)
        out[i] = q->ring[(q->first + i) & (q->cap - 1)];
    if (n) {
        q->first = (q->first + n) & (q->cap - 1);
        set_count(q, q->count - n);
    }
    herd__spin_unlock(&q->lock);
    return n;
}
