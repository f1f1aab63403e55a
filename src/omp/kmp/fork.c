/* Parallel regions and host teams through the LLVM ABI: __kmpc_fork_call
 * and __kmpc_fork_teams become the layer's regions (GOMP_parallel,
 * GOMP_teams_reg), each member calling the microtask with its ids and the
 * shared variables; the num_threads, proc_bind and num_teams clauses come
 * as pushes before the fork. The thread queries of the ABI. */
#include "omp/kmp/kmp.h"

#include <pthread.h>
#include <stdarg.h>
#include <string.h>

/* ------------------------------------------------------------ global ids */

static _Atomic int next_gtid;
static __thread int my_gtid = -1;

int herd__kmp_gtid(void) {
    int g = my_gtid;
    if (__builtin_expect(g < 0, 0)) {
        herd__kmp_seen(); /* a thread's first call */
        /* ORDER: relaxed; a counter handing out distinct ids. */
        g = my_gtid = atomic_fetch_add_explicit(&next_gtid, 1, memory_order_relaxed);
    }
    return g;
}

int herd__kmp_known(void) {
    return my_gtid >= 0 || herd__self() != NULL;
}

static void first_call(void) {
    herd__omp_env_again();
    /* ORDER: release; pairs with herd__kmp_seen's acquire. */
    atomic_store_explicit(&herd__omp_g.llvm_abi, 1, memory_order_release);
}
void herd__kmp_first_call(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, first_call);
}

KMP_API kmp_int32 __kmpc_global_thread_num(ident_t *loc) {
    (void)loc;
    return herd__kmp_gtid();
}
KMP_API kmp_int32 __kmpc_global_num_threads(ident_t *loc) {
    (void)loc;
    /* ORDER: relaxed; a count of the ids given, a query. */
    return atomic_load_explicit(&next_gtid, memory_order_relaxed);
}
/* libomp's count of the threads it has (its pool's too); herd's, those
 * that have an id: each that ran a member of a region forked here, or
 * called in (the caller among them). */
KMP_API int kmp_get_num_known_threads(void) {
    (void)herd__kmp_gtid();
    return __kmpc_global_num_threads(NULL);
}
KMP_API int kmp_get_num_known_threads_(void) {
    return kmp_get_num_known_threads();
}
KMP_API kmp_int32 __kmpc_bound_thread_num(ident_t *loc) {
    (void)loc;
    return herd__omp_task()->thread_num;
}
KMP_API kmp_int32 __kmpc_bound_num_threads(ident_t *loc) {
    (void)loc;
    const omp_team *t = herd__omp_task()->team;
    return t ? t->nthreads : 1;
}
KMP_API kmp_int32 __kmpc_in_parallel(ident_t *loc) {
    (void)loc;
    const omp_team *t = herd__omp_task()->team;
    return t && t->active_level > 0;
}
KMP_API kmp_int32 __kmpc_ok_to_fork(ident_t *loc) {
    (void)loc;
    return 1;
}
KMP_API void __kmpc_begin(ident_t *loc, kmp_int32 flags) {
    (void)loc, (void)flags;
}
KMP_API void __kmpc_end(ident_t *loc) {
    (void)loc;
}

/* ------------------------------------------------------------ the pushes */

/* What the thread pushed for its next fork: num_threads, proc_bind,
 * num_teams and the teams' thread_limit (0: none). */
static __thread struct { int nthreads, bind, nteams, team_limit; } pushed = {0, 0, 0, 0};

KMP_API void __kmpc_push_num_threads(ident_t *loc, kmp_int32 gtid, kmp_int32 n) {
    (void)loc, (void)gtid;
    pushed.nthreads = n > 0 ? n : 0;
}
/* Nothing to pop: the next fork takes the pushed number and clears it,
 * as libomp's does (whose pop does nothing either). */
KMP_API void __kmpc_pop_num_threads(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
}
KMP_API void __kmpc_push_proc_bind(ident_t *loc, kmp_int32 gtid, int bind) {
    (void)loc, (void)gtid;
    /* It places the team's members and leaves their bind-var as it was, as
     * libomp does (GCC's libgomp sets it: team.c, OMP_PAR_KEEP_BIND). */
    /* clang 14 passes 5 for proc_bind(primary) (its OMPKinds.def; libomp 14
     * reads 5 as its own proc_bind_intel and places nobody), 2 for master:
     * herd takes both as primary, what the program asked for. */
    pushed.bind = bind == 5                                             ? OMP_BIND_PRIMARY
                  : bind >= OMP_BIND_PRIMARY && bind <= OMP_BIND_SPREAD ? bind
                                                                        : 0;
}
KMP_API void __kmpc_push_num_teams(ident_t *loc, kmp_int32 gtid, kmp_int32 nteams,
                                   kmp_int32 nthreads) {
    (void)loc, (void)gtid;
    pushed.nteams = nteams > 0 ? nteams : 0;
    pushed.team_limit = nthreads > 0 ? nthreads : 0;
}
/* num_teams(lb: ub): the league has lb teams (any number in range will
 * do), ub when lb is 0 (no lower bound given). */
