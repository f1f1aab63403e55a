/* Guest threads: kernel threads of the OpenMP layer that run the members of
 * a team that herd's workers do not (docs/design/openmp.md, "Teams").
 *
 * A member beyond the workers of the outermost team, and members 1.. of a
 * nested active team, each get a kernel thread of their own, as libgomp
 * gives them: GCC's threadprivate is plain TLS, and members may spin-wait
 * on each other's flags without yielding, which ULTs sharing a worker
 * cannot survive. A guest is not a herd worker (herd__self() is NULL on
 * it): it cannot take a herd task, so its team's tasks go to the team's
 * pool as well, which it runs while it waits (pool.c); it waits in the
 * kernel.
 * It runs on the CPUs the process had at start-up (not pinned: the
 * workers hold the PUs).
 *
 * Slots: the outermost team's member i beyond the workers always runs on
 * slot i - workers's own guest, so its threadprivate data persists from
 * region to region as the specification requires when the team's size
 * does not change (OpenMP 5.1, 2.21.2). Hot guests: member i of a team
 * that thread X encounters otherwise (a nested team, or one whose
 * encountering thread is no worker) runs on X's own i-th guest, the same
 * thread at every region, as libgomp's and libomp's nested teams keep
 * their threads (libomp's "hot teams"); when that guest is busy (another
 * task on X's worker encountered a team meanwhile) a pool guest runs the
 * member instead. A thread's hot guests go to the pool when it exits.
 * Other guests come from the pool.
 *
 * The pool: idle guests wait on their own `go` word (a short spin, then a
 * futex). herd__omp_guest_run takes an idle guest or creates one, copies
 * the job into it and stores go = 1 (release; the guest's acquire load
 * pairs). A guest that finished its body puts itself back in the pool
 * before it calls done(), so that the next region, which may start as soon
 * as done() says the member ended, finds it there. Guests live until the
 * program pauses the runtime (omp_pause_resource: herd__omp_guests_retire
 * ends every guest that runs no member, as libgomp ends its pool's
 * threads); a fork()ed child forgets its parent's (they do not exist
 * there).
 *
 * Retirement: under pool_lock, a guest that runs no member leaves the list
 * of all guests, the idle list and the slots, is marked retired and gets
 * go = GO_EXIT; the guest reads nothing of its record after it has seen
 * that, and ends. The pausing thread joins it, then (under pool_lock
 * again) frees the record, unless a thread still holds it as a hot guest:
 * then it marks it joined, and that thread frees it when it next looks at
 * it (take_hot, release_hot). A holder that looks before the join marks it
 * dropped instead, and the pausing thread frees it. So a record is freed
 * once, after its thread's last access (the join orders that before the
 * lock's section that frees or marks it). */
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

/* A guest's go word. */
enum { GO_IDLE, GO_JOB, GO_ASLEEP, GO_EXIT };

typedef struct guest {
    struct guest *next;  /* in the idle list */
    struct guest *all;   /* in the list of all guests not retired */
    int own;             /* a slot's or a thread's own guest: never in the idle list */
    int hot;             /* a thread's own (in its hot array; under pool_lock) */
    int busy;            /* it runs a member (under pool_lock) */
    int retired;         /* ended by a pause (under pool_lock, as the next two) */
    int joined;          /* retired, its thread joined: its holder frees the record */
    int dropped;         /* retired, its holder let go: the pausing thread frees it */
    _Atomic uint32_t go; /* GO_* */
    pthread_t thread;    /* joined when it retires */
    void (*body)(void *);
    void (*done)(void *);
    _Alignas(16) unsigned char arg[GUEST_ARG];
} guest;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static guest *idle;
static guest *all_guests; /* every guest not retired */
static guest **slots;     /* the slots' own guests, NULL: not created yet */
static int nslots;
static cpu_set_t start_mask;
static int have_mask;
/* The calling thread's hot guests (hot[i]: its teams' member i + 1, NULL
 * not created yet), and the key whose destructor gives them to the pool. */
static __thread guest **hot;
static __thread int nhot;
static pthread_key_t hot_key;
static pthread_once_t hot_key_once = PTHREAD_ONCE_INIT;

/* The process's CPUs before anything is pinned (herd pins the thread that
 * adopts worker 0, and a thread inherits its creator's mask). */
static int mask_saved;
void herd__omp_save_start_mask(void) {
    if (mask_saved)
        return; /* once, at load: before bind.c binds the initial thread */
    mask_saved = 1;
    have_mask = sched_getaffinity(0, sizeof start_mask, &start_mask) == 0;
    if (!have_mask) /* not known: every CPU, for herd__omp_start_mask */
        for (int c = 0; c < CPU_SETSIZE; c++)
            CPU_SET(c, &start_mask);
}
__attribute__((constructor)) static void save_mask(void) {
    herd__omp_save_start_mask();
}
const cpu_set_t *herd__omp_start_mask(void) {
    return &start_mask;
}

