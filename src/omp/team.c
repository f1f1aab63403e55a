/* Teams: the parallel construct (and its pre-4.9 start/end form), the team
 * barrier, the current task record, and the start of herd
 * (docs/design/openmp.md, "Teams").
 *
 * Every member has a kernel thread of its own, as under libgomp. The
 * outermost active team: the encountering thread adopts herd's worker 0
 * (core/adopt.c) and runs member 0 on its own stack; member i > 0 below
 * the workers is placed on worker i's own queue, so it starts on worker
 * i's kernel thread, and in tied mode it stays there; members beyond the
 * workers run on guest threads (guest.c). Nested active teams, and teams
 * whose encountering thread is not a herd worker (a guest, a second
 * application thread): member 0 on the encountering thread, members 1.. on
 * guests. The end of the region: each member waits for its own tasks
 * (herd_wait, which covers their descendants: a herd task completes after
 * its children), and the encountering task waits for the members' group and
 * for the guests.
 *
 * Mixed teams (some members guests), and every team while herd has more
 * workers than CPUs: the team barrier is a count under the team's mix_lock
 * (a mutex: with more threads than CPUs a preempted holder of a spin lock
 * stalled every other arrival); the primary (member 0) opens it, moving the
 * phase and releasing the waiters, once the last arrival has told it. A
 * waiter that is a herd task spins a little (herd__spin_wait) and then
 * suspends (herd__block: its worker runs other tasks; tied mode homes it,
 * so the releaser may be any thread); a thread spins a little and then
 * sleeps on the phase word. The end of the region waits for the guests the
 * same way (the last guest releases the encountering task). */
#include "omp/omp.h"

#include <limits.h>
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

static void ensure_init(void) {
    pthread_once(&init_once, herd__omp_init);
}

__attribute__((constructor)) static void omp_ctor(void) {
    ensure_init();
    herd__omp_bind_initial();
}

/* HERD_WORKERS=auto: herd counted the workers when it started; they are
 * the team size unless OMP_NUM_THREADS gave one (icv.c). */
static void adopt_auto_workers(void) {
    omp_global *g = &herd__omp_g;
    g->workers = herd_num_workers();
    if (g->workers > g->thread_limit)
        g->workers = g->thread_limit;
    if (!g->nthreads_set)
        g->icv.nthreads = g->workers;
}

omp_task *herd__omp_task_slow(void) {
    ensure_init();
    /* The initial task copies the ICVs: under HERD_WORKERS=auto its
     * nthreads-var is the count herd starts with, so start herd first. */
    if (herd__omp_g.workers_auto)
        herd__omp_start(); /* a failure stops the program (start_herd) */
    memset(&initial_task, 0, sizeof initial_task);
    herd__omp_initial_icv(&initial_task.icv_base);
    herd__omp_icv_root(&initial_task);
    herd__omp_cur = &initial_task;
    return &initial_task;
}

static void stop_at_exit(void) {
    /* Only from outside any region: herd_stop waits for the region's owner. */
    herd__rt *rt = herd__rt_started();
    if (rt && !herd__self() && !herd__rt_adopted(rt))
        herd_stop();
}

static void start_herd(void) {
    ensure_init();
    herd_config cfg = {0};
    /* HERD_WORKERS=auto: herd counts them at every start (after a pause
     * too), not the count of the start before */
    cfg.workers = herd__omp_g.workers_auto ? 0 : herd__omp_g.workers;
    cfg.bind = herd__omp_g.bind; /* NULL: HERD_BIND or herd's default */
    /* Task stacks as roomy as the threads they replace (docs/design/stacks.md);
     * HERD_STACK, when set, wins, and then it is the one overflow reports name. */
    const char *stack_setting = getenv("HERD_STACK") ? "HERD_STACK" : "OMP_STACKSIZE";
    if (!getenv("HERD_STACK"))
        cfg.stack_size = herd__omp_stack_size();
    if (herd__omp_g.wait_active && !getenv("HERD_IDLE"))
        cfg.idle = "spin";
    int place = herd__omp_unbind_thread();
    start_rc = herd__start_ex(&cfg,
                              HERD__START_ADOPT | HERD__START_TIED | HERD__START_NAME_BY_PC |
                                  HERD__START_SERVING | HERD__START_RESCUE,
                              stack_setting);
    if (place >= 0)
        herd__omp_bind_thread(place);
    if (start_rc)
        herd__omp_fatal("cannot start herd: %s", herd_strerror(start_rc));
    if (herd__omp_g.workers_auto)
        adopt_auto_workers();
    if (!stop_registered++)
        atexit(stop_at_exit);
}

