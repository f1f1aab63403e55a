/* The scheduler seam (docs/design/scheduler-seam.md): what core calls of a
 * scheduler, and all that a scheduler may use of core. Core includes this
 * header; a scheduler includes nothing of core. A scheduler works on
 * records of its own, which core fills before its init:
 *  - herd__sched_env, one per runtime: the workers, shepherds, topology
 *    and settings it reads, and its own state;
 *  - herd__sched_worker, one per worker: the worker's index, shepherd and
 *    deque, its steal counters, and the scheduler's per-worker state.
 * Core's workers and runtime are opaque here; the few services a scheduler
 * needs of them (wake-ups, a worker's resumed tasks) are the functions
 * declared at the end, which core defines. */
#ifndef HERD_SCHED_SCHED_H
#define HERD_SCHED_SCHED_H

#include "herd/herd.h"
#include "queue/split_deque.h"
#include "queue/task_queue.h"
#include "topo/topo.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct herd__worker; /* core's worker (core/runtime.h) */
struct herd__rt;     /* core's runtime */
struct herd__ult;    /* a suspended task */

/* Task kinds carried in a slot (0 is invalid: zeroed memory is not a task). */
enum herd__task_kind {
    /* HERD__KIND_TASK = 1 (herd/herd_fast.h): parent is the spawning frame's join */
    HERD__KIND_GROUP = HERD__KIND_TASK + 1, /* parent is a herd_group's join */
    HERD__KIND_ROOT,                        /* from herd_run(); parent is an external join */
    HERD__KIND_FORK, /* a fork's (herd__fork, F1..F5); parent is the worker that took it */
    /* HERD_SPAWN=work-first: a parent's continuation, on its worker's deque
     * while the child runs (K1..K4, core/task.c); parent is the suspended
     * ULT, which whoever takes the slot resumes. */
    HERD__KIND_CONT,
    /* From herd__inject_group: queued on the injector by a thread that may
     * run no worker; parent is a herd_group's join (core/task.c). */
    HERD__KIND_INJECTED,
};

/* How much one steal takes (HERD_STEAL). DEFAULT: the scheduler's own
 * amount (one task; for mts, one per worker of the thief's shepherd). */
typedef enum herd__steal_amount {
    HERD__TAKE_DEFAULT = 0,
    HERD__TAKE_ONE,
    HERD__TAKE_HALF,  /* half of what the victim has public, rounded up */
    HERD__TAKE_CHUNK, /* steal_chunk tasks, or what there is */
} herd__steal_amount;

/* What a queue or a steal hands back: a queued task, or a suspended ULT.
 * A steal also says where it came from and how much it moved. */
typedef struct herd__work {
    struct herd__ult *ult; /* non-NULL: resume it */
    int victim;            /* steals: the victim worker, -1 for a shepherd queue */
    int victim_shepherd;   /* steals: the victim's shepherd */
    uint32_t ntasks;       /* steals: tasks moved, this one included */
    herd__taskcopy task;
} herd__work;

/* The suspended ULT a deque slot continues (HERD__KIND_CONT), else NULL. */
static inline struct herd__ult *herd__cont_ult(const herd__taskcopy *t) {
    return t->kind == HERD__KIND_CONT ? (struct herd__ult *)t->parent : NULL;
}

/* A group of workers that share a cache (HERD_SHEPHERD's level): the unit
 * of mts's shared queue and of local vs remote steal counts. */
typedef struct herd__shepherd {
    herd__tq placed; /* tasks placed on this shepherd (HERD_LOOP_SHEPHERDS) */
    int nworkers;
    int *workers; /* worker ids, ascending */
    int domain;   /* index of its domain at the shepherd level */
} herd__shepherd;

struct herd__sched_ops;

/* What a scheduler sees of the runtime. Core fills everything above
 * `data` before the scheduler's init (herd__sched_start); read-only after. */
typedef struct herd__sched_env {
    struct herd__rt *rt; /* for the services below */
    int nworkers;
    int nshepherds;
    const herd__shepherd *shepherds;
    const int *pu_of_worker;
    const herd__topo *topo;
    herd__steal_amount steal; /* HERD_STEAL */
    int steal_chunk;
    /* Workers 0..serving-1 take shared work (G1, core/worker.c). */
    _Atomic int *serving;
    /* How long an idle worker searches in vain before it rescues a stuck
     * worker's tasks (HERD__RESCUE_AFTER_NS, core/rescue.h); 0: it never
     * does (rescues are for runtimes started with HERD__START_RESCUE, the
     * OpenMP layer's). */
    uint64_t rescue_after_ns;
    struct herd__sched_worker *workers; /* [nworkers], allocated by core */
    /* The scheduler's own. */
    void *data;
    int ready; /* init succeeded: herd__sched_stop runs fini */
} herd__sched_env;

