/* src/dist/pool.c -- the pool's lifecycle, settings, task classes, the
 * process loop (paper 001 Algorithm 1 with Algorithm 2's steals) and its
 * statistics. The queue is in queue.c, termination in term.c; the protocols
 * are in docs/design/pool.md. */
#include "dist/pool_internal.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

double herd__pool_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

_Noreturn void herd__pool_mpi_die(herd_pool *p, const char *what, int rc) {
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "herd pool: rank %d: %s failed: %s; aborting the job\n", p ? p->rank : -1, what,
            msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
    _exit(2); /* MPI_Abort does not return; keep the promise if it did */
}

/* ------------------------------------------------------------- settings */

#define LOCK_FORMS "ticket, spin, aborting"
#define STEAL_FORMS "one, two, half"
#define QUEUE_MIN 16
#define QUEUE_MAX (1LL << 24)
#define QUEUE_FORMS "an integer from 16 to 16777216 (tasks per rank)"
#define ARG_MAX_MAX 4096
#define ARG_FORMS "an integer from 1 to 4096 (bytes)"
#define RELEASE_FORMS "an integer from 1 to 65536 (private tasks)"

static const char *const pool_vars[] = {
    "HERD_POOL_LOCK",    "HERD_POOL_STEAL",  "HERD_POOL_QUEUE", "HERD_POOL_ARG_MAX",
    "HERD_POOL_RELEASE", "HERD_POOL_HYBRID", "HERD_POOL_STATS"};
#define NPOOLVARS (sizeof pool_vars / sizeof pool_vars[0])

static int bad(const char *name, const char *value, const char *problem, const char *forms) {
    fprintf(stderr, "herd pool: %s=%s: %s; accepted: %s\n", name, value, problem, forms);
    return HERD_EINVAL;
}

/* A decimal integer in [lo, hi], nothing else. */
static int parse_int(const char *name, const char *s, long long lo, long long hi, const char *forms,
                     long long *out) {
    if (!*s)
        return bad(name, s, "empty value", forms);
    for (const char *c = s; *c; c++)
        if (!isdigit((unsigned char)*c))
            return bad(name, s, "not an integer", forms);
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno || v < lo || v > hi)
        return bad(name, s, "out of range", forms);
    *out = v;
    return 0;
}

static int check_pool_var_names(void) {
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "HERD_POOL_", 10) != 0)
            continue;
        size_t len = strcspn(*e, "=");
        int known = 0;
        for (size_t i = 0; i < NPOOLVARS && !known; i++)
            known = strlen(pool_vars[i]) == len && memcmp(pool_vars[i], *e, len) == 0;
        if (!known) {
            fprintf(stderr,
                    "herd pool: unknown variable %.*s; known: HERD_POOL_LOCK, HERD_POOL_STEAL, "
                    "HERD_POOL_QUEUE, HERD_POOL_ARG_MAX, HERD_POOL_RELEASE, HERD_POOL_HYBRID, "
                    "HERD_POOL_STATS\n",
                    (int)len, *e);
            return HERD_EINVAL;
        }
    }
    return 0;
}

void herd_pool_config_init(herd_pool_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
}

const char *herd_pool_lock_name(herd_pool_lock lock) {
    switch (lock) {
    case HERD_POOL_LOCK_TICKET:
        return "ticket";
    case HERD_POOL_LOCK_SPIN:
        return "spin";
    case HERD_POOL_LOCK_ABORTING:
        return "aborting";
    default:
        return "?";
    }
}

const char *herd_pool_split_name(herd_pool_split split) {
    switch (split) {
    case HERD_POOL_SPLIT_ONE:
        return "one";
    case HERD_POOL_SPLIT_TWO:
        return "two";
    case HERD_POOL_SPLIT_HALF:
        return "half";
    default:
        return "?";
    }
}

/* The settings in force: config fields first, then HERD_POOL_*, then the
 * defaults (the same order as herd_start()). Also the statistics target. */
