/* The OpenMP layer's internals: teams, implicit and explicit task records,
 * worksharing slots, the ICVs. docs/design/openmp.md is the design essay.
 *
 * Every OpenMP task (implicit or explicit) that runs has an omp_task record
 * on its own stack; `herd__omp_cur` (native TLS) points at the running one.
 * Tasks are tied (the runtime runs in tied mode), so a task that suspends
 * comes back on the same thread; every entry point that may suspend saves
 * the pointer before and restores it after (OMP_SAVE / OMP_RESTORE). */
#ifndef HERD_OMP_H
#define HERD_OMP_H

#include "core/seam_omp.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#define OMP_API __attribute__((visibility("default")))
/* An omp_* routine under both ABIs' versions: libgomp's node `node` (the
 * default, what gcc-built binaries and unversioned lookups such as dlsym
 * find) and LLVM libomp's VERSION (what clang-built binaries ask for).
 * The routine's own symbol is removed in favour of the first (GNU as's
 * .symver ..., remove): a plain symbol beside a versioned twin of the same
 * name would lose its node at link time. Put after the routine. */
#define OMP_LLVM_ALIAS(name, node)                                                                 \
    extern __typeof(name) herd__llvm_##name __attribute__((alias(#name), visibility("default")));  \
    __asm__(".symver " #name ", " #name "@@" node ", remove\n\t"                                   \
            ".symver herd__llvm_" #name ", " #name "@VERSION")
/* ... where LLVM's name is served by impl, another routine (a different
 * layout: locks). Not the default version: the name's default is already
 * another .symver's (lock.c), and a reference asks for VERSION anyway. */
#define OMP_LLVM_ALIAS_OF(name, impl)                                                              \
    extern __typeof(impl) herd__llvm_##name __attribute__((alias(#impl), visibility("default")));  \
    __asm__(".symver herd__llvm_" #name ", " #name "@VERSION")

/* Schedule kinds as GCC passes them (GFS_* in libgomp's ABI). */
enum {
    OMP_SCHED_RUNTIME = 0,
    OMP_SCHED_STATIC = 1,
    OMP_SCHED_DYNAMIC = 2,
    OMP_SCHED_GUIDED = 3,
    OMP_SCHED_AUTO = 4,
    /* libomp's own omp_sched_t kind (omp_sched_t's extension range): what
     * omp_get_schedule reports after OMP_SCHEDULE=trapezoidal; its loops
     * run as guided (ws.c, resolve_kind) */
    OMP_SCHED_TRAPEZOIDAL = 101
};
#define OMP_SCHED_MONOTONIC 0x80000000u
/* run-sched-var as the implementation defines it, never set by OMP_SCHEDULE
 * or omp_set_schedule: each ABI's runtime's own (libgomp's dynamic,1 for
 * GCC's entry points and routines, libomp's static for LLVM's: ws.c,
 * api.c, kmp/loop.c). A value no kind takes (0 is GCC's "runtime"). */
#define OMP_RUN_SCHED_DEFAULT 0
/* run-sched-var as an ABI's runtime reports and runs it (llvm: libomp's,
 * else libgomp's): the kind (may carry MONOTONIC) and chunk, the default
 * made that runtime's own (dynamic,1 or static,0). */
static inline int herd__omp_run_sched(int run_sched, long run_chunk, int llvm, long *chunk) {
    if (run_sched != OMP_RUN_SCHED_DEFAULT)
        return *chunk = run_chunk, run_sched;
    *chunk = llvm ? 0 : 1;
    return llvm ? OMP_SCHED_STATIC : OMP_SCHED_DYNAMIC;
}

/* GOMP_task flags. */
#define OMP_TASK_UNTIED 1u
#define OMP_TASK_FINAL 2u
#define OMP_TASK_MERGEABLE 4u
#define OMP_TASK_DEPEND 8u
#define OMP_TASK_PRIORITY 16u
#define OMP_TASK_UP 256u
#define OMP_TASK_GRAINSIZE 512u
#define OMP_TASK_IF 1024u
#define OMP_TASK_NOGROUP 2048u
#define OMP_TASK_REDUCTION 4096u
#define OMP_TASK_DETACH 8192u
#define OMP_TASK_STRICT 16384u /* grainsize(strict: g), num_tasks(strict: n) */
/* herd's own, never GCC's: run the task's body even when its taskgroup is
 * cancelled; the body asks herd__omp_task_discarded() (a front end whose
 * task must release what it holds: kmp/task.c) */
#define OMP_TASK_KEEP (1u << 30)
/* herd's own: GOMP_task's common path asked the creation throttle already,
 * and it said to queue the task; task_general does not ask again (each ask
 * counts toward the throttle's bound: omp/throttle.h) */
#define OMP_TASK_THROTTLE_ASKED (1u << 29)

/* Data-environment ICVs, copied into every task. */
typedef struct omp_icv {
    int nthreads;   /* nthreads-var (first level) */
    int dynamic;    /* dyn-var */
    int max_active; /* max-active-levels-var */
    int run_sched;  /* run-sched-var kind (OMP_SCHED_*, may carry MONOTONIC) */
    long run_chunk;
    int bind; /* bind-var (omp_proc_bind_t: OMP_BIND_*) */
    /* place-partition-var: places part_lo.. of OMP_PLACES's list, part_len
     * of them, 0: the whole list (bind.c) */
    short part_lo, part_len;
    uintptr_t def_alloc; /* def-allocator-var (alloc.c); 0: OMP_ALLOCATOR's */
} omp_icv;

/* A snapshot of a task's ICVs that the tasks it creates start from
 * (icv.c, "A task's ICVs"): written once, before any task can see it;
 * freed at the end of the task that made it, after its tasks. */
typedef struct omp_icv_snap {
    omp_icv icv;
    struct omp_icv_snap *next; /* the task's older one */
} omp_icv_snap;

/* omp_proc_bind_t's values (bind-var, the proc_bind clause) */
enum { OMP_BIND_FALSE, OMP_BIND_TRUE, OMP_BIND_PRIMARY, OMP_BIND_CLOSE, OMP_BIND_SPREAD };
/* A parallel's flags, herd's own bit beside GCC's proc_bind (the low 3):
 * the clause places the members but leaves their bind-var (the LLVM front
 * end, as libomp does). GCC sets no such bit. */
#define OMP_PAR_KEEP_BIND (1u << 30)

/* An ICV given per nesting level (OMP_NUM_THREADS=4,2; OMP_PROC_BIND=
 * spread,close): v[L] for the implicit tasks of a team at level L, v[0]
 * the initial value; n 0 when the variable gave one value. */
typedef struct omp_levels {
    int n;
    int *v;
} omp_levels;
/* The value at level `level` of l, else `otherwise`. */
static inline int herd__omp_level_value(const omp_levels *l, int level, int otherwise) {
    return level < l->n ? l->v[level] : otherwise;
}

/* Process-wide settings from the OMP_* environment (icv.c). */
typedef struct omp_global {
    omp_icv icv;                /* initial values */
    int workers;                /* herd workers (a team beyond them gets guest threads: guest.c) */
    int workers_auto;           /* HERD_WORKERS=auto: `workers` is known once herd started */
    int nthreads_set;           /* OMP_NUM_THREADS gave nthreads-var */
    omp_levels nthreads_levels; /* OMP_NUM_THREADS's list (nthreads-var per level) */
    omp_levels bind_levels;     /* OMP_PROC_BIND's list (bind-var per level) */
    const char *bind;         /* HERD_BIND's value from OMP_PROC_BIND or OMP_PLACES; NULL: herd's */
    int thread_limit;         /* thread-limit-var (OMP_THREAD_LIMIT); INT_MAX: unset */
    _Atomic int threads_busy; /* threads beyond the initial one in teams now, counted
                               * only while thread_limit is set (team.c) */
    int display_env;          /* OMP_DISPLAY_ENV: 0 false, 1 true, 2 verbose */
    int wait_active;          /* OMP_WAIT_POLICY=active */
    size_t stacksize;         /* OMP_STACKSIZE, 0 if unset */
    int max_task_priority;
    int nteams;              /* nteams-var (OMP_NUM_TEAMS, omp_set_num_teams); 0: unset */
    uintptr_t def_allocator; /* def-allocator-var at start (OMP_ALLOCATOR); 0: unset (alloc.c) */
    int display_affinity;    /* OMP_DISPLAY_AFFINITY (affinity.c) */
    const char *affinity_format; /* OMP_AFFINITY_FORMAT, NULL: unset */
    int teams_thread_limit;      /* teams-thread-limit-var (OMP_TEAMS_THREAD_LIMIT); 0: unset */
    int throttle;         /* HERD_OMP_THROTTLE: queued tasks before new ones run at once; 0 off */
    int cancellation;     /* cancel-var (OMP_CANCELLATION); true is refused at the first cancel */
    _Atomic int red_live; /* task reduction registrations alive (reduction.c) */
    /* teams with guests alive (team.c; their tasks go to their pools:
     * pool.c), so that the commonest task creation tests one word, beside
     * red_live, and not its team */
    _Atomic int mixed_live;
    /* the program speaks LLVM's ABI (kmp/: set at its first fork or ompc_*
     * call): where libgomp and libomp differ in what a program sees, herd
     * does as the program's own runtime does (affinity.c) */
    _Atomic int llvm_abi;
} omp_global;
extern omp_global herd__omp_g;

#define WS_RING 8

/* A loop as a member runs it, in normalised iterations [0, n): chunk
 * [lo, hi) is iterations start + lo*incr .. start + hi*incr (ustart, uincr
 * for the ull flavour, counting up or down). Every member computes its own
 * from the construct's arguments, which are the same for all (ws.c). */
typedef struct omp_loop {
    long n, chunk;
    long simd; /* guided chunks in multiples of it (schedule(simd:...)); 0: none */
    int kind;
    int ull, up;
    long start, incr;
    unsigned long long ustart, uincr;
} omp_loop;

/* One worksharing construct's shared state; a ring of WS_RING per team, so
 * members may be up to WS_RING nowait constructs apart (ws.c). */
typedef struct omp_ws {
    _Atomic long ready_for; /* construct index it is set up for, -1: none */
    /* construct index k that may set it up next (its last use is over),
     * ~k once a member has claimed it for k */
    _Atomic long free_for;
    _Atomic int left; /* members done with it */
    omp_loop loop;    /* a combined construct's loop (team.c, pre_loop), which its members copy */
    _Atomic int single;
    struct omp_doacross *dx; /* doacross loops: what has posted (doacross.c) */
    void *copy;              /* copyprivate data */
    /* reduction(task, ...) on the construct: the arrays of the member that
     * allocated the copies (state 2), which the others share (reduction.c) */
    _Atomic int red_state; /* OMP_EXTRA_*: see herd__omp_ws_extra */
    uintptr_t *red;
    /* GCC's worksharing memory (lastprivate(conditional:), scan): zeroed,
     * shared by the members, freed by the last to leave */
    _Atomic int mem_state; /* OMP_EXTRA_* */
    void *mem;
    unsigned sect_count;
    /* What the members take one by one, on a line of its own: a take
     * evicted the read-mostly fields above from the other members' caches
     * when they shared one (dynamic loops at chunk 64 and 128 cost 1.2-1.3x
     * libgomp's per chunk; bench/omp/loopsched_figure.py). */
    _Alignas(64) _Atomic long next; /* loops: the next unassigned iteration */
    _Atomic long ord_turn;          /* ordered: start iteration of the chunk whose turn it is */
    _Atomic unsigned sect_next;     /* sections: the next one to hand out */
} __attribute__((aligned(64))) omp_ws;

struct omp_task;
typedef struct omp_deps omp_deps;         /* depend.c */
typedef struct omp_event omp_event;       /* detach.c */
typedef struct omp_doacross omp_doacross; /* doacross.c */

/* An open taskgroup of a task (task.c): the tasks it creates meanwhile are
 * spawned into g, not as its herd children. */
typedef struct omp_taskgroup {
    herd_group g;
    struct omp_taskgroup *prev; /* the enclosing taskgroup of the same task */
    /* cancel-var true only (cancel.c): the task's current taskgroup when this
     * one opened (omp_task.tg_cur), restored at its end; the taskgroup is
     * cancelled (set once, never reset); it is a worksharing construct's
     * (reduction(task, ...)), which a cancel passes by for `outer` */
    struct omp_taskgroup *outer;
    _Atomic int cancelled;
    int workshare;
    uintptr_t *red; /* the task reductions registered in it, NULL: none */
    /* called at its end, once its tasks are done (kmp/taskred.c), or NULL */
    void (*on_end)(void *);
    void *on_end_arg;
    /* its tasks in its team's pool created outside herd (pool.c) and not
     * yet complete */
    _Atomic long gkids;
} omp_taskgroup;

/* A member waiting at a mixed team's barrier or for its guests (team.c):
 * a task (ult) or a thread sleeping on flag. */
typedef struct omp_waiter {
    struct omp_waiter *next;
    herd__ult *ult;
    _Atomic uint32_t flag; /* 0 waiting, 1 released, 2 asleep on the futex */
} omp_waiter;

typedef struct omp_team {
    int nthreads;
    int nworker; /* members 0..nworker-1 are herd tasks; the others guests */
    int level;   /* nesting level of its implicit tasks */
    int active_level;
    int icv_nthreads, icv_bind; /* its implicit tasks' nthreads-var and bind-var */
    int outer;                  /* member i runs on worker i (the outermost active team) */
    int place_bind;             /* OMP_BIND_* that places its members (bind.c), 0: none */
    struct omp_task *parent;    /* the task that encountered the parallel */
    void (*fn)(void *);
    void *data;
    herd_barrier bar; /* the barrier when every member is a herd task */
    /* its state for up to 17 members (a malloc and a free per region less):
     * 128 bytes, then 2 x 16 slots (core/sync.c) */
    _Alignas(64) unsigned char bar_mem[384];
    /* Teams with guests (nworker < nthreads): their barrier and end, under
     * mix_lock (team.c, "Mixed teams"); mix_bar: the team meets at that
     * barrier (it has guests, or herd has more workers than CPUs) */
    int mix_bar;
    pthread_mutex_t mix_lock;
    int mix_arrived;
    omp_waiter *mix_waiting;       /* herd tasks waiting at the barrier */
    omp_waiter *mix_primary;       /* member 0 waiting for the others (a herd task) */
    _Atomic uint32_t mix_phase;    /* barrier phase (threads wait in herd__omp_pool_wait) */
    _Atomic uint32_t mix_gathered; /* phase + 1: every member has arrived at it */
    int guests_left;
    omp_waiter *end_waiter;
    /* ... and their pool (pool.c): the explicit tasks of the team that a
     * guest may run, queued under mix_lock (pool_head also read as a hint
     * without it); the pooled tasks not yet complete; the members whose
     * body has not ended. */
    _Atomic(struct omp_pooled *) pool_head;
    struct omp_pooled *pool_tail;
    _Atomic long pool_live;
    _Atomic int bodies_left;
    /* place_bind: the primary's place and the encountering task's place
     * partition; display_all: OMP_DISPLAY_AFFINITY prints every member's
     * line (the team's places or size changed, affinity.c) */
    int place_p, place_lo, place_len, display_all;
    int preinit;    /* combined construct: worksharing 0 is set up */
    uintptr_t *red; /* parallel reduction(task, ...): the members' registration */
    void *copy;     /* __kmpc_copyprivate: the executor's data, between its barriers */
    /* cancellation (OMP_CANCELLATION=true, cancel.c): the region is
     * cancelled; the current worksharing construct is (GCC runs static
     * loops without a record: a team flag, reset when a barrier completes);
     * the team's barrier, one that a cancel ends */
    _Atomic int cancelled;
    _Atomic int ws_cancelled;
    _Atomic int cbar_count;
    _Atomic long cbar_gen;
    /* single constructs (no copyprivate) claimed so far: the member whose
     * CAS moves it from k to k + 1 runs the team's k-th single (ws.c) */
    _Alignas(64) _Atomic unsigned long single_count;
    omp_ws ws[WS_RING];
} omp_team;

/* Where a task's herd children are counted (omp_task.frame_mode; task.c,
 * "Frames"). Invariant: the worker's current herd frame (herd__tls->frame)
 * is that of the innermost task on its stack whose mode is not
 * OMP_FRAME_LAZY. */
enum {
    OMP_FRAME_HERD = 0, /* herd runs it as a task (implicit, deferred): the frame herd opened */
    OMP_FRAME_LAZY,     /* run at once in its creator's frame: it has no herd children yet */
    OMP_FRAME_OWN,      /* run at once, and it opened `frame` for its first herd child */
};

typedef struct omp_task {
    omp_team *team; /* NULL: the initial task outside any region */
    struct omp_task *parent;
    int thread_num;
    int final;
    int frame_mode; /* OMP_FRAME_* */
    /* Its ICVs (icv.c, "A task's ICVs"): icv_src, the block it started
     * from, which no one writes while it lives and which the tasks it
     * creates start from unless it has changed its own by then; after its
     * first change (omp_set_*), its icv_own. icv_snaps NULL: unchanged;
     * else the snapshots the tasks it created since start from, newest
     * first, ending at herd__omp_icv_end_mark, and icv_stale: changed since
     * the newest. */
    const omp_icv *icv;
    const omp_icv *icv_src;
    omp_icv_snap *icv_snaps;
    int icv_stale;
    omp_deps *deps;    /* dependences of the tasks it created, NULL: none yet */
    omp_taskgroup *tg; /* innermost open taskgroup, NULL: none */
    /* cancel-var true only, NULL otherwise: the taskgroup the task belongs
     * to now, the one a cancel taskgroup cancels (its innermost open one,
     * else its creator's current one when it was created; cancel.c). It
     * outlives the task: a taskgroup's end waits for all its tasks and,
     * through them, their descendants. */
    omp_taskgroup *tg_cur;
    /* its tasks in its team's pool that it created outside herd (on a
     * guest: pool.c) and that have not completed; unset while the task is
     * OMP_FRAME_LAZY (it has none then) */
    _Atomic long gkids;
    uintptr_t *red; /* OMP_FRAME_HERD: the task reductions its creator saw
                     * (reduction.c, herd__omp_red_of); unset when run at once */
    /* an explicit task of the LLVM front end: the task reductions its
     * creator saw (kmp/taskred.c), KMP_RED_NONE none; NULL: not such a task */
    void *kred;
    herd__frame frame; /* OMP_FRAME_OWN: its frame (uninitialised before) */
    /* implicit tasks: worksharing state */
    long ws_next;          /* index of the next construct this member meets */
    unsigned long singles; /* single constructs it met (GOMP_single_start) */
    omp_ws *ws;            /* the construct it is in */
    long ws_k;
    long st_trip;      /* static loops: chunks taken */
    long ch_lo, ch_hi; /* the chunk it holds (ordered) */
    int ordered;
    omp_loop loop; /* the loop it is in */
    /* a thread's initial task (herd__omp_root): the host teams league it
     * runs, 0s when none (teams.c) */
    int league_size, league_num, league_limit;
    omp_icv icv_own;  /* its ICVs once changed */
    omp_icv icv_base; /* implicit and initial tasks: the ICVs they start with */
} omp_task;

extern __thread omp_task *herd__omp_cur __attribute__((tls_model("initial-exec")));
omp_task *herd__omp_task_slow(void);
/* The current task (the thread's initial task outside regions). */
static inline omp_task *herd__omp_task(void) {
    omp_task *t = herd__omp_cur;
    return __builtin_expect(t != NULL, 1) ? t : herd__omp_task_slow();
}

#define OMP_SAVE() omp_task *omp__saved = herd__omp_task()
#define OMP_RESTORE() (herd__omp_cur = omp__saved)

/* affinity.c: OMP_DISPLAY_AFFINITY's line for a member that starts (all:
 * the team's shows every member's); whether a placed team's size or places
 * differ from the last this thread started at its level. */
void herd__omp_affinity_member(int all);
int herd__omp_affinity_team(const omp_team *team);
/* teams.c: the thread's initial task, root of t's regions and tasks. */
omp_task *herd__omp_root(omp_task *t);
/* icv.c */
void herd__omp_init(void);
/* A task's ICVs (icv.c, "A task's ICVs"). herd__omp_icv_root: an implicit
 * or initial task starts from its icv_base, once set. herd__omp_icv_change:
 * t's ICVs for a change (omp_set_*). herd__omp_icv_lend: those a task t
 * creates now starts from (NULL: t's icv_src, the commonest: no copy).
 * herd__omp_icv_end: at t's end, after every task it created. */
extern omp_icv_snap herd__omp_icv_end_mark;
void herd__omp_icv_root(omp_task *t);
omp_icv *herd__omp_icv_change(omp_task *t);
const omp_icv *herd__omp_icv_snapshot(omp_task *t);
static inline const omp_icv *herd__omp_icv_lend(omp_task *t) {
    return __builtin_expect(t->icv_snaps == NULL, 1) ? NULL : herd__omp_icv_snapshot(t);
}
void herd__omp_icv_end(omp_task *t);
/* A thread's first task record takes its ICVs from the environment's */
void herd__omp_initial_icv(omp_icv *icv);
/* The LLVM front end's first call: the environment read again if the
 * program changed it and nothing used it yet (icv.c) */
void herd__omp_env_again(void);
/* omp_get_schedule as libomp answers it (LLVM's version of the routine) */
void herd__omp_llvm_get_schedule(int *kind, int *chunk);
/* target-offload-var's values from OMP_TARGET_OFFLOAD's (libomp's numbers:
 * disabled 0, default 1 (also NULL), mandatory 2); -1: not one of them */
int herd__omp_offload_kind(const char *v);
/* fortran.c: a Fortran character argument (s, len) as a malloc'd C string,
 * NULL when empty */
char *herd__omp_c_string(const char *s, size_t len);
#define OMP_OFFLOAD_FORMS "mandatory, disabled, default"
/* alloc.c: OMP_ALLOCATOR's memspace[:traits] form, the allocator it makes;
 * 0 when s is not of that form or its traits are not valid. */
uintptr_t herd__omp_allocator_from_env(const char *s);
/* The bytes of every task's stack, implicit and explicit: OMP_STACKSIZE, or
 * what a libgomp thread would get (icv.c). */
size_t herd__omp_stack_size(void);
void herd__omp_display_env(int verbose);
/* places.c: check OMP_PLACES (stops on a malformed value); 1: an abstract
 * name, 0: an explicit list (kept for the places routines). */
int herd__omp_parse_places(const char *s);
/* places.c: no place list, as before any OMP_PLACES was parsed (only
 * while no thread uses it: herd__omp_env_again) */
void herd__omp_places_forget(void);
/* places.c: the number of places (0: no OMP_PLACES); place i's CPUs
 * (0 <= i < that number); the place that holds every CPU the calling thread
 * may run on, -1 when none does */
int herd__omp_num_places(void);
const cpu_set_t *herd__omp_place_set(int i);
int herd__omp_place_of_thread(void);
/* A thread's wait (no herd worker: a guest, an application thread) before
 * it sleeps on a futex: it looks for OMP_SPIN_NS, pausing. While threads
 * may wait for a CPU (herd__cpus_crowded: teams larger than the workers,
 * nested teams, on too few cores) it yields its CPU at each look after the
 * first few (herd__spin_backoff), since the thread it waits for may need
 * this CPU; otherwise a yield only delays its answer (a nested team's
 * guest on a CPU of its own: EPCC's nested region, 1.8 -> 1.1 us). Checked
 * every 16th look, with the clock. A bound in time, not in looks: a yield
 * takes far longer than a pause. Use: omp_spin s = {0}; do { if (done)
 * return; } while (herd__omp_spin_step(&s)); then sleep. */
#define OMP_SPIN_NS 50000
typedef struct omp_spin {
    unsigned pauses, looks;
    uint64_t since;
    int crowded;
} omp_spin;
static inline int herd__omp_spin_step(omp_spin *s) {
    if (s->crowded)
        herd__spin_backoff(&s->pauses);
    else
        herd__cpu_relax();
    if (++s->looks % 16)
        return 1;
    s->crowded = herd__cpus_crowded();
    uint64_t now = herd__now_ns();
    if (!s->since)
        s->since = now;
    return now - s->since < OMP_SPIN_NS;
}
/* pool.c: the tasks of a team with guests (docs/design/openmp.md, "Guests
 * and tasks"). Whether t's team has guests (its tasks go to its pool): */
static inline int herd__omp_mixed(const omp_team *team) {
    /* ORDER: relaxed; a team's tasks are created after its start counted
     * it (the members start after region_start) and before its end. */
    return __builtin_expect(atomic_load_explicit(&herd__omp_g.mixed_live, memory_order_relaxed),
                            0) &&
           team && team->nworker < team->nthreads;
}
/* Queue fn(arg), len bytes, as a task of `team` in the team's pool, which
 * its guests take from, and as a herd task. creator given (a task that
 * runs outside herd, on a guest): counted in its gkids, and its herd task
 * one nobody waits for. Else its herd task is in group g, or (g NULL) a
 * child of the calling herd task; outside herd, g is required. */
void herd__omp_pool_spawn(omp_team *team, omp_task *creator, herd_group *g, void (*fn)(void *),
                          const void *arg, size_t len);
/* A thread outside herd waits until done(arg), running the pool's tasks
 * of `team` meanwhile; done is called again after each, and must load
 * what it tests with acquire. herd__omp_pool_wake: wake every such
 * waiter to test again (after what done tests changed). */
void herd__omp_pool_wait(omp_team *team, int (*done)(void *), void *arg);
void herd__omp_pool_wake(void);
/* A herd task waits until *word reads `done`: it spins, then suspends,
 * storing itself in *ult and CASing *word from `waiting` to `blocked`
 * (release; a failed CAS, done meanwhile, readies it at once). The setter,
 * from any thread, exchanges `done` into *word and readies *ult when it
 * read `blocked`. After the exchange the waiter may go on and free the
 * word: the setter touches neither again. */
void herd__omp_word_wait(_Atomic int *word, int waiting, int blocked, int done, herd__ult **ult);
void herd__omp_word_set(_Atomic int *word, int blocked, int done, herd__ult **ult);
/* The same, running only the pooled tasks that t created (the wait for
 * an undeferred task's predecessors, which are its siblings). */
void herd__omp_pool_wait_kids_of(omp_team *team, const omp_task *t, int (*done)(void *), void *arg);
/* On a guest: the current task t waits for its pooled tasks (gkids), and
 * a taskgroup's end for the pooled tasks created in it (tg's gkids),
 * each running only those. */
void herd__omp_pool_wait_kids(omp_task *t);
void herd__omp_pool_wait_group(omp_team *team, omp_taskgroup *tg);
/* Team start (its pool empty, every member's body to run), a member's
 * body ended, and a guest's end of member (waits until every body ended
 * and no pooled task is left: as libgomp's threads run the team's tasks
 * at its end); the region's end frees what is left. */
void herd__omp_pool_init(omp_team *team);
void herd__omp_pool_body_end(omp_team *team);
void herd__omp_pool_linger(omp_team *team);
void herd__omp_pool_fini(omp_team *team);
/* guest.c: a guest thread goes to sleep (1) or wakes (0): core's count of
 * threads beside the workers (herd__threads_beside); nothing on others */
void herd__omp_guest_sleeps(int asleep);
/* guest.c: the CPUs the process could run on when the library loaded
 * (saved by the first call of save, at load: constructors, one thread) */
const cpu_set_t *herd__omp_start_mask(void);
void herd__omp_save_start_mask(void);
/* bind.c (Member placement): member i's place and place partition in a team
 * of n placed by policy bind (OMP_BIND_*, not false) from place p of the
 * partition [lo, lo + len) */
typedef struct omp_placement {
    int place, part_lo, part_len;
} omp_placement;
omp_placement herd__omp_place_member(int bind, int lo, int len, int p, int n, int i);
/* bind.c: the place of the primary thread of a team that a task with these
 * ICVs encounters (this thread's, else the partition's first); the place
 * this thread was bound to by a member's placement (-1: none); bind this
 * thread to place i (a system call only when its CPUs change) */
int herd__omp_primary_place(const omp_icv *icv);
int herd__omp_bound_place(void);
/* The calling thread was bound by other means (kmp_set_affinity): no place
 * is its own until a placement binds it again. */
void herd__omp_unbind_place(void);
void herd__omp_bind_thread(int place);
/* bind.c: bind the initial thread to the first place when a place list
 * exists and bind-var is not false, as libgomp and libomp do when they
 * start (OpenMP 5.1, 6.4): serial code before the first region, which
 * first-touches its data, runs at the place the primary thread keeps. */
void herd__omp_bind_initial(void);
/* bind.c: the calling thread back on the process's CPUs if a placement
 * bound it; returns the place it had, -1: none (or the kernel refused).
 * Around herd's start (its topology and new threads see the process's
 * CPUs, not one place; team.c binds the caller again after) and before
 * the environment is read again (icv.c). */
int herd__omp_unbind_thread(void);
/* team.c: make sure herd runs; 0 or a herd error. */
int herd__omp_start(void);
/* team.c: stop herd's workers outside every region (omp_pause_resource);
 * 0 paused, -1 not (a region runs). */
int herd__omp_pause(void);
/* guest.c: run body(arg), then done(arg), on a kernel thread of the
 * OpenMP layer (a guest: no herd worker): slot's own thread (slot >= 0, the
 * same thread every time), the calling thread's hot guest k (slot
 * OMP_GUEST_HOT(k): the same thread every time unless it is busy), or one
 * of the pool's (slot -1). arg (up to 32 bytes) is copied. done runs once
 * the thread may take its next job. */
#define OMP_GUEST_HOT(k) (-2 - (k))
void herd__omp_guest_run(int slot, void (*body)(void *), void (*done)(void *), const void *arg,
                         size_t size);
/* guest.c: end every guest thread that runs no member (a pause); the next
 * team creates guests again. */
void herd__omp_guests_retire(void);
/* ws.c */
void herd__omp_ws_ring_init(omp_team *team);
/* The next construct of member t: 1 when t must set it up (then call
 * herd__omp_ws_publish), 0 when it is set up. herd__omp_ws_begin_loop:
 * the same for a loop without a doacross nest, whose members need none of
 * the record's set-up (their omp_loop is their own; what they share, the
 * next iteration and the ordered turn, is reset by the record's last use):
 * 0 as soon as another member has claimed it, without waiting for it; its
 * claimer publishes nothing. */
int herd__omp_ws_begin(omp_task *t);
int herd__omp_ws_begin_loop(omp_task *t);
void herd__omp_ws_publish(omp_task *t);
void herd__omp_ws_leave(omp_task *t);
/* Extras of a worksharing construct that its members set up after it
 * (task reductions, worksharing memory), in the record: the first member
 * to claim *state (OMP_EXTRA_NONE -> CLAIMED) gets 1 and sets the extra up,
 * then calls herd__omp_ws_extra_ready; the others get 0 once it is ready
 * (acquire), their worker running other tasks meanwhile. Reset with the
 * record (herd__omp_ws_leave). */
enum { OMP_EXTRA_NONE = 0, OMP_EXTRA_CLAIMED, OMP_EXTRA_READY };
int herd__omp_ws_extra(_Atomic int *state);
void herd__omp_ws_extra_ready(_Atomic int *state);
/* Set up lp for the loop start..end by incr (signed flavour) as task t
 * runs it (its run-sched-var for schedule(runtime)). */
void herd__omp_loop_init(omp_loop *lp, const omp_task *t, long sched, long start, long end,
                         long incr, long chunk);
/* Loops by iteration count (the LLVM front end, kmp/loop.c): begin the
 * member's next construct as a loop of n iterations start + i*incr (simd >
 * 1: schedule(simd:...), the chunk counted in simd widths, every chunk but
 * the last a multiple of one); take
 * its next chunk [lo, hi) of normalised iterations (false: none left);
 * leave the construct (ordered turn passed). */
void herd__omp_loop_begin_n(long sched, int ordered, long start, long incr, long n, long chunk,
                            long simd);
bool herd__omp_loop_take(omp_task *t, long *lo, long *hi);
void herd__omp_loop_leave(omp_task *t);
/* Let the caller's worker run something else while it waits. */
void herd__omp_relax(void);
/* The look-th failed look (from 1) of a spin-wait: a pause, and every
 * spins-th look herd__omp_relax; every look with more workers than CPUs. */
void herd__omp_poll_pause(unsigned look, unsigned spins);
/* lock.c: the ULT-aware lock on a 32-bit word (also critical, atomic). */
void herd__omp_word_lock(_Atomic uint32_t *w);
int herd__omp_word_trylock(_Atomic uint32_t *w);
void herd__omp_word_unlock(_Atomic uint32_t *w);
/* task.c: run fn(data) as task `me` (a record on the caller's stack) on
 * this stack, then wait for its tasks; red: the task reductions its creator
 * saw when it created it; icv: the ICVs it starts from (herd__omp_icv_lend
 * at its creation: NULL, its creator's icv_src). */
void herd__omp_run_task(omp_task *me, omp_task *parent, uintptr_t *red, omp_taskgroup *tg,
                        const omp_icv *icv, int final, void (*fn)(void *), void *data);
/* reduction.c: the task reductions t sees now (the innermost registration,
 * chained to the enclosing ones), NULL: none. Its own taskgroups' first,
 * then what its creator saw when it created it: kept in its record when
 * herd runs it (OMP_FRAME_HERD); a task run at once was created and runs
 * while its creator waits, so it sees what its creator sees. The walk is
 * skipped while no registration is alive anywhere (red_live: a relaxed
 * load; a registration visible to t was counted before t's creation, which
 * happens before t runs). */
uintptr_t *herd__omp_red_walk(const omp_task *t);
static inline uintptr_t *herd__omp_red_of(const omp_task *t) {
    if (__builtin_expect(!atomic_load_explicit(&herd__omp_g.red_live, memory_order_relaxed), 1))
        return NULL;
    return herd__omp_red_walk(t);
}
/* May a task that parent creates now be deferred as far as task reductions
 * go? Not when it sees a registration outside the outermost team (the
 * thread numbers there are not one task's at a time: reduction.c). */
static inline int herd__omp_red_deferrable(const omp_task *parent) {
    return (parent->team && parent->team->outer) || !herd__omp_red_of(parent);
}
/* An undeferred task whose body the caller runs between these (its record
 * `me` stays put meanwhile). */
void herd__omp_task_begin_here(omp_task *me, omp_task *parent, int final);
void herd__omp_task_end_here(omp_task *me);
/* A task of fn on data (size bytes, copied), flags OMP_TASK_*, GCC's
 * depend array or NULL, detached with event ev or not (NULL). */
void herd__omp_task_launch(void (*fn)(void *), void *data, long size, long align, bool if_clause,
                           unsigned flags, void **depend, int priority, omp_event *ev);
/* How many tasks a taskloop of n iterations makes (flags: GRAINSIZE,
 * STRICT; num_tasks: the clause's value, 0 none); *strict: the iterations
 * of each but the last task under grainsize(strict:), else 0. */
unsigned long herd__omp_taskloop_split(const omp_task *parent, unsigned flags,
                                       unsigned long num_tasks, unsigned long n,
                                       unsigned long *strict);
/* An undeferred task: its data copied (cpyfn) first, then run here. */
void herd__omp_run_undeferred(omp_task *parent, void (*fn)(void *), void *data,
                              void (*cpyfn)(void *, void *), long size, long align, int final);
/* The calling thread's creation throttle back to the setting (omp/throttle.h),
 * as an outermost team begins: a bound raised for the thieves of an
 * earlier region would defer the tasks of a team that has none (a team of
 * one parks the other workers). */
void herd__omp_throttle_restart(void);
/* doacross.c: a doacross loop nest as GCC passes it: n loops and their
 * iteration counts (long, or unsigned long long when ull). Its record is set
 * up by the member that sets up the loop, and freed by the last member to
 * leave it. */
typedef struct omp_nest {
    unsigned n;
    const void *counts;
    int ull;
} omp_nest;
void herd__omp_doacross_init(omp_ws *ws, const omp_nest *nest);
/* Post and wait for iteration v (logical numbers, one per loop of the
 * nest) of ws's nest; a wait outside the nest returns at once. */
void herd__omp_doacross_post_in(omp_ws *ws, const unsigned long long *v);
void herd__omp_doacross_wait_in(omp_ws *ws, const unsigned long long *v);
void herd__omp_doacross_free(omp_ws *ws);
/* A heap copy of a task's data (cpyfn or memcpy); the caller frees it. */
void *herd__omp_task_data(void *data, void (*cpyfn)(void *, void *), long size, long align);
/* depend.c: the address that stands for depend(omp_all_memory) in a depend
 * array (among the out dependences; the LLVM front end's, GCC 12 has none). */
#define HERD_DEP_ALL ((void *)UINTPTR_MAX)
/* depend.c: a task with dependences (GCC's depend array), flags
 * OMP_TASK_FINAL, OMP_TASK_KEEP; deferred ones are queued once their
 * predecessors complete, undeferred ones wait and run. */
void herd__omp_task_depend(omp_task *parent, void (*fn)(void *), void *data,
                           void (*cpyfn)(void *, void *), long size, long align, unsigned flags,
                           int deferred, void **depend, omp_event *ev);
/* Is t an implicit task of a team of more than one (whose tasks are shared
 * at once: task.c, share_now)? herd__omp_share_now: a task of one
 * was just queued on this worker; share it if nothing of the worker's is
 * public. */
static inline int herd__omp_member_task(const omp_task *t) {
    const omp_team *team = t->team;
    return team && t->parent == team->parent && team->nthreads > 1;
}
void herd__omp_share_now(void);
/* Does a task that parent creates on a worker go to its team's pool
 * (pool.c), which the team's guests take from? In a team with guests, an
 * implicit task's; and every task's when the team has one worker: no
 * other worker of the team may then take the tasks its worker keeps
 * private while a task spins for one of them (core/rescue.h), and guests
 * take only from the pool. */
static inline int herd__omp_pools_here(const omp_task *parent) {
    return herd__omp_mixed(parent->team) &&
           (herd__omp_member_task(parent) || parent->team->nworker < 2);
}
/* Wait for the predecessors named by depend (taskwait depend). */
void herd__omp_taskwait_depend(omp_task *parent, void **depend);
/* Wait for every task t created (children and released dependent tasks),
 * with their descendants. Context: inside a herd task. */
void herd__omp_wait_tasks(omp_task *t);
/* Wait for t's herd children (taskwait's part in herd). Context: t is the
 * current task, inside a herd task. */
static inline void herd__omp_wait_children(omp_task *t) {
    if (t->frame_mode != OMP_FRAME_LAZY) /* a lazy task has none */
        herd_wait();                     /* the current frame is t's (the invariant above) */
}
/* The herd group of d's released tasks. */
herd_group *herd__omp_deps_group(omp_deps *d);
/* Free t's dependence table; t's tasks have all completed. */
void herd__omp_deps_free(omp_task *t);
/* reduction.c: register GCC's reduction arrays `data` for nthreads
 * threads, inside the registration `outer` (NULL: none); orig: another
 * member's arrays of the same worksharing construct, whose copies it
 * shares, or NULL to allocate them. Free frees the copies. */
void herd__omp_red_register(uintptr_t *data, uintptr_t *outer, const uintptr_t *orig, int nthreads);
void herd__omp_red_free(uintptr_t *data);
/* A worksharing construct with reduction(task, ...) (t->ws set up): open
 * the member's taskgroup of the construct and register its arrays, sharing
 * one member's copies. */
void herd__omp_ws_red_start(omp_task *t, uintptr_t *data);
/* The layer's entry points that both front ends call (the LLVM one in kmp/). */
OMP_API void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);
OMP_API void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned num_threads);
OMP_API void GOMP_parallel_end(void);
OMP_API void GOMP_teams_reg(void (*fn)(void *), void *data, unsigned num_teams,
                            unsigned thread_limit, unsigned flags);
