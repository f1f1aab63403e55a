/* Task stacks: mapping, guard regions under a budget, canaries. */
#include "ult/stack.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#if defined(HERD_TSAN)
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
#endif
#if defined(HERD_ASAN)
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#endif

/* Guards currently PROT_NONE, process-wide. ORDER: relaxed everywhere; it
 * is a budget, read as an estimate; each stack's own `guarded` flag (owned by
 * whoever holds the stack) is what decides mprotect calls. */
static _Atomic long guards_in_use;

/* Deep parts given back (madvise calls of herd__stack_trim), process-wide,
 * for the tests. ORDER: relaxed; a count. */
static _Atomic long trims;

static long read_sysctl(const char *path, long dflt) {
    long v = dflt;
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = dflt;
        fclose(f);
    }
    return v;
}

static long read_max_map_count(void) {
    return read_sysctl("/proc/sys/vm/max_map_count", 65530);
}

void herd__stack_conf_init(herd__stack_conf *c, size_t size, int guard, size_t guard_size,
                           const char *setting) {
    c->page = (size_t)sysconf(_SC_PAGESIZE);
    c->size = (size + c->page - 1) / c->page * c->page;
    c->guard = guard;
    c->guard_cut = 0;
    c->setting = setting ? setting : "HERD_STACK";
    c->name_by_pc = 0;
    if (!guard) {
        c->guard_size = 0;
    } else if (guard_size) {
        c->guard_size = (guard_size + c->page - 1) / c->page * c->page;
    } else {
        /* Address space only (PROT_NONE, never touched): no memory, and no
         * commit charge (MAP_NORESERVE). But it counts against RLIMIT_AS
         * (ulimit -v), and under vm.overcommit_memory=2 MAP_NORESERVE is
         * ignored and the guard is charged as committed memory (it is mapped
         * read-write before it is cut out, see herd__stack_new): in both
         * cases the default would use up a limited budget in a few hundred
         * stacks, so there the guard is the stack's own size, and herd_start
         * says so. */
        c->guard_size = c->size > HERD__STACK_GUARD_FLOOR ? c->size : HERD__STACK_GUARD_FLOOR;
        struct rlimit as;
        int cut = 0;
        if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
            cut = HERD__GUARD_CUT_AS;
        else if (read_sysctl("/proc/sys/vm/overcommit_memory", 0) == 2)
            cut = HERD__GUARD_CUT_COMMIT;
        if (cut && c->guard_size > c->size) {
            c->guard_size = c->size;
            c->guard_cut = cut;
        }
    }
    /* A guarded stack costs 2 map areas, an unguarded one at most 1. Keep a
     * quarter of the areas for guards: the rest stays for the stacks, the
     * program's own mappings and the libraries. */
    c->guard_budget = read_max_map_count() / 4;
#if defined(HERD_TSAN) || defined(HERD_ASAN)
    /* Sanitizers map state of their own per stack (TSan: per fiber), so
     * leave them most of the areas. */
    c->guard_budget = read_max_map_count() / 16;
#endif
}

/* The mapping is made read-write whole and its record written before the
 * guard region is cut out of it (mprotect PROT_NONE), so that both parts
 * share one anon_vma: when a suspended stack gives its guard back, the
 * kernel can merge it with its neighbours again (vm.max_map_count). */
herd__stack *herd__stack_new(const herd__stack_conf *c) {
    size_t rec = (sizeof(herd__stack) + 63) & ~(size_t)63;
    size_t usable = c->size + ((rec + c->page - 1) / c->page) * c->page;
    size_t map_size = c->guard_size + usable;
    unsigned char *m = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    /* No transparent huge pages in stacks: one touched word would make
     * 2 MiB resident (kernels before 6.7 do not infer it from MAP_STACK).
     * Advisory: a kernel without THP refuses, and nothing changes. */
    (void)madvise(m, map_size, MADV_NOHUGEPAGE);
    herd__stack *s = (herd__stack *)(m + map_size - rec);
    s->map = m;
    s->map_size = map_size;
    s->low = m + c->guard_size;
    s->guarded = 0;
    s->next = NULL;
    s->sp = NULL;
    s->native = 0;
    s->native_size = 0;
    s->canary = c->guard_size == 0;
    if (s->canary)
        *(uint64_t *)s->low = HERD__STACK_CANARY;
#if defined(HERD_TSAN)
    s->tsan_fiber = __tsan_create_fiber(0);
#else
    s->tsan_fiber = NULL;
#endif
    s->tsan_contexts = 0;
    if (herd__stack_arm(c, s) != 0) {
        int e = errno;
#if defined(HERD_TSAN)
        __tsan_destroy_fiber(s->tsan_fiber);
#endif
        munmap(m, map_size);
        errno = e;
        return NULL;
    }
    return s;
}

