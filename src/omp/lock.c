/* Locks, critical and atomic (docs/design/openmp.md, "Locks").
 *
 * omp_lock_t is 4 bytes (GCC's omp.h), too small for a wait list, so
 * waiters park in a table of lists keyed by the lock's address (a parking
 * lot). The word: 0 free, 1 held, 2 held with waiters (the futex mutex of
 * Drepper's "Futexes are tricky", with the kernel's wait queue replaced by
 * the table). A waiting task suspends (herd__block), so its worker runs
 * other tasks; a waiter outside herd (a thread with no worker) sleeps on a
 * futex word of its own. Waiters are homed (tied mode), so any thread may
 * resume them. */
#include "omp/omp.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NBUCKETS 128

typedef struct waiter {
    _Atomic uint32_t *addr;
    herd__ult *ult; /* a task, or NULL: a thread sleeping on flag */
    _Atomic uint32_t flag;
    struct waiter *next;
} waiter;

typedef struct bucket {
    herd__spin lock;
    waiter *head, *tail;
} __attribute__((aligned(64))) bucket;

static bucket buckets[NBUCKETS];

static bucket *bucket_of(const void *addr) {
    uintptr_t a = (uintptr_t)addr;
    return &buckets[(a >> 2 ^ a >> 9) % NBUCKETS];
}

static void arm_park(herd__worker *w, herd__ult *u, void *p) {
    (void)w;
    waiter *wt = p;
    bucket *b = bucket_of((void *)wt->addr);
    wt->ult = u;
    /* The unlock publishes ult to the waker, which reads it under the lock. */
    herd__spin_unlock(&b->lock);
}

/* Sleep until an unpark of addr, unless *addr no longer holds `expect`.
 * kind, ra: what the watchdog's dump says the task waits on, from where. */
static void park(_Atomic uint32_t *addr, uint32_t expect, int kind, void *ra) {
    bucket *b = bucket_of((void *)addr);
    waiter wt = {addr, NULL, 0, NULL};
    herd__spin_lock(&b->lock);
    /* ORDER: relaxed; the bucket lock orders this check against the
     * unlocker's unpark, which takes the same lock after its exchange. */
    if (atomic_load_explicit(addr, memory_order_relaxed) != expect) {
        herd__spin_unlock(&b->lock);
        return;
    }
    if (b->tail)
        b->tail->next = &wt;
    else
        b->head = &wt;
    b->tail = &wt;
    if (herd__self()) {
        OMP_SAVE();
        herd__block_on(kind, addr, ra, arm_park, &wt); /* arm_park releases the bucket */
        OMP_RESTORE();
        return;
    }
    herd__spin_unlock(&b->lock);
    herd__omp_guest_sleeps(1);
    /* ORDER: acquire; pairs with the release store in unpark_one(). */
    while (atomic_load_explicit(&wt.flag, memory_order_acquire) == 0)
        herd__futex_wait(&wt.flag, 0);
    herd__omp_guest_sleeps(0);
}

static void unpark_one(_Atomic uint32_t *addr) {
    bucket *b = bucket_of((void *)addr);
    herd__spin_lock(&b->lock);
    waiter *prev = NULL, *wt = b->head;
    while (wt && wt->addr != addr)
        prev = wt, wt = wt->next;
    if (wt) {
        if (prev)
            prev->next = wt->next;
        else
            b->head = wt->next;
        if (b->tail == wt)
            b->tail = prev;
    }
    herd__ult *u = wt ? wt->ult : NULL;
    herd__spin_unlock(&b->lock);
    if (!wt)
        return;
    if (u) {
        herd__ult_ready(u); /* homed: safe from any thread */
        return;
    }
    /* ORDER: release; pairs with the acquire load in park(). After this
     * store the waiter may return and its record vanish. */
    atomic_store_explicit(&wt->flag, 1, memory_order_release);
    herd__futex_wake(&wt->flag, 1);
}

typedef struct lock_poll {
    _Atomic uint32_t *w;
    unsigned backoff; /* pauses before the next look */
} lock_poll;

/* Is the word free? Looked at less and less often (up to every 64 pauses):
 * each look takes the line from the holder, which would otherwise keep it
 * across a run of short critical sections. */
