/* src/dist/pool_internal.h -- the pool's state, shared by its files.
 *
 * pool.c   lifecycle, settings, registration, the process loop, statistics
 * queue.c  the split queue on an MPI window: push/pop (owner), release,
 *          reacquire, steal, and the three locks
 * term.c   voting-tree termination detection
 * hybrid.c the hybrid mode: herd workers run the rank's tasks, one comm
 *          thread makes every MPI call (pool.md H1-H7)
 * The protocols and their steps (cited as "pool.md Qn", "Ln", "Tn"):
 * docs/design/pool.md. */
#ifndef HERD_DIST_POOL_INTERNAL_H
#define HERD_DIST_POOL_INTERNAL_H

#include "herd/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define POOL_NAME_MAX 64 /* class names, with their NUL */

/* The window's metadata words: one 64-bit integer each, at these byte
 * offsets, always accessed with MPI accumulate-family atomics (pool.md R1).
 * The task slots follow at POOL_SLOTS_OFF. */
enum {
    POOL_LOCK_OFF = 0,   /* spin lock word (0 free, rank+1 held); ticket: next ticket */
    POOL_SERVE_OFF = 8,  /* ticket lock: the ticket now served */
    POOL_TAIL_OFF = 16,  /* index of the oldest public task; thieves move it, under lock */
    POOL_SPLIT_OFF = 24, /* first private index; only the owner moves it */
    POOL_SLOTS_OFF = 64, /* a cache line away from the words above */
};

/* A slot: this header, then arg_max bytes. Indices (tail, split, head) are
 * 64-bit counters that only grow; slot i lives at i % capacity. */
typedef struct pool_slot_hdr {
    int32_t cls;
    uint32_t size;
} pool_slot_hdr;

typedef struct pool_class {
    char name[POOL_NAME_MAX];
    herd_pool_fn fn;
} pool_class;

/* Voting-tree state (term.c). States start at 1; only the owning rank moves them. */
typedef enum term_state {
    TERM_COLLECTING = 1, /* waiting for the children's votes of this round */
    TERM_VOTED,          /* vote sent up; waiting for the round's result */
    TERM_DONE,           /* termination announced */
} term_state;

typedef struct pool_term {
    term_state state;
    int parent;   /* -1 at the root */
    int child[2]; /* -1 when absent */
    int nchild;
    int votes_in;        /* children's votes received this round */
    int all_yes;         /* and of the children's votes this round */
    int64_t vote_buf[2]; /* receive buffers for the children's votes */
    int64_t result_buf;  /* receive buffer for the parent's result */
    MPI_Request req[3];  /* children's votes, then the parent's result */
    int64_t round;
    int64_t tail_at_vote; /* our tail at our last vote: a change means we were stolen from */
    uint64_t rounds;
} pool_term;

struct herd_pool {
    MPI_Comm comm; /* our duplicate: termination messages never meet the user's */
    int rank, size;
    herd_pool_config cfg;
    MPI_Win win;
    char *base;       /* our window memory */
    size_t slot_size; /* header + arg_max, rounded up to 8 */
    int64_t capacity;

    /* Owner-only queue state (pool.md Q0): split and head are ours alone;
     * tail_seen is a lower bound of the real tail (thieves only raise it).
     * split is the local bound of the private part, wsplit the value
     * published in the window; flat mode keeps them equal, hybrid mode keeps
     * wsplit <= split (H2). Hybrid: head, split, running, pending are under
     * lq (H1); wsplit is the comm thread's alone. tail_seen is written by the
     * thread that may make MPI calls and read by pushing workers. */
    int64_t split, wsplit, head;
    _Atomic int64_t tail_seen;
    uint64_t release_checks; /* pushes since the release policy last read tail */
    int last_error;

    /* Hybrid mode (pool.md H1-H7). */
    int hybrid;             /* 1: tasks run on the herd workers */
    pthread_mutex_t lq;     /* H1: the local lock */
    pthread_t comm_thread;  /* the caller of herd_pool_process(): the only MPI caller */
    int running;            /* H3: tasks being run by workers (under lq) */
    int64_t pending;        /* H5: stolen tasks at the front of steal_buf, not yet queued */
    int64_t pending_at;     /* index in steal_buf of the first pending task */
    atomic_int want_tail;   /* H3: a worker found the ring full: re-read tail */
    atomic_uint tail_epoch; /* H3: bumped each time the comm thread answered want_tail */
    atomic_int done;        /* H6: the pool terminated; the workers' loops end */

    pool_class *classes;
    int nclasses;
    int processing; /* inside herd_pool_process() */
    int in_task;

    char *exec_buf;  /* the recycled descriptor the running task is copied to */
    char *steal_buf; /* the recycled landing buffer of steals */
    size_t steal_buf_tasks;
    uint64_t rng;

    pool_term term;
    herd_pool_stats st;   /* counting since the last herd_pool_process() ended */
    herd_pool_stats last; /* of the last herd_pool_process() */
};

/* pool.c: report an MPI failure with our rank and the cause, then abort the job. */
_Noreturn void herd__pool_mpi_die(herd_pool *p, const char *what, int rc);
#define POOL_MPI(p, call)                                                                          \
    do {                                                                                           \
        int pool__rc = (call);                                                                     \
        if (pool__rc != MPI_SUCCESS)                                                               \
            herd__pool_mpi_die((p), #call, pool__rc);                                              \
    } while (0)
double herd__pool_now(void);

/* queue.c */
int herd__pool_queue_init(herd_pool *p);
void herd__pool_queue_reset(herd_pool *p);
char *herd__pool_push_slot(herd_pool *p, int cls, size_t size); /* NULL: full, last_error set */
void herd__pool_push_commit(herd_pool *p);
int herd__pool_pop(herd_pool *p, char *dst);                     /* 1: a task copied to dst */
int herd__pool_pop_after(herd_pool *p, char *dst, int finished); /* hybrid: running -= finished */
int64_t herd__pool_reacquire(herd_pool *p);                      /* tasks moved public -> private */
void herd__pool_release(herd_pool *p, int64_t k);
int64_t herd__pool_read_tail(herd_pool *p);
/* Steal from victim into our private part; returns tasks taken, 0 when none. */
int64_t herd__pool_steal(herd_pool *p, int victim);
/* pool.c: a uniformly random rank other than ours (p->size > 1). */
int herd__pool_random_victim(herd_pool *p);
int64_t herd__pool_nlocal(const herd_pool *p);
/* Hybrid: queue steal_buf's pending tasks as far as they fit (comm thread). */
void herd__pool_insert_pending(herd_pool *p);
/* 1 when the calling thread may make MPI calls on p's behalf (H1 roles). */
int herd__pool_may_mpi(const herd_pool *p);
/* Run the task copied into buf (class header first) on the calling thread. */
void herd__pool_run(herd_pool *p, char *buf, double *active);

/* hybrid.c */
int herd__pool_hybrid_check(herd_pool *p); /* at create: herd started, MPI thread level */
void herd__pool_process_hybrid(herd_pool *p);

/* term.c */
void herd__pool_term_init(herd_pool *p);
void herd__pool_term_start(herd_pool *p); /* opens round one of a herd_pool_process() */
/* Called while idle (our queue empty): advances the vote; 1 when the pool terminated. */
int herd__pool_term_idle(herd_pool *p);
/* Called now and then while busy: lets MPI progress; never votes. */
void herd__pool_term_poll(herd_pool *p);

#endif /* HERD_DIST_POOL_INTERNAL_H */
