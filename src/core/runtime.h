/* Core runtime internals: workers, task frames, suspended tasks (ULTs),
 * the join protocol. The design essay is docs/design/tasks.md; the protocols
 * it names (J1..J4 join, W1..W4 sleep/wake) are cited where they happen. */
#ifndef HERD_CORE_RUNTIME_H
#define HERD_CORE_RUNTIME_H

#include "arch/assert.h"
#include "arch/os.h"
#include "arch/spin.h"
#include "core/config.h"
#include "core/seam_omp.h"
#include "core/wait.h"
#include "queue/split_deque.h"
#include "queue/task_queue.h"
#include "sched/sched.h"
#include "topo/topo.h"
#include "ult/stack.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The waiter of a join on which a kernel thread sleeps (herd_run): it
 * sleeps on the record's futex word. */
#define HERD__WAITER_EXTERNAL ((herd__ult *)(uintptr_t)1)

/* herd__join and herd__frame are defined in herd/herd_fast.h (the inline
 * paths create frames). J1..J4 in docs/design/tasks.md. */

/* What a suspended ULT waits for, written by herd__block_on before the
 * switch and read by the watchdog thread: level 0 is the primitive that
 * suspended it, levels 1.. the enclosing constructs (ctx), innermost
 * first; a level of kind NONE ends the list. */
#define HERD__WAIT_LEVELS 4
typedef struct herd__waitrec {
    _Atomic int kind[HERD__WAIT_LEVELS];
    _Atomic(const void *) obj[HERD__WAIT_LEVELS];
    _Atomic(void *) ra[HERD__WAIT_LEVELS];
    _Atomic(void *) fn; /* the innermost task's function */
    _Atomic int worker; /* the worker it suspended on */
} herd__waitrec;

/* A user-level thread: a stack with a scheduler loop at its bottom and maybe
 * a task above it. Owner: the worker running it; while suspended, whoever
 * holds it in a wait list or ready queue. */
typedef struct herd__ult {
    herd__stack *stack;
    herd__frame *frame;       /* innermost frame while suspended */
    struct herd__ult *next;   /* wait-list / ready-queue link */
    struct herd__ult *prev;   /* ready-queue link (the queue is double-ended) */
    herd__frame *first_level; /* while suspended: the worker's first_level (see there) */
    /* Tied mode (rt->tied): the worker this ULT suspended on; it resumes
     * only there (herd__ult_ready puts it on that worker's `home` queue).
     * NULL: any worker may resume it. Set by herd__block, cleared on reuse. */
    struct herd__worker *home;
    herd__wait_ctx *ctx; /* owner only: the constructs its task is inside */
    herd__waitrec wait;  /* while suspended: what for (core/watchdog.c) */
    /* Every ULT record of the runtime, under rt->ults_lock (watchdog.c). */
    struct herd__ult *all_next, *all_prev;
    /* Owner only: 1 once a task ran on this stack since it was last
     * recycled. herd__ult_put gives back the deep pages of such stacks only:
     * one that ran nothing but the scheduler loop (every yield takes one)
     * never went deep, and its madvise would be a system call per yield. */
    int ran_task;
    /* Owner only: suspensions other than a work-first spawn's (herd__block
     * and herd__block_on count; herd__block_spawn does not). K3 compares it
     * across a child's run. */
    uint32_t nsuspend;
} herd__ult;

/* Ready ULTs guarded by a spinlock; any worker may take from it. Resumed
 * tasks join at the back and the owner takes from the front (oldest first);
 * a work-first continuation joins at the front, so the owner resumes it as
 * soon as the child returns; thieves take from the back. */
typedef struct herd__readyq {
    herd__spin lock;
    herd__ult *head, *tail;
    _Atomic long size; /* ORDER: relaxed, an emptiness hint for thieves */
} herd__readyq;

struct herd__rt;

/* Per-worker counters: written only by the owner (load+store, no lock
 * prefix), read by anyone through relaxed atomics. */
typedef struct herd__counters {
    _Atomic uint64_t roots, steals, steals_local, steals_remote, stolen_tasks, max_chunk,
        steal_attempts, failed_steals, blocks, stacks_allocated, rescues, idle_ns;
} herd__counters;