int herd__omp_start(void) {
    /* ORDER: acquire; pairs with herd_start's publication of the runtime. */
    if (herd__rt_started())
        return 0;
    pthread_mutex_lock(&start_lock);
    if (!herd__rt_started()) /* ORDER: as above */
        start_herd();
    pthread_mutex_unlock(&start_lock);
    return start_rc;
}

/* omp_pause_resource: stop herd's workers and end the idle guest threads
 * (their threads end) when no region runs and the caller is no herd task;
 * the next region starts herd again. 0: paused (or nothing ran), -1: a
 * region runs. */
int herd__omp_pause(void) {
    int rc = 0;
    pthread_mutex_lock(&start_lock);
    herd__rt *rt = herd__rt_started(); /* ORDER: as above */
    if (rt) {
        if (herd__self() || herd__rt_adopted(rt))
            rc = -1;
        else if (herd_stop() != 0)
            rc = -1;
    }
    pthread_mutex_unlock(&start_lock);
    if (rc == 0)
        herd__omp_guests_retire();
    return rc;
}

void herd__omp_relax(void) {
    if (herd__self()) {
        int crowded = herd__cpus_crowded();
        OMP_SAVE();
        herd_yield();
        OMP_RESTORE();
        /* Crowded CPUs (more workers than CPUs, or guests beyond the spare
         * ones): the member we wait for may be a kernel thread that the OS
         * has not scheduled; herd_yield only runs our own worker's tasks,
         * so give the CPU away too (a spin-wait chain through 3 workers on
         * 2 CPUs otherwise moved one step per OS time slice:
         * omp.loops.herd-run, 60 s and more). */
        if (crowded)
            sched_yield();
    } else {
        sched_yield();
    }
}

void herd__omp_poll_pause(unsigned look, unsigned spins) {
    /* Crowded CPUs (herd__cpus_crowded): the member that ends the wait may
     * be waiting for this CPU (EPCC ORDERED, 4 threads on 2 CPUs: 4.6 us
     * per iteration with an offer every 32 looks, 2.1 with one at every
     * look). */
    if (look % spins == 0 || herd__cpus_crowded())
        herd__omp_relax();
    else
        herd__cpu_relax();
}

/* ---------------------------------------------------------- mixed teams */

typedef struct mix_arm {
    pthread_mutex_t *lock;
    omp_waiter *w;
} mix_arm;

static void arm_mix(herd__worker *wk, herd__ult *u, void *p) {
    (void)wk;
    mix_arm a = *(mix_arm *)p; /* on u's stack: read before u can run */
    pthread_mutex_lock(a.lock);
    /* ORDER: relaxed; the lock orders it against mix_release(). */
    if (atomic_load_explicit(&a.w->flag, memory_order_relaxed) == 1) {
        pthread_mutex_unlock(a.lock); /* released while we switched: nobody else wakes u */
        herd__ult_ready(u);
        return;
    }
    a.w->ult = u; /* the unlock publishes it to the releaser, which reads it under the lock */
    pthread_mutex_unlock(a.lock);
}

/* Release a waiter. Context: the team's mix_lock held. */
static void mix_release(omp_waiter *w) {
    herd__ult *u = w->ult;
    if (u) {
        herd__ult_ready(u); /* homed (tied mode): safe from any thread */
        return;
    }
    /* ORDER: release; pairs with the acquire loads in mix_wait(). After it
     * the waiter may return and its record vanish (a futex wake of a dead
     * word wakes nobody). */
    if (atomic_exchange_explicit(&w->flag, 1, memory_order_release) == 2)
        herd__futex_wake(&w->flag, 1);
}

static int flag_set(void *p) {
    /* ORDER: relaxed; mix_wait's acquire load follows (herd__spin_wait). */
    return atomic_load_explicit(&((omp_waiter *)p)->flag, memory_order_relaxed) == 1;
}

/* Wait until mix_release(w). Context: the team's mix_lock held, w in one of
 * its lists; returns with the lock released. */
