/* Teams: the parallel construct, the team barrier, the current task record,
 * and the start of herd (docs/design/openmp.md, "Teams").
 *
 * The outermost active team: the encountering thread adopts herd's worker
 * 0 (core/adopt.c) and runs member 0 on its own stack; member i > 0 is
 * placed on worker i's own queue, so it starts on worker i's kernel thread,
 * and in tied mode it stays there. Inner teams: members are herd tasks of a
 * group, on whatever worker takes them (ULTs, never new kernel threads). The
 * end of the region: each member waits for its own tasks (herd_wait, which
 * covers their descendants: a herd task completes after its children), and
 * the encountering task waits for the members' group. */
#include "core/watchdog.h"
#include "omp/omp.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__thread omp_task *herd__omp_cur __attribute__((tls_model("initial-exec")));
static __thread omp_task initial_task;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
/* herd starts at the first region with more than one thread and again
 * after a pause (omp_pause_resource: herd__omp_pause); start_lock orders
 * the two. */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static int start_rc, stop_registered;

static void ensure_init(void) { pthread_once(&init_once, herd__omp_init); }

__attribute__((constructor)) static void omp_ctor(void) { ensure_init(); }

omp_task *herd__omp_task_slow(void) {
    ensure_init();
    memset(&initial_task, 0, sizeof initial_task);
    initial_task.icv = herd__omp_g.icv;
    herd__omp_cur = &initial_task;
    return &initial_task;
}

static void stop_at_exit(void) {
    /* Only from outside any region: herd_stop waits for the region's owner. */
    herd__rt *rt = __atomic_load_n(&herd__rt_global, __ATOMIC_ACQUIRE);
    if (rt && !herd__self() && !atomic_load_explicit(&rt->adopted, memory_order_acquire))
        herd_stop();
}

static void start_herd(void) {
    ensure_init();
    herd_config cfg = {0};
    cfg.workers = herd__omp_g.workers;
    /* Task stacks as roomy as the threads they replace (docs/design/stacks.md);
     * HERD_STACK, when set, wins, and then it is the one overflow reports name. */
    const char *stack_setting = getenv("HERD_STACK") ? "HERD_STACK" : "OMP_STACKSIZE";
    if (!getenv("HERD_STACK"))
        cfg.stack_size = herd__omp_stack_size();
    if (herd__omp_g.wait_active && !getenv("HERD_IDLE"))
        cfg.idle = "spin";
    start_rc = herd__start_ex(&cfg, HERD__START_ADOPT | HERD__START_TIED | HERD__START_NAME_BY_PC,
                              stack_setting);
    if (start_rc)
        herd__omp_fatal("cannot start herd: %s", herd_strerror(start_rc));
    if (!stop_registered++)
        atexit(stop_at_exit);
}

int herd__omp_start(void) {
    /* ORDER: acquire; pairs with herd_start's publication of the runtime. */
    if (__atomic_load_n(&herd__rt_global, __ATOMIC_ACQUIRE))
        return 0;
    pthread_mutex_lock(&start_lock);
    if (!__atomic_load_n(&herd__rt_global, __ATOMIC_ACQUIRE)) /* ORDER: as above */
        start_herd();
    pthread_mutex_unlock(&start_lock);
    return start_rc;
}

/* omp_pause_resource: stop herd's workers (their threads end) when no
 * region runs and the caller is no herd task; the next region starts herd
 * again. 0: paused (or nothing ran), -1: a region runs. */
int herd__omp_pause(void) {
    int rc = 0;
    pthread_mutex_lock(&start_lock);
    herd__rt *rt = __atomic_load_n(&herd__rt_global, __ATOMIC_ACQUIRE); /* ORDER: as above */
    if (rt) {
        if (herd__self() || atomic_load_explicit(&rt->adopted, memory_order_acquire))
            rc = -1;
        else if (herd_stop() != 0)
            rc = -1;
    }
    pthread_mutex_unlock(&start_lock);
    return rc;
}