static int resolve(const herd_pool_config *in, herd_pool_config *out, char *stats_path,
                   size_t path_len) {
    herd_pool_config c = in ? *in : (herd_pool_config){0};
    char num[32];
    long long v;
    int rc = check_pool_var_names();
    if (rc)
        return rc;
    const char *s;
    if (c.lock == 0) {
        c.lock = HERD_POOL_LOCK_ABORTING;
        if ((s = getenv("HERD_POOL_LOCK"))) {
            if (!strcasecmp(s, "ticket"))
                c.lock = HERD_POOL_LOCK_TICKET;
            else if (!strcasecmp(s, "spin"))
                c.lock = HERD_POOL_LOCK_SPIN;
            else if (!strcasecmp(s, "aborting"))
                c.lock = HERD_POOL_LOCK_ABORTING;
            else
                return bad("HERD_POOL_LOCK", s, *s ? "unknown lock" : "empty value", LOCK_FORMS);
        }
    } else if (c.lock < HERD_POOL_LOCK_TICKET || c.lock > HERD_POOL_LOCK_ABORTING) {
        snprintf(num, sizeof num, "%d", (int)c.lock);
        return bad("config.lock", num, "unknown lock", "HERD_POOL_LOCK_TICKET, _SPIN, _ABORTING");
    }
    if (c.split == 0) {
        c.split = HERD_POOL_SPLIT_HALF;
        if ((s = getenv("HERD_POOL_STEAL"))) {
            if (!strcasecmp(s, "one"))
                c.split = HERD_POOL_SPLIT_ONE;
            else if (!strcasecmp(s, "two"))
                c.split = HERD_POOL_SPLIT_TWO;
            else if (!strcasecmp(s, "half"))
                c.split = HERD_POOL_SPLIT_HALF;
            else
                return bad("HERD_POOL_STEAL", s, *s ? "unknown split" : "empty value", STEAL_FORMS);
        }
    } else if (c.split < HERD_POOL_SPLIT_ONE || c.split > HERD_POOL_SPLIT_HALF) {
        snprintf(num, sizeof num, "%d", (int)c.split);
        return bad("config.split", num, "unknown split", "HERD_POOL_SPLIT_ONE, _TWO, _HALF");
    }
    if (c.queue_capacity == 0) {
        c.queue_capacity = 65536;
        if ((s = getenv("HERD_POOL_QUEUE"))) {
            if ((rc = parse_int("HERD_POOL_QUEUE", s, QUEUE_MIN, QUEUE_MAX, QUEUE_FORMS, &v)))
                return rc;
            c.queue_capacity = (size_t)v;
        }
    } else if (c.queue_capacity < QUEUE_MIN || c.queue_capacity > (size_t)QUEUE_MAX) {
        snprintf(num, sizeof num, "%zu", c.queue_capacity);
        return bad("config.queue_capacity", num, "out of range", QUEUE_FORMS);
    }
    if (c.arg_max == 0) {
        c.arg_max = 64;
        if ((s = getenv("HERD_POOL_ARG_MAX"))) {
            if ((rc = parse_int("HERD_POOL_ARG_MAX", s, 1, ARG_MAX_MAX, ARG_FORMS, &v)))
                return rc;
            c.arg_max = (size_t)v;
        }
    } else if (c.arg_max > ARG_MAX_MAX) {
        snprintf(num, sizeof num, "%zu", c.arg_max);
        return bad("config.arg_max", num, "out of range", ARG_FORMS);
    }
    if (c.release_min == 0) {
        c.release_min = 2;
        if ((s = getenv("HERD_POOL_RELEASE"))) {
            if ((rc = parse_int("HERD_POOL_RELEASE", s, 1, 65536, RELEASE_FORMS, &v)))
                return rc;
            c.release_min = (int)v;
        }
    } else if (c.release_min < 1 || c.release_min > 65536) {
        snprintf(num, sizeof num, "%d", c.release_min);
        return bad("config.release_min", num, "out of range", RELEASE_FORMS);
    }
    if (c.hybrid == 0) {
        c.hybrid = -1;
        if ((s = getenv("HERD_POOL_HYBRID"))) {
            if (!strcmp(s, "1"))
                c.hybrid = 1;
            else if (strcmp(s, "0") != 0)
                return bad("HERD_POOL_HYBRID", s, "not 0 or 1",
                           "0 (one thread per rank), 1 (the herd workers run the rank's tasks)");
        }
    } else if (c.hybrid != 1 && c.hybrid != -1) {
        snprintf(num, sizeof num, "%d", c.hybrid);
        return bad("config.hybrid", num, "out of range", "1 (hybrid), -1 (flat), 0 (environment)");
    }
    /* The core runtime owns the HERD_STATS file (pool.md, HERD_STATS): the
     * pool follows HERD_STATS=1 with its own table, and writes JSON only to
     * HERD_POOL_STATS, which takes precedence. */
    stats_path[0] = '\0';
    if (c.stats == 0) {
        c.stats = -1;
        const char *ps = getenv("HERD_POOL_STATS");
        s = getenv("HERD_STATS");
        if (ps) {
            if (*ps && strcmp(ps, "0") != 0) {
                c.stats = 1;
                if (strcmp(ps, "1") != 0) {
                    if (strlen(ps) >= path_len)
                        return bad("HERD_POOL_STATS", ps, "too long",
                                   "empty or 0 (off), 1 (table on stderr), a JSON file path");
                    strcpy(stats_path, ps);
                }
            }
        } else if (s && strcmp(s, "1") == 0) {
            c.stats = 1;
        }
    }
    /* A window of more than 2 GiB would overflow MPI's int counts in a steal. */
    size_t slot = (sizeof(pool_slot_hdr) + c.arg_max + 7) & ~(size_t)7;
    if (c.queue_capacity > ((size_t)1 << 31) / slot) {
        snprintf(num, sizeof num, "%zu", c.queue_capacity);
        return bad("HERD_POOL_QUEUE", num, "queue_capacity * (arg_max + 8) exceeds 2 GiB",
                   "a smaller queue or argument bound");
    }
    *out = c;
    return 0;
}