static void mix_wait(omp_team *team, omp_waiter *w) {
    pthread_mutex_unlock(&team->mix_lock);
    herd__worker *self = herd__self();
    if (self) {
        if (!herd__spin_wait(self, flag_set, w)) {
            mix_arm a = {&team->mix_lock, w};
            OMP_SAVE();
            herd__block(arm_mix, &a);
            OMP_RESTORE();
            /* Readied by mix_release or by our arm: both under the lock,
             * after the releaser's writes; the ready queue orders them. */
            return;
        }
        (void)atomic_load_explicit(&w->flag, memory_order_acquire); /* ORDER: as below */
        return;
    }
    omp_spin s = {0, 0, 0, 0};
    do {
        /* ORDER: acquire; pairs with the release exchange in mix_release(). */
        if (atomic_load_explicit(&w->flag, memory_order_acquire) == 1)
            return;
    } while (herd__omp_spin_step(&s));
    uint32_t v = 0;
    /* ORDER: acquire; on failure (released meanwhile) it pairs with the
     * release exchange of the waker; on success the loop below reads again. */
    if (!atomic_compare_exchange_strong_explicit(&w->flag, &v, 2, memory_order_acquire,
                                                 memory_order_acquire))
        return;
    herd__omp_guest_sleeps(1);
    /* ORDER: acquire; pairs with the release exchange in mix_release(). */
    while (atomic_load_explicit(&w->flag, memory_order_acquire) != 1)
        herd__futex_wait(&w->flag, 2);
    herd__omp_guest_sleeps(0);
}

typedef struct phase_arg {
    omp_team *team;
    uint32_t p;
} phase_arg;

static int phase_moved(void *p) {
    phase_arg *a = p;
    /* ORDER: acquire; pairs with the last arrival's store of the phase. */
    return atomic_load_explicit(&a->team->mix_phase, memory_order_acquire) != a->p;
}

/* A thread (no worker) waits at the barrier for the phase to move past p,
 * running the team's pooled tasks meanwhile (pool.c). */
static void mix_sleep(omp_team *team, uint32_t p) {
    phase_arg a = {team, p};
    herd__omp_pool_wait(team, phase_moved, &a);
}

static int gathered(void *p) {
    phase_arg *a = p;
    /* ORDER: acquire; pairs with the last arrival's release store (the
     * lock the primary takes next orders the rest). */
    return atomic_load_explicit(&a->team->mix_gathered, memory_order_acquire) == a->p + 1;
}

/* Open phase p's barrier again and let everyone go. Context: the team's
 * mix_lock held by the primary, every member arrived; returns with it
 * released. */
static void mix_open(omp_team *team, uint32_t p) {
    team->mix_arrived = 0;
    /* ORDER: release for the threads' acquire loads (the writes of every
     * arrival, ordered before by the lock, become visible); the wake-up
     * below fences it against their sleep (herd__omp_pool_wake). */
    atomic_store_explicit(&team->mix_phase, p + 1, memory_order_release);
    omp_waiter *w = team->mix_waiting;
    team->mix_waiting = NULL;
    while (w) {
        omp_waiter *next = w->next; /* before the release: the record may vanish */
        mix_release(w);
        w = next;
    }
    pthread_mutex_unlock(&team->mix_lock);
    herd__omp_pool_wake(); /* the threads waiting in mix_sleep */
}

/* Wait at phase p until the primary opens the barrier. Context: the lock
 * held; returns with it released. */
static void mix_await_open(omp_team *team, uint32_t p) {
    if (herd__self()) {
        omp_waiter w = {team->mix_waiting, NULL, 0};
        team->mix_waiting = &w;
        mix_wait(team, &w);
    } else {
        pthread_mutex_unlock(&team->mix_lock);
        mix_sleep(team, p);
    }
}

/* The barrier of a team with guests (or of a team on more workers than
 * CPUs: team->mix_bar): a count under the lock; herd tasks wait in a list
 * (each released by a ready), threads on the phase word. The primary
 * (member 0) opens it, as a tree barrier's root does: the last arrival, if
 * another member, only hands it the news (mix_gathered, and a release of
 * the primary's waiter or a wake-up of the pool's sleepers). Such a team
 * has more threads than CPUs, and the members it releases may share the
 * primary's CPU: opened by the primary, the barrier lets them go while the
 * primary runs on, so it is not left behind a member that spins in user
 * code until the primary's next step. In LLVM's kmp_sch_simd_guided.c the
 * members wait for member 0 in a loop without a scheduling point (up to a
 * million polls, then usleep): a released member took the primary's CPU
 * for that whole spin, 0.6 ms a loop; a team of 4 with 2 guests on 2 CPUs
 * took 16-20 s, 3.1-3.3 s opened by the primary (libomp 3.3 s); 4 workers
 * on 2 CPUs on herd's own barrier took 70-440 s with the other fixes of
 * that round (ws.c's loop entry, core's idle yield), 3.7 s on this one. */
