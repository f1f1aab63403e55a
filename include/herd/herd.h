/* herd — a task-parallel runtime: lightweight tasks on pinned workers.
 *
 * This is the whole public C API. Everything in it is documented with the
 * context it may be called from and the errors it returns. Names that begin
 * with `herd__` (double underscore) are not API: they are here only so that
 * the hot paths can be inlined into the caller, and may change at any time.
 *
 * Model in one paragraph: herd_start() starts N workers (kernel threads, one
 * per processing unit). herd_run() runs a root task on them and returns when
 * it and all its descendants have finished. Inside a task, herd_spawn() queues
 * a child (its argument block is copied into the queue, so the caller's copy
 * may go out of scope at once) and herd_wait() waits for the children spawned
 * so far. A task never finishes before its children: returning from a task
 * function implies herd_wait(). A task that must wait (for children, a mutex,
 * a condition, a barrier, a full/empty bit, a future) is suspended, and its
 * worker runs other tasks meanwhile; it may resume on another worker.
 */
#ifndef HERD_H
#define HERD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HERD_BUILDING_LIBRARY)
#define HERD_API __attribute__((visibility("default")))
#else
#define HERD_API
#endif

#define HERD_VERSION_MAJOR 0
#define HERD_VERSION_MINOR 1
#define HERD_VERSION_PATCH 0

/* ---------------------------------------------------------------- errors */

/** Every function that can fail returns 0 or one of these (negative) codes. */
enum herd_error {
    HERD_OK = 0,
    HERD_EINVAL = -1,  /**< an argument or a configuration value is malformed */
    HERD_ENOMEM = -2,  /**< memory (descriptors, stacks, queue space) ran out */
    HERD_ENOTASK = -3, /**< the call is only valid inside a herd task */
    HERD_ESTATE = -4,  /**< the runtime is not started, or already started */
    HERD_EBUSY = -5,   /**< a try-operation found the object taken */
    HERD_ESYS = -6,    /**< the operating system refused (thread creation, mmap) */
    HERD_ETASK = -7,   /**< the call is not valid inside a herd task */
};

/** A static English sentence describing `err` (never NULL). */
HERD_API const char *herd_strerror(int err);

/* --------------------------------------------------------- configuration */

/** Start-up settings. A zero / NULL field takes its value from the matching
 *  HERD_* environment variable, and failing that from the built-in default.
 *  docs/reference/environment.md documents each variable and its forms. */
typedef struct herd_config {
    int workers;          /**< HERD_WORKERS: number of workers (or "auto", environment
                               only); default all PUs */
    const char *sched;    /**< HERD_SCHED: a scheduler's name, or auto (listed in
                               docs/reference/environment.md and by `herd --help`) */
    const char *bind;     /**< HERD_BIND: none, compact, scatter, numa-priority,
                               static, bll, xll */
    const char *topology; /**< HERD_TOPOLOGY: hwloc synthetic string or XML path */
    const char *shepherd; /**< HERD_SHEPHERD: pu, core, l2, l3, numa, package, machine */
    size_t stack_size;    /**< HERD_STACK: bytes per task stack; default 128 KiB */
    const char *idle;     /**< HERD_IDLE: spin, sleep, adaptive */
    const char *stats;    /**< HERD_STATS: "1" prints a table at stop; a path writes JSON */
    int stack_guard;      /**< HERD_STACK_GUARD: 1 detects overflow (default), -1 off */
    const char *spawn;    /**< HERD_SPAWN: help-first (default), work-first */
    const char *steal;    /**< HERD_STEAL: one, half, chunk:N; default: the scheduler's */
    const char *trace;    /**< HERD_TRACE: path of a timeline (Chrome trace JSON) written at stop */
} herd_config;

/* --------------------------------------------------------------- lifecycle */

/** Start the runtime. cfg may be NULL (everything from the environment).
 *  Context: outside herd tasks; once per process at a time.
 *  Returns 0; HERD_EINVAL when a setting is malformed (a message naming the
 *  variable, the value and the accepted forms is printed to stderr);
 *  HERD_ESTATE when already started; HERD_ENOMEM; HERD_ESYS. */
HERD_API int herd_start(const herd_config *cfg);

/** Stop the runtime: waits for tasks still running from herd_run() callers,
 *  joins the workers, prints or writes statistics if HERD_STATS asks and
 *  writes the timeline if HERD_TRACE asks.
 *  Context: outside herd tasks. Returns 0, HERD_ESTATE, HERD_ETASK, or
 *  HERD_ESYS when the HERD_STATS or HERD_TRACE file cannot be written (a
 *  message naming the variable and the path is printed to stderr; the
 *  runtime is stopped all the same). */