void herd__omp_relax(void) {
    herd__worker *w = herd__self();
    if (w) {
        int oversubscribed = !w->rt->cpu_per_worker;
        OMP_SAVE();
        herd_yield();
        OMP_RESTORE();
        /* More workers than CPUs: the member we wait for may be another
         * worker's kernel thread that the OS has not scheduled; herd_yield
         * only runs our own worker's tasks, so give the CPU away too (a
         * spin-wait chain through 3 workers on 2 CPUs otherwise moved one
         * step per OS time slice: omp.loops.herd-run, 60 s and more). */
        if (oversubscribed)
            sched_yield();
    } else {
        sched_yield();
    }
}

typedef struct member_arg {
    omp_team *team;
    int i;
} member_arg;

static void member_entry(void *p) {
    member_arg a;
    memcpy(&a, p, sizeof a);
    omp_team *team = a.team;
    omp_task *prev = herd__omp_cur;
    omp_task me;
    memset(&me, 0, sizeof me);
    me.team = team;
    me.parent = team->parent;
    me.thread_num = a.i;
    me.frame_mode = OMP_FRAME_HERD; /* a herd task of the team's group */
    me.icv = team->parent->icv;
    me.red = team->red;
    me.ch_lo = me.ch_hi = -1;
    herd__omp_cur = &me;
    if (__builtin_expect(herd__omp_g.display_affinity, 0))
        herd__omp_affinity_member();
    if (team->preinit)
        (void)herd__omp_ws_begin(&me); /* worksharing 0 is set up: just enter it */
    team->fn(team->data);
    if (herd__self())
        herd__omp_wait_tasks(&me); /* the region's end: this member's tasks */
    herd__omp_deps_free(&me);
    herd__omp_cur = prev;
}

static void warn_once(int *done, const char *fmt, int a, int b) {
    if (!__atomic_exchange_n(done, 1, __ATOMIC_RELAXED)) {
        fprintf(stderr, "herd-omp: ");
        fprintf(stderr, fmt, a, b);
        fprintf(stderr, "\n");
    }
}

static int warned_limit, warned_busy;

/* Start the team's members 1..n-1, run member 0 here, wait for all. */
static void run_members(omp_team *team, int outer) {
    member_arg a = {team, 0};
    for (int i = 1; i < team->nthreads; i++) {
        a.i = i;
        int rc = outer ? herd__group_place_worker(&team->members, i, member_entry, &a, sizeof a)
                       : herd_group_spawn(&team->members, member_entry, &a, sizeof a);
        if (rc)
            herd__omp_fatal("cannot start team member %d: %s", i, herd_strerror(rc));
    }
    a.i = 0;
    herd__call_task(member_entry, &a);
    herd__wait_ctx c; /* for the watchdog's dump (core/watchdog.h) */
    herd__wait_enter(&c, HERD__WAIT_OMP_REGION, team, NULL);
    herd_group_wait(&team->members);
    herd__wait_leave(&c);
}

typedef void (*omp_preinit)(omp_team *team, void *arg);