static void mix_barrier(omp_team *team, int primary) {
    pthread_mutex_lock(&team->mix_lock);
    /* ORDER: relaxed; written under the lock only. */
    uint32_t p = atomic_load_explicit(&team->mix_phase, memory_order_relaxed);
    int last = ++team->mix_arrived == team->nthreads;
    if (primary) {
        if (!last) {
            if (herd__self()) {
                omp_waiter w = {NULL, NULL, 0};
                team->mix_primary = &w;
                mix_wait(team, &w);
            } else {
                phase_arg a = {team, p};
                pthread_mutex_unlock(&team->mix_lock);
                herd__omp_pool_wait(team, gathered, &a);
            }
            pthread_mutex_lock(&team->mix_lock);
        }
        mix_open(team, p);
        return;
    }
    if (last) {
        /* ORDER: release; pairs with the acquire load in gathered(). */
        atomic_store_explicit(&team->mix_gathered, p + 1, memory_order_release);
        omp_waiter *pw = team->mix_primary;
        team->mix_primary = NULL;
        if (pw)
            mix_release(pw); /* a herd task */
        else
            herd__omp_pool_wake(); /* a thread, in herd__omp_pool_wait */
    }
    mix_await_open(team, p);
}

/* ---------------------------------------------------------------- members */

typedef struct member_arg {
    omp_team *team;
    int i;
} member_arg;

/* Member i's implicit task `me` starts (it becomes the current task). */
static void member_begin(omp_task *me, omp_team *team, int i) {
    memset(me, 0, sizeof *me);
    me->team = team;
    me->parent = team->parent;
    me->thread_num = i;
    me->frame_mode = OMP_FRAME_HERD; /* a herd task, or a guest's (no herd children) */
    me->icv_base = *team->parent->icv;
    me->icv_base.nthreads = team->icv_nthreads;
    me->icv_base.bind = team->icv_bind;
    herd__omp_icv_root(me); /* (its place partition is set below, before any task can see it) */
    me->red = team->red;
    me->ch_lo = me->ch_hi = -1;
    herd__omp_cur = me;
    if (__builtin_expect(team->place_bind, 0)) {
        omp_placement m = herd__omp_place_member(team->place_bind, team->place_lo, team->place_len,
                                                 team->place_p, team->nthreads, i);
        me->icv_base.part_lo = (short)m.part_lo;
        me->icv_base.part_len = (short)m.part_len;
        herd__omp_bind_thread(m.place);
    }
    if (__builtin_expect(herd__omp_g.display_affinity, 0))
        herd__omp_affinity_member(team->display_all);
    if (team->preinit) {
        (void)herd__omp_ws_begin(me); /* worksharing 0 is set up: just enter it */
        me->loop = team->ws[0].loop;  /* a combined loop's (pre_loop) */
    }
}

/* The end of member `me`: its tasks; in a team with guests, a thread
 * outside herd then runs the team's pooled tasks until every member's body
 * has ended and none is left (pool.c). */
static void member_finish(omp_task *me) {
    omp_team *team = me->team;
    int mixed = herd__omp_mixed(team);
    if (mixed)
        herd__omp_pool_body_end(team);
    if (herd__self()) {
        herd__omp_wait_tasks(me); /* the region's end: this member's tasks */
    } else if (mixed) {
        herd__omp_pool_wait_kids(me);
        herd__omp_pool_linger(team);
    }
    herd__omp_deps_free(me);
    herd__omp_icv_end(me);
}

static void member_entry(void *p) {
    member_arg a;
    memcpy(&a, p, sizeof a);
    omp_task *prev = herd__omp_cur;
    omp_task me;
    member_begin(&me, a.team, a.i);
    a.team->fn(a.team->data);
    member_finish(&me);
    herd__omp_cur = prev;
}

/* A guest's member has ended (the guest is back in its pool). */
static void guest_done(void *p) {
    member_arg a;
    memcpy(&a, p, sizeof a);
    omp_team *team = a.team;
    pthread_mutex_lock(&team->mix_lock);
    if (--team->guests_left == 0 && team->end_waiter)
        mix_release(team->end_waiter);
    pthread_mutex_unlock(&team->mix_lock); /* our last access to the team */
}

static void wait_guests(omp_team *team) {
    pthread_mutex_lock(&team->mix_lock);
    if (team->guests_left == 0) {
        pthread_mutex_unlock(&team->mix_lock);
        return;
    }
    omp_waiter w = {NULL, NULL, 0};
    team->end_waiter = &w;
    mix_wait(team, &w);
    /* The last guest released us holding the lock: wait until it lets go,
     * its last access to the team (which ends with our return). */
    pthread_mutex_lock(&team->mix_lock);
    pthread_mutex_unlock(&team->mix_lock);
}

/* ---------------------------------------------------------------- regions */