/* This thread is a guest: counted in herd__threads_beside (core's seam)
 * while not asleep. */
static __thread int is_guest;

void herd__omp_guest_sleeps(int asleep) {
    if (is_guest)
        herd__beside_add(asleep ? -1 : 1);
}

static void forget_pool(void) {
    /* The child of fork(): its parent's guests do not exist here. */
    pthread_mutex_init(&pool_lock, NULL);
    idle = NULL;
    all_guests = NULL;
    slots = NULL; /* leaked: the records of threads that are not here */
    nslots = 0;
    hot = NULL; /* the forking thread's, likewise */
    nhot = 0;
    /* ORDER: relaxed; a hint (seam_omp.h). Only this thread is here. */
    atomic_store_explicit(&herd__threads_beside, is_guest, memory_order_relaxed);
}

/* A holder lets go of a hot guest that a pause retired (under pool_lock):
 * joined, the record is its to free; else the pausing thread frees it. */
static void let_go(guest *g) {
    if (g->joined)
        free(g);
    else
        g->dropped = 1;
}

/* A thread that had hot guests exits: they become pool guests (one still
 * running a member goes to the pool when it ends: guest_main reads `own`
 * under the lock). */
static void release_hot(void *unused) {
    (void)unused;
    pthread_mutex_lock(&pool_lock);
    for (int i = 0; i < nhot; i++) {
        guest *g = hot[i];
        if (!g)
            continue;
        if (g->retired) { /* ended by a pause */
            let_go(g);
            continue;
        }
        g->own = 0;
        g->hot = 0;
        if (!g->busy) {
            g->next = idle;
            idle = g;
        }
    }
    pthread_mutex_unlock(&pool_lock);
    free(hot);
    hot = NULL;
    nhot = 0;
}

static void make_hot_key(void) {
    if (pthread_key_create(&hot_key, release_hot))
        herd__omp_fatal("cannot create a thread key for team threads");
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void) {
    pthread_atfork(NULL, NULL, forget_pool);
}

/* The go word's next value that is not idle: GO_JOB or an exit. */
static uint32_t wait_job(guest *g) {
    omp_spin s = {0, 0, 0, 0};
    uint32_t v;
    do {
        /* ORDER: acquire; pairs with the release exchange in
         * herd__omp_guest_run() and in retire(). */
        if ((v = atomic_load_explicit(&g->go, memory_order_acquire)) != GO_IDLE)
            return v;
    } while (herd__omp_spin_step(&s));
    v = GO_IDLE;
    /* ORDER: acquire; on failure (released meanwhile) it pairs with the
     * release exchange of the waker; on success the loop below reads again. */
    if (!atomic_compare_exchange_strong_explicit(&g->go, &v, GO_ASLEEP, memory_order_acquire,
                                                 memory_order_acquire))
        return v;
    herd__omp_guest_sleeps(1);
    /* ORDER: acquire; pairs as above. */
    while ((v = atomic_load_explicit(&g->go, memory_order_acquire)) == GO_ASLEEP)
        herd__futex_wait(&g->go, GO_ASLEEP);
    herd__omp_guest_sleeps(0);
    return v;
}

static void *guest_main(void *p) {
    guest *g = p;
    is_guest = 1;
    herd__omp_guest_sleeps(0);
    for (;;) {
        uint32_t go = wait_job(g);
        if (go != GO_JOB) {            /* retired by a pause: g is not read again */
            herd__omp_guest_sleeps(1); /* no longer beside the workers */
            return NULL;
        }
        unsigned char arg[GUEST_ARG];
        memcpy(arg, g->arg, sizeof arg);
        void (*done)(void *) = g->done;
        g->body(arg);
        /* ORDER: relaxed; the pool lock publishes it to the next taker. */
        atomic_store_explicit(&g->go, GO_IDLE, memory_order_relaxed);
        pthread_mutex_lock(&pool_lock);
        g->busy = 0;
        if (!g->own) {
            g->next = idle;
            idle = g;
        }
        pthread_mutex_unlock(&pool_lock);
        if (done)
            done(arg);
    }
    return NULL;
}

#define GUEST_STACK_EXTRA (64 * 1024)
#define GUEST_GUARD (1024 * 1024)

/* Under pool_lock. */
static guest *new_guest(void) {
    guest *g = calloc(1, sizeof *g);
    if (!g)
        herd__omp_fatal("out of memory for a team thread");
    g->all = all_guests;
    all_guests = g;
    pthread_once(&atfork_once, register_atfork);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
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
    int e = pthread_create(&g->thread, &attr, guest_main, g);
    pthread_attr_destroy(&attr);
    if (e)
        herd__omp_fatal("cannot create a thread for a team member: %s", strerror(e));
    return g;
}