/* ------------------------------------------------------------- lifecycle */

static char pool_stats_path[4096]; /* rank's HERD_STATS path (one per process) */

int herd_pool_create(MPI_Comm comm, const herd_pool_config *cfg, herd_pool **out) {
    *out = NULL;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    herd_pool_config c;
    int rc = resolve(cfg, &c, pool_stats_path, sizeof pool_stats_path);

    /* Every rank must run with the same settings: slot arithmetic and the
     * lock protocol are shared. Compare them against rank 0's; any rank's
     * error fails every rank (the offending rank printed why). */
    long long mine[6] = {
        rc, c.lock, c.split, (long long)c.queue_capacity, (long long)c.arg_max, c.stats > 0};
    if (rc)
        memset(mine + 1, 0, sizeof(long long) * 5);
    long long root[6];
    memcpy(root, mine, sizeof root);
    MPI_Bcast(root, 6, MPI_LONG_LONG, 0, comm);
    int differs = !rc && memcmp(mine + 1, root + 1, sizeof(long long) * 5) != 0 && root[0] == 0;
    if (differs)
        fprintf(stderr,
                "herd pool: rank %d: settings differ from rank 0's (lock %s/%s, steal %s/%s, "
                "queue %lld/%lld, arg_max %lld/%lld, stats %lld/%lld); set HERD_POOL_* and "
                "HERD_STATS alike on every rank\n",
                rank, herd_pool_lock_name((herd_pool_lock)mine[1]),
                herd_pool_lock_name((herd_pool_lock)root[1]),
                herd_pool_split_name((herd_pool_split)mine[2]),
                herd_pool_split_name((herd_pool_split)root[2]), mine[3], root[3], mine[4], root[4],
                mine[5], root[5]);
    int failed = rc != 0 || differs, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, comm);
    if (any)
        return HERD_EINVAL;

    herd_pool *p = calloc(1, sizeof *p);
    int ok = p != NULL, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    if (!all_ok) {
        free(p);
        return HERD_ENOMEM;
    }
    p->rank = rank;
    p->size = size;
    p->cfg = c;
    p->rng = 0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1);
    p->hybrid = c.hybrid == 1;
    pthread_mutex_init(&p->lq, NULL);
    /* Hybrid needs herd started and MPI's thread level (H1); agreed by all. */
    int hy_ok = !p->hybrid || herd__pool_hybrid_check(p) == HERD_OK, hy_all = 0;
    MPI_Allreduce(&hy_ok, &hy_all, 1, MPI_INT, MPI_LAND, comm);
    if (!hy_all) {
        pthread_mutex_destroy(&p->lq);
        free(p);
        return HERD_EINVAL;
    }
    POOL_MPI(p, MPI_Comm_dup(comm, &p->comm));
    POOL_MPI(p, MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN));

    size_t slot = (sizeof(pool_slot_hdr) + c.arg_max + 7) & ~(size_t)7;
    MPI_Aint bytes = (MPI_Aint)(POOL_SLOTS_OFF + slot * c.queue_capacity);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "same_size", "true");
    MPI_Info_set(info, "same_disp_unit", "true");
    rc = MPI_Win_allocate(bytes, 1, info, p->comm, &p->base, &p->win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "herd pool: rank %d: MPI_Win_allocate of %lld bytes failed: %s\n", rank,
                (long long)bytes, msg);
        MPI_Comm_free(&p->comm);
        free(p);
        return HERD_ENOMEM;
    }
    POOL_MPI(p, MPI_Win_set_errhandler(p->win, MPI_ERRORS_RETURN));
    /* R0: local stores and remote accesses meet in one copy of the memory
     * only in the unified model; the separate model would need epochs
     * around every local access, which the split queue avoids by design. */
    int *model = NULL, flag = 0;
    POOL_MPI(p, MPI_Win_get_attr(p->win, MPI_WIN_MODEL, &model, &flag));
    int unified = flag && *model == MPI_WIN_UNIFIED, all_unified = 0;
    MPI_Allreduce(&unified, &all_unified, 1, MPI_INT, MPI_LAND, p->comm);
    if (!all_unified || herd__pool_queue_init(p) != HERD_OK) {
        if (!unified)
            fprintf(stderr,
                    "herd pool: rank %d: this MPI gives a window in the separate memory "
                    "model; the pool needs MPI_WIN_UNIFIED\n",
                    rank);
        MPI_Win_free(&p->win);
        MPI_Comm_free(&p->comm);
        free(p->steal_buf);
        free(p->exec_buf);
        free(p);
        return all_unified ? HERD_ENOMEM : HERD_ESYS;
    }
    herd__pool_term_init(p);
    POOL_MPI(p, MPI_Win_lock_all(MPI_MODE_NOCHECK, p->win));
    /* Our zeroed metadata (queue_init) must be in place before anyone's
     * first access: sync our stores (R2), then a barrier. */
    POOL_MPI(p, MPI_Win_sync(p->win));
    POOL_MPI(p, MPI_Barrier(p->comm));
    *out = p;
    return HERD_OK;
}