/* One parallel region: its team, and what its encountering thread must undo
 * at the end. On the encountering task's stack (GOMP_parallel), or on the
 * heap between GOMP_parallel_start and GOMP_parallel_end. */
typedef struct region {
    omp_team team;
    omp_task *enc;  /* the encountering task */
    int outer;      /* it adopted worker 0 (fr) */
    int reserved;   /* threads beyond member 0 (reserve_threads) */
    int counted;    /* ... and counted in herd__omp_g.threads_busy */
    herd__frame fr; /* outer: the adoption's frame */
    /* GOMP_parallel_start: member 0's record and frame, the enclosing
     * region of the same thread */
    omp_task me0;
    herd__frame me0_fr, *me0_up;
    int me0_framed;
    struct region *prev;
} region;

/* thread-limit-var (OMP_THREAD_LIMIT, or a teams or target thread_limit
 * clause: limit): the threads beyond the encountering one that a team of n
 * may have now (the contention group's count, as libgomp keeps it: one
 * count for the process, which is the group's while host teams and target
 * regions run one at a time on their thread). *counted: whether the
 * region's end must give them back. */
static int reserve_threads(long n, int limit, int *counted) {
    *counted = limit != INT_MAX && n > 1;
    if (!*counted)
        return (int)n - 1;
    /* ORDER: relaxed; a count, no data hangs on it. */
    int busy = atomic_load_explicit(&herd__omp_g.threads_busy, memory_order_relaxed), extra;
    do {
        int room = limit - 1 - busy;
        extra = room < 0 ? 0 : n - 1 < room ? (int)n - 1 : room;
    } while (!atomic_compare_exchange_weak_explicit(&herd__omp_g.threads_busy, &busy, busy + extra,
                                                    memory_order_relaxed, memory_order_relaxed));
    return extra;
}

typedef void (*omp_preinit)(omp_team *team, void *arg);

/* Member i of an outermost team on worker i (herd__group_fork). */
static void worker_member_entry(void *p) {
    member_arg a;
    memcpy(&a.team, p, sizeof a.team);
    a.i = herd__self_id();
    member_entry(&a);
}

/* Members 1..nworker-1 on workers 1..: one fork, one wake-up. The previous
 * fork was joined: its region ended after it (F3). */
static void place_members(omp_team *team, int nworker) {
    int rc = herd__fork(1, nworker - 1, worker_member_entry, &team, sizeof team);
    if (rc)
        herd__omp_fatal("cannot start team members 1..%d: %s", nworker - 1, herd_strerror(rc));
}

/* The team's members will be placed by policy bind (not false) from the
 * encountering task's place partition (bind.c). */
static void place_team(omp_team *team, const omp_task *enc, int bind) {
    team->place_bind = bind;
    team->place_lo = enc->icv->part_lo;
    team->place_len = enc->icv->part_len ? enc->icv->part_len : herd__omp_num_places();
    team->place_p = herd__omp_primary_place(enc->icv);
    if (herd__omp_g.display_affinity)
        team->display_all = herd__omp_affinity_team(team);
}

/* Set the region's team up and start members 1..n-1; member 0 is the
 * caller's to run (member_entry or member_begin) before region_end. */