#define HERD__ADD(w, field, n)                                                                     \
    atomic_store_explicit(&(w)->stats.field,                                                       \
                          atomic_load_explicit(&(w)->stats.field, memory_order_relaxed) + (n),     \
                          memory_order_relaxed)
#define HERD__COUNT(w, field) HERD__ADD(w, field, 1)

/* A worker's mailbox: one task placed on it alone (herd__group_place_worker),
 * on a cache line of its own, so that handing a team member to an idle
 * worker moves one line and takes no lock and no allocation (the placement
 * queue `mine` holds the rest; docs/design/openmp.md, "Core mechanisms" 3).
 * Protocol (core/task.c, X1..X3), with one placer: tasks on worker 0 (in
 * adopt mode the region's encountering task) place, one at a time:
 *  X1 the placer sees EMPTY (acquire: the last taker's copy-out is done),
 *     writes the task, then stores FULL (release);
 *  X2 the owner sees FULL (acquire), copies the task out, and stores EMPTY
 *     (release);
 *  X3 a placer that finds the box FULL queues on `mine` instead. */
#define HERD__BOX_ARG 40
enum { HERD__BOX_EMPTY = 0, HERD__BOX_FULL };
typedef struct herd__box {
    _Atomic uint32_t state; /* HERD__BOX_* */
    uint16_t size, kind;
    herd_fn fn;
    void *parent;
    unsigned char arg[HERD__BOX_ARG] __attribute__((aligned(8)));
} __attribute__((aligned(64))) herd__box;

/* A fork: one task on each worker of a range at once, published in one
 * cache line that every worker reads (herd__fork), so that handing a team
 * to its workers costs the placer one line however large the team
 * (placing members box by box cost a line each: 85 ns a member on the
 * 16-core device, EPCC PARALLEL 2.4 us at 16 threads). One placer, a task
 * on worker 0, and a sequence lock:
 *  F1 the placer stores an odd seq (relaxed) and a release fence, writes
 *     the range and the task, then stores the next even seq (release);
 *  F2 a worker reads an even seq it has not seen (acquire), the range,
 *     then (acquire fence) seq again: equal, the range is that fork's. It
 *     records seq as seen, and a worker in the range copies the task out.
 *  F3 the placer forks again only after herd__fork_join: no worker of a
 *     range reads the task while the next fork writes it; workers outside
 *     read only the range, which F2 validates.
 * A 64-bit seq does not wrap: a worker parked for years still knows a new
 * fork from the last one it saw.
 *
 * The join: each task, as it ends, exchanges its worker's `done` word for
 * seq + 1 (its own line: the placer reads the words side by side, where a
 * shared count took one transfer per task, in turn: 1.15 us to join 15 at
 * 16 threads).
 *  F4 the placer spins until every word of the range reads seq + 1
 *     (acquire: the tasks' writes are visible).
 *  F5 to block instead, it sets `left` to the range's size + 1 (a guard),
 *     CASes each word not yet seq + 1 to seq (watched; a failed CAS means
 *     done), subtracts the done ones, and in its arm stores itself as the
 *     waiter and removes the guard. A task whose exchange returns seq
 *     decrements `left`; whoever takes it to zero readies the placer. */
#define HERD__FORK_ARG 24
typedef struct herd__fork_rec {
    _Atomic uint64_t seq;   /* 2 x forks published; odd while one is written */
    _Atomic uint64_t range; /* first << 32 | count */
    herd_fn fn;
    uint16_t size;
    unsigned char arg[HERD__FORK_ARG] __attribute__((aligned(8)));
} __attribute__((aligned(64))) herd__fork_rec;
_Static_assert(sizeof(herd__fork_rec) == 64, "a fork is one cache line");

/* F5's words, on a line of their own (written only when the placer blocks). */
typedef struct herd__fork_wait {
    _Atomic int64_t left;
    _Atomic(struct herd__ult *) waiter;
} __attribute__((aligned(64))) herd__fork_wait;

/* A worker's fork words, on a line of their own. */
typedef struct herd__fork_self {
    _Atomic uint64_t seen; /* the last fork it looked at (F2; owner writes) */
    /* The placer's own copies of its last fork (worker 0's, owner only): a
     * load of the shared seq missed the cache at every fork (each reader
     * took the dirty line away whole, and the placer's load and then its
     * store paid a transfer each: 0.05 us a region on 2 threads). */
    uint64_t placed;
    int first, count;
    /* seq + 1 once its task of fork seq ended; seq: watched (F4, F5). On
     * a line of its own: the placer polls it, and `seen` beside it made
     * the owner's next store of seen pay a transfer too. */
    _Alignas(64) _Atomic uint64_t done;
} __attribute__((aligned(64))) herd__fork_self;