KMP_API void __kmpc_push_num_teams_51(ident_t *loc, kmp_int32 gtid, kmp_int32 lb, kmp_int32 ub,
                                      kmp_int32 nthreads) {
    __kmpc_push_num_teams(loc, gtid, lb > 0 ? lb : ub, nthreads);
}

/* ---------------------------------------------------------------- forks */

typedef struct fork_arg {
    kmpc_micro fn;
    int argc;
    void **argv;
} fork_arg;

static void member(void *p) {
    const fork_arg *a = p;
    kmp_int32 gtid = herd__kmp_gtid(), tid = herd__omp_task()->thread_num;
    herd__kmp_invoke(a->fn, &gtid, &tid, a->argc, a->argv);
}

/* The fork's block: the fork_arg, then the microtask's shared variables
 * from the varargs (argv: at least 4 slots, invoke.c loads four registers
 * whatever argc is), together and 64-byte aligned, so that every member
 * reads one cache line of the encountering thread's stack for all of it
 * (up to one argument; two lines up to nine). With the fork_arg and argv
 * apart, a member's load of argv waited for the fork_arg's line first: two
 * misses in turn before the microtask ran (0.1 us a region on 2 threads
 * against the gcc path's member). The fork (what) speaks the LLVM ABI. A
 * macro: the varargs are the caller's. */
#define COLLECT(a, argc, microtask, what)                                                          \
    if ((argc) < 0)                                                                                \
        herd__omp_fatal("%s with %d arguments", what, argc);                                       \
    herd__kmp_seen();                                                                              \
    _Static_assert(sizeof(fork_arg) == 3 * sizeof(void *), "fork_arg: 3 words");                   \
    void *blk_[3 + (argc) + 4] __attribute__((aligned(64)));                                       \
    fork_arg *a = (fork_arg *)(void *)blk_;                                                        \
    a->fn = (microtask);                                                                           \
    a->argc = (argc);                                                                              \
    a->argv = blk_ + 3;                                                                            \
    do {                                                                                           \
        va_list ap;                                                                                \
        va_start(ap, microtask);                                                                   \
        for (int i_ = 0; i_ < (argc); i_++)                                                        \
            a->argv[i_] = va_arg(ap, void *);                                                      \
        va_end(ap);                                                                                \
        memset(a->argv + (argc), 0, 4 * sizeof(void *));                                           \
    } while (0)

KMP_API void __kmpc_fork_call(ident_t *loc, kmp_int32 argc, kmpc_micro microtask, ...) {
    (void)loc;
    COLLECT(a, argc, microtask, "__kmpc_fork_call");
    unsigned n = (unsigned)pushed.nthreads, flags = (unsigned)pushed.bind | OMP_PAR_KEEP_BIND;
    pushed.nthreads = pushed.bind = 0;
    GOMP_parallel(member, a, n, flags);
}

static void noop(void *p) {
    (void)p;
}

/* parallel if(false): the encountering thread calls the microtask itself
 * between these, as a team of one. */
KMP_API void __kmpc_serialized_parallel(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    herd__kmp_seen();
    pushed.nthreads = pushed.bind = 0;
    GOMP_parallel_start(noop, NULL, 1);
}
KMP_API void __kmpc_end_serialized_parallel(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    GOMP_parallel_end();
}

/* Host teams: the league's teams run one after another on this thread
 * (teams.c); each calls the microtask as the initial thread of its team. */
static void team_master(void *p) {
    const fork_arg *a = p;
    kmp_int32 gtid = herd__kmp_gtid(), tid = 0;
    herd__kmp_invoke(a->fn, &gtid, &tid, a->argc, a->argv);
}

KMP_API void __kmpc_fork_teams(ident_t *loc, kmp_int32 argc, kmpc_micro microtask, ...) {
    (void)loc;
    COLLECT(a, argc, microtask, "__kmpc_fork_teams");
    unsigned nteams = (unsigned)pushed.nteams, limit = (unsigned)pushed.team_limit;
    pushed.nteams = pushed.team_limit = 0;
    GOMP_teams_reg(team_master, a, nteams, limit, 0);
}

/* libomp's launch function of a region, exported since long ago though no
 * compiler calls it: the calling member runs its region's body once more
 * (the microtask with its ids and the shared variables); 1. Outside a
 * region there is no body to run. */
KMP_API int __kmpc_invoke_task_func(int gtid) {
    (void)gtid;
    const omp_team *team = herd__omp_task()->team;
    if (!team || !team->fn)
        herd__omp_fatal("__kmpc_invoke_task_func outside a parallel region: no region body to run");
    team->fn(team->data);
    return 1;
}