HERD_API int herd_stop(void);

/** Number of workers of the started runtime, or 0 when not started. */
HERD_API int herd_num_workers(void);

/** Index of the worker running the caller, in [0, herd_num_workers()), or -1
 *  outside the runtime. A task may move to another worker after it blocks. */
HERD_API int herd_worker_id(void);

/* ------------------------------------------------------------------- tasks */

/** A task body. `arg` points at the task's own copy of its argument block,
 *  valid until the function returns. */
typedef void (*herd_fn)(void *arg);

/** Largest argument block a task can carry. */
#define HERD_ARG_MAX 256

/** Run fn(copy of arg) as a root task and wait until it and all its
 *  descendants have finished. Many threads may call this concurrently.
 *  Context: outside herd tasks (the caller's thread sleeps meanwhile).
 *  Returns 0, HERD_ESTATE (not started), HERD_ETASK (called from a task:
 *  use herd_spawn), HERD_EINVAL (fn NULL or arg_size > HERD_ARG_MAX). */
HERD_API int herd_run(herd_fn fn, const void *arg, size_t arg_size);

/** Queue fn(copy of arg) as a child of the calling task; copies arg_size
 *  bytes. Context: inside a herd task. Never blocks.
 *  Returns 0, HERD_ENOTASK, HERD_EINVAL (fn NULL or arg_size > HERD_ARG_MAX),
 *  HERD_ENOMEM (the worker's task queue is full: 2^20 slots, of which the
 *  slots of the caller's children that thieves took are used again once
 *  they add up to a sixteenth; or,
 *  at the worker's first task with more than 40 bytes of arguments, the
 *  256 MiB of address space for such arguments could not be reserved: said
 *  on stderr). */
static inline int herd_spawn(herd_fn fn, const void *arg, size_t arg_size);

/** Wait until every child the calling task has spawned so far has finished
 *  (with its descendants). Children still queued on this worker run at once
 *  on the caller's stack; if others still run elsewhere the task suspends.
 *  Context: inside a herd task. Returns 0 or HERD_ENOTASK. */
static inline int herd_wait(void);

/** Let other ready tasks run; the caller is queued behind them.
 *  Context: inside a herd task. Returns 0 or HERD_ENOTASK. */
HERD_API int herd_yield(void);

/* -------------------------------------------------------------- task groups */

/** A set of tasks, spawned from any tasks, that can be waited for together.
 *  Waiting for a group waits for all its tasks and their descendants. */
typedef struct herd_group {
    uint64_t herd__opaque[4]; /* a join record: pending count, waiter */
} herd_group;

/** Prepare an empty group. Context: anywhere. */
HERD_API void herd_group_init(herd_group *g);
/** Queue fn(copy of arg) in group g. Context: inside a herd task.
 *  Returns as herd_spawn. The task is not a child of the caller: the caller's
 *  herd_wait() does not wait for it, herd_group_wait(g) does. */
HERD_API int herd_group_spawn(herd_group *g, herd_fn fn, const void *arg, size_t arg_size);
/** Wait until every task spawned into g has finished. Only one task may wait
 *  on a group at a time. Context: inside a herd task.
 *  Returns 0, HERD_ENOTASK, HERD_EBUSY (another task already waits on g). */
HERD_API int herd_group_wait(herd_group *g);

/* ----------------------------------------------------------------- futures */

/** A future: a task whose result a later herd_future_get() reads. */
typedef uint64_t (*herd_future_fn)(void *arg);
typedef struct herd_future {
    uint64_t herd__value; /* full/empty word: full once the result is written */
} herd_future;

/** Spawn fn(copy of arg) as a child of the caller; its result goes to f.
 *  f must stay valid until herd_future_get() returned (or the caller waited).
 *  Context: inside a herd task. Returns as herd_spawn. */
HERD_API int herd_future_spawn(herd_future *f, herd_future_fn fn, const void *arg, size_t arg_size);
/** Wait for f's result and store it in *value. May be called many times.
 *  Context: inside a herd task. Returns 0 or HERD_ENOTASK. */
HERD_API int herd_future_get(herd_future *f, uint64_t *value);

/* ---------------------------------------------------------- parallel loops
 * The iteration space [begin, end) is cut into ranges, each run by
 * body(range_begin, range_end, arg) in some task. `arg` is shared by all
 * ranges (not copied). The call returns when every iteration has run. */