/* A scheduler's record for one worker (the handle its operations take).
 * Core fills the first part before the scheduler's init; the rest is the
 * scheduler's, zeroed. One cache line of each part: the scheduler's owner
 * writes rr and rng at every placement or victim choice. */
typedef struct herd__sched_worker {
    herd__sched_env *env;
    struct herd__worker *core; /* for the services below */
    herd__sdq *q;              /* the worker's split deque */
    int id;
    int shepherd; /* index into env->shepherds */
    /* Steal counters (core's statistics): owner writes, anyone reads. */
    _Atomic uint64_t *attempts, *failed;
    /* The scheduler's part. Victim order (NULL for random and queue
     * schedulers): order[0..norder), grouped in classes of equal distance;
     * class_end[c] is one past the last index of class c. */
    _Alignas(64) int *order;
    int norder;
    int *class_end;
    int nclasses;
    unsigned rr;  /* round-robin cursor (fifo and lifo deal, hier places); owner only */
    uint64_t rng; /* herd__rand's state; owner only */
    /* The queues the deque's tasks go to when asked (`share`), nshares_into
     * of them in a row from shares_into: mts, its shepherd's; central, the
     * one; lifo and fifo, every shepherd's (the deal's); NULL and 0
     * otherwise. The OpenMP creation throttle counts them (core/seam_omp.h). */
    herd__tq *shares_into;
    int nshares_into;
    /* The queue rescue of fifo and lifo (sched/queues.c), owner only: the
     * queue watched plus one (0: none), its `taken` when the watch began,
     * and when. */
    int watch_q;
    uint32_t watch_taken;
    uint64_t watch_since;
} __attribute__((aligned(64))) herd__sched_worker;

/* Owner-only counter bump: a plain load and store, atomic so readers may
 * race. ORDER: relaxed both; a reader (herd_stats) wants a recent value,
 * nothing it orders. */
