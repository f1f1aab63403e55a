/* A test-and-test-and-set spin lock, the CPU's spin-wait hint, and the
 * backoff of a spin loop. The lock guards short critical sections only
 * (queue links, wait lists): a holder never blocks while holding one. */
#ifndef HERD_ARCH_SPIN_H
#define HERD_ARCH_SPIN_H

#include <sched.h>
#include <stdatomic.h>

#if defined(__x86_64__) || defined(__i386__)
#define herd__cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define herd__cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define herd__cpu_relax() ((void)0)
#endif

/* Pauses a spinning thread makes before it yields its CPU. The party it
 * waits for (a lock's holder, a thief copying a slot) may have lost its CPU
 * to the spinner or to anyone else: with more runnable threads than cores
 * (oversubscribed workers, other programs) a pure spin burns whole time
 * slices while the holder waits to run. Under TSan, 32 workers on the
 * 2-core VM took 18 to 49 s for stress.topology's 10 barrier phases of 500
 * tasks, 49% of the samples in the spin of a herd_mutex's lock; with the
 * yield, 1.6 to 2.4 s (docs/design/tasks.md).
 * 128 pauses take 1.3 us on the 2-core VM (10 ns each, measured) and up
 * to about 5 us on cores whose pause is 140 cycles: longer than any
 * critical section guarded here runs on a CPU it holds. */
#define HERD__SPIN_PAUSES 128

/* One step of a wait loop: a pause, and a yield once *spins reaches
 * HERD__SPIN_PAUSES. The caller starts *spins at 0 for each wait. */
static inline void herd__spin_backoff(unsigned *spins) {
    if (*spins < HERD__SPIN_PAUSES) {
        (*spins)++;
        herd__cpu_relax();
    } else {
        sched_yield();
    }
}

typedef struct herd__spin {
    _Atomic int v;
} herd__spin;

static inline void herd__spin_lock(herd__spin *l) {
    for (unsigned spins = 0;;) {
        /* ORDER: acquire; pairs with the release store in herd__spin_unlock(). */
        if (!atomic_exchange_explicit(&l->v, 1, memory_order_acquire))
            return;
        /* ORDER: relaxed; only a hint to try the exchange again. */
        while (atomic_load_explicit(&l->v, memory_order_relaxed))
            herd__spin_backoff(&spins);
    }
}

static inline void herd__spin_unlock(herd__spin *l) {
    /* ORDER: release; pairs with the acquire exchange in herd__spin_lock(). */
    atomic_store_explicit(&l->v, 0, memory_order_release);
}

#endif