/** How the iterations become tasks (paper 000 §2.1 and recursive splitting). */
typedef enum herd_loop_kind {
    HERD_LOOP_EACH = 1,  /**< one task per iteration (grain ignored) */
    HERD_LOOP_SPLIT,     /**< halve the range recursively until at most `grain` iterations */
    HERD_LOOP_CHUNKS,    /**< one task per worker; each takes `grain` iterations at a time
                              from a shared counter until none are left (self-scheduling) */
    HERD_LOOP_SHEPHERDS, /**< even split over shepherds, then over each shepherd's workers;
                              each piece runs on its shepherd, split down to `grain` */
} herd_loop_kind;

typedef void (*herd_loop_fn)(int64_t begin, int64_t end, void *arg);

/** Run body over [begin, end). grain >= 1 (ignored by HERD_LOOP_EACH).
 *  Context: inside a herd task (it spawns and waits). An empty range
 *  returns 0 at once. Returns 0, HERD_ENOTASK, HERD_EINVAL (body NULL,
 *  grain < 1, an unknown kind), HERD_ENOMEM. */
HERD_API int herd_loop(int64_t begin, int64_t end, int64_t grain, herd_loop_kind kind,
                       herd_loop_fn body, void *arg);

/** Accumulates iterations [begin, end) into `partial` (size bytes). */
typedef void (*herd_reduce_fn)(int64_t begin, int64_t end, void *arg, void *partial);
/** Folds `from` into `into` (both size bytes). Must be associative; the
 *  order in which partials are combined is not fixed. */
typedef void (*herd_combine_fn)(void *into, const void *from, void *arg);

/** A loop with a reduction: every range accumulates into a partial that
 *  starts as a copy of `identity`; partials are combined with `combine` and
 *  the total is stored in *result. size <= HERD_ARG_MAX.
 *  Context and returns as herd_loop. */
HERD_API int herd_loop_reduce(int64_t begin, int64_t end, int64_t grain, herd_loop_kind kind,
                              herd_reduce_fn body, herd_combine_fn combine, void *arg,
                              const void *identity, void *result, size_t size);

/* ------------------------------------------------------- synchronisation
 * All of these suspend only the calling task, never its worker. They may be
 * used only from inside herd tasks (HERD_ENOTASK otherwise). The objects
 * are plain structs: initialise with the _init function before use. */

typedef struct herd_mutex {
    int herd__lock;   /* internal spinlock guarding the fields below */
    int herd__held;   /* 1 while owned */
    void *herd__head; /* FIFO of suspended tasks waiting for the mutex */
    void *herd__tail;
} herd_mutex;

HERD_API void herd_mutex_init(herd_mutex *m);
/** Acquire m, suspending the task while another task holds it. Not
 *  recursive. Returns 0 or HERD_ENOTASK. */
HERD_API int herd_mutex_lock(herd_mutex *m);
/** Returns 0, or HERD_EBUSY when m is held. */
HERD_API int herd_mutex_trylock(herd_mutex *m);
/** Release m and wake the oldest waiter, which takes m when it runs unless
 *  a running task took it first (then it waits again, first in line). m is
 *  not handed to a task that is not running yet: tasks that back off when a
 *  try fails (std::lock over two mutexes) would find it held, and could
 *  livelock. Returns 0, or HERD_EINVAL when m is not held. */
HERD_API int herd_mutex_unlock(herd_mutex *m);

typedef struct herd_cond {
    int herd__lock;
    void *herd__head;
    void *herd__tail;
} herd_cond;

HERD_API void herd_cond_init(herd_cond *c);
/** Atomically release m and suspend until signalled; m is held again on
 *  return. Spurious wake-ups do not happen, but use a predicate loop anyway.
 *  Returns 0, HERD_ENOTASK, or HERD_EINVAL (m not held). */
HERD_API int herd_cond_wait(herd_cond *c, herd_mutex *m);
HERD_API int herd_cond_signal(herd_cond *c);
HERD_API int herd_cond_broadcast(herd_cond *c);

/** A barrier for `count` tasks (any number, more than the workers is fine).
 *  Following paper 004, arrivals register in an array indexed by arrival
 *  order, and the last arrival wakes them all. */
typedef struct herd_barrier {
    int64_t herd__count;
    void *herd__state; /* the arrival count, the phase and the slots, together */
} herd_barrier;

/** Returns 0, HERD_EINVAL (count < 1), HERD_ENOMEM. */
HERD_API int herd_barrier_init(herd_barrier *b, int64_t count);
HERD_API void herd_barrier_destroy(herd_barrier *b);
/** Wait until `count` tasks have arrived. Exactly one task per phase gets 1
 *  (the serial one), the others 0; or HERD_ENOTASK. Reusable. */
HERD_API int herd_barrier_wait(herd_barrier *b);

/* Full/empty bits (Qthreads semantics, paper 000 §2.1). Every aligned 64-bit
 * word has a full/empty state, full unless emptied. Operations: */