typedef struct herd__worker {
    herd__hot hot; /* first: the inline paths see it as herd__tls */
    int id;        /* second: herd__self_id() reads it (core/seam_omp.h) */
    /* third: the scheduler's record for this worker (sched/sched.h), in
     * rt->sched_env.workers; herd__self_queued_reach() reads its shares_into. */
    herd__sched_worker *sched_self;
    /* fourth: a task was queued since the deque was last found empty
     * (herd__note_queued; core/rescue.h, R3, R4). */
    _Atomic int queued_note;
    herd__readyq ready;   /* resumed ULTs */
    herd__readyq home;    /* resumed ULTs homed here (tied mode): thieves never take them */
    herd__tq mine;        /* tasks placed on this worker only (herd__group_place_worker) */
    herd__box box;        /* ... the first of them, when it was free */
    herd__fork_self fork; /* F1..F5 */
    /* Adopt mode, worker 0: the adopting thread's own stack as a ULT. */
    herd__ult native_ult;
    herd__stack native_stack;
    herd__ult *cur; /* ULT running on this worker */
    /* Action to run right after the next context switch lands (J2, W*). */
    void (*post)(struct herd__worker *w, herd__ult *u, void *arg);
    herd__ult *post_ult;
    void *post_arg;
    herd__ult *cache; /* free stacks (as ULT records), owner only */
    int ncache;
    void *native_sp; /* the pthread's own context, for shutdown */
    struct herd__rt *rt;
    int pu;
    int shepherd;          /* index into rt->shepherds */
    _Atomic int searching; /* 1 while it looks at shared work (G1, core/worker.c) */
    /* The frame of the herd_run root running on this worker, while it is
     * the innermost frame and the scheduler places first-level tasks
     * (place_first_level); NULL otherwise. While set, hot.spawn_limit is 0
     * so that every herd_spawn takes the slow path; spawn_limit_open is the
     * value to restore. Owner only; saved in the ULT while it is
     * suspended (core/ult.c). */
    herd__frame *first_level;
    uint32_t spawn_limit_open;
    unsigned tick; /* scheduling decisions, for the fairness check */
    int yielded;   /* a task yielded: others go first once */
    void *altstack;
    pthread_t thread;
    /* core/rescue.h: the thread running the worker now (R1, 0: none), when
     * a thief last poked it (R2), and owner-only: nonzero while a step of
     * the deque that calls out of herd's code is half done (R5). */
    _Atomic pid_t tid;
    _Atomic uint64_t poked_ns;
    volatile int rescue_off;
    void *tsan_native; /* sanitizer view of the pthread's own stack */
    void *native_low;
    size_t native_size;
    herd__counters stats;
    struct herd__trace_buf *trace; /* HERD_TRACE: owner-only events, NULL when off (trace.h) */
} __attribute__((aligned(4096))) herd__worker; /* a page each: see worker_main() */
_Static_assert(offsetof(herd__worker, hot) == 0 &&
                   offsetof(herd__worker, id) == offsetof(herd__worker_head, id) &&
                   offsetof(herd__worker, sched_self) == offsetof(herd__worker_head, sched_self) &&
                   offsetof(herd__worker, queued_note) == offsetof(herd__worker_head, queued_note),
               "herd__self(), herd__self_id() and herd__self_queued_reach() read herd__tls "
               "(core/seam_omp.h)");

/* Debug builds: the calling thread runs worker w, whose owner-only state is
 * then its alone. herd__tls says which worker a thread runs: set by the
 * worker's pthread, or in adopt mode by the thread that holds worker 0 now
 * (core/adopt.c); NULL in a thread that runs none. */
#define HERD_ASSERT_OWNER(w) HERD_ASSERT(herd__tls == &(w)->hot)

typedef struct herd__inject_node {
    struct herd__inject_node *next;
    herd__taskcopy task;
} herd__inject_node;