static void parallel(void (*fn)(void *), void *data, unsigned num_threads, omp_preinit pre,
                     void *pre_arg) {
    OMP_SAVE();
    omp_task *enc = omp__saved;
    int level = enc->team ? enc->team->level : 0;
    int active = enc->team ? enc->team->active_level : 0;
    long n = num_threads ? (long)num_threads : enc->icv.nthreads;
    if (active >= enc->icv.max_active)
        n = 1;
    int team_limit = herd__omp_root(enc)->league_limit; /* teams thread_limit */
    if (team_limit && n > team_limit)
        n = team_limit;
    /* On this stack: the members end before we return (the group wait),
     * and with them every task of the region. A heap team (1.5 KB) cost a
     * malloc_consolidate per region (perf, empty regions). */
    omp_team team_here, *team = &team_here;
    memset(team, 0, sizeof *team);
    int outer = 0;
    herd__frame fr;
    if (n > 1 && active == 0 && !herd__self()) {
        herd__omp_start();
        if (n > herd__omp_g.workers) {
            warn_once(&warned_limit,
                      "a team of %d threads was asked for; the outermost team has at most %d "
                      "(the workers: OMP_NUM_THREADS or HERD_WORKERS at start-up)",
                      (int)n, herd__omp_g.workers);
            n = herd__omp_g.workers;
        }
        int rc = herd__adopt_enter(&fr);
        if (rc == 0) {
            outer = 1;
            /* The team's tasks run on its own n workers only: a task
             * reports its worker as its thread number, and a thread number
             * is one thread's at a time (per-thread data, task reductions). */
            herd__serve_only(herd__self()->rt, (int)n);
        } else {
            /* Another application thread runs an outermost region. */
            warn_once(&warned_busy,
                      "two application threads ran outermost parallel regions at once; the "
                      "second runs with one thread (%d of %d asked)", 1, (int)n);
            n = 1;
        }
    } else if (n > 1 && !herd__self()) {
        n = 1; /* an inner region of a serialised outer one, outside herd */
    }
    team->nthreads = (int)n;
    team->level = level + 1;
    team->active_level = active + (n > 1);
    team->outer = outer;
    team->parent = enc;
    team->fn = fn;
    team->data = data;
    herd__omp_ws_ring_init(team);
    if (pre)
        pre(team, pre_arg);
    if (herd_barrier_init(&team->bar, n) != 0)
        herd__omp_fatal("out of memory for a team barrier");
    herd_group_init(&team->members);
    if (n == 1) {
        member_arg a = {team, 0};
        if (herd__self())
            herd__call_task(member_entry, &a);
        else
            member_entry(&a);
    } else {
        run_members(team, outer);
    }
    if (outer) {
        herd__serve_all(herd__self()->rt);
        herd__adopt_leave(&fr);
    }
    herd_barrier_destroy(&team->bar);
    OMP_RESTORE();
}

OMP_API void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags) {
    (void)flags; /* proc_bind: herd's binding applies (docs/design/openmp.md) */
    parallel(fn, data, num_threads, NULL, NULL);
}

/* parallel reduction(task, ...): the members' registration, for the team's
 * size (reduction.c); GCC's code combines that many copies after the
 * region, then unregisters. */
typedef struct red_pre {
    uintptr_t *data;
    unsigned nthreads;
} red_pre;

static void pre_reductions(omp_team *team, void *p) {
    red_pre *r = p;
    herd__omp_red_register(r->data, NULL, NULL, team->nthreads);
    team->red = r->data;
    /* ORDER: relaxed; the members that read it start after this (their
     * spawn publishes). Dropped after the region, as the taskgroups' are. */
    atomic_fetch_add_explicit(&herd__omp_g.red_live, 1, memory_order_relaxed);
    r->nthreads = (unsigned)team->nthreads;
}

OMP_API unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned num_threads,
                                          unsigned flags) {
    (void)flags;
    red_pre r = {*(uintptr_t **)data, 0}; /* GCC's data starts with its arrays */
    parallel(fn, data, num_threads, pre_reductions, &r);
    /* ORDER: relaxed; every task that read the registration has ended. */
    atomic_fetch_sub_explicit(&herd__omp_g.red_live, 1, memory_order_relaxed);
    return r.nthreads;
}

/* Combined parallel loops and sections: worksharing 0 set up beforehand. */
typedef struct loop_pre {
    long sched, start, end, incr, chunk;
} loop_pre;

static void pre_loop(omp_team *team, void *p) {
    team->preinit = 1;
    loop_pre *l = p;
    omp_task probe;
    memset(&probe, 0, sizeof probe);
    probe.team = team;
    probe.icv = team->parent->icv;
    omp_ws *ws = &team->ws[0];
    herd__omp_loop_init(ws, &probe, l->sched, l->start, l->end, l->incr, l->chunk);
    atomic_store_explicit(&ws->free_for, -1, memory_order_relaxed);
    /* ORDER: relaxed; the members start after this (the queueing of their
     * tasks orders it). */
    atomic_store_explicit(&ws->ready_for, 0, memory_order_relaxed);
}

