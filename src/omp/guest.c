/* Guest threads: kernel threads of the OpenMP layer that run the members of
 * a team that herd's workers do not (docs/design/openmp.md, "Teams").
 *
 * A member beyond the workers of the outermost team, and members 1.. of a
 * nested active team, each get a kernel thread of their own, as libgomp
 * gives them: GCC's threadprivate is plain TLS, and members may spin-wait
 * on each other's flags without yielding, which ULTs sharing a worker
 * cannot survive. A guest is not a herd worker (herd__self() is NULL on
 * it): its explicit tasks run undeferred on it, and it waits in the kernel.
 * It runs on the CPUs the process had at start-up (not pinned: the
 * workers hold the PUs).
 *
 * Slots: the outermost team's member i beyond the workers always runs on
 * slot i - workers's own guest, so its threadprivate data persists from
 * region to region as the specification requires when the team's size
 * does not change (OpenMP 5.1, 2.21.2). Other guests come from the pool.
 *
 * The pool: idle guests wait on their own `go` word (a short spin, then a
 * futex). herd__omp_guest_run takes an idle guest or creates one, copies
 * the job into it and stores go = 1 (release; the guest's acquire load
 * pairs). A guest that finished its body puts itself back in the pool
 * before it calls done(), so that the next region, which may start as soon
 * as done() says the member ended, finds it there. Guests live for the
 * process (libgomp keeps its pool threads too); a fork()ed child forgets
 * its parent's (they do not exist there). */
#include "omp/omp.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define GUEST_ARG 32
#define GUEST_SPIN 2000 /* pauses before an idle guest sleeps (about 50 us) */

typedef struct guest {
    struct guest *next;  /* in the idle list */
    int own;             /* a slot's own guest: never in the idle list */
    _Atomic uint32_t go; /* 0 idle, 1 a job is set, 2 idle and asleep on the futex */
    void (*body)(void *);
    void (*done)(void *);
    _Alignas(16) unsigned char arg[GUEST_ARG];
} guest;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static guest *idle;
static guest **slots; /* the slots' own guests, NULL: not created yet */
static int nslots;
static cpu_set_t start_mask;
static int have_mask;

/* The process's CPUs before anything is pinned (herd pins the thread that
 * adopts worker 0, and a thread inherits its creator's mask). */
__attribute__((constructor)) static void save_mask(void) {
    have_mask = sched_getaffinity(0, sizeof start_mask, &start_mask) == 0;
}

static void forget_pool(void) {
    /* The child of fork(): its parent's guests do not exist here. */
    pthread_mutex_init(&pool_lock, NULL);
    idle = NULL;
    slots = NULL; /* leaked: the records of threads that are not here */
    nslots = 0;
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void) {
    pthread_atfork(NULL, NULL, forget_pool);
}

static void wait_job(guest *g) {
    for (int i = 0; i < GUEST_SPIN; i++) {
        /* ORDER: acquire; pairs with the release store in herd__omp_guest_run(). */
        if (atomic_load_explicit(&g->go, memory_order_acquire) == 1)
            return;
        herd__cpu_relax();
    }
    uint32_t v = 0;
    /* ORDER: acquire; on failure (released meanwhile) it pairs with the
     * release exchange of the waker; on success the loop below reads again. */
    if (!atomic_compare_exchange_strong_explicit(&g->go, &v, 2, memory_order_acquire,
                                                 memory_order_acquire))
        return;
    /* ORDER: acquire; pairs with the release exchange in herd__omp_guest_run(). */
    while (atomic_load_explicit(&g->go, memory_order_acquire) != 1)
        herd__futex_wait(&g->go, 2);
}

static void *guest_main(void *p) {
    guest *g = p;
    for (;;) {
        wait_job(g);
        unsigned char arg[GUEST_ARG];
        memcpy(arg, g->arg, sizeof arg);
        void (*done)(void *) = g->done;
        g->body(arg);
        /* ORDER: relaxed; the pool lock publishes it to the next taker. */
        atomic_store_explicit(&g->go, 0, memory_order_relaxed);
        if (!g->own) {
            pthread_mutex_lock(&pool_lock);
            g->next = idle;
            idle = g;
            pthread_mutex_unlock(&pool_lock);
        }
        if (done)
            done(arg);
    }
    return NULL;
}

#define GUEST_STACK_EXTRA (64 * 1024)
#define GUEST_GUARD (1024 * 1024)

static guest *new_guest(void) {
    guest *g = calloc(1, sizeof *g);
    if (!g)
        herd__omp_fatal("out of memory for a team thread");
    pthread_once(&atfork_once, register_atfork);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* The member's code gets OMP_STACKSIZE (as under libgomp); the thread's
     * static TLS and the runtime's own frames come on top (with
     * OMP_STACKSIZE=16K, 16 KiB alone overflowed at once), and a guard of
     * GUEST_GUARD (address space only) below it, so a large frame faults
     * instead of writing into a neighbouring mapping. */
    if (herd__omp_g.stacksize)
        pthread_attr_setstacksize(&attr, herd__omp_g.stacksize + GUEST_STACK_EXTRA);
    pthread_attr_setguardsize(&attr, GUEST_GUARD);
    if (have_mask)
        pthread_attr_setaffinity_np(&attr, sizeof start_mask, &start_mask);
    pthread_t th;
    int e = pthread_create(&th, &attr, guest_main, g);
    pthread_attr_destroy(&attr);
    if (e)
        herd__omp_fatal("cannot create a thread for a team member: %s", strerror(e));
    return g;
}

/* An idle guest, or slot's own one (both created on demand). */
static guest *take(int slot) {
    pthread_mutex_lock(&pool_lock);
    guest *g = NULL;
    if (slot < 0) {
        g = idle;
        if (g)
            idle = g->next;
    } else {
        if (slot >= nslots) {
            int n = slot + 1 > 2 * nslots ? slot + 1 : 2 * nslots;
            guest **a = realloc(slots, (size_t)n * sizeof *a);
            if (!a)
                herd__omp_fatal("out of memory for a team thread");
            memset(a + nslots, 0, (size_t)(n - nslots) * sizeof *a);
            slots = a;
            nslots = n;
        }
        g = slots[slot];
        if (!g) {
            g = slots[slot] = new_guest(); /* it starts in wait_job, on go == 0 */
            g->own = 1;                    /* before its first job: published by go */
        }
    }
    pthread_mutex_unlock(&pool_lock);
    return g ? g : new_guest();
}

void herd__omp_guest_run(int slot, void (*body)(void *), void (*done)(void *), const void *arg,
                         size_t size) {
    HERD_ASSERT(size <= GUEST_ARG);
    guest *g = take(slot);
    g->body = body;
    g->done = done;
    memcpy(g->arg, arg, size);
    /* ORDER: release; pairs with the acquire loads in wait_job(): the job
     * and everything the caller wrote before (the team) are visible. */
    if (atomic_exchange_explicit(&g->go, 1, memory_order_release) == 2)
        herd__futex_wake(&g->go, 1);
}
