/* herd/herd_fast.h -- NOT API. Included by herd.h so that herd_spawn() and
 * herd_wait() compile inline into the caller: the common case (queue a child
 * in the worker's own deque; run own queued children as plain calls) then
 * costs a few stores and loads, no call, no atomic read-modify-write, no
 * fence. Everything here may change with any release; the only contract is
 * the one herd.h documents. The layouts are shared with the library
 * (src/queue/split_deque.h, src/core/runtime.h), which owns the protocols:
 * docs/design/split-deque.md and docs/design/tasks.md. */
#ifndef HERD_FAST_H
#define HERD_FAST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define HERD__ATOMIC(T) T /* C++ code never touches these fields directly */
#else
#define HERD__ATOMIC(T) _Atomic(T)
#endif

/* Relaxed loads and stores of the fields above, from the inline paths. In C,
 * clang's __atomic builtins refuse _Atomic objects and its __c11 ones take
 * them; gcc's __atomic builtins take both. */
#if defined(__clang__) && !defined(__cplusplus)
#define HERD__LOAD_RELAXED(p) __c11_atomic_load((p), __ATOMIC_RELAXED)
#define HERD__STORE_RELAXED(p, v) __c11_atomic_store((p), (v), __ATOMIC_RELAXED)
#else
#define HERD__LOAD_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define HERD__STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#endif

/* Arguments up to this size live in the deque slot itself. */
#define HERD__SLOT_INLINE_ARG 40
/* herd__task_kind of an ordinary child (see src/core/runtime.h). */
#define HERD__KIND_TASK 1

/* One queued task, in place in the deque (paper 001's in-place creation). */
typedef struct herd__slot {
    herd_fn fn;
    void *parent;                 /* join record notified when the task completes */
    uint16_t size;                /* argument bytes */
    uint16_t kind;                /* herd__task_kind */
    HERD__ATOMIC(uint32_t) taken; /* 1 once a thief has copied the slot out (S5) */
    unsigned char arg[HERD__SLOT_INLINE_ARG];
} __attribute__((aligned(64))) herd__slot;

/* The split deque (docs/design/split-deque.md). */
typedef struct herd__sdq {
    HERD__ATOMIC(uint64_t) ts __attribute__((aligned(64))); /* (split << 32) | tail */
    HERD__ATOMIC(uint32_t) split_req __attribute__((aligned(64)));
    uint32_t head __attribute__((aligned(64))); /* owner-private from here on */
    uint32_t split;
    uint32_t cap;
    herd__slot *slots;
    unsigned char *big; /* cap * HERD_ARG_MAX bytes for large arguments; NULL until the first */
} herd__sdq;

struct herd__ult;

/* Join record: how tasks that did not run as plain calls report back.
 * `waiter` is written by whoever arms the record before anyone reads it
 * (J2), so a frame need not initialise it. */
typedef struct herd__join {
    HERD__ATOMIC(int64_t) pending;
    HERD__ATOMIC(struct herd__ult *) waiter; /* or HERD__WAITER_EXTERNAL */
    HERD__ATOMIC(uint32_t) futex;            /* external waiters sleep on it */
} herd__join;

/* One running task; lives on the stack that runs it. */
typedef struct herd__frame {
    herd__join join;
    uint32_t base;    /* deque index where this frame's children start */
    int64_t nspawned; /* children queued and not yet run inline or counted */
    struct herd__frame *up;
    herd_fn fn;
} herd__frame;

/* The part of a worker that the inline paths touch; first member of the
 * library's worker record. Owner-only except the two shared deque words. */
typedef struct herd__hot {
    herd__sdq q;
    herd__frame *frame; /* innermost running task, NULL between tasks */
    char *stack_limit;  /* below this address, stop running children inline */
    /* herd_spawn pushes inline only while head < spawn_limit: the deque's
     * capacity, or 0 when every spawn takes the slow path (queue
     * schedulers, work-first). */
    uint32_t spawn_limit;
    HERD__ATOMIC(uint64_t) spawned; /* counters: owner writes, anyone reads (relaxed) */
    HERD__ATOMIC(uint64_t) inlined;
} herd__hot;

/* The calling thread's worker, NULL outside the runtime. Reload it after
 * anything that may suspend the task: it may resume on another worker. */