int herd_pool_destroy(herd_pool *p) {
    if (!p)
        return HERD_OK;
    if (p->processing)
        return HERD_ESTATE;
    POOL_MPI(p, MPI_Barrier(p->comm));
    POOL_MPI(p, MPI_Win_unlock_all(p->win));
    POOL_MPI(p, MPI_Win_free(&p->win));
    POOL_MPI(p, MPI_Comm_free(&p->comm));
    free(p->classes);
    free(p->steal_buf);
    free(p->exec_buf);
    pthread_mutex_destroy(&p->lq);
    free(p);
    return HERD_OK;
}

int herd_pool_rank(const herd_pool *p) {
    return p->rank;
}
int herd_pool_size(const herd_pool *p) {
    return p->size;
}
void herd_pool_config_get(const herd_pool *p, herd_pool_config *cfg) {
    *cfg = p->cfg;
}
int herd_pool_last_error(const herd_pool *p) {
    return p->last_error;
}

/* ---------------------------------------------------------- task classes */

static uint64_t name_hash(const char *s, int index) {
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)index;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return (h & ~(1ull << 63)) | 1; /* never all ones: that marks a malformed registration */
}

int herd_pool_register(herd_pool *p, const char *name, herd_pool_fn fn, int *id) {
    if (p->processing)
        return HERD_ESTATE;
    int index = p->nclasses;
    size_t len = name ? strlen(name) : 0;
    int local_bad = !name || len == 0 || len >= POOL_NAME_MAX || !fn;
    if (local_bad)
        fprintf(stderr, "herd pool: rank %d: task class %d: %s\n", p->rank, index,
                !fn ? "NULL function" : "name must be 1 to 63 bytes");
    /* Compare everyone's hash: max(h) and max(~h) = ~min(h) in one reduce. */
    /* A malformed registration sends {max, max}: then ~max(~h) = 0 != max(h). */
    uint64_t h = local_bad ? UINT64_MAX : name_hash(name, index);
    uint64_t pair[2] = {h, local_bad ? UINT64_MAX : ~h}, red[2];
    POOL_MPI(p, MPI_Allreduce(pair, red, 2, MPI_UINT64_T, MPI_MAX, p->comm));
    if (red[0] != ~red[1]) {
        /* They differ somewhere: gather the names to say where. */
        char mine[POOL_NAME_MAX] = "";
        if (!local_bad)
            memcpy(mine, name, len + 1);
        char root[POOL_NAME_MAX];
        memcpy(root, mine, sizeof root);
        POOL_MPI(p, MPI_Bcast(root, POOL_NAME_MAX, MPI_CHAR, 0, p->comm));
        if (strcmp(root, mine) != 0 || local_bad)
            fprintf(stderr,
                    "herd pool: rank %d: task class %d registered as \"%s\" here but as \"%s\" on "
                    "rank 0; every rank must register the same classes in the same order\n",
                    p->rank, index, mine, root);
        return HERD_EINVAL;
    }
    pool_class *nc = realloc(p->classes, sizeof *nc * (size_t)(index + 1));
    int ok = nc != NULL, all_ok = 0;
    if (nc)
        p->classes = nc;
    POOL_MPI(p, MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, p->comm));
    if (!all_ok)
        return HERD_ENOMEM;
    memcpy(p->classes[index].name, name, len + 1);
    p->classes[index].fn = fn;
    p->nclasses++;
    *id = index;
    return HERD_OK;
}