static void region_start(region *r, omp_task *enc, void (*fn)(void *), void *data,
                         unsigned num_threads, unsigned flags, omp_preinit pre, void *pre_arg) {
    int level = enc->team ? enc->team->level : 0;
    int active = enc->team ? enc->team->active_level : 0;
    long n = num_threads ? (long)num_threads : enc->icv->nthreads;
    if (active >= enc->icv->max_active)
        n = 1;
    int team_limit = herd__omp_root(enc)->league_limit; /* teams thread_limit */
    if (team_limit && n > team_limit)
        n = team_limit;
    omp_team *team = &r->team;
    /* A heap team (1.5 KB) cost a malloc_consolidate per region (perf,
     * empty regions): GOMP_parallel keeps it on its stack. Zeroing all of
     * it (2.8 KB) took a third of an empty region of one thread: the
     * barrier's memory is zeroed by its own set-up, for the members it
     * holds, and the worksharing ring is set by herd__omp_ws_ring_init
     * below. */
    memset(team, 0, offsetof(omp_team, bar_mem));
    memset(&team->mix_bar, 0, offsetof(omp_team, ws) - offsetof(omp_team, mix_bar));
    r->enc = enc;
    r->outer = 0;
    int nworker = 1;
    /* An outermost team adopts worker 0 even with one thread: its explicit
     * tasks are herd tasks, deferred to the next scheduling point as
     * libgomp defers them. Run outside herd they ran at once, in creation
     * order, and a task that waits for one created after it never ended
     * (test_tasks's dependence case under OMP_NUM_THREADS=1; libgomp runs
     * it). An empty region costs 0.055 us instead of 0.041 (libgomp:
     * 0.20; 2-core VM, OMP_NUM_THREADS=1). */
    if (active == 0 && !herd__self()) {
        herd__omp_start();
        if (herd__adopt_enter(&r->fr) == 0) {
            r->outer = 1;
            nworker = n < herd__omp_g.workers ? (int)n : herd__omp_g.workers;
        }
        /* else another application thread holds worker 0: this thread runs
         * member 0 outside herd, with guests for the others */
    }
    /* dyn-var true: the runtime may give fewer threads; herd gives no
     * guests then (the teams of herd's workers alone). */
    if (enc->icv->dynamic && n > nworker)
        n = nworker;
    int limit = herd__omp_g.thread_limit;
    if (team_limit && team_limit < limit)
        limit = team_limit;
    r->reserved = reserve_threads(n, limit, &r->counted);
    if (r->reserved + 1 < n) {
        n = r->reserved + 1;
        nworker = n < nworker ? (int)n : nworker;
    }
    if (r->outer) {
        /* The team's tasks run on its own workers only: a task reports its
         * worker as its thread number, and a thread number is one thread's
         * at a time (per-thread data, task reductions). */
        herd__serve_hold(herd__rt_started(), nworker);
        herd__omp_throttle_restart();
    }
    team->nthreads = (int)n;
    team->nworker = nworker;
    team->guests_left = (int)n - nworker;
    team->level = level + 1;
    team->active_level = active + (n > 1);
    /* The policy that places the members: the proc_bind clause (flags' low
     * 3 bits) unless binding is off (bind-var false), else bind-var. The
     * members' nthreads-var and bind-var, libgomp's rules: item `level + 1`
     * of the OMP_NUM_THREADS and OMP_PROC_BIND lists where a list reaches
     * it; else the encountering task's, bind-var replaced by the policy
     * (the LLVM front end's OMP_PAR_KEEP_BIND: libomp keeps bind-var). */
    int bind = enc->icv->bind;
    if (bind != OMP_BIND_FALSE && (flags & 7))
        bind = (int)(flags & 7);
    team->icv_nthreads =
        herd__omp_level_value(&herd__omp_g.nthreads_levels, level + 1, enc->icv->nthreads);
    team->icv_bind = herd__omp_level_value(&herd__omp_g.bind_levels, level + 1,
                                           flags & OMP_PAR_KEEP_BIND ? enc->icv->bind : bind);
    if (bind != OMP_BIND_FALSE && herd__omp_num_places() > 0)
        place_team(team, enc, bind);
    team->outer = r->outer;
    team->parent = enc;
    team->fn = fn;
    team->data = data;
    herd__omp_ws_ring_init(team);
    if (pre)
        pre(team, pre_arg);
    /* More workers than CPUs: the members' barrier is the mixed one too,
     * opened by the primary (mix_barrier). */
    const herd__rt *rt = herd__rt_started();
    team->mix_bar = nworker < n || (n > 1 && rt && herd__rt_oversubscribed(rt));
    if (!team->mix_bar && n > 1 &&
        herd__barrier_init_at(&team->bar, n, team->bar_mem, sizeof team->bar_mem) != 0 &&
        herd_barrier_init(&team->bar, n) != 0)
        herd__omp_fatal("out of memory for a team barrier");
    if (team->mix_bar)
        pthread_mutex_init(&team->mix_lock, NULL);
    if (nworker < n) {
        herd__omp_pool_init(team);
        /* ORDER: relaxed; the members, which test it, start after this (a
         * box's, a fork's or a guest's release). */
        atomic_fetch_add_explicit(&herd__omp_g.mixed_live, 1, memory_order_relaxed);
    }
    if (nworker > 1)
        place_members(team, nworker);
    member_arg a = {team, 0};
    for (int i = nworker; i < n; i++) {
        a.i = i;
        /* The outermost team's guests by slot: threadprivate persists;
         * other teams' on the encountering thread's hot guests. */
        herd__omp_guest_run(r->outer ? i - nworker : OMP_GUEST_HOT(i - nworker), member_entry,
                            guest_done, &a, sizeof a);
    }
}

