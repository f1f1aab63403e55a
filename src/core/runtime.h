/* Core runtime internals: workers, task frames, suspended tasks (ULTs),
 * the join protocol. The design essay is docs/design/tasks.md; the protocols
 * it names (J1..J4 join, W1..W4 sleep/wake) are cited where they happen. */
#ifndef HERD_CORE_RUNTIME_H
#define HERD_CORE_RUNTIME_H

#include "core/config.h"
#include "queue/split_deque.h"
#include "topo/topo.h"
#include "ult/stack.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#if defined(HERD_DEBUG) || !defined(NDEBUG)
#include <stdio.h>
#include <stdlib.h>
#define HERD_ASSERT(c)                                                                            \
    do {                                                                                          \
        if (!(c)) {                                                                               \
            fprintf(stderr, "herd: assertion failed: %s (%s:%d)\n", #c, __FILE__, __LINE__);      \
            abort();                                                                              \
        }                                                                                         \
    } while (0)
#else
#define HERD_ASSERT(c) ((void)0)
#endif

/* Task kinds carried in a slot (0 is invalid: zeroed memory is not a task). */
enum herd__task_kind {
    /* HERD__KIND_TASK = 1 (herd/herd_fast.h): parent is the spawning frame's join */
    HERD__KIND_GROUP = HERD__KIND_TASK + 1, /* parent is a herd_group's join */
    HERD__KIND_ROOT,     /* from herd_run(); parent is an external join */
};

/* The waiter of a join on which a kernel thread sleeps (herd_run): it
 * sleeps on the record's futex word. */
#define HERD__WAITER_EXTERNAL ((herd__ult *)(uintptr_t)1)

/* herd__join and herd__frame are defined in herd/herd_fast.h (the inline
 * paths create frames). J1..J4 in docs/design/tasks.md. */

/* A user-level thread: a stack with a scheduler loop at its bottom and maybe
 * a task above it. Owner: the worker running it; while suspended, whoever
 * holds it in a wait list or ready queue. */
typedef struct herd__ult {
    herd__stack *stack;
    herd__frame *frame;   /* innermost frame while suspended */
    struct herd__ult *next; /* wait-list / ready-queue link */
} herd__ult;

typedef struct herd__spin {
    _Atomic int v;
} herd__spin;
void herd__spin_lock(herd__spin *l);
void herd__spin_unlock(herd__spin *l);

/* A FIFO of ready ULTs guarded by a spinlock; any worker may take from it. */
typedef struct herd__readyq {
    herd__spin lock;
    herd__ult *head, *tail;
    _Atomic long size; /* ORDER: relaxed, an emptiness hint for thieves */
} herd__readyq;

struct herd__rt;

/* Per-worker counters: written only by the owner (load+store, no lock
 * prefix), read by anyone through relaxed atomics. */
typedef struct herd__counters {
    _Atomic uint64_t roots, steals, steal_attempts, failed_steals, blocks, stacks_allocated,
        idle_ns;
} herd__counters;

#define HERD__COUNT(w, field)                                                                     \
    atomic_store_explicit(&(w)->stats.field,                                                      \
                          atomic_load_explicit(&(w)->stats.field, memory_order_relaxed) + 1,      \
                          memory_order_relaxed)

/* What a steal or a queue hands back: a queued task, or a suspended ULT. */
typedef struct herd__work {
    herd__ult *ult; /* non-NULL: resume it */
    herd__taskcopy task;
    /* Filled by a scheduler's steal (read by the trace): the worker stolen
     * from (-1 when the work came from no worker's queue), and how many
     * tasks the steal moved, the one handed back included. */
    int victim;
    int taken;
} herd__work;

typedef struct herd__worker {
    herd__hot hot;            /* first: the inline paths see it as herd__tls */
    herd__readyq ready;       /* resumed ULTs */
    herd__ult *cur;           /* ULT running on this worker */
    /* Action to run right after the next context switch lands (J2, W*). */
    void (*post)(struct herd__worker *w, herd__ult *u, void *arg);
    herd__ult *post_ult;
    void *post_arg;
    herd__ult *cache;         /* free stacks (as ULT records), owner only */
    int ncache;
    void *native_sp;          /* the pthread's own context, for shutdown */
    struct herd__rt *rt;
    int id;
    int pu;
    uint64_t rng;
    unsigned tick;            /* scheduling decisions, for the fairness check */
    int yielded;              /* a task yielded: others go first once */
    void *altstack;
    pthread_t thread;
    void *tsan_native;        /* sanitizer view of the pthread's own stack */
    void *native_low;
    size_t native_size;
    herd__counters stats;
    struct herd__trace_buf *trace; /* HERD_TRACE: owner-only events, NULL when off (trace.h) */
} __attribute__((aligned(64))) herd__worker;

/* The scheduler seam: a table of operations chosen at start-up. The worker
 * loop (core/worker.c) runs its own deque, its ready queue and the injector
 * itself, and asks the scheduler where else to look. */
typedef struct herd__sched_ops {
    const char *name;
    int (*init)(struct herd__rt *rt);
    void (*fini)(struct herd__rt *rt);
    /* Look for work on other workers; 1 and *out filled on success,
     * out->victim and out->taken included. */
    int (*steal)(herd__worker *w, herd__work *out);
    /* One line describing w's victim order (for `herd topo`). */
    void (*describe_victims)(struct herd__rt *rt, int worker, char *buf, size_t len);
} herd__sched_ops;

const herd__sched_ops *herd__sched_find(const char *name);

typedef struct herd__inject {
    struct herd__inject *next;
    herd__taskcopy task;
} herd__inject;

typedef struct herd__rt {
    herd__settings set;
    herd__topo topo;
    herd__stack_conf stacks;
    const herd__sched_ops *sched;
    int nworkers;
    herd__worker *workers;
    int *pu_of_worker;
    /* Injector: roots from herd_run(), taken by any worker. */
    herd__spin inject_lock;
    herd__inject *inject_head, *inject_tail;
    _Atomic long inject_size;
    /* W1..W4: sleeping workers. */
    _Atomic int sleepers;
    _Atomic uint32_t wake_seq;
    _Atomic int closing;  /* herd_stop() began: new herd_run() calls are refused */
    _Atomic int stopping; /* no run is left: idle workers exit */
    uint64_t start_ns;
} herd__rt;

extern herd__rt *herd__rt_global;

/* The worker running the caller, or NULL. Read it again after anything that
 * may suspend the task: it may resume on another worker. */
static inline herd__worker *herd__self(void) { return (herd__worker *)(void *)herd__tls; }

uint64_t herd__now_ns(void);

/* core/task.c */
void herd__run_root(herd__worker *w, herd__taskcopy *t);
void herd__join_done(herd__join *j);
void herd__frame_wait(herd__frame *f);

/* core/ult.c: suspending and resuming tasks. */
/* Suspend the calling task. `arm` runs on the worker's next stack once the
 * caller's context is saved (so a waker can never resume a half-saved
 * context); it must arrange for herd__ult_ready(u) to be called eventually. */
void herd__block(void (*arm)(herd__worker *w, herd__ult *u, void *arg), void *arg);
/* Make a suspended ULT runnable (on the calling worker's ready queue). */
void herd__ult_ready(herd__ult *u);
/* Worker start-up / shutdown on the worker's own thread. */
void herd__worker_enter(herd__worker *w);
herd__ult *herd__ult_get(herd__worker *w);
void herd__ult_put(herd__worker *w, herd__ult *u);
void herd__switch(herd__worker *w, herd__ult *from, herd__ult *to);
void herd__readyq_push(herd__readyq *rq, herd__ult *u);
void herd__resume_from_loop(herd__worker *w, herd__ult *u) __attribute__((noreturn));
void herd__worker_exit(herd__worker *w) __attribute__((noreturn));
void herd__worker_free_cache(herd__worker *w);
herd__ult *herd__readyq_pop(herd__readyq *rq);

/* core/worker.c */
void herd__sched_loop(herd__worker *w) __attribute__((noreturn));
void herd__wake_one(herd__rt *rt);
void herd__wake_all(herd__rt *rt);

/* core/overflow.c */
int herd__overflow_install(void);
int herd__overflow_thread_init(herd__worker *w);
void herd__overflow_thread_fini(herd__worker *w);
void herd__overflow_report_canary(herd__worker *w, herd__ult *u) __attribute__((noreturn));

static inline uint64_t herd__rand(herd__worker *w) {
    /* xorshift64*: per-worker, owner only. */
    uint64_t x = w->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    w->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

#endif