/** Wait until *addr is full, then copy it to *out (leaves it full). */
HERD_API int herd_feb_readFF(uint64_t *addr, uint64_t *out);
/** Wait until *addr is full, copy it to *out, and mark it empty. */
HERD_API int herd_feb_readFE(uint64_t *addr, uint64_t *out);
/** If *addr is full, copy it to *out, mark it empty and return 0; if it is
 *  empty, return HERD_EBUSY at once. Never blocks (readFE's try form; the
 *  C++ layer's herd::full_empty::try_lock). Returns also HERD_EINVAL (addr
 *  NULL or unaligned, out NULL), HERD_ENOTASK, HERD_ENOMEM. */
HERD_API int herd_feb_tryreadFE(uint64_t *addr, uint64_t *out);
/** A word used as a lock: wait until *addr is full, then mark it empty
 *  (readFE without the value); unlock with herd_feb_fill. Unlike readFE's,
 *  a waiter is not served in turn: the fill that lets it go wakes it, and
 *  it takes the word when it runs unless a running task took it first
 *  (then it waits again, first in line). A word handed to a task that was
 *  not running yet would stall tasks that back off when a try fails:
 *  std::lock over several words livelocked. Returns 0, HERD_EINVAL (addr
 *  NULL or unaligned), HERD_ENOTASK, HERD_ENOMEM. */
HERD_API int herd_feb_lock(uint64_t *addr);
/** Wait until *addr is empty, write value, and mark it full. */
HERD_API int herd_feb_writeEF(uint64_t *addr, uint64_t value);
/** Write value and mark *addr full, whatever its state. Never blocks. */
HERD_API int herd_feb_writeF(uint64_t *addr, uint64_t value);
/** Mark *addr full without writing. Never blocks. */
HERD_API int herd_feb_fill(uint64_t *addr);
/** Mark *addr empty. Never blocks. */
HERD_API int herd_feb_empty(uint64_t *addr);
/** 1 if *addr is full, 0 if empty. Context: anywhere (a snapshot). */
HERD_API int herd_feb_status(const uint64_t *addr);

/* -------------------------------------------------------------- statistics */

/** Counters of one worker since herd_start(). */
typedef struct herd_worker_stats {
    uint64_t spawned;          /**< tasks queued by tasks on this worker */
    uint64_t executed;         /**< tasks run to completion on this worker */
    uint64_t inlined;          /**< of those, run as a plain call by their parent's wait */
    uint64_t steals;           /**< successful steals (each takes one or more tasks) */
    uint64_t steals_local;     /**< of those, from a worker of the same shepherd */
    uint64_t steals_remote;    /**< of those, from another shepherd */
    uint64_t stolen_tasks;     /**< tasks (and suspended tasks) moved by steals */
    uint64_t max_chunk;        /**< the most tasks one steal moved */
    uint64_t steal_attempts;   /**< victims probed */
    uint64_t failed_steals;    /**< probes that saw work but obtained none */
    uint64_t blocks;           /**< task suspensions (wait, sync objects, yield) */
    uint64_t stacks_allocated; /**< stacks mapped (not taken from the cache) */
    uint64_t rescues;          /**< times a thief's poke made this worker share the tasks
                                    that a task spinning without a scheduling point had
                                    queued (OpenMP layer; docs/design/split-deque.md) */
    uint64_t busy_ns;          /**< time spent running tasks */
    uint64_t idle_ns;          /**< time spent looking for work or asleep */
    int shepherd;              /**< the worker's shepherd (HERD_SHEPHERD's level) */
} herd_worker_stats;

/** Copy the counters of up to `max` workers into out; returns the number of
 *  workers (which may exceed max), or HERD_ESTATE when not started.
 *  Counters are read without stopping the workers: each is exact, the set
 *  is not a single snapshot. Context: anywhere. */
HERD_API int herd_stats(herd_worker_stats *out, int max);

/* ------------------------------------------------------- inline fast paths
 * herd_spawn and herd_wait compile inline (herd/herd_fast.h); the library
 * also exports them as functions (herd_spawn_fn, herd_wait_fn) for callers
 * that need a symbol, such as other languages' foreign-function interfaces. */
HERD_API int herd_spawn_fn(herd_fn fn, const void *arg, size_t arg_size);
HERD_API int herd_wait_fn(void);

#include "herd/herd_fast.h"

static inline int herd_spawn(herd_fn fn, const void *arg, size_t arg_size) {
    return herd__spawn_fast(fn, arg, arg_size);
}
static inline int herd_wait(void) {
    return herd__wait_fast();
}

#ifdef __cplusplus
}
#endif

#endif /* HERD_H */