/* ---------------------------------------------------------- adding tasks */

/* The pool for which this thread holds an uncommitted herd_pool_task_alloc()
 * slot. Per thread: in hybrid mode several workers reserve at once (H3);
 * nothing may block between alloc and commit, so the task cannot migrate. */
static __thread herd_pool *tls_reserved;

void *herd_pool_task_alloc(herd_pool *p, int id, size_t size) {
    if (tls_reserved == p) {
        fprintf(stderr,
                "herd pool: rank %d: herd_pool_task_alloc while a reserved task is not "
                "committed\n",
                p->rank);
        p->last_error = HERD_ESTATE;
        return NULL;
    }
    if (id < 0 || id >= p->nclasses) {
        fprintf(stderr, "herd pool: rank %d: unknown task class %d (%d registered)\n", p->rank, id,
                p->nclasses);
        p->last_error = HERD_EINVAL;
        return NULL;
    }
    if (size > p->cfg.arg_max) {
        fprintf(stderr,
                "herd pool: rank %d: task of class \"%s\" has %zu argument bytes, more than the "
                "bound of %zu (HERD_POOL_ARG_MAX or herd_pool_config.arg_max)\n",
                p->rank, p->classes[id].name, size, p->cfg.arg_max);
        p->last_error = HERD_EINVAL;
        return NULL;
    }
    char *a = herd__pool_push_slot(p, id, size);
    if (a)
        tls_reserved = p;
    return a;
}

int herd_pool_task_commit(herd_pool *p) {
    if (tls_reserved != p)
        return HERD_ESTATE;
    tls_reserved = NULL;
    herd__pool_push_commit(p);
    return HERD_OK;
}

int herd_pool_add(herd_pool *p, int id, const void *arg, size_t size) {
    char *a = herd_pool_task_alloc(p, id, size);
    if (!a)
        return p->last_error;
    if (size)
        memcpy(a, arg, size);
    return herd_pool_task_commit(p);
}

/* ------------------------------------------------------------ processing */

int herd__pool_random_victim(herd_pool *p) {
    /* xorshift64*; any rank but us. */
    uint64_t x = p->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    p->rng = x;
    int v = (int)((x * 0x2545f4914f6cdd1dull >> 33) % (uint64_t)(p->size - 1));
    return v >= p->rank ? v + 1 : v;
}

/* An idle rank's pause between fruitless steal attempts: give the CPU to
 * whoever has work on it (ranks often share cores), and after a long dry
 * spell sleep briefly so that idle ranks do not flood the busy ones. */