static inline void herd__sched_count(_Atomic uint64_t *c) {
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

static inline uint64_t herd__rand(herd__sched_worker *w) {
    /* xorshift64*: per-worker, owner only (the thread running w runs its
     * deque). */
    HERD__SDQ_OWNER(w->q);
    uint64_t x = w->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    w->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* The flags of a scheduler. Every scheduler's new tasks go to the spawning
 * worker's split deque (the inline path); since round 25 none places each
 * task in a queue of its own at its creation (fifo did). */
#define HERD__SCHED_STEALS 2u /* it steals between workers: HERD_STEAL applies */
/* Resumed ULTs are taken only by workers of their worker's shepherd (mts):
 * readying one wakes every sleeper, as a shepherd's placement does. */
#define HERD__SCHED_SHEPHERD_READY 4u
/* HERD_SPAWN=work-first applies: a parent's continuation, queued on its
 * worker's deque (K2, core/task.c; its ready queue in tied mode), is found
 * by every worker's steals (the deque schedulers but mts, whose steals look
 * at its shepherds' queues). */
#define HERD__SCHED_WORK_FIRST 8u
/* A wait runs its task's queued children oldest first (fifo): it reverses
 * them on the deque before it pops them (core/task.c), so herd_wait's
 * inline path, which pops newest first, is closed (herd__hot.inline_floor). */
#define HERD__SCHED_OLDEST_FIRST 16u

/* A table of operations chosen at start-up. The worker loop (core/worker.c)
 * runs its ready queue, its own deque, its shepherd's placement queue and
 * the injector itself, and asks the scheduler where else to look. */
typedef struct herd__sched_ops {
    const char *name;
    unsigned flags;
    /* The shepherd level when HERD_SHEPHERD is not set; 0: its default (L3). */
    herd__level shepherd_level;
    int (*init)(herd__sched_env *env);
    void (*fini)(herd__sched_env *env);
    /* Take from the scheduler's queue for w (mts, central, lifo, fifo: its
     * shepherd's; hier's first-level tasks), after w's own deque. NULL: no
     * such queue. */
    int (*take)(herd__sched_worker *w, herd__work *out);
    /* Schedulers that share through a queue of their own (mts): the
     * owner's answer to a raised split_req, in place of S3's publication.
     * It clears the request, moves tasks of w's deque to the scheduler's
     * queue (S7) and wakes whoever may take them (W3). NULL: S3. */
    void (*share)(herd__sched_worker *w);
    /* A waiting task's own child, if the scheduler's queue for w has one
     * where w would take next (the back of a LIFO queue): the wait runs it
     * as a plain call on its stack, as it runs its children from the deque
     * (J0), instead of suspending for it. 1 and *out filled, or 0. NULL:
     * never (no such queue; FIFO queues, whose next task is the oldest). */
    int (*take_child)(herd__sched_worker *w, const void *join, herd__taskcopy *out);
    /* A task spawned by a herd_run root (the first level of parallelism)
     * under help-first: place it where the scheduler wants first-level
     * tasks. Returns 0 or HERD_ENOMEM. NULL: spawned like any task. */
    int (*place_first_level)(herd__sched_worker *w, herd_fn fn, void *parent, const void *arg,
                             size_t size);
    /* Look for work on other workers; 1 and *out filled on success. NULL:
     * the scheduler never steals. */
    int (*steal)(herd__sched_worker *w, herd__work *out);
    /* Is there work in the scheduler's queues that w could take or steal?
     * (the sleep protocol's recheck, W2). NULL: it has no queues. */
    int (*has_work)(herd__sched_worker *w);
    /* One line describing a worker's victim order (for `herd topo`). */
    void (*describe_victims)(const herd__sched_env *env, int worker, char *buf, size_t len);
} herd__sched_ops;

/* The scheduler table (sched/registry.c). */

/* The scheduler called name, or NULL. "auto" (or NULL, or "") is resolved
 * from env's workers, placement and topology, with the shepherd level
 * `level` (HERD_SHEPHERD's); env NULL: ws. */
const herd__sched_ops *herd__sched_find(const char *name, const herd__sched_env *env,
                                        herd__level level);
/* Run s's init on env, whose records core filled; 0 or HERD_ENOMEM (and
 * nothing of the scheduler's left allocated). herd__sched_stop runs its
 * fini (if init succeeded) and frees the orders; harmless when never
 * started. Core allocates and frees env->workers. */
int herd__sched_start(const herd__sched_ops *s, herd__sched_env *env);
void herd__sched_stop(const herd__sched_ops *s, herd__sched_env *env);
/* HERD_SCHED's names: "auto" then every scheduler when need_flags is 0,
 * else only the schedulers whose flags include need_flags.
 * herd__sched_names returns how many it wrote (at most max);
 * herd__sched_names_joined writes them as "a, b, c". */
#define HERD__SCHED_MAX 16
int herd__sched_names(const char **out, int max, unsigned need_flags);
void herd__sched_names_joined(char *buf, size_t len, unsigned need_flags);

/* Tasks queued outside the split deques (sched/qtask.c): the header of a
 * herd__taskcopy and only `size` argument bytes. Used by the shared-queue
 * schedulers and by core's placement queues. */
typedef herd__taskcopy herd__qtask;
herd__qtask *herd__qtask_new(herd_fn fn, void *parent, uint16_t kind, const void *arg, size_t size);
/* A new queued task at the back of q. Returns 0 or HERD_ENOMEM (nothing
 * queued). The caller wakes whoever may take it (W3). */
int herd__qtask_push(herd__tq *q, herd_fn fn, void *parent, uint16_t kind, const void *arg,
                     size_t size);
/* Move a queued task into out->task and free it. */
void herd__qtask_take(herd__qtask *t, herd__work *out);
/* Take the task at q's front or back into *out: 1, or 0 when q is empty. */
int herd__qtask_pop(herd__tq *q, int from_front, herd__work *out);
/* Take the task at q's back into *out if its parent is join: 1, or 0. */
int herd__qtask_pop_child(herd__tq *q, const void *join, herd__taskcopy *out);

/* What core offers a scheduler (core/worker.c). */

/* Wake one sleeping worker (W3). */
void herd__wake_one(struct herd__rt *rt);
/* Work was queued where only some workers may take it (a shepherd's
 * queue): wake them. Sleepers are not grouped, so this wakes every sleeper;
 * it costs nothing while no worker sleeps. */
void herd__wake_for_shepherd(struct herd__rt *rt, int shepherd);
/* Take a suspended task from the back of worker v's ready queue; 1 with
 * *out filled (victim, shepherd, one task) when there was one. */
int herd__steal_ready(herd__sched_worker *w, int v, herd__work *out);
/* Work that only w may take arrived (placed on it, or a homed task
 * resumed): a search for other work should end. A hint. */
int herd__sched_own_work(const herd__sched_worker *w);

#endif