/* core/runtime.c: the injector, which every worker takes from, from any
 * thread: queue fn(copy of arg) as a task of kind `kind` (herd_run's root,
 * herd__inject_group's task) whose report goes to parent, and wake a
 * worker (W3). It is a run, counted until herd__run_end (the caller's
 * report: herd_stop waits for it). 0, or HERD_EINVAL, HERD_ESTATE (herd
 * is not started or stopping), HERD_ENOMEM: nothing queued, nothing
 * counted. */
int herd__inject(herd_fn fn, const void *arg, size_t arg_size, uint16_t kind, void *parent);
void herd__run_end(void);

typedef struct herd__rt {
    herd__settings set;
    herd__topo topo;
    herd__stack_conf stacks;
    /* Shared pool of free stacks behind the per-worker caches (core/ult.c). */
    herd__spin pool_lock;
    herd__ult *pool;
    _Atomic int npool;
    const herd__sched_ops *sched;
    herd__sched_env sched_env; /* what the scheduler sees (sched/sched.h) */
    herd__level shepherd_level;
    int nshepherds;
    herd__shepherd *shepherds;
    int nworkers;
    herd__worker *workers;
    int *pu_of_worker;
    /* Injector: roots from herd_run(), taken by any worker. */
    herd__spin inject_lock;
    herd__inject_node *inject_head, *inject_tail;
    _Atomic long inject_size;
    /* W1..W4: sleeping workers. */
    uint64_t spin_ns;   /* HERD_IDLE=adaptive: search this long, then sleep */
    int cpu_per_worker; /* the process may use at least as many CPUs as workers */
    int spare_cpus;     /* CPUs of the process beyond the workers' (0 when oversubscribed) */
    /* The words idle workers and wakers change all the time (W1..W3), on a
     * cache line of their own: beside them, the adopt flags that every
     * OpenMP region reads and the `adopted` it CASes missed the cache each
     * time (0.25 us per region on 2 threads, EPCC PARALLEL). */
    _Alignas(64) _Atomic int sleepers;
    _Atomic uint32_t wake_seq;
    herd__fork_rec fork;       /* F1..F3: its own line, read by every idle worker */
    herd__fork_wait fork_join; /* F5 */
    /* herd__start_ex flags (docs/design/openmp.md, "Core mechanisms"). */
    _Alignas(64) int adopt; /* worker 0 has no pthread: a caller lends its thread */
    int tied;               /* suspended ULTs resume on the worker they suspended on */
    int serve_limits;       /* herd__serve_hold may limit serving (HERD__START_SERVING) */
    int rescue;             /* thieves may poke a stuck owner (HERD__START_RESCUE) */
    /* Apart from the flags above, which searching workers read on every
     * attempt (shared_begin): the CAS and the release store of each
     * OpenMP region took their line away (0.1 us per region, 2 threads). */
    _Alignas(64) _Atomic int adopted; /* 1 while a thread holds worker 0 (adopt mode) */
    /* The thread pinned to worker 0's PU as its adopter (0: none) and the
     * mask it had before, restored when another thread adopts or at
     * herd_stop (core/adopt.c). Written only by the adopting thread while it
     * holds `adopted`, and by herd_stop after the last holder left. */
    pid_t adopt_pinned_tid;
    cpu_set_t adopt_saved_mask;
    _Alignas(64) _Atomic int closing; /* herd_stop() began: new herd_run() calls are refused */
    _Atomic int stopping;             /* no run is left: idle workers exit */
    uint64_t start_ns;
    /* Mapped policies (HERD_BIND static/bll/xll) and HERD_WORKERS=auto: the
     * machine-wide registry (src/place/), else NULL. `holding`: workers of
     * this runtime may have entries in it; herd__rt_free returns them. */
    struct herd__reg *reg;
    int holding;
    /* Mapped start-up (docs/design/registry.md, P1..P4): workers that have
     * chosen their PU, whether one failed, and the gate they wait at until
     * the schedulers are built on their choices. Written by workers and the
     * starting thread; see worker_main() and herd_start(). */
    _Atomic int placed;
    _Atomic int place_failed;
    _Atomic int gate; /* HERD__GATE_* */
    /* Serving workers (core/worker.c, G1..G4): only workers with id below
     * `serving` take shared work; the others park on serve_seq. */
    _Atomic int serving;
    _Atomic uint32_t serve_seq;
    int serve_asym; /* G1/G2's fences: 1, the closer's membarrier alone; 0, a fence each side */
    /* G4: serve_lock orders every change of `serving` but the one at stop;
     * serve_held (under it) is 1 while an outermost team holds the limit. */
    herd__spin serve_lock;
    int serve_held;
    /* Every allocated ULT record (not the workers' native_ult), so that
     * the watchdog can find the suspended ones (core/watchdog.c). */
    herd__spin ults_lock;
    herd__ult *ults;
} herd__rt;

