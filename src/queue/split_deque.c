/* Split deque: slow paths. The fast paths (push, private pop) are inline in
 * split_deque.h. Step numbers refer to docs/design/split-deque.md. */
#include "queue/split_deque.h"

#include "arch/spin.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#if HERD_ASSERTS
static __thread const herd__sdq *owned; /* herd__sdq_own's deque */

void herd__sdq_own(herd__sdq *q) {
    owned = q;
}

int herd__sdq_is_owner(const herd__sdq *q) {
    const herd__hot *h = herd__tls;
    return q == owned || (h && q == &h->q);
}
#endif

static void *map_lazy(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

int herd__sdq_init(herd__sdq *q, uint32_t cap) {
    memset(q, 0, sizeof *q);
    q->cap = cap; /* before the maps: herd__sdq_fini unmaps by it */
    q->slots = map_lazy((size_t)cap * sizeof(herd__slot));
    if (!q->slots)
        return HERD_ENOMEM; /* errno is mmap's, for the caller's message */
    atomic_init(&q->ts, herd__ts_make(0, 0));
    atomic_init(&q->split_req, 0);
    return 0;
}

size_t herd__sdq_reserved(uint32_t cap) {
    return (size_t)cap * sizeof(herd__slot);
}

/* The big-argument area is reserved at the first push that needs it: most
 * programs never queue a task with more than HERD__SLOT_INLINE_ARG bytes of
 * arguments, and reserving it up front cost each worker 256 MiB of address
 * space (a `ulimit -v` of 700 MB did not fit two workers). Owner only; a
 * thief reads q->big only for a slot pushed after it was set, which the
 * release CAS of the publish (S3) carries to it. */
int herd__sdq_map_big(herd__sdq *q) {
    HERD__SDQ_OWNER(q);
    if (q->big)
        return 0;
    q->big = map_lazy((size_t)q->cap * HERD_ARG_MAX);
    if (q->big)
        return 0;
    fprintf(stderr,
            "herd: cannot reserve %zu bytes of address space for the arguments of tasks over "
            "%d bytes: %s\n",
            (size_t)q->cap * HERD_ARG_MAX, HERD__SLOT_INLINE_ARG, strerror(errno));
    return HERD_ENOMEM;
}

void herd__sdq_fini(herd__sdq *q) {
    if (q->slots)
        munmap(q->slots, (size_t)q->cap * sizeof(herd__slot));
    if (q->big)
        munmap(q->big, (size_t)q->cap * HERD_ARG_MAX);
    q->slots = NULL;
    q->big = NULL;
}

uint32_t herd__sdq_publish(herd__sdq *q) {
    HERD__SDQ_OWNER(q);
    /* Nothing private: the request stands. A thief that asked and went to
     * sleep (tasks.md W2) waits for the wake of the publication it asked
     * for (W3); clearing it here, at a wait or a task's end with nothing
     * queued, left that thief asleep through whatever the owner queued
     * next. */
    if (q->head == q->split)
        return 0;
    /* ORDER: relaxed; clearing before the CAS below means a thief that raises
     * the flag again after our CAS is seen at a later push, never lost. */
    atomic_store_explicit(&q->split_req, 0, memory_order_relaxed);
    uint32_t newsplit = q->split + (q->head - q->split + 1) / 2;
    uint64_t ts = atomic_load_explicit(&q->ts, memory_order_relaxed);
    for (;;) {
        /* Only the owner moves split, so ts's split is ours; only tail races. */
        uint64_t want = herd__ts_make(herd__ts_tail(ts), newsplit);
        /* S3. ORDER: release (and seq_cst for the sleep protocol in
         * core/idle.c: a publisher's CAS and a sleeper's announcement are
         * totally ordered); pairs with the acquire load/CAS of ts in
         * herd__sdq_steal(), so a thief that sees the new split also sees the
         * slot contents written by herd__sdq_push(). */
        if (atomic_compare_exchange_weak_explicit(&q->ts, &ts, want, memory_order_seq_cst,
                                                  memory_order_relaxed))
            break;
    }
    uint32_t n = newsplit - q->split;
    q->split = newsplit;
    return n;
}

herd__pop_result herd__sdq_pop_slow(herd__sdq *q, uint32_t base, herd__taskcopy *out) {
    HERD__SDQ_OWNER(q);
    /* S2': the private part is empty (head == split); take back the newer half
     * of the public part, but never below base. */
    uint64_t ts = atomic_load_explicit(&q->ts, memory_order_relaxed);
    for (;;) {
        uint32_t tail = herd__ts_tail(ts);
        if (tail >= q->split)
            return HERD__POP_STOLEN; /* everything below head is gone */
        uint32_t newsplit = tail + (q->split - tail) / 2;
        if (newsplit < base)
            newsplit = base;
        if (newsplit < tail)
            newsplit = tail;
        uint64_t want = herd__ts_make(tail, newsplit);
        /* ORDER: acq_rel; a success linearises against the thieves' CAS on the
         * same word, so a slot at or above newsplit was not taken by a thief
         * (thieves only take tail < split). Slot contents are our own writes. */
        if (atomic_compare_exchange_weak_explicit(&q->ts, &ts, want, memory_order_acq_rel,
                                                  memory_order_relaxed)) {
            q->split = newsplit;
            break;
        }
    }
    /* newsplit < split == head: at least one slot is private again. */
    q->head--;
    herd__sdq_copy_out(q, q->head, out);
    return HERD__POP_OK;
}

uint32_t herd__sdq_retract(herd__sdq *q, uint32_t floor) {
    HERD__SDQ_OWNER(q);
    /* ORDER: relaxed; a first guess: the CAS below decides, and a failed
     * one reloads ts. */
    uint64_t ts = atomic_load_explicit(&q->ts, memory_order_relaxed);
    for (;;) {
        uint32_t tail = herd__ts_tail(ts);
        uint32_t newsplit = tail > floor ? tail : floor;
        if (newsplit >= q->split)
            return tail; /* nothing public at or above floor */
        /* ORDER: acq_rel, as S2': a success linearises against the thieves'
         * CAS on the same word, so no thief took a slot at or above newsplit
         * (they take only tail < split, and copy a slot only after their
         * CAS). */
        if (atomic_compare_exchange_weak_explicit(&q->ts, &ts, herd__ts_make(tail, newsplit),
                                                  memory_order_acq_rel, memory_order_relaxed)) {
            q->split = newsplit;
            return tail;
        }
    }
}

/* S6's wait for the thieves of [from, to), and the marks cleared (I4). */
static void wait_thieves(herd__sdq *q, uint32_t from, uint32_t to) {
    unsigned spins = 0;
    for (uint32_t i = from; i < to; i++) {
        /* ORDER: acquire; pairs with the release store of `taken` in
         * herd__sdq_steal(): the thief's reads of the slot happen before our
         * later writes to it. */
        while (!atomic_load_explicit(&q->slots[i].taken, memory_order_acquire))
            herd__spin_backoff(&spins); /* the thief may have lost its CPU */
        /* ORDER: relaxed; the next thief of this slot acquires it only after
         * a later release publish. */
        atomic_store_explicit(&q->slots[i].taken, 0, memory_order_relaxed);
    }
}

void herd__sdq_reset(herd__sdq *q, uint32_t new_head) {
    HERD__SDQ_OWNER(q);
    /* S6: every slot below head is gone (tail == split == head). Thieves that
     * won slots in [new_head, head) may still be copying them: wait for their
     * `taken` marks before the owner can write over those slots. */
    wait_thieves(q, new_head, q->head); /* I4: the slots are ours again, their marks cleared */
    q->head = new_head;
    q->split = new_head;
    /* ORDER: relaxed; tail == split now, so no thief CAS can succeed until
     * the next release CAS in herd__sdq_publish() publishes new slots. */
    atomic_store_explicit(&q->ts, herd__ts_make(new_head, new_head), memory_order_relaxed);
}

void herd__sdq_drop_oldest(herd__sdq *q) {
    HERD__SDQ_OWNER(q);
    uint32_t s = q->split;
    /* S7. The public part is empty (tail == split, checked by
     * herd__sdq_oldest_private), and stays so: tail and split move up
     * together past the slot. Its `taken` mark is set as a thief's would
     * be, so that S6 does not wait for it; ORDER: relaxed, S6 reads it on
     * this thread. The store of ts is relaxed for the reason S6's is: with
     * tail == split before and after, no thief CAS can succeed. */
    atomic_store_explicit(&q->slots[s].taken, 1, memory_order_relaxed);
    q->split = s + 1;
    atomic_store_explicit(&q->ts, herd__ts_make(s + 1, s + 1), memory_order_relaxed);
}

/* Swap two private slots field by field, each field at the width the spawn
 * wrote it (herd__slot_set; herd__arg_store's pieces, as herd__arg_load
 * reads them): a wider load over a slot just written waits for the stores
 * to retire instead of taking their values from the store buffer. Each
 * slot's kind leaves with `mark` in place of its HERD__SLOT_REVERSED bit. */
static void slot_swap(herd__slot *x, herd__slot *y, uint16_t mark) {
    herd_fn fn = x->fn;
    void *parent = x->parent;
    uint16_t size = x->size, kind = x->kind;
    unsigned char arg[HERD__SLOT_INLINE_ARG] __attribute__((aligned(16)));
    herd__arg_load(arg, x->arg);
    herd__slot_set(x, y->fn, y->parent, (uint16_t)((y->kind & ~HERD__SLOT_REVERSED) | mark),
                   y->size);
    herd__arg_load(x->arg, y->arg);
    herd__slot_set(y, fn, parent, (uint16_t)((kind & ~HERD__SLOT_REVERSED) | mark), size);
    herd__arg_load(y->arg, arg);
}

static void reverse_marking(herd__sdq *q, uint32_t lo, uint32_t hi, uint16_t mark) {
    HERD__SDQ_OWNER(q);
    HERD_ASSERT(q->split <= lo && lo < hi && hi <= q->head);
    uint32_t a = lo, b = hi;
    for (; b > a + 1; a++, b--) {
        herd__slot *x = &q->slots[a], *y = &q->slots[b - 1];
        /* Their `taken` marks are 0 on both sides (I4): left alone. */
        slot_swap(x, y, mark);
        if (x->size > HERD__SLOT_INLINE_ARG || y->size > HERD__SLOT_INLINE_ARG) {
            unsigned char big[HERD_ARG_MAX];
            unsigned char *bx = q->big + (size_t)a * HERD_ARG_MAX;
            unsigned char *by = q->big + (size_t)(b - 1) * HERD_ARG_MAX;
            memcpy(big, bx, HERD_ARG_MAX);
            memcpy(bx, by, HERD_ARG_MAX);
            memcpy(by, big, HERD_ARG_MAX);
        }
    }
    if (b == a + 1) /* the middle one of an odd count */
        q->slots[a].kind = (uint16_t)((q->slots[a].kind & ~HERD__SLOT_REVERSED) | mark);
}

void herd__sdq_reverse(herd__sdq *q, uint32_t lo, uint32_t hi) {
    reverse_marking(q, lo, hi, HERD__SLOT_REVERSED);
}

void herd__sdq_spawn_order(herd__sdq *q, uint32_t n) {
    HERD__SDQ_OWNER(q);
    uint32_t i = q->split, end = q->split + n;
    HERD_ASSERT(end <= q->head);
    while (i < end) {
        const herd__slot *s = &q->slots[i];
        uint32_t j = i + 1;
        if (s->kind & HERD__SLOT_REVERSED) {
            /* One wait's run: its reversed slots, all of one parent. */
            while (j < end && (q->slots[j].kind & HERD__SLOT_REVERSED) &&
                   q->slots[j].parent == s->parent)
                j++;
            reverse_marking(q, i, j, 0);
        }
        i = j;
    }
}

uint32_t herd__sdq_compact(herd__sdq *q, uint32_t base, uint32_t min_gain) {
    HERD__SDQ_OWNER(q);
    /* ORDER: relaxed; only a guess at tail (a stale one is lower, so the
     * test below is conservative): the CAS of S8a, or split == tail (no
     * thief can then move tail), makes it exact, and the slots' contents
     * are ordered by the taken marks S8b acquires. */
    uint64_t ts = atomic_load_explicit(&q->ts, memory_order_relaxed);
    uint32_t tail;
    for (;;) {
        tail = herd__ts_tail(ts);
        /* Thieves take from tail up: once past base, everything below base
         * (the outer frames' tasks) is gone too, and [base, tail) is free. */
        if (tail < base || tail - base < min_gain)
            return 0;
        if (herd__ts_split(ts) == tail)
            break; /* no public part */
        /* S8a: take the whole public part back (split down to tail), as S2'
         * takes half. ORDER: acq_rel, as S2': a success linearises against
         * the thieves' CAS, so no slot at or above tail is taken after it. */
        if (atomic_compare_exchange_weak_explicit(&q->ts, &ts, herd__ts_make(tail, tail),
                                                  memory_order_acq_rel, memory_order_relaxed))
            break;
    }
    /* S8b: [base, tail) is gone; wait for its thieves, then move the n queued
     * tasks, all private now, down to base (forward: the copy never
     * overtakes its source). Their marks are 0 (I4), and so stay. */
    wait_thieves(q, base, tail);
    uint32_t n = q->head - tail;
    memmove(&q->slots[base], &q->slots[tail], (size_t)n * sizeof(herd__slot));
    for (uint32_t i = 0; i < n && q->big; i++) {
        uint16_t size = q->slots[base + i].size;
        if (size > HERD__SLOT_INLINE_ARG)
            memmove(q->big + (size_t)(base + i) * HERD_ARG_MAX,
                    q->big + (size_t)(tail + i) * HERD_ARG_MAX, size);
    }
    q->head = base + n;
    q->split = base;
    /* ORDER: relaxed, as S6's store: tail == split before and after. */
    atomic_store_explicit(&q->ts, herd__ts_make(base, base), memory_order_relaxed);
    return tail - base;
}

herd__steal_result herd__sdq_steal(herd__sdq *q, herd__taskcopy *out) {
    /* ORDER: acquire; pairs with the release CAS in herd__sdq_publish(). */
    uint64_t ts = atomic_load_explicit(&q->ts, memory_order_acquire);
    uint32_t tail = herd__ts_tail(ts), split = herd__ts_split(ts);
    if (tail >= split) {
        herd__sdq_ask(q); /* S4a: nothing public; ask the owner to publish */
        return HERD__STEAL_EMPTY;
    }
    /* S4b. ORDER: acquire on success; pairs with the release CAS of the
     * publish that made slot `tail` public (possibly through the release
     * sequence of later RMWs on ts), so the slot contents are visible. */
    if (!atomic_compare_exchange_strong_explicit(&q->ts, &ts, herd__ts_make(tail + 1, split),
                                                 memory_order_acquire, memory_order_relaxed))
        return HERD__STEAL_RETRY;
    herd__sdq_copy_out(q, tail, out);
    /* S5. ORDER: release; pairs with the acquire load in herd__sdq_reset():
     * our reads of the slot happen before the owner writes over it. */
    atomic_store_explicit(&q->slots[tail].taken, 1, memory_order_release);
    return HERD__STEAL_OK;
}

herd__steal_result herd__sdq_steal_many(herd__sdq *q, uint32_t max, int half, herd__sdq *into,
                                        herd__taskcopy *out, uint32_t *got) {
    /* ORDER: acquire; pairs with the release CAS in herd__sdq_publish(). */
    uint64_t ts = atomic_load_explicit(&q->ts, memory_order_acquire);
    uint32_t tail = herd__ts_tail(ts), split = herd__ts_split(ts);
    if (tail >= split) {
        herd__sdq_ask(q); /* S4a, as in herd__sdq_steal() */
        return HERD__STEAL_EMPTY;
    }
    uint32_t avail = split - tail;
    uint32_t k = half ? (avail + 1) / 2 : (max < avail ? max : avail);
    if (k < 1)
        k = 1;
    if (k > into->cap - into->head)
        k = into->cap - into->head;
    /* The batch is re-pushed into our deque, its big arguments into our
     * big-argument area: reserve it before the slots are ours, since a push
     * below must not fail; without it, take one (copied out, not pushed). */
    if (k > 1 && herd__sdq_map_big(into) != 0)
        k = 1;
    /* S4b for k slots: one CAS moves tail past all of them. ORDER: acquire
     * on success, as in herd__sdq_steal(); the CAS fails if the owner moved
     * split (it may have taken some of them back) or another thief won. */
    if (!atomic_compare_exchange_strong_explicit(&q->ts, &ts, herd__ts_make(tail + k, split),
                                                 memory_order_acquire, memory_order_relaxed))
        return HERD__STEAL_RETRY;
    herd__sdq_copy_out(q, tail, out);
    /* S5 per slot. ORDER: release; pairs with the acquire in herd__sdq_reset(). */
    atomic_store_explicit(&q->slots[tail].taken, 1, memory_order_release);
    for (uint32_t i = tail + 1; i < tail + k; i++) {
        herd__slot *s = &q->slots[i];
        /* Oldest first: the thief's own pops (newest first) then run the
         * younger stolen tasks first, and its thieves take the older. */
        herd__sdq_push(into, s->fn, s->parent, s->kind & ~HERD__SLOT_REVERSED,
                       herd__sdq_argp(q, s, s->size), s->size);
        atomic_store_explicit(&s->taken, 1, memory_order_release);
    }
    *got = k;
    return HERD__STEAL_OK;
}