static int word_free(void *arg) {
    lock_poll *lp = arg;
    for (unsigned i = 0; i < lp->backoff; i++)
        herd__cpu_relax();
    if (lp->backoff < 64)
        lp->backoff = lp->backoff ? 2 * lp->backoff : 1;
    /* ORDER: relaxed; a hint, the CAS that follows acquires. */
    return atomic_load_explicit(lp->w, memory_order_relaxed) == 0;
}

#define LOCK_SPINS 4 /* spin-waits (herd__spin_wait, up to 20 us each) before parking */

static void word_lock_at(_Atomic uint32_t *w, int kind, void *ra) {
    uint32_t c = 0;
    /* ORDER: acquire on success; pairs with the release exchange in
     * herd__omp_word_unlock(): the previous holder's writes are visible. */
    if (atomic_compare_exchange_strong_explicit(w, &c, 1, memory_order_acquire,
                                                memory_order_relaxed))
        return;
    /* Held, nobody parked: the holder most likely runs on another CPU and
     * leaves soon (a critical section), so wait for it there first; parking
     * costs a suspension here and an unpark and resumption at its unlock
     * (EPCC CRITICAL and LOCK, 2 threads: 0.088 us, against libgomp's spin
     * then sleep at 0.05). herd__spin_wait spins only while a CPU is ours
     * and this worker has nothing else to run. */
    herd__worker *self = herd__self();
    lock_poll lp = {w, 0};
    for (int i = 0; c == 1 && self && i < LOCK_SPINS && herd__spin_wait(self, word_free, &lp);
         i++) {
        c = 0;
        /* ORDER: acquire on success, as above. */
        if (atomic_compare_exchange_strong_explicit(w, &c, 1, memory_order_acquire,
                                                    memory_order_relaxed))
            return;
    }
    if (c != 2)
        c = atomic_exchange_explicit(w, 2, memory_order_acquire);
    while (c != 0) {
        park(w, 2, kind, ra);
        /* Woken by an unlock: its holder may have taken the lock again at
         * once (a loop of critical sections). Wait for it here first, as
         * before parking: marking the word at once made every one of the
         * holder's unlocks unpark us and every resumption park us again
         * (EPCC CRITICAL with a 1 us body, 2 threads on the 2-core VM:
         * 0.14 us a section, libgomp's 0.02). While we spin the word may
         * read 1 with others parked: we mark it before we take the lock or
         * park again, so the unlock after ours wakes them. */
        lp.backoff = 0;
        if (self)
            (void)herd__spin_wait(self, word_free, &lp);
        c = atomic_exchange_explicit(w, 2, memory_order_acquire); /* ORDER: as above */
    }
}

void herd__omp_word_lock(_Atomic uint32_t *w) {
    word_lock_at(w, HERD__WAIT_OMP_LOCK, __builtin_return_address(0));
}