void herd__stack_delete(const herd__stack_conf *c, herd__stack *s) {
    if (s->guarded)
        atomic_fetch_sub_explicit(&guards_in_use, 1, memory_order_relaxed);
#if defined(HERD_TSAN)
    __tsan_destroy_fiber(s->tsan_fiber);
#endif
#if defined(HERD_ASAN)
    /* A stack abandoned mid-call (a ULT that ends by switching away) keeps
     * its frames' redzones in ASan's shadow, and munmap does not clear
     * them: the next mapping at these addresses (a file, another stack)
     * would read as poisoned. */
    /* The stack part only: no frame that survives writes shadow for the
     * guard region (one that reaches it faults, and the process ends), and
     * clearing the shadow of 64 MiB per stack made deleting stacks slow. */
    __asan_unpoison_memory_region(s->low, (size_t)(s->map + s->map_size - s->low));
#endif
    munmap(s->map, s->map_size);
}

int herd__stack_arm_slow(const herd__stack_conf *c, herd__stack *s) {
    if (mprotect(s->map, c->guard_size, PROT_NONE) != 0)
        return -1;
    s->guarded = 1;
    atomic_fetch_add_explicit(&guards_in_use, 1, memory_order_relaxed);
    return 0;
}

void herd__stack_park(const herd__stack_conf *c, herd__stack *s) {
    if (!s->guarded || s->native ||
        atomic_load_explicit(&guards_in_use, memory_order_relaxed) <= c->guard_budget)
        return;
    /* A suspended stack cannot overflow; it gets its guard back before it
     * runs again (herd__stack_arm on resume). */
    if (mprotect(s->map, c->guard_size, PROT_READ | PROT_WRITE) == 0) {
        s->guarded = 0;
        atomic_fetch_sub_explicit(&guards_in_use, 1, memory_order_relaxed);
    }
}

long herd__stack_guards_in_use(void) {
    return atomic_load_explicit(&guards_in_use, memory_order_relaxed);
}

/* Pages just below the kept top that herd__stack_trim reads before it gives
 * the deeper part back. */
#define PROBE_PAGES 4

/* Did a task's frames reach below `to` since the stack's deep part was last
 * given back? Given-back and never-touched pages read as zeros; a frame that
 * crossed `to` wrote near its own top (return address, saved registers), so
 * the last word of one of the pages below is no longer zero. The first read
 * of a never-touched page maps the kernel's zero page (a minor fault, once,
 * no memory). Not instrumented: a sanitizer would see reads of a dead
 * task's frames. */
__attribute__((no_sanitize("address", "thread"))) static int
reached_below(const herd__stack_conf *c, const unsigned char *from, const unsigned char *to) {
    for (int i = 0; i < PROBE_PAGES && to - (size_t)i * c->page > from; i++) {
        const volatile uint64_t *w =
            (const volatile uint64_t *)(to - (size_t)i * c->page - sizeof(uint64_t));
        if (*w != 0)
            return 1;
    }
    return 0;
}

void herd__stack_trim(const herd__stack_conf *c, herd__stack *s, int force) {
    unsigned char *top = (unsigned char *)herd__stack_top(s);
    if (s->native || c->size <= HERD__STACK_KEEP + c->page)
        return;
    /* Keep the canary's page, if any, and the top HERD__STACK_KEEP bytes
     * (rounded down to a page); what lies between reads as zeros after. */
    unsigned char *from = s->canary ? s->low + c->page : s->low;
    uintptr_t keep_from = (uintptr_t)(top - HERD__STACK_KEEP) & ~(uintptr_t)(c->page - 1);
    unsigned char *to = (unsigned char *)keep_from;
    /* madvise takes the mmap lock and may shoot down TLBs on every CPU the
     * process runs on: one per recycled stack made a work-first spawn on
     * 8 MiB stacks 8x dearer on one worker and 100x on two (2-core VM), 60x
     * on 16 (docs/benchmarks.md, round 22). So a stack whose tasks stayed
     * within the kept top is left alone. */
    if (to > from && (force || reached_below(c, from, to))) {
        (void)madvise(from, (size_t)(to - from), MADV_DONTNEED);
        atomic_fetch_add_explicit(&trims, 1, memory_order_relaxed);
    }
}

long herd__stack_trims(void) {
    return atomic_load_explicit(&trims, memory_order_relaxed);
}
