/* A test-and-test-and-set spin lock and the CPU's spin-wait hint. Used for
 * short critical sections only (queue links, wait lists): a holder never
 * blocks or switches context while holding one. */
#ifndef HERD_ARCH_SPIN_H
#define HERD_ARCH_SPIN_H

#include <stdatomic.h>

#if defined(__x86_64__) || defined(__i386__)
#define herd__cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define herd__cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define herd__cpu_relax() ((void)0)
#endif

typedef struct herd__spin {
    _Atomic int v;
} herd__spin;

static inline void herd__spin_lock(herd__spin *l) {
    for (;;) {
        /* ORDER: acquire; pairs with the release store in herd__spin_unlock(). */
        if (!atomic_exchange_explicit(&l->v, 1, memory_order_acquire))
            return;
        while (atomic_load_explicit(&l->v, memory_order_relaxed))
            herd__cpu_relax();
    }
}

static inline void herd__spin_unlock(herd__spin *l) {
    /* ORDER: release; pairs with the acquire exchange in herd__spin_lock(). */
    atomic_store_explicit(&l->v, 0, memory_order_release);
}

#endif