static void idle_pause(uint64_t fails, int size) {
    if (fails < (uint64_t)size * 64) {
        sched_yield();
    } else {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

void herd__pool_run(herd_pool *p, char *buf, double *active) {
    pool_slot_hdr h;
    memcpy(&h, buf, sizeof h);
    double t0 = herd__pool_now();
    p->classes[h.cls].fn(p, buf + sizeof h, h.size);
    *active += herd__pool_now() - t0;
    if (tls_reserved == p) {
        fprintf(stderr,
                "herd pool: rank %d: task of class \"%s\" returned with an uncommitted "
                "herd_pool_task_alloc; committing it\n",
                p->rank, p->classes[h.cls].name);
        herd_pool_task_commit(p);
    }
}

static void run_task(herd_pool *p) {
    p->in_task = 1;
    herd__pool_run(p, p->exec_buf, &p->st.time_active);
    p->in_task = 0;
    p->st.tasks_executed++;
}

static void report(herd_pool *p);

int herd_pool_process(herd_pool *p) {
    if (p->in_task || p->processing)
        return HERD_ESTATE;
    p->processing = 1;
    p->term.rounds = 0;
    herd__pool_term_start(p); /* T1 */
    if (p->hybrid) {
        herd__pool_process_hybrid(p);
        goto finished;
    }
    double t0 = herd__pool_now();
    unsigned since_poll = 0;
    uint64_t fails = 0;
    for (;;) {
        /* Algorithm 1: run our own tasks, newest first. */
        if (herd__pool_pop(p, p->exec_buf)) {
            run_task(p);
            if (++since_poll == 64) {
                since_poll = 0;
                herd__pool_term_poll(p);
            }
            continue;
        }
        if (herd__pool_reacquire(p) > 0)
            continue;
        /* Idle: our queue is empty (Q4 found no public task). Vote, steal. */
        double ts = herd__pool_now();
        int done = 0;
        for (;;) {
            if (herd__pool_term_idle(p)) {
                done = 1;
                break;
            }
            if (p->size > 1 && herd__pool_steal(p, herd__pool_random_victim(p)) > 0) {
                fails = 0;
                break;
            }
            idle_pause(++fails, p->size);
        }
        p->st.time_search += herd__pool_now() - ts;
        if (done)
            break;
    }
    p->st.time_total = herd__pool_now() - t0;
finished:
    p->st.vote_rounds = p->term.rounds;
    p->processing = 0;
    /* The counters cover the seeding before this call and the call itself;
     * the next call's start from zero. */
    p->last = p->st;
    memset(&p->st, 0, sizeof p->st);
    if (p->cfg.stats > 0)
        report(p);
    return HERD_OK;
}

/* -------------------------------------------------------------- statistics */

int herd_pool_stats_get(herd_pool *p, herd_pool_stats *mine, herd_pool_stats *total) {
    herd_pool_stats s = p->last;
    if (mine)
        *mine = s;
    if (total) {
        uint64_t u[10] = {s.tasks_executed, s.tasks_added,    s.steals,   s.tasks_stolen,
                          s.steals_failed,  s.steals_aborted, s.releases, s.reacquires,
                          s.bytes_stolen,   s.vote_rounds};
        double d[3] = {s.time_active, s.time_search, s.time_total};
        uint64_t us[10];
        double ds[3];
        POOL_MPI(p, MPI_Allreduce(u, us, 10, MPI_UINT64_T, MPI_SUM, p->comm));
        POOL_MPI(p, MPI_Allreduce(d, ds, 3, MPI_DOUBLE, MPI_SUM, p->comm));
        *total = (herd_pool_stats){us[0], us[1], us[2], us[3], us[4], us[5], us[6],
                                   us[7], us[8], us[9], ds[0], ds[1], ds[2]};
    }
    return HERD_OK;
}

static void print_table(herd_pool *p, const herd_pool_stats *all) {
    FILE *f = stderr;
    fprintf(f, "herd pool: %d ranks, lock %s, steal %s\n", p->size,
            herd_pool_lock_name(p->cfg.lock), herd_pool_split_name(p->cfg.split));
    fprintf(f, "%5s %12s %9s %9s %9s %9s %8s %8s %11s %9s %9s %9s %6s\n", "rank", "executed",
            "steals", "stolen", "failed", "aborted", "release", "reacq", "bytes", "active_s",
            "search_s", "total_s", "eff%");
    herd_pool_stats t = {0};
    for (int r = 0; r < p->size; r++) {
        const herd_pool_stats *s = &all[r];
        fprintf(f,
                "%5d %12llu %9llu %9llu %9llu %9llu %8llu %8llu %11llu %9.3f %9.3f %9.3f %6.1f\n",
                r, (unsigned long long)s->tasks_executed, (unsigned long long)s->steals,
                (unsigned long long)s->tasks_stolen, (unsigned long long)s->steals_failed,
                (unsigned long long)s->steals_aborted, (unsigned long long)s->releases,
                (unsigned long long)s->reacquires, (unsigned long long)s->bytes_stolen,
                s->time_active, s->time_search, s->time_total,
                s->time_total > 0 ? 100.0 * s->time_active / s->time_total : 0.0);
        t.tasks_executed += s->tasks_executed;
        t.steals += s->steals;
        t.tasks_stolen += s->tasks_stolen;
        t.steals_failed += s->steals_failed;
        t.steals_aborted += s->steals_aborted;
        t.releases += s->releases;
        t.reacquires += s->reacquires;
        t.bytes_stolen += s->bytes_stolen;
        t.time_active += s->time_active;
        t.time_search += s->time_search;
        t.time_total += s->time_total;
    }
    fprintf(f, "%5s %12llu %9llu %9llu %9llu %9llu %8llu %8llu %11llu %9.3f %9.3f %9.3f %6.1f\n",
            "all", (unsigned long long)t.tasks_executed, (unsigned long long)t.steals,
            (unsigned long long)t.tasks_stolen, (unsigned long long)t.steals_failed,
            (unsigned long long)t.steals_aborted, (unsigned long long)t.releases,
            (unsigned long long)t.reacquires, (unsigned long long)t.bytes_stolen, t.time_active,
            t.time_search, t.time_total,
            t.time_total > 0 ? 100.0 * t.time_active / t.time_total : 0.0);
    fprintf(f, "herd pool: %llu termination rounds\n", (unsigned long long)all[0].vote_rounds);
}

static void write_json(herd_pool *p, const herd_pool_stats *all, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "herd pool: HERD_STATS=%s: cannot write: %s\n", path, strerror(errno));
        return;
    }
    fprintf(f,
            "{\"kind\": \"herd-pool\", \"ranks\": %d, \"lock\": \"%s\", \"steal\": \"%s\", "
            "\"per_rank\": [",
            p->size, herd_pool_lock_name(p->cfg.lock), herd_pool_split_name(p->cfg.split));
    for (int r = 0; r < p->size; r++) {
        const herd_pool_stats *s = &all[r];
        fprintf(f,
                "%s\n  {\"rank\": %d, \"tasks_executed\": %llu, \"tasks_added\": %llu, "
                "\"steals\": %llu, \"tasks_stolen\": %llu, \"steals_failed\": %llu, "
                "\"steals_aborted\": %llu, \"releases\": %llu, \"reacquires\": %llu, "
                "\"bytes_stolen\": %llu, \"vote_rounds\": %llu, \"time_active\": %.6f, "
                "\"time_search\": %.6f, \"time_total\": %.6f}",
                r ? "," : "", r, (unsigned long long)s->tasks_executed,
                (unsigned long long)s->tasks_added, (unsigned long long)s->steals,
                (unsigned long long)s->tasks_stolen, (unsigned long long)s->steals_failed,
                (unsigned long long)s->steals_aborted, (unsigned long long)s->releases,
                (unsigned long long)s->reacquires, (unsigned long long)s->bytes_stolen,
                (unsigned long long)s->vote_rounds, s->time_active, s->time_search, s->time_total);
    }
    fprintf(f, "\n]}\n");
    if (fclose(f) != 0)
        fprintf(stderr, "herd pool: HERD_STATS=%s: cannot write: %s\n", path, strerror(errno));
}

/* Collective: rank 0 gathers every rank's counters and prints or writes them. */
static void report(herd_pool *p) {
    herd_pool_stats *all = p->rank == 0 ? calloc((size_t)p->size, sizeof *all) : NULL;
    if (p->rank == 0 && !all) {
        fprintf(stderr, "herd pool: rank 0: no memory for the statistics of %d ranks\n", p->size);
        MPI_Abort(p->comm, 2);
    }
    herd_pool_stats s = p->last;
    POOL_MPI(p, MPI_Gather(&s, (int)sizeof s, MPI_BYTE, all, (int)sizeof s, MPI_BYTE, 0, p->comm));
    if (p->rank != 0)
        return;
    if (pool_stats_path[0])
        write_json(p, all, pool_stats_path);
    else
        print_table(p, all);
    free(all);
}