HERD_API extern __thread herd__hot *herd__tls __attribute__((tls_model("initial-exec")));

HERD_API int herd__spawn_slow(herd_fn fn, const void *arg, size_t arg_size);
HERD_API int herd__wait_slow(void);
HERD_API void herd__publish_slow(void);
HERD_API void herd__frame_finish(herd__frame *f);

static inline __attribute__((always_inline)) void herd__count(HERD__ATOMIC(uint64_t) * c) {
    /* Owner-only counter: a plain load and store, atomic so readers may race. */
    HERD__STORE_RELAXED(c, HERD__LOAD_RELAXED(c) + 1);
}

static inline __attribute__((always_inline)) void herd__frame_open(herd__frame *fr, herd__hot *h,
                                                                   herd_fn fn, herd__frame *up) {
    HERD__STORE_RELAXED(&fr->join.pending, 0);
    fr->base = h->q.head;
    fr->nspawned = 0;
    fr->up = up;
    fr->fn = fn;
}

/* A slot's header; its `taken` is already 0 (split-deque.md, I4). */
static inline __attribute__((always_inline)) void
herd__slot_set(herd__slot *s, herd_fn fn, void *parent, uint16_t kind, size_t arg_size) {
    s->fn = fn;
    s->parent = parent;
    s->size = (uint16_t)arg_size;
    s->kind = kind;
}

/* S1 (split-deque.md): push into the private part; no atomic RMW, no fence. */
static inline __attribute__((always_inline)) int herd__spawn_fast(herd_fn fn, const void *arg,
                                                                  size_t arg_size) {
    herd__hot *h = herd__tls;
    if (__builtin_expect(!h || !h->frame || !fn || arg_size > HERD__SLOT_INLINE_ARG ||
                             (arg_size && !arg) || h->q.head >= h->spawn_limit,
                         0))
        return herd__spawn_slow(fn, arg, arg_size);
    uint32_t i = h->q.head;
    herd__slot *s = &h->q.slots[i];
    herd__slot_set(s, fn, &h->frame->join, HERD__KIND_TASK, arg_size);
    if (arg_size)
        __builtin_memcpy(s->arg, arg, arg_size);
    h->q.head = i + 1;
    h->frame->nspawned++;
    herd__count(&h->spawned);
    /* ORDER: relaxed; a late view only delays publication (S3). */
    if (__builtin_expect(HERD__LOAD_RELAXED(&h->q.split_req) != 0, 0))
        herd__publish_slow();
    return 0;
}

/* J0 (tasks.md): run own children still in the private part as plain calls;
 * anything else (public part, stolen children, another join's task on top,
 * big arguments, low stack, a thief asking for work) goes to the slow path. */
static inline __attribute__((always_inline)) int herd__wait_fast(void) {
    herd__hot *h = herd__tls;
    if (__builtin_expect(!h || !h->frame, 0))
        return herd__wait_slow();
    herd__frame *f = h->frame;
    for (;;) {
        uint32_t head = h->q.head;
        if (head <= f->base)
            break;
        herd__slot *s = &h->q.slots[head - 1];
        if (__builtin_expect(head <= h->q.split || s->parent != (void *)&f->join ||
                                 s->size > HERD__SLOT_INLINE_ARG ||
                                 (char *)__builtin_frame_address(0) < h->stack_limit ||
                                 HERD__LOAD_RELAXED(&h->q.split_req) != 0,
                             0))
            return herd__wait_slow();
        h->q.head = head - 1;
        f->nspawned--;
        herd_fn fn = s->fn;
        unsigned char a[HERD__SLOT_INLINE_ARG] __attribute__((aligned(16)));
        __builtin_memcpy(a, s->arg, sizeof a);
        herd__frame fr;
        herd__frame_open(&fr, h, fn, f);
        h->frame = &fr;
        herd__count(&h->inlined);
        fn(a);
        h = herd__tls; /* fn may have suspended and resumed elsewhere */
        if (__builtin_expect(h->q.head > fr.base || fr.nspawned != 0, 0)) {
            herd__frame_finish(&fr); /* the child's implicit wait */
            h = herd__tls;
        }
        h->frame = f;
    }
    if (__builtin_expect(f->nspawned != 0, 0))
        return herd__wait_slow();
    return 0;
}

#endif