int herd__omp_word_trylock(_Atomic uint32_t *w) {
    uint32_t c = 0;
    /* ORDER: acquire, as in herd__omp_word_lock(). */
    return atomic_compare_exchange_strong_explicit(w, &c, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

void herd__omp_word_unlock(_Atomic uint32_t *w) {
    /* ORDER: release; pairs with the acquire in herd__omp_word_lock(). */
    if (atomic_exchange_explicit(w, 0, memory_order_release) == 2)
        unpark_one(w);
}

/* ------------------------------------------------------ the omp_* locks */

/* owner: the owning task's record. Read without the lock by every task
 * that sets or tests it (relaxed: a task finds itself there only if it
 * stored itself there, and its own later store of NULL is what it reads
 * after; another task's value is never its own), written by the holder. */
typedef struct nest_lock {
    _Atomic uint32_t word;
    int count;
    _Atomic(void *) owner;
} nest_lock;
_Static_assert(sizeof(nest_lock) == 16, "omp_nest_lock_t is 16 bytes in GCC's omp.h");

#define LOCK(p) ((_Atomic uint32_t *)(p))

OMP_API void omp_init_lock_30(void *l) {
    atomic_init(LOCK(l), 0);
}
OMP_API void omp_init_lock_with_hint(void *l, int hint) {
    (void)hint;
    omp_init_lock_30(l);
}
OMP_API void omp_destroy_lock_30(void *l) {
    (void)l;
}
OMP_API void omp_set_lock_30(void *l) {
    word_lock_at(LOCK(l), HERD__WAIT_OMP_LOCK, __builtin_return_address(0));
}
OMP_API void omp_unset_lock_30(void *l) {
    herd__omp_word_unlock(LOCK(l));
}
OMP_API int omp_test_lock_30(void *l) {
    return herd__omp_word_trylock(LOCK(l));
}

OMP_API void omp_init_nest_lock_30(void *p) {
    nest_lock *l = p;
    atomic_init(&l->word, 0);
    l->count = 0;
    atomic_init(&l->owner, NULL);
}
OMP_API void omp_init_nest_lock_with_hint(void *l, int hint) {
    (void)hint;
    omp_init_nest_lock_30(l);
}
OMP_API void omp_destroy_nest_lock_30(void *l) {
    (void)l;
}

OMP_API void omp_set_nest_lock_30(void *p) {
    nest_lock *l = p;
    omp_task *me = herd__omp_task();
    /* ORDER: relaxed (the struct's comment) */
    if (atomic_load_explicit(&l->owner, memory_order_relaxed) == me) {
        l->count++;
        return;
    }
    word_lock_at(&l->word, HERD__WAIT_OMP_LOCK, __builtin_return_address(0));
    atomic_store_explicit(&l->owner, me, memory_order_relaxed); /* ORDER: as above */
    l->count = 1;
}

OMP_API void omp_unset_nest_lock_30(void *p) {
    nest_lock *l = p;
    if (--l->count == 0) {
        atomic_store_explicit(&l->owner, NULL, memory_order_relaxed); /* ORDER: as above */
        herd__omp_word_unlock(&l->word);
    }
}

OMP_API int omp_test_nest_lock_30(void *p) {
    nest_lock *l = p;
    omp_task *me = herd__omp_task();
    /* ORDER: relaxed, as in omp_set_nest_lock */
    if (atomic_load_explicit(&l->owner, memory_order_relaxed) == me)
        return ++l->count;
    if (!herd__omp_word_trylock(&l->word))
        return 0;
    atomic_store_explicit(&l->owner, me, memory_order_relaxed); /* ORDER: as above */
    l->count = 1;
    return 1;
}

/* The current locks are omp_*_lock@@OMP_3.0 (the default version), as in
 * the system libgomp: the version script names the plain names in OMP_1.0
 * too, for the name@OMP_1.0 aliases below, so the definitions carry other
 * names (`_30`) and are bound here. */
#define DEFAULT_30(n) __asm__(".symver " #n "_30," #n "@@OMP_3.0")
DEFAULT_30(omp_init_lock);
DEFAULT_30(omp_destroy_lock);
DEFAULT_30(omp_set_lock);
DEFAULT_30(omp_unset_lock);
DEFAULT_30(omp_test_lock);
DEFAULT_30(omp_init_nest_lock);
DEFAULT_30(omp_destroy_nest_lock);
DEFAULT_30(omp_set_nest_lock);
DEFAULT_30(omp_unset_nest_lock);
DEFAULT_30(omp_test_nest_lock);
DEFAULT_30(omp_init_lock_);
DEFAULT_30(omp_destroy_lock_);
DEFAULT_30(omp_set_lock_);
DEFAULT_30(omp_unset_lock_);
DEFAULT_30(omp_test_lock_);
DEFAULT_30(omp_init_nest_lock_);
DEFAULT_30(omp_destroy_nest_lock_);
DEFAULT_30(omp_set_nest_lock_);
DEFAULT_30(omp_unset_nest_lock_);
DEFAULT_30(omp_test_nest_lock_);

/* Fortran: integer(omp_lock_kind=4) holds the simple lock itself; a nest
 * lock (kind 8) holds a pointer to a C nest lock (16 bytes). */
OMP_API void omp_init_lock__30(void *l) {
    omp_init_lock_30(l);
}
OMP_API void omp_destroy_lock__30(void *l) {
    (void)l;
}
OMP_API void omp_set_lock__30(void *l) {
    omp_set_lock_30(l);
}
OMP_API void omp_unset_lock__30(void *l) {
    omp_unset_lock_30(l);
}
OMP_API int omp_test_lock__30(void *l) {
    return omp_test_lock_30(l);
}
OMP_API void omp_init_nest_lock__30(void **l) {
    *l = malloc(sizeof(nest_lock));
    if (!*l)
        herd__omp_fatal("out of memory for a nest lock");
    omp_init_nest_lock_30(*l);
}
OMP_API void omp_destroy_nest_lock__30(void **l) {
    free(*l);
    *l = NULL;
}
OMP_API void omp_set_nest_lock__30(void **l) {
    omp_set_nest_lock_30(*l);
}
OMP_API void omp_unset_nest_lock__30(void **l) {
    omp_unset_nest_lock_30(*l);
}
OMP_API int omp_test_nest_lock__30(void **l) {
    return omp_test_nest_lock_30(*l);
}

/* OMP_1.0 compatibility versions: the simple lock has the same layout; the
 * old nest lock is 8 bytes {int owner; int count;} owned by a thread. */
typedef struct nest_lock_25 {
    _Atomic int owner;
    int count;
} nest_lock_25;

static int tid(void) {
    return (int)syscall(SYS_gettid);
}

OMP_API void omp_init_nest_lock_25(void *p) {
    nest_lock_25 *l = p;
    atomic_init(&l->owner, 0);
    l->count = 0;
}
OMP_API void omp_destroy_nest_lock_25(void *p) {
    (void)p;
}
OMP_API int omp_test_nest_lock_25(void *p) {
    nest_lock_25 *l = p;
    int me = tid(), o = 0;
    if (atomic_load_explicit(&l->owner, memory_order_relaxed) == me)
        return ++l->count;
    /* ORDER: acquire; pairs with the release store in unset. */
    if (!atomic_compare_exchange_strong_explicit(&l->owner, &o, me, memory_order_acquire,
                                                 memory_order_relaxed))
        return 0;
    l->count = 1;
    return 1;
}
OMP_API void omp_set_nest_lock_25(void *p) {
    while (!omp_test_nest_lock_25(p))
        herd__omp_relax();
}
OMP_API void omp_unset_nest_lock_25(void *p) {
    nest_lock_25 *l = p;
    if (--l->count == 0)
        atomic_store_explicit(&l->owner, 0, memory_order_release); /* ORDER: see test */
}
__asm__(".symver omp_init_lock_25,omp_init_lock@OMP_1.0");
__asm__(".symver omp_destroy_lock_25,omp_destroy_lock@OMP_1.0");
__asm__(".symver omp_set_lock_25,omp_set_lock@OMP_1.0");
__asm__(".symver omp_unset_lock_25,omp_unset_lock@OMP_1.0");
__asm__(".symver omp_test_lock_25,omp_test_lock@OMP_1.0");
__asm__(".symver omp_init_nest_lock_25,omp_init_nest_lock@OMP_1.0");
__asm__(".symver omp_destroy_nest_lock_25,omp_destroy_nest_lock@OMP_1.0");
__asm__(".symver omp_set_nest_lock_25,omp_set_nest_lock@OMP_1.0");
__asm__(".symver omp_unset_nest_lock_25,omp_unset_nest_lock@OMP_1.0");
__asm__(".symver omp_test_nest_lock_25,omp_test_nest_lock@OMP_1.0");
OMP_API void omp_init_lock_25(void *l) {
    omp_init_lock_30(l);
}
OMP_API void omp_destroy_lock_25(void *l) {
    (void)l;
}
OMP_API void omp_set_lock_25(void *l) {
    omp_set_lock_30(l);
}
OMP_API void omp_unset_lock_25(void *l) {
    omp_unset_lock_30(l);
}
OMP_API int omp_test_lock_25(void *l) {
    return omp_test_lock_30(l);
}

/* Fortran's OMP_1.0 locks hold the old locks themselves (kinds 4 and 8). */
#define FORTRAN_25(op, ret, type)                                                                  \
    OMP_API ret omp_##op##__25(type *l) {                                                          \
        return omp_##op##_25(l);                                                                   \
    }                                                                                              \
    __asm__(".symver omp_" #op "__25,omp_" #op "_@OMP_1.0")
FORTRAN_25(init_lock, void, int);
FORTRAN_25(destroy_lock, void, int);
FORTRAN_25(set_lock, void, int);
FORTRAN_25(unset_lock, void, int);
FORTRAN_25(test_lock, int, int);
FORTRAN_25(init_nest_lock, void, long);
FORTRAN_25(destroy_nest_lock, void, long);
FORTRAN_25(set_nest_lock, void, long);
FORTRAN_25(unset_nest_lock, void, long);
FORTRAN_25(test_nest_lock, int, long);

/* ------------------------------------------------------ critical, atomic */

static _Atomic uint32_t critical_word, atomic_word;

OMP_API void GOMP_critical_start(void) {
    word_lock_at(&critical_word, HERD__WAIT_OMP_CRITICAL, __builtin_return_address(0));
}
OMP_API void GOMP_critical_end(void) {
    herd__omp_word_unlock(&critical_word);
}
/* *pptr is a pointer-sized, zero-initialised common symbol per name: its
 * first word is the lock. */
OMP_API void GOMP_critical_name_start(void **pptr) {
    word_lock_at(LOCK(pptr), HERD__WAIT_OMP_CRITICAL, __builtin_return_address(0));
}
OMP_API void GOMP_critical_name_end(void **pptr) {
    herd__omp_word_unlock(LOCK(pptr));
}
OMP_API void GOMP_atomic_start(void) {
    word_lock_at(&atomic_word, HERD__WAIT_OMP_CRITICAL, __builtin_return_address(0));
}
OMP_API void GOMP_atomic_end(void) {
    herd__omp_word_unlock(&atomic_word);
}

/* The same routines under the LLVM ABI's version (kmp/, omp.h). */
/* omp_init_lock_with_hint: LLVM's only (the version script's VERSION node) */
/* libomp's omp_lock_t and omp_nest_lock_t are 8 bytes: the simple lock is
 * the word at their start, and a nest lock (16 bytes) is held by pointer,
 * as the Fortran bindings hold it (above). */
OMP_LLVM_ALIAS_OF(omp_init_lock, omp_init_lock_30);
OMP_LLVM_ALIAS_OF(omp_destroy_lock, omp_destroy_lock_30);
OMP_LLVM_ALIAS_OF(omp_set_lock, omp_set_lock_30);
OMP_LLVM_ALIAS_OF(omp_unset_lock, omp_unset_lock_30);
OMP_LLVM_ALIAS_OF(omp_test_lock, omp_test_lock_30);
OMP_LLVM_ALIAS_OF(omp_init_nest_lock, omp_init_nest_lock__30);
OMP_LLVM_ALIAS_OF(omp_destroy_nest_lock, omp_destroy_nest_lock__30);
OMP_LLVM_ALIAS_OF(omp_set_nest_lock, omp_set_nest_lock__30);
OMP_LLVM_ALIAS_OF(omp_unset_nest_lock, omp_unset_nest_lock__30);
OMP_LLVM_ALIAS_OF(omp_test_nest_lock, omp_test_nest_lock__30);
static void init_nest_lock_ptr_with_hint(void **l, int hint) {
    (void)hint;
    omp_init_nest_lock__30(l);
}
OMP_LLVM_ALIAS_OF(omp_init_nest_lock_with_hint, init_nest_lock_ptr_with_hint);

/* The Fortran locks under LLVM's version: flang's omp_lock_kind and
 * omp_nest_lock_kind are 8 bytes, room for the word and the pointer. */
OMP_LLVM_ALIAS_OF(omp_destroy_lock_, omp_destroy_lock__30);
OMP_LLVM_ALIAS_OF(omp_destroy_nest_lock_, omp_destroy_nest_lock__30);
OMP_LLVM_ALIAS_OF(omp_init_lock_, omp_init_lock__30);
OMP_LLVM_ALIAS_OF(omp_init_nest_lock_, omp_init_nest_lock__30);
OMP_LLVM_ALIAS_OF(omp_set_lock_, omp_set_lock__30);
OMP_LLVM_ALIAS_OF(omp_set_nest_lock_, omp_set_nest_lock__30);
OMP_LLVM_ALIAS_OF(omp_test_lock_, omp_test_lock__30);
OMP_LLVM_ALIAS_OF(omp_test_nest_lock_, omp_test_nest_lock__30);
OMP_LLVM_ALIAS_OF(omp_unset_lock_, omp_unset_lock__30);
OMP_LLVM_ALIAS_OF(omp_unset_nest_lock_, omp_unset_nest_lock__30);
/* ... and the hinted inits of libomp's Fortran API (LLVM's version only: a
 * name libgomp lacks), the hint (by reference) unused as above. */
OMP_API void omp_init_lock_with_hint_(void *l, const int *hint) {
    (void)hint;
    omp_init_lock__30(l);
}
OMP_API void omp_init_nest_lock_with_hint_(void **l, const int *hint) {
    (void)hint;
    omp_init_nest_lock__30(l);
}
