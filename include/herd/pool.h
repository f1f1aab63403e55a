/* herd/pool.h -- the distributed task pool over MPI (libherd-pool).
 *
 * A pool spreads independent tasks over the ranks of an MPI communicator
 * (Dinan et al., "Scalable Work Stealing", SC 2009). Every rank seeds the
 * pool with tasks, then all ranks process it together until no task is left
 * anywhere:
 *
 *     herd_pool *p;
 *     herd_pool_create(MPI_COMM_WORLD, NULL, &p);           // collective
 *     herd_pool_register(p, "visit", visit, &VISIT);        // collective
 *     if (rank == 0) herd_pool_add(p, VISIT, &root, sizeof root);
 *     herd_pool_process(p);                                 // collective
 *     herd_pool_destroy(p);                                 // collective
 *
 * A task is a registered class id plus an argument block of at most
 * `arg_max` bytes, copied into the queue. A task may add tasks (to the
 * pool of the rank that runs it); it must not wait for another task.
 * Results go to user memory: per-rank accumulators reduced by the
 * program after herd_pool_process(), or MPI windows of its own.
 *
 * Threading: a pool is used by one thread of each rank. Flat mode (the
 * default): task functions run on that thread; MPI_THREAD_SINGLE is enough.
 * Hybrid mode (herd_pool_config.hybrid, HERD_POOL_HYBRID=1): the program
 * calls herd_start() before herd_pool_create() and initialises MPI with
 * MPI_THREAD_FUNNELED or better (FUNNELED: the pool's thread must be the main
 * thread); task functions run on the herd workers, several at once, so they
 * must update shared results atomically (or per worker, herd_worker_id());
 * they may spawn and wait for herd tasks, and must not call MPI unless MPI
 * gives MPI_THREAD_MULTIPLE. The calling thread makes every MPI call.
 * Efficiency counters are then worker-seconds (time_total = wall x workers).
 * Protocols and their ordering arguments: docs/design/pool.md. */
#ifndef HERD_POOL_H
#define HERD_POOL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "herd/herd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct herd_pool herd_pool;

/** A task class: runs one task whose argument block is arg[0..size). The
 *  block stays valid until the function returns; it may call
 *  herd_pool_add()/herd_pool_task_alloc() on the same pool. */
typedef void (*herd_pool_fn)(herd_pool *p, void *arg, size_t size);

/** The lock that guards the public part of each rank's queue (paper 001 §4). */
typedef enum herd_pool_lock {
    HERD_POOL_LOCK_DEFAULT = 0,  /**< HERD_POOL_LOCK, else aborting */
    HERD_POOL_LOCK_TICKET = 1,   /**< fair FIFO ticket lock (ARMCI's) */
    HERD_POOL_LOCK_SPIN = 2,     /**< atomic swap with linear backoff */
    HERD_POOL_LOCK_ABORTING = 3, /**< spin lock; the thief gives up on a victim gone dry */
} herd_pool_lock;

/** How many of a victim's public tasks one steal takes (paper 001 §3.4). */
typedef enum herd_pool_split {
    HERD_POOL_SPLIT_DEFAULT = 0, /**< HERD_POOL_STEAL, else half */
    HERD_POOL_SPLIT_ONE = 1,     /**< steal-1 (Cilk style) */
    HERD_POOL_SPLIT_TWO = 2,     /**< steal-2 */
    HERD_POOL_SPLIT_HALF = 3,    /**< steal-half: ceil(public / 2) */
} herd_pool_split;

/** Pool settings. A zero field takes its HERD_POOL_* variable, else the
 *  default; a set field is used as is and its variable is not read. */
typedef struct herd_pool_config {
    herd_pool_lock lock;   /**< HERD_POOL_LOCK */
    herd_pool_split split; /**< HERD_POOL_STEAL */
    size_t queue_capacity; /**< tasks per rank, HERD_POOL_QUEUE (default 65536) */
    size_t arg_max;        /**< bytes per argument block, HERD_POOL_ARG_MAX (default 64) */
    int release_min;       /**< release when the private part holds at least this many
                                tasks and the public part is empty, HERD_POOL_RELEASE
                                (default 2) */
    int stats;             /**< 1: print statistics; -1: never; 0: HERD_POOL_STATS (1 or a
                                JSON path), else HERD_STATS=1 (a table; the HERD_STATS file
                                belongs to the core runtime) */
    int hybrid;            /**< 1: hybrid mode, the rank's tasks run on every worker of the
                                herd runtime (herd_start() first; MPI_THREAD_FUNNELED or
                                better); -1: flat, on the calling thread; 0: HERD_POOL_HYBRID
                                (0 or 1, default 0) */
} herd_pool_config;

