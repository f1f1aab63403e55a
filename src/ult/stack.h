/* Task stacks (paper 004: lazy allocation, per-worker recycling, handoff).
 *
 * A stack is one anonymous mapping: a guard region at the bottom, the usable
 * stack, and this record at the top. A task gets a stack only when it has to
 * run on one of its own: a queued task is a slot in a deque, a task run by
 * its parent's wait runs on the parent's stack, and a finished task leaves
 * its stack to the next task the worker runs (handoff). So stacks in use =
 * suspended tasks + workers.
 *
 * Overflow detection (docs/design/stacks.md): a stack that runs always has a
 * PROT_NONE guard region below it, max(stack size, 64 MiB) by default:
 * address space only, no memory. A frame must be larger than the guard to
 * jump it, and a fault whose stack pointer is below the stack is reported as
 * an overflow wherever it lands (core/overflow.c). A guarded stack costs two
 * kernel memory areas, and Linux allows vm.max_map_count of them (65530 by
 * default), so when many tasks are suspended at once, stacks that suspend
 * give their guard back (mprotect read-write) once the number of guards
 * passes a budget, and get it again before they next run. Without a guard
 * (HERD_STACK_GUARD=off), a canary word at the bottom of the stack is
 * checked at every switch away from it. */
#ifndef HERD_ULT_STACK_H
#define HERD_ULT_STACK_H

#include <stddef.h>
#include <stdint.h>

#define HERD__STACK_CANARY 0x6865726473746b21ull /* "herdstk!" */
/* The default guard: max(stack size, this). */
#define HERD__STACK_GUARD_FLOOR ((size_t)64 << 20)
#define HERD__GUARD_CUT_AS 1
#define HERD__GUARD_CUT_COMMIT 2

typedef struct herd__stack {
    void *sp;           /* saved context while not running */
    unsigned char *map; /* mapping start (the guard region) */
    size_t map_size;
    unsigned char *low;       /* lowest usable address (just above the guard) */
    int guarded;              /* 1 while the guard region is PROT_NONE */
    struct herd__stack *next; /* free-list / wait-list link, owner: whoever holds it */
    void *tsan_fiber;
    unsigned tsan_contexts; /* TSan builds: contexts started on tsan_fiber (core/ult.c) */
    /* 1: not a mapping of ours but a thread's own stack, adopted as a ULT
     * (core/adopt.c): no guard of ours, no canary, never freed or parked.
     * native_size: its usable bytes from low (sanitizer fiber switches). */
    int native;
    size_t native_size;
    /* 1: a canary word at low (only without a guard: with one, the guard
     * and the stack pointer check see every overflow, and the canary would
     * cost a resident page, and its page table, at the bottom of every
     * stack). */
    int canary;
} herd__stack;

/* Process-wide stack settings, fixed at herd_start(). */
typedef struct herd__stack_conf {
    size_t size; /* usable bytes (HERD_STACK) */
    size_t page;
    int guard;         /* HERD_STACK_GUARD on */
    size_t guard_size; /* bytes of the PROT_NONE region below each stack; 0 when off */
    /* The default guard was cut to the stack size (herd_start says so once):
     * 0 no, HERD__GUARD_CUT_AS (RLIMIT_AS is finite), HERD__GUARD_CUT_COMMIT
     * (vm.overcommit_memory=2). */
    int guard_cut;
    long guard_budget; /* guards allowed before suspending stacks give theirs back */
    /* The setting that sized the stacks, named in overflow reports
     * ("HERD_STACK", "OMP_STACKSIZE", "herd_config.stack_size"). */
    const char *setting;
    /* 1: task functions are a layer's trampolines (the OpenMP layer's):
     * reports name the function that overflowed instead. */
    int name_by_pc;
} herd__stack_conf;

/* guard: 0 off, 1 on; guard_size: the guard's bytes, 0 for the default
 * (max(size, HERD__STACK_GUARD_FLOOR), cut to size under a finite RLIMIT_AS). */
void herd__stack_conf_init(herd__stack_conf *c, size_t size, int guard, size_t guard_size,
                           const char *setting);

/* Map a new stack; NULL when the kernel refuses (errno set). */
herd__stack *herd__stack_new(const herd__stack_conf *c);
void herd__stack_delete(const herd__stack_conf *c, herd__stack *s);

/* Highest usable address (exclusive), where a fresh context is built. */
static inline void *herd__stack_top(herd__stack *s) {
    return (void *)s;
}

/* Make sure s has its guard before it runs. Returns 0 or -1 (mprotect failed). */
int herd__stack_arm_slow(const herd__stack_conf *c, herd__stack *s);
static inline int herd__stack_arm(const herd__stack_conf *c, herd__stack *s) {
    return !c->guard_size || s->guarded ? 0 : herd__stack_arm_slow(c, s);
}
/* s is being suspended: give its guard back if guards are over budget. */
void herd__stack_park(const herd__stack_conf *c, herd__stack *s);

/* s is free again (cached for reuse): give the memory of its pages deeper
 * than HERD__STACK_KEEP below its top back to the kernel, so that a cache
 * of big stacks (the OpenMP layer's 8 MiB) holds at most that much each,
 * whatever its last task touched. Nothing to do for stacks that small.
 * Without force, only when a probe of the pages just below the kept top
 * finds that a task's frames reached them (stack.c, reached_below): a frame
 * that spans the probed pages without writing them and deeper frames below
 * it would keep their pages until the stack leaves its worker's cache,
 * where core/ult.c trims with force. */
#define HERD__STACK_KEEP ((size_t)256 << 10)
void herd__stack_trim(const herd__stack_conf *c, herd__stack *s, int force);
/* How many times herd__stack_trim gave a deep part back, process-wide. */
long herd__stack_trims(void);

/* 1 if s has no canary or its canary is intact. */
static inline int herd__stack_canary_ok(const herd__stack *s) {
    return !s->canary || *(const uint64_t *)s->low == HERD__STACK_CANARY;
}
/* Guards currently in place, process-wide (tests check the budget). */
long herd__stack_guards_in_use(void);

/* 1 if addr lies in s's guard region (just below its usable area). */
static inline int herd__stack_in_guard(const herd__stack *s, const void *addr) {
    const unsigned char *a = addr;
    return a >= s->map && a < s->low;
}

/* 1 if a stack pointer sp, taken while s runs, is below s's usable area:
 * a frame has outgrown the stack, wherever its first store landed. Bounded
 * (1 TiB below), so a stack pointer that is garbage is not called that. */
static inline int herd__stack_sp_below(const herd__stack *s, uintptr_t sp) {
    uintptr_t low = (uintptr_t)s->low;
    return sp != 0 && sp < low && low - sp <= ((uintptr_t)1 << 40);
}

#endif
