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
    /* herd_wait's inline path runs children only above this address:
     * stack_limit, or the top of the address space under a scheduler whose
     * waits order the children themselves (fifo: oldest first), so that
     * every wait takes the slow path there. */
    char *inline_floor;
    /* herd_spawn pushes inline only while head < spawn_limit: the deque's
     * capacity, or 0 when every spawn takes the slow path (work-first, a
     * first level that the scheduler places). */
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
    /* size and kind in one store: readers that load both at once (the
     * library's copy-out) then take them from the store buffer, which
     * serves a load only from one store that covers it (herd__arg_store). */
    struct {
        uint16_t size, kind;
    } sk = {(uint16_t)arg_size, kind};
    __builtin_memcpy(&s->size, &sk, sizeof sk);
}

/* Argument blocks travel through a slot in pieces whose sizes match on both
 * sides, because a load can be served from a store still in the store
 * buffer only when one store covers it; otherwise it waits for the stores
 * to retire (about a dozen cycles on x86, a quarter of fib's whole spawn).
 * The caller has almost always just written its block field by field, and
 * the wait may pop the slot a few instructions after the spawn wrote it.
 * So the spawn reads the caller's block four bytes at a time (covered by
 * any store of a field of four bytes or more) and writes the slot as one
 * 16-byte piece and then 8-byte pieces, zero-padded; the wait reads the
 * slot in the same pieces (herd__arg_load). The empty asm statements
 * keep the compiler from merging the pieces into wider moves. A size known
 * only at run time, or not a multiple of four, takes memcpy. */
typedef uint32_t herd__w4 __attribute__((vector_size(16)));
typedef uint32_t herd__w2 __attribute__((vector_size(8)));

static inline __attribute__((always_inline)) uint32_t herd__arg_word(const unsigned char *p,
                                                                     size_t i, size_t n) {
    uint32_t v = 0;
    if (i + 4 <= n) {
        __builtin_memcpy(&v, p + i, 4);
        __asm__("" : "+r"(v));
    }
    return v;
}

static inline __attribute__((always_inline)) void herd__arg_store(unsigned char *dst,
                                                                  const void *src, size_t n) {
    if (!__builtin_constant_p(n) || n % 4 != 0) {
        if (n) /* src may be NULL then */
            __builtin_memcpy(dst, src, n);
        return;
    }
    const unsigned char *p = (const unsigned char *)src;
    if (n == 0)
        return;
    herd__w4 first = {herd__arg_word(p, 0, n), herd__arg_word(p, 4, n), herd__arg_word(p, 8, n),
                      herd__arg_word(p, 12, n)};
    __builtin_memcpy(dst, &first, 16);
    for (size_t i = 16; i < n; i += 8) {
        herd__w2 w = {herd__arg_word(p, i, n), herd__arg_word(p, i + 4, n)};
        __builtin_memcpy(dst + i, &w, 8);
    }
}

/* The wait's side: the whole inline argument area, 16 + 8 + 8 + 8 bytes. */
static inline __attribute__((always_inline)) void herd__arg_load(unsigned char *dst,
                                                                 const unsigned char *arg) {
    __builtin_memcpy(dst, arg, 16);
    for (int i = 16; i < HERD__SLOT_INLINE_ARG; i += 8) {
        uint64_t v;
        __builtin_memcpy(&v, arg + i, 8);
        __asm__("" : "+r"(v));
        __builtin_memcpy(dst + i, &v, 8);
    }
}

/* S1 (split-deque.md): push into the private part; no atomic RMW, no fence.
 * `pieces`: copy the argument block as herd__arg_store does (callers whose
 * block was written field by field: herd_spawn), or with memcpy (herd.hpp,
 * whose packets the compiler builds with moves as wide as it likes). */
static inline __attribute__((always_inline)) int
herd__spawn_fast_copy(herd_fn fn, const void *arg, size_t arg_size, int pieces) {
    herd__hot *h = herd__tls;
    if (__builtin_expect(!h || !h->frame || !fn || arg_size > HERD__SLOT_INLINE_ARG ||
                             (arg_size && !arg) || h->q.head >= h->spawn_limit,
                         0))
        return herd__spawn_slow(fn, arg, arg_size);
    uint32_t i = h->q.head;
    herd__slot *s = &h->q.slots[i];
    herd__slot_set(s, fn, &h->frame->join, HERD__KIND_TASK, arg_size);
    if (pieces)
        herd__arg_store(s->arg, arg, arg_size);
    else if (arg_size)
        __builtin_memcpy(s->arg, arg, arg_size);
    h->q.head = i + 1;
    h->frame->nspawned++;
    herd__count(&h->spawned);
    /* ORDER: relaxed; a late view only delays publication (S3). */
    if (__builtin_expect(HERD__LOAD_RELAXED(&h->q.split_req) != 0, 0))
        herd__publish_slow();
    return 0;
}

static inline __attribute__((always_inline)) int herd__spawn_fast(herd_fn fn, const void *arg,
                                                                  size_t arg_size) {
    return herd__spawn_fast_copy(fn, arg, arg_size, 1);
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
                                 (char *)__builtin_frame_address(0) < h->inline_floor ||
                                 HERD__LOAD_RELAXED(&h->q.split_req) != 0,
                             0))
            return herd__wait_slow();
        h->q.head = head - 1;
        f->nspawned--;
        herd_fn fn = s->fn;
        unsigned char a[HERD__SLOT_INLINE_ARG] __attribute__((aligned(16)));
        herd__arg_load(a, s->arg);
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