extern herd__rt *herd__rt_global; /* herd__rt_started() (core/seam_omp.h) reads it */

#define HERD__GATE_CLOSED 0 /* zeroed memory: closed */
#define HERD__GATE_OPEN 1
#define HERD__GATE_ABORT 2

/* core/task.c */
void herd__run_root(herd__worker *w, herd__taskcopy *t);
/* worker.c: t came from a scheduler's shared queue (mts, central); if
 * another worker queued it there (t->from), w counts it as a steal from
 * that worker, as a deque steal is counted. */
void herd__count_shared_take(herd__worker *w, const herd__taskcopy *t);

/* Make f the worker's first-level frame (NULL: none), closing or reopening
 * herd_spawn's inline path to match. */
static inline void herd__set_first_level(herd__worker *w, herd__frame *f) {
    HERD_ASSERT_OWNER(w);
    w->first_level = f;
    w->hot.spawn_limit = f ? 0 : w->spawn_limit_open;
}
void herd__join_done(herd__join *j);

/* core/adopt.c: give the last adopter back its own CPU mask (herd_stop). */
void herd__adopt_unpin(herd__rt *rt);

/* core/ult.c: suspending and resuming tasks. */
/* Worker start-up / shutdown on the worker's own thread. */
void herd__worker_enter(herd__worker *w);
herd__ult *herd__ult_get(herd__worker *w);
void herd__ult_put(herd__worker *w, herd__ult *u);
void herd__switch(herd__worker *w, herd__ult *from, herd__ult *to);
/* u is now w's running ULT (w->cur, and the inline paths' stack limit). */
void herd__ult_set_cur(herd__worker *w, herd__ult *u);
void herd__readyq_push(herd__readyq *rq, herd__ult *u);
void herd__readyq_push_front(herd__readyq *rq, herd__ult *u);
void herd__resume_from_loop(herd__worker *w, herd__ult *u) __attribute__((noreturn));
/* A work-first spawn (task.c, K1..K4). herd__ult_start: a ULT to run the
 * child on, with `reserve` bytes at the top of its stack (at *area, 64-byte
 * aligned) for the caller to fill; the process ends when no stack can be
 * had, as for any suspension. herd__spawn_switch: the current ULT suspends
 * (as herd__block, but its nsuspend stays) and next runs body(NULL) below
 * area; it returns when the current ULT is resumed. body starts with
 * herd__ult_entered() (the sanitizers' fiber bookkeeping) and never
 * returns, except right after herd__spawn_return(w, parent): the parent,
 * whose continuation body took back (K3), resumes at once on w, and this
 * ULT goes back to w's cache. On some builds herd__spawn_return does not
 * return (a switch; ult.c, SPAWN_CALLS). */
herd__ult *herd__ult_start(herd__worker *w, size_t reserve, void **area);
void herd__ult_entered(void);
void herd__spawn_switch(herd__ult *next, void *area, void (*body)(void *));
void herd__spawn_return(herd__worker *w, herd__ult *parent);
void herd__worker_exit(herd__worker *w) __attribute__((noreturn));
void herd__worker_free_cache(herd__worker *w);
void herd__ult_pool_free(herd__rt *rt);
herd__ult *herd__readyq_pop(herd__readyq *rq);
herd__ult *herd__readyq_pop_back(herd__readyq *rq);

/* core/worker.c */
void herd__sched_loop(herd__worker *w) __attribute__((noreturn));
/* Run the injector's tasks on w until it is empty. Context: a task on w. */
void herd__run_injected(herd__worker *w);
/* herd__wake_one and herd__wake_for_shepherd: sched/sched.h. */
void herd__wake_all(herd__rt *rt);
/* A ULT was readied on w's ready queue (not homed): wake whoever may take
 * it (one sleeper, or under HERD__SCHED_SHEPHERD_READY every sleeper). */