/** Per-rank counters of the last herd_pool_process(). Times in seconds. */
typedef struct herd_pool_stats {
    uint64_t tasks_executed;
    uint64_t tasks_added;    /**< herd_pool_add and in-place commits on this rank */
    uint64_t steals;         /**< successful steals by this rank */
    uint64_t tasks_stolen;   /**< tasks those steals brought */
    uint64_t steals_failed;  /**< lock taken, then no work found */
    uint64_t steals_aborted; /**< victim seen dry before or while waiting for its lock */
    uint64_t releases;       /**< private -> public moves (lockless) */
    uint64_t reacquires;     /**< public -> private moves (locked) */
    uint64_t bytes_stolen;   /**< task bytes fetched by this rank's steals */
    uint64_t vote_rounds;    /**< termination voting rounds seen */
    double time_active;      /**< inside task functions */
    double time_search;      /**< looking for work (steals, voting) */
    double time_total;       /**< the whole herd_pool_process() call */
} herd_pool_stats;

/** Fill *cfg with the built-in defaults (all fields 0: from the environment). */
HERD_API void herd_pool_config_init(herd_pool_config *cfg);

/** Create a pool over comm (duplicated; comm may be freed afterwards).
 *  Context: collective over comm; MPI initialised. cfg may be NULL.
 *  Returns 0; HERD_EINVAL for a malformed setting (one line on stderr naming
 *  the variable or field, the value and the accepted forms; every rank
 *  returns it when any rank's settings differ or are malformed);
 *  HERD_ENOMEM when the queue cannot be allocated; HERD_ESYS when MPI
 *  refuses (message with rank and MPI's error string). */
HERD_API int herd_pool_create(MPI_Comm comm, const herd_pool_config *cfg, herd_pool **out);

/** Free the pool. Context: collective; not inside a task. Returns 0. */
HERD_API int herd_pool_destroy(herd_pool *p);

/** Register task class fn under name; *id receives its class id.
 *  Context: collective; every rank registers the same names in the same
 *  order (function addresses may differ between ranks).
 *  Returns 0; HERD_EINVAL when a name is empty or over 63 bytes, or when
 *  the ranks disagree (every rank returns it; stderr names the rank, the
 *  class number and both names); HERD_ESTATE inside herd_pool_process(). */
HERD_API int herd_pool_register(herd_pool *p, const char *name, herd_pool_fn fn, int *id);

/** Add a task of class id with a copy of arg[0..size) to this rank's queue.
 *  Context: outside herd_pool_process() (seeding) or inside a task.
 *  Returns 0; HERD_EINVAL for an unknown class or size > arg_max;
 *  HERD_ENOMEM when this rank's queue is full (message names the rank,
 *  the capacity and HERD_POOL_QUEUE). */
HERD_API int herd_pool_add(herd_pool *p, int id, const void *arg, size_t size);

/** In-place creation: reserve the next queue slot for a task of class id
 *  with a size-byte argument block and return the block to fill, or NULL
 *  (with the errors of herd_pool_add, see herd_pool_last_error). The task
 *  is queued by herd_pool_task_commit(); no other call on this pool may
 *  come between the two. */
HERD_API void *herd_pool_task_alloc(herd_pool *p, int id, size_t size);

/** Queue the task reserved by herd_pool_task_alloc(). Returns 0, or
 *  HERD_ESTATE when nothing is reserved. */
HERD_API int herd_pool_task_commit(herd_pool *p);

/** The error of the last failed herd_pool_task_alloc() on this rank. */
HERD_API int herd_pool_last_error(const herd_pool *p);

/** Process the pool until every rank's queue is empty and no task runs
 *  anywhere (Algorithm 1 with work stealing and voting-tree termination).
 *  Context: collective; not inside a task. May be called again after
 *  re-seeding. An MPI failure prints the rank and the cause and aborts the
 *  job (MPI_Abort): the pool's state is then lost on every rank.
 *  Returns 0, or HERD_ESTATE when called from a task. */
HERD_API int herd_pool_process(herd_pool *p);

/** This rank's counters of the last herd_pool_process(), and (when total
 *  is not NULL) their sums over all ranks with times summed too.
 *  Context: collective when total != NULL. Returns 0. */
HERD_API int herd_pool_stats_get(herd_pool *p, herd_pool_stats *mine, herd_pool_stats *total);

/** The pool's rank and number of ranks (of its communicator). */
HERD_API int herd_pool_rank(const herd_pool *p);
HERD_API int herd_pool_size(const herd_pool *p);

/** The settings in force after the environment was read. */
HERD_API void herd_pool_config_get(const herd_pool *p, herd_pool_config *cfg);

/** The name of a lock or split scheme ("ticket", "half", ...). */
HERD_API const char *herd_pool_lock_name(herd_pool_lock lock);
HERD_API const char *herd_pool_split_name(herd_pool_split split);

#ifdef __cplusplus
}
#endif
#endif /* HERD_POOL_H */