/* After member 0: wait for the others, give back what the start took. */
static void region_end(region *r) {
    omp_team *team = &r->team;
    herd__wait_ctx c; /* for the watchdog's dump (core/watchdog.h) */
    herd__wait_enter(&c, HERD__WAIT_OMP_REGION, team, NULL);
    if (team->nworker > 1)
        herd__fork_join();
    if (team->nthreads > team->nworker) {
        wait_guests(team);
        herd__omp_pool_fini(team);
        /* ORDER: relaxed; every task of the team has ended. */
        atomic_fetch_sub_explicit(&herd__omp_g.mixed_live, 1, memory_order_relaxed);
    }
    if (team->mix_bar)
        pthread_mutex_destroy(&team->mix_lock);
    herd__wait_leave(&c);
    if (r->outer) {
        /* The limit stays for the next region (G4, core/worker.c): a loop of
         * regions smaller than the workers made a membarrier and a futex
         * wake per region (EPCC PARALLEL, 1 thread of 2 workers: 1.2-1.6 us
         * a region, 0.2 with as many workers as threads). */
        herd__serve_release(herd__rt_started());
        herd__adopt_leave(&r->fr);
    }
    if (r->reserved && r->counted)
        /* ORDER: relaxed; a count (reserve_threads). */
        atomic_fetch_sub_explicit(&herd__omp_g.threads_busy, r->reserved, memory_order_relaxed);
    if (team->bar.herd__state != team->bar_mem)
        herd_barrier_destroy(&team->bar); /* a heap state, or none (NULL) */
}

/* flags: GCC's (the proc_bind clause in the low 3 bits, 0: none). */
static void parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags,
                     omp_preinit pre, void *pre_arg) {
    OMP_SAVE();
    region r;
    region_start(&r, omp__saved, fn, data, num_threads, flags, pre, pre_arg);
    member_arg a = {&r.team, 0};
    if (herd__self())
        herd__call_task(member_entry, &a);
    else
        member_entry(&a);
    region_end(&r);
    OMP_RESTORE();
}

OMP_API void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags) {
    parallel(fn, data, num_threads, flags, NULL, NULL);
}

/* The pre-4.9 ABI (GOMP_1.0): GOMP_parallel_start starts the team and
 * returns; the caller runs fn(data) itself as member 0, then calls
 * GOMP_parallel_end. The region lives on the heap meanwhile, on a stack of
 * this thread's open regions (nested ones end first). Member 0 gets a herd
 * frame of its own, as herd__call_task gives it in GOMP_parallel. */
static __thread region *open_regions;

static void parallel_start(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags,
                           omp_preinit pre, void *pre_arg) {
    omp_task *enc = herd__omp_task();
    region *r = aligned_alloc(_Alignof(region), sizeof *r);
    if (!r)
        herd__omp_fatal("out of memory for a parallel region");
    region_start(r, enc, fn, data, num_threads, flags, pre, pre_arg);
    r->prev = open_regions;
    open_regions = r;
    herd__hot *h = herd__tls;
    r->me0_framed = h != NULL;
    if (h) {
        r->me0_up = h->frame;
        herd__frame_open(&r->me0_fr, h, NULL, r->me0_up);
        h->frame = &r->me0_fr;
    }
    member_begin(&r->me0, &r->team, 0);
}

OMP_API void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned num_threads) {
    parallel_start(fn, data, num_threads, 0, NULL, NULL);
}

OMP_API void GOMP_parallel_end(void) {
    region *r = open_regions;
    if (!r || herd__omp_cur != &r->me0)
        herd__omp_fatal("GOMP_parallel_end without its GOMP_parallel_start");
    member_finish(&r->me0);
    if (r->me0_framed) {
        herd__frame_wait(&r->me0_fr);
        herd__tls->frame = r->me0_up; /* tied: the same worker */
    }
    open_regions = r->prev;
    region_end(r);
    herd__omp_cur = r->enc;
    free(r);
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
    red_pre r = {*(uintptr_t **)data, 0}; /* GCC's data starts with its arrays */
    parallel(fn, data, num_threads, flags, pre_reductions, &r);
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
    probe.icv = team->parent->icv; /* run-sched-var for schedule(runtime) */
    omp_ws *ws = &team->ws[0];
    herd__omp_loop_init(&ws->loop, &probe, l->sched, l->start, l->end, l->incr, l->chunk);
    atomic_store_explicit(&ws->free_for, -1, memory_order_relaxed);
    /* ORDER: relaxed; the members start after this (the queueing of their
     * tasks orders it). */
    atomic_store_explicit(&ws->ready_for, 0, memory_order_relaxed);
}