void herd__wake_for_ready(herd__worker *w);

/* Wake worker w, which may sleep (W3 for work only w may take). */
void herd__wake_worker(herd__worker *w);
/* The same for work placed at once on workers up to max_id: one fence. */
void herd__wake_workers(herd__rt *rt, int max_id);
/* At start: register for the closer's asymmetric fence (membarrier) and
 * set rt->serve_asym; where it is not available (an old kernel, a
 * sandbox, TSan, which does not model it) both sides use fences. */
void herd__serve_init(herd__rt *rt);
/* G4 (core/worker.c): every worker serves again unless an OpenMP team holds
 * the limit (core/seam_omp.h, herd__serve_hold); for work from outside. */
void herd__serve_unheld(herd__rt *rt);

/* core/runtime.c: build the runtime without starting workers (herd_start,
 * and `herd topo`, which prints what a start would do), and free it. */
int herd__rt_build(herd__rt *rt, const herd_config *cfg);
void herd__rt_free(herd__rt *rt);

/* core/task.c: spawn a task of group g on shepherd's placement queue, run
 * only by that shepherd's workers (herd_loop's HERD_LOOP_SHEPHERDS).
 * Returns as herd_group_spawn, and HERD_EINVAL for a bad shepherd. */
int herd__group_place(herd_group *g, int shepherd, herd_fn fn, const void *arg, size_t arg_size);
/* The same on one worker's own box or queue: only that worker runs it (it
 * starts on that worker's kernel thread). HERD_EINVAL for a bad worker.
 * Context: a task on worker 0, the only placer (herd__box, X1). */
int herd__group_place_worker(herd_group *g, int worker, herd_fn fn, const void *arg,
                             size_t arg_size);

/* Does a fork's range (first << 32 | count) hold worker id? */
static inline int herd__fork_covers(uint64_t range, int id) {
    return (uint32_t)id - (uint32_t)(range >> 32) < (uint32_t)range;
}

/* A fork w has not looked at may hold a task for w (F2; odd: one is being
 * written, look again). A hint. Context: w's owner. */
static inline int herd__fork_pending(herd__worker *w) {
    HERD_ASSERT_OWNER(w);
    herd__fork_rec *f = &w->rt->fork;
    /* ORDER: acquire; a sleeper that reads the new seq reads its range
     * (W2: otherwise the placer's wake-up after F1 finds it counted).
     * `seen` is w's own word; the range a hint that take_fork validates. */
    uint64_t s = atomic_load_explicit(&f->seq, memory_order_acquire);
    if (s == atomic_load_explicit(&w->fork.seen, memory_order_relaxed))
        return 0;
    uint64_t r = atomic_load_explicit(&f->range, memory_order_relaxed);
    return (s & 1) || herd__fork_covers(r, w->id);
}

/* Tasks placed on w alone may wait: in its box or on its queue, or in a
 * fork. Context: w's owner. */
static inline int herd__placed_pending(herd__worker *w) {
    HERD_ASSERT_OWNER(w);
    /* ORDER: relaxed; a hint, the taker's acquire load follows (X2). */
    return atomic_load_explicit(&w->box.state, memory_order_relaxed) == HERD__BOX_FULL ||
           herd__fork_pending(w) || herd__tq_size(&w->mine) != 0;
}
/* Work only w may take arrived: placed on it, or a homed ULT resumed. */
static inline int herd__own_work_arrived(herd__worker *w) {
    /* ORDER: relaxed; hints, the takes that follow synchronise. */
    return herd__placed_pending(w) || atomic_load_explicit(&w->home.size, memory_order_relaxed);
}
/* Take a task placed on w alone: a fork's (F2), its box (X2), then its
 * queue. Context: w's owner. */
int herd__take_placed_mine(herd__worker *w, herd__work *out);

/* core/overflow.c */
int herd__overflow_install(void);
int herd__overflow_thread_init(herd__worker *w);
void herd__overflow_thread_fini(herd__worker *w);
/* The calling thread is about to lend itself as a worker: give it an
 * alternate signal stack if it has none (overflow reports need one). */
void herd__overflow_adopter_init(void);
void herd__overflow_report_canary(herd__worker *w, herd__ult *u) __attribute__((noreturn));

#endif