#define PARALLEL_LOOP(name, sched)                                                                 \
    OMP_API void GOMP_parallel_loop_##name(void (*fn)(void *), void *data, unsigned nt, long s,    \
                                           long e, long i, long c, unsigned flags) {               \
        (void)flags;                                                                               \
        loop_pre l = {sched, s, e, i, c};                                                          \
        parallel(fn, data, nt, pre_loop, &l);                                                      \
    }
PARALLEL_LOOP(static, OMP_SCHED_STATIC)
PARALLEL_LOOP(dynamic, OMP_SCHED_DYNAMIC)
PARALLEL_LOOP(guided, OMP_SCHED_GUIDED)
PARALLEL_LOOP(nonmonotonic_dynamic, OMP_SCHED_DYNAMIC)
PARALLEL_LOOP(nonmonotonic_guided, OMP_SCHED_GUIDED)

#define PARALLEL_LOOP_RT(name)                                                                     \
    OMP_API void GOMP_parallel_loop_##name(void (*fn)(void *), void *data, unsigned nt, long s,    \
                                           long e, long i, unsigned flags) {                       \
        (void)flags;                                                                               \
        loop_pre l = {OMP_SCHED_RUNTIME, s, e, i, 0};                                              \
        parallel(fn, data, nt, pre_loop, &l);                                                      \
    }
PARALLEL_LOOP_RT(runtime)
PARALLEL_LOOP_RT(nonmonotonic_runtime)
PARALLEL_LOOP_RT(maybe_nonmonotonic_runtime)

static void pre_sections(omp_team *team, void *p) {
    team->preinit = 1;
    omp_ws *ws = &team->ws[0];
    ws->sect_count = *(unsigned *)p;
    atomic_store_explicit(&ws->sect_next, 1, memory_order_relaxed);
    atomic_store_explicit(&ws->free_for, -1, memory_order_relaxed);
    atomic_store_explicit(&ws->ready_for, 0, memory_order_relaxed); /* ORDER: as in pre_loop */
}

OMP_API void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned nt, unsigned count,
                                    unsigned flags) {
    (void)flags;
    parallel(fn, data, nt, pre_sections, &count);
}

OMP_API void GOMP_barrier(void) {
    OMP_SAVE();
    omp_task *t = omp__saved;
    herd__wait_ctx c; /* for the watchdog's dump (core/watchdog.h) */
    herd__wait_enter(&c, HERD__WAIT_OMP_BARRIER, t->team ? (void *)&t->team->bar : NULL,
                     __builtin_return_address(0));
    if (herd__self())
        herd__omp_wait_tasks(t); /* this member's tasks; the barrier then covers the team's */
    else if (t->deps)
        herd__omp_wait_events(t, 0); /* outside herd: its undeferred detached tasks */
    if (__builtin_expect(herd__omp_g.cancellation, 0))
        (void)herd__omp_cancel_barrier(t); /* one a cancel ends (cancel.c) */
    else if (t->team && t->team->nthreads > 1)
        herd_barrier_wait(&t->team->bar);
    herd__wait_leave(&c);
    OMP_RESTORE();
}

OMP_API bool GOMP_barrier_cancel(void) {
    OMP_SAVE();
    omp_task *t = omp__saved;
    if (herd__self())
        herd__omp_wait_tasks(t);
    else if (t->deps)
        herd__omp_wait_events(t, 0);
    bool cancelled = herd__omp_g.cancellation ? herd__omp_cancel_barrier(t) : false;
    if (!herd__omp_g.cancellation && t->team && t->team->nthreads > 1)
        herd_barrier_wait(&t->team->bar);
    OMP_RESTORE();
    return cancelled;
}