#define PARALLEL_LOOP(name, sched)                                                                 \
    OMP_API void GOMP_parallel_loop_##name(void (*fn)(void *), void *data, unsigned nt, long s,    \
                                           long e, long i, long c, unsigned flags) {               \
        loop_pre l = {sched, s, e, i, c};                                                          \
        parallel(fn, data, nt, flags, pre_loop, &l);                                               \
    }
PARALLEL_LOOP(static, OMP_SCHED_STATIC)
PARALLEL_LOOP(dynamic, OMP_SCHED_DYNAMIC)
PARALLEL_LOOP(guided, OMP_SCHED_GUIDED)
PARALLEL_LOOP(nonmonotonic_dynamic, OMP_SCHED_DYNAMIC)
PARALLEL_LOOP(nonmonotonic_guided, OMP_SCHED_GUIDED)

#define PARALLEL_LOOP_RT(name)                                                                     \
    OMP_API void GOMP_parallel_loop_##name(void (*fn)(void *), void *data, unsigned nt, long s,    \
                                           long e, long i, unsigned flags) {                       \
        loop_pre l = {OMP_SCHED_RUNTIME, s, e, i, 0};                                              \
        parallel(fn, data, nt, flags, pre_loop, &l);                                               \
    }
PARALLEL_LOOP_RT(runtime)
PARALLEL_LOOP_RT(nonmonotonic_runtime)
PARALLEL_LOOP_RT(maybe_nonmonotonic_runtime)

/* The pre-4.9 combined constructs: the team as GOMP_parallel_start, with
 * worksharing 0 set up as above. */
#define PARALLEL_LOOP_START(name, sched)                                                           \
    OMP_API void GOMP_parallel_loop_##name##_start(void (*fn)(void *), void *data, unsigned nt,    \
                                                   long s, long e, long i, long c) {               \
        loop_pre l = {sched, s, e, i, c};                                                          \
        parallel_start(fn, data, nt, 0, pre_loop, &l);                                             \
    }
PARALLEL_LOOP_START(static, OMP_SCHED_STATIC)
PARALLEL_LOOP_START(dynamic, OMP_SCHED_DYNAMIC)
PARALLEL_LOOP_START(guided, OMP_SCHED_GUIDED)

OMP_API void GOMP_parallel_loop_runtime_start(void (*fn)(void *), void *data, unsigned nt, long s,
                                              long e, long i) {
    loop_pre l = {OMP_SCHED_RUNTIME, s, e, i, 0};
    parallel_start(fn, data, nt, 0, pre_loop, &l);
}

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
    parallel(fn, data, nt, flags, pre_sections, &count);
}

OMP_API void GOMP_parallel_sections_start(void (*fn)(void *), void *data, unsigned nt,
                                          unsigned count) {
    parallel_start(fn, data, nt, 0, pre_sections, &count);
}

/* The team's barrier proper: herd's, or the mixed one (team->mix_bar: the
 * team has guests, or herd has more workers than CPUs); primary: the
 * caller is member 0. */
static void team_barrier(omp_team *team, int primary) {
    if (team && team->nthreads > 1) {
        if (!team->mix_bar)
            herd_barrier_wait(&team->bar);
        else
            mix_barrier(team, primary);
    }
}

/* What a member owes before any barrier: its tasks (a herd task), or its
 * undeferred detached tasks' events (outside herd). */
static void barrier_tasks(omp_task *t) {
    if (herd__self()) {
        herd__omp_wait_tasks(t); /* the barrier then covers the team's */
        return;
    }
    herd__omp_pool_wait_kids(t); /* a guest's pooled tasks */
    if (t->deps)
        herd__omp_wait_events(t, 0);
}

OMP_API void GOMP_barrier(void) {
    OMP_SAVE();
    omp_task *t = omp__saved;
    herd__wait_ctx c; /* for the watchdog's dump (core/watchdog.h) */
    herd__wait_enter(&c, HERD__WAIT_OMP_BARRIER, t->team ? (void *)&t->team->bar : NULL,
                     __builtin_return_address(0));
    barrier_tasks(t);
    if (__builtin_expect(herd__omp_g.cancellation, 0))
        (void)herd__omp_cancel_barrier(t); /* one a cancel ends (cancel.c) */
    else
        team_barrier(t->team, t->thread_num == 0);
    herd__wait_leave(&c);
    OMP_RESTORE();
}

OMP_API bool GOMP_barrier_cancel(void) {
    OMP_SAVE();
    omp_task *t = omp__saved;
    barrier_tasks(t);
    bool cancelled = false;
    if (herd__omp_g.cancellation)
        cancelled = herd__omp_cancel_barrier(t);
    else
        team_barrier(t->team, t->thread_num == 0);
    OMP_RESTORE();
    return cancelled;
}