OMP_API bool GOMP_single_start(void);
OMP_API void GOMP_ordered_start(void);
OMP_API void GOMP_ordered_end(void);
OMP_API bool GOMP_cancel(int which, bool do_cancel);
OMP_API bool GOMP_cancellation_point(int which);
OMP_API void GOMP_taskwait(void);
OMP_API void GOMP_taskwait_depend(void **depend);
OMP_API void GOMP_taskyield(void);
OMP_API void GOMP_taskgroup_reduction_register(uintptr_t *data);
OMP_API void GOMP_taskgroup_start(void);
OMP_API void GOMP_taskgroup_end(void);
OMP_API void GOMP_barrier(void);
OMP_API bool GOMP_barrier_cancel(void);
OMP_API void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
                       long arg_align, bool if_clause, unsigned flags, void **depend, int priority,
                       void *detach);
/* detach.c: a detached task's event; the task waits for it after its body
 * (on a worker, yielding it), then drops its reference. */
omp_event *herd__omp_event_new(void);
void herd__omp_event_wait(omp_event *e);
/* depend.c: an undeferred detached task of parent whose body has run
 * completes with its event: parent keeps it in its dependence record and
 * waits for it wherever it waits for its tasks (taskwait, taskgroup end,
 * barrier, its own end: herd__omp_wait_tasks, herd__omp_deps_free), inside
 * herd or not. dep: the task had depend clauses; a later task with depend
 * clauses run at once (outside herd) first waits for those (dep_only: a
 * superset of its predecessors). */