/* The own guest at index k of *a (*n of them so far), the array grown and
 * the guest created on demand. Under pool_lock. */
static guest *own_at(guest ***a, int *n, int k) {
    if (k >= *n) {
        int m = k + 1 > 2 * *n ? k + 1 : 2 * *n;
        guest **b = realloc(*a, (size_t)m * sizeof *b);
        if (!b)
            herd__omp_fatal("out of memory for a team thread");
        memset(b + *n, 0, (size_t)(m - *n) * sizeof *b);
        *a = b;
        *n = m;
    }
    if (!(*a)[k]) {
        (*a)[k] = new_guest(); /* it starts in wait_job, on go == 0 */
        (*a)[k]->own = 1;      /* before its first job: published by go */
    }
    return (*a)[k];
}

/* The calling thread's hot guest k; NULL when it is busy. Under pool_lock. */
static guest *take_hot(int k) {
    if (!hot) { /* its first: the key's destructor will give them to the pool */
        pthread_once(&hot_key_once, make_hot_key);
        pthread_setspecific(hot_key, (void *)1);
    }
    if (k < nhot && hot[k] && hot[k]->retired) { /* ended by a pause */
        let_go(hot[k]);
        hot[k] = NULL;
    }
    guest *g = own_at(&hot, &nhot, k);
    g->hot = 1;
    return g->busy ? NULL : g;
}

/* An idle guest, slot's own one, or the calling thread's hot one (all
 * created on demand). */
static guest *take(int slot, int hot_k) {
    pthread_mutex_lock(&pool_lock);
    guest *g = NULL;
    if (hot_k >= 0)
        g = take_hot(hot_k);
    else if (slot >= 0)
        g = own_at(&slots, &nslots, slot);
    if (!g && slot < 0) {
        g = idle;
        if (g)
            idle = g->next;
    }
    if (!g)
        g = new_guest(); /* a pool guest from now on */
    g->busy = 1;
    pthread_mutex_unlock(&pool_lock);
    return g;
}

void herd__omp_guest_run(int slot, void (*body)(void *), void (*done)(void *), const void *arg,
                         size_t size) {
    HERD_ASSERT(size <= GUEST_ARG);
    guest *g = take(slot < -1 ? -1 : slot, slot < -1 ? -2 - slot : -1);
    g->body = body;
    g->done = done;
    memcpy(g->arg, arg, size);
    /* ORDER: release; pairs with the acquire loads in wait_job(): the job
     * and everything the caller wrote before (the team) are visible. */
    if (atomic_exchange_explicit(&g->go, GO_JOB, memory_order_release) == GO_ASLEEP)
        herd__futex_wake(&g->go, 1);
}

/* Under pool_lock: g runs no member. */
static void retire(guest *g) {
    g->retired = 1;
    for (int k = 0; k < nslots; k++)
        if (slots[k] == g)
            slots[k] = NULL;
    /* ORDER: release; pairs with the acquire loads in wait_job(). The
     * guest reads the record no more after it has seen GO_EXIT, and the
     * record outlives it (freed after the join), so the wake below is on
     * live memory. */
    if (atomic_exchange_explicit(&g->go, GO_EXIT, memory_order_release) == GO_ASLEEP)
        herd__futex_wake(&g->go, 1);
}

void herd__omp_guests_retire(void) {
    pthread_mutex_lock(&pool_lock);
    size_t n = 0, cap = 0;
    guest **ended = NULL;
    for (guest *g = all_guests; g; g = g->all)
        cap += !g->busy;
    if (cap && !(ended = malloc(cap * sizeof *ended))) {
        pthread_mutex_unlock(&pool_lock); /* the guests stay; nothing is lost */
        return;
    }
    idle = NULL; /* every one of them runs no member */
    for (guest **p = &all_guests; *p;) {
        guest *g = *p;
        if (g->busy) { /* a member of another thread's team: it stays */
            p = &g->all;
            continue;
        }
        *p = g->all;
        ended[n++] = g;
        retire(g);
    }
    pthread_mutex_unlock(&pool_lock);
    /* Their ends, without the lock (a guest's thread-exit destructors take
     * it: release_hot). The thread field is written by pthread_create
     * before the guest's first job and not after. */
    for (size_t i = 0; i < n; i++)
        pthread_join(ended[i]->thread, NULL);
    pthread_mutex_lock(&pool_lock);
    for (size_t i = 0; i < n; i++) {
        guest *g = ended[i];
        if (g->hot && !g->dropped)
            g->joined = 1; /* its holder frees it (let_go) */
        else
            free(g);
    }
    pthread_mutex_unlock(&pool_lock);
    free(ended);
}