void herd__omp_add_event(omp_task *parent, omp_event *e, int dep);
void herd__omp_wait_events(omp_task *t, int dep_only);
/* cancel.c: with cancel-var true, every team barrier is this one: it
 * waits for the members, or until the region is cancelled; true when it
 * is (GOMP_barrier_cancel's answer). */
bool herd__omp_cancel_barrier(omp_task *t);
/* cancel.c: are the tasks of taskgroup tg (NULL: none) cancelled, so that
 * one that has not started is discarded? tg's own cancel, or, for a
 * worksharing construct's taskgroup, its outer one's (libgomp's rule). */
bool herd__omp_tg_cancelled(const omp_taskgroup *tg);
/* Is the current task one that its taskgroup's cancel discarded (a task
 * queued with OMP_TASK_KEEP, whose body runs to release what it holds)? */
bool herd__omp_task_discarded(void);
/* error.c: one report of the error directive: head, then ": " and the
 * message when there is one (msglen (size_t)-1: NUL-terminated), then
 * tail, as one piece of stderr; fatal: the program then ends with
 * EXIT_FAILURE. */
void herd__omp_error_report(const char *head, const char *msg, size_t msglen, const char *tail,
                            int fatal);
/* unsupported.c */
void herd__omp_unsupported(const char *what, void *caller) __attribute__((noreturn));
void herd__omp_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
