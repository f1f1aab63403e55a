/* Loops through the LLVM ABI. Static schedules are arithmetic on the
 * member's number (no shared state: __kmpc_for_static_init hands back the
 * member's first chunk and the stride to the next); the others go through
 * the layer's worksharing records (ws.c), one per construct, as GCC's
 * loops do: __kmpc_dispatch_init sets the loop up, __kmpc_dispatch_next
 * hands out chunks and, when none is left, leaves the construct.
 *
 * Bounds are inclusive here (LLVM's) and exclusive in the layer; the four
 * flavours (32/64-bit, signed/unsigned) share one body in 64-bit wrapping
 * arithmetic, the type deciding only how the iteration count is read. */
#include "omp/kmp/kmp.h"

#include <limits.h>
#include <stdlib.h>

/* ------------------------------------------------------------ schedules */

/* The layer's kind (OMP_SCHED_*) for an LLVM schedule; *ordered: an
 * ordered loop; *chunked: static with a chunk. */
static long kind_of(kmp_int32 sched, int *ordered) {
    unsigned s = (unsigned)sched & ~KMP_SCH_MODIFIERS;
    *ordered = 0;
    if (s >= KMP_NM_LOWER)
        s -= KMP_NM_LOWER - KMP_SCH_LOWER;
    if (s > KMP_ORD_LOWER && s < KMP_ORD_UPPER) {
        *ordered = 1;
        s -= KMP_ORD_LOWER - KMP_SCH_LOWER;
    }
    switch (s) {
    case KMP_SCH_STATIC_CHUNKED:
    case KMP_SCH_STATIC:
    case KMP_SCH_STATIC_GREEDY:
    case KMP_SCH_STATIC_BALANCED:
    case KMP_SCH_STATIC_BALANCED_CHUNKED:
    case KMP_DISTRIBUTE_STATIC_CHUNKED:
    case KMP_DISTRIBUTE_STATIC:
        return OMP_SCHED_STATIC;
    case KMP_SCH_DYNAMIC:
    case KMP_SCH_STATIC_STEAL:
        return OMP_SCHED_DYNAMIC;
    case KMP_SCH_GUIDED:
    case KMP_SCH_TRAPEZOIDAL:
    case KMP_SCH_GUIDED_ITERATIVE:
    case KMP_SCH_GUIDED_ANALYTICAL:
    case KMP_SCH_GUIDED_SIMD:
        return OMP_SCHED_GUIDED;
    case KMP_SCH_RUNTIME:
    case KMP_SCH_RUNTIME_SIMD:
        /* run-sched-var never set: libomp's default, static */
        return herd__omp_task()->icv->run_sched == OMP_RUN_SCHED_DEFAULT ? OMP_SCHED_STATIC
                                                                         : OMP_SCHED_RUNTIME;
    case KMP_SCH_AUTO:
        return OMP_SCHED_AUTO;
    default:
        herd__omp_fatal("a loop with schedule type %d, unknown to herd", sched);
    }
}

/* Iterations of lb..ub (inclusive) by st, read in the loop's type: 32-bit
 * flavours pass their values sign- or zero-extended. */
static uint64_t trip_count(int64_t lb, int64_t ub, int64_t st, int is_unsigned) {
    if (st == 0)
        herd__omp_fatal("a loop with a zero increment");
    if (st > 0) {
        if (is_unsigned ? (uint64_t)ub < (uint64_t)lb : ub < lb)
            return 0;
        return ((uint64_t)ub - (uint64_t)lb) / (uint64_t)st + 1;
    }
    if (is_unsigned ? (uint64_t)lb < (uint64_t)ub : lb < ub)
        return 0;
    return ((uint64_t)lb - (uint64_t)ub) / (uint64_t)-st + 1;
}

/* ---------------------------------------------------------------- static */

/* Member `me` of `nth`: its first chunk [*lb, *ub] of the trip iterations,
 * the stride to its next one (*st, in iterations times incr), and whether
 * it runs the last iteration. chunk <= 0: one block each. */
static void static_split(uint64_t trip, long nth, long me, int64_t chunk, int64_t incr, int64_t *lb,
                         int64_t *ub, int64_t *st, kmp_int32 *last) {
    int64_t base = *lb;
    if (trip == 0) {
        if (last)
            *last = 0;
        *st = incr;
        return;
    }
    if (chunk <= 0) {
        uint64_t q = trip / (uint64_t)nth, r = trip % (uint64_t)nth, i = (uint64_t)me;
        uint64_t first = i < r ? i * (q + 1) : r * (q + 1) + (i - r) * q;
        uint64_t cnt = i < r ? q + 1 : q;
        if (cnt == 0) { /* no iteration: an empty range, lb past ub */
            *lb = (int64_t)((uint64_t)base + trip * (uint64_t)incr);
            *ub = (int64_t)((uint64_t)*lb - (uint64_t)incr);
        } else {
            *lb = (int64_t)((uint64_t)base + first * (uint64_t)incr);
            *ub = (int64_t)((uint64_t)*lb + (cnt - 1) * (uint64_t)incr);
        }
        if (last)
            *last = cnt && first + cnt == trip;
        *st = (int64_t)(trip * (uint64_t)incr);
        return;
    }
    uint64_t c = (uint64_t)chunk, nchunks = (trip + c - 1) / c;
    uint64_t first = (uint64_t)me * c;
    *lb = (int64_t)((uint64_t)base + first * (uint64_t)incr);
    *ub = (int64_t)((uint64_t)*lb + (c - 1) * (uint64_t)incr);
    *st = (int64_t)((uint64_t)nth * c * (uint64_t)incr);
    if (last)
        *last = (uint64_t)me == (nchunks - 1) % (uint64_t)nth;
}

static void team_pos(long *nth, long *me) {
    const omp_task *t = herd__omp_task();
    *nth = t->team ? t->team->nthreads : 1;
    *me = t->thread_num;
}

/* distribute: the league's teams instead of the team's members. */
static void league_pos(long *nth, long *me) {
    const omp_task *root = herd__omp_root(herd__omp_task());
    *nth = root->league_size > 0 ? root->league_size : 1;
    *me = root->league_num;
}

static void static_init(kmp_int32 sched, kmp_int32 *last, int64_t *lb, int64_t *ub, int64_t *st,
                        int64_t incr, int64_t chunk, int is_unsigned) {
    long nth, me;
    unsigned s = (unsigned)sched & ~KMP_SCH_MODIFIERS;
    if (s == KMP_DISTRIBUTE_STATIC || s == KMP_DISTRIBUTE_STATIC_CHUNKED)
        league_pos(&nth, &me);
    else
        team_pos(&nth, &me);
    int chunked = s == KMP_SCH_STATIC_CHUNKED || s == KMP_DISTRIBUTE_STATIC_CHUNKED ||
                  s == KMP_SCH_STATIC_BALANCED_CHUNKED || s == KMP_ORD_STATIC_CHUNKED;
    static_split(trip_count(*lb, *ub, incr, is_unsigned), nth, me, chunked ? chunk : 0, incr, lb,
                 ub, st, last);
}

/* The four flavours: T the loop's type, the 64-bit forms the ABI's. */
#define STATIC_INIT(suffix, T, S, U)                                                               \
    KMP_API void __kmpc_for_static_init_##suffix(ident_t *loc, kmp_int32 gtid, kmp_int32 sched,    \
                                                 kmp_int32 *last, T *plb, T *pub, S *pst, S incr,  \
                                                 S chunk) {                                        \
        (void)loc, (void)gtid;                                                                     \
        int64_t lb = (int64_t)*plb, ub = (int64_t)*pub, st;                                        \
        static_init(sched, last, &lb, &ub, &st, (int64_t)incr, (int64_t)chunk, U);                 \
        *plb = (T)lb;                                                                              \
        *pub = (T)ub;                                                                              \
        *pst = (S)st;                                                                              \
    }
/* The types: T the loop variable's, S the stride's (signed for all). */
STATIC_INIT(4, kmp_int32, kmp_int32, 0)
STATIC_INIT(4u, kmp_uint32, kmp_int32, 1)
STATIC_INIT(8, kmp_int64, kmp_int64, 0)
STATIC_INIT(8u, kmp_uint64, kmp_int64, 1)

KMP_API void __kmpc_for_static_fini(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
}

/* distribute parallel for: the team's share of the league's split, then
 * the member's share of that (*pupperD: the team's last iteration). */
#define DIST_STATIC_INIT(suffix, T, S, U)                                                          \
    KMP_API void __kmpc_dist_for_static_init_##suffix(                                             \
        ident_t *loc, kmp_int32 gtid, kmp_int32 sched, kmp_int32 *last, T *plb, T *pub,            \
        T *pupperD, S *pst, S incr, S chunk) {                                                     \
        (void)loc, (void)gtid;                                                                     \
        long nteams, team, nth, me;                                                                \
        league_pos(&nteams, &team);                                                                \
        team_pos(&nth, &me);                                                                       \
        int64_t lb = (int64_t)*plb, ub = (int64_t)*pub, st;                                        \
        kmp_int32 team_last;                                                                       \
        static_split(trip_count(lb, ub, (int64_t)incr, U), nteams, team, 0, (int64_t)incr, &lb,    \
                     &ub, &st, &team_last);                                                        \
        *pupperD = (T)ub;                                                                          \
        unsigned s = (unsigned)sched & ~KMP_SCH_MODIFIERS;                                         \
        int64_t c = s == KMP_SCH_STATIC_CHUNKED ? (int64_t)chunk : 0;                              \
        kmp_int32 mine;                                                                            \
        static_split(trip_count(lb, ub, (int64_t)incr, U), nth, me, c, (int64_t)incr, &lb, &ub,    \
                     &st, &mine);                                                                  \
        if (last)                                                                                  \
            *last = team_last && mine;                                                             \
        *plb = (T)lb;                                                                              \
        *pub = (T)ub;                                                                              \
        *pst = (S)st;                                                                              \
    }
DIST_STATIC_INIT(4, kmp_int32, kmp_int32, 0)
DIST_STATIC_INIT(4u, kmp_uint32, kmp_int32, 1)
DIST_STATIC_INIT(8, kmp_int64, kmp_int64, 0)
DIST_STATIC_INIT(8u, kmp_uint64, kmp_int64, 1)

/* The team's share of a distribute loop whose inner loop is dynamic:
 * *plb..*pub becomes the team's block (then __kmpc_dispatch_init). */
#define TEAM_STATIC_INIT(suffix, T, S, U)                                                          \
    KMP_API void __kmpc_team_static_init_##suffix(ident_t *loc, kmp_int32 gtid, kmp_int32 *last,   \
                                                  T *plb, T *pub, S *pst, S incr, S chunk) {       \
        (void)loc, (void)gtid;                                                                     \
        long nteams, team;                                                                         \
        league_pos(&nteams, &team);                                                                \
        int64_t lb = (int64_t)*plb, ub = (int64_t)*pub, st;                                        \
        static_split(trip_count(lb, ub, (int64_t)incr, U), nteams, team, (int64_t)chunk,           \
                     (int64_t)incr, &lb, &ub, &st, last);                                          \
        *plb = (T)lb;                                                                              \
        *pub = (T)ub;                                                                              \
        *pst = (S)st;                                                                              \
    }
TEAM_STATIC_INIT(4, kmp_int32, kmp_int32, 0)
TEAM_STATIC_INIT(4u, kmp_uint32, kmp_int32, 1)
TEAM_STATIC_INIT(8, kmp_int64, kmp_int64, 0)
TEAM_STATIC_INIT(8u, kmp_uint64, kmp_int64, 1)

/* -------------------------------------------------------------- dispatch */

static void dispatch_init(kmp_int32 sched, int64_t lb, int64_t ub, int64_t st, int64_t chunk,
                          int is_unsigned) {
    /* A member that stopped taking chunks before the end (hand-written
     * callers do; compilers take until none is left) leaves that loop now:
     * a member is in one worksharing construct at a time. */
    omp_task *t = herd__omp_task();
    if (t->ws)
        herd__omp_loop_leave(t);
    int ordered;
    long kind = kind_of(sched, &ordered);
    uint64_t n = trip_count(lb, ub, st, is_unsigned);
    if (n > (uint64_t)LONG_MAX)
        herd__omp_fatal("a loop of %llu iterations (herd's limit is %ld)", (unsigned long long)n,
                        LONG_MAX);
    unsigned s = (unsigned)sched & ~KMP_SCH_MODIFIERS;
    if (kind == OMP_SCHED_STATIC && s != KMP_SCH_STATIC_CHUNKED && s != KMP_ORD_STATIC_CHUNKED)
        chunk = 0;
    /* schedule(simd: guided | runtime): the chunk argument is the simd
     * width; the schedule's chunk (1 for guided, run-sched-var's for
     * runtime) counts widths, and chunks come in multiples of one */
    long simd = 0;
    if (s == KMP_SCH_GUIDED_SIMD || s == KMP_SCH_RUNTIME_SIMD) {
        simd = (long)chunk;
        chunk = s == KMP_SCH_GUIDED_SIMD ? 1 : 0;
    }
    herd__omp_loop_begin_n(kind, ordered, (long)lb, (long)st, (long)n, (long)chunk, simd);
}

/* The member's next chunk as inclusive bounds; 0 (and the construct left)
 * when none is left. */
static int dispatch_next(kmp_int32 *last, int64_t *lb, int64_t *ub, int64_t *st) {
    omp_task *t = herd__omp_task();
    long lo, hi;
    if (!herd__omp_loop_take(t, &lo, &hi)) {
        herd__omp_loop_leave(t);
        return 0;
    }
    const omp_loop *lp = &t->loop;
    uint64_t start = (uint64_t)lp->start, incr = (uint64_t)lp->incr;
    *lb = (int64_t)(start + (uint64_t)lo * incr);
    *ub = (int64_t)(start + (uint64_t)(hi - 1) * incr);
    if (st)
        *st = (int64_t)incr;
    if (last)
        *last = hi == lp->n;
    return 1;
}

#define DISPATCH(suffix, T, S, U)                                                                  \
    KMP_API void __kmpc_dispatch_init_##suffix(ident_t *loc, kmp_int32 gtid, kmp_int32 sched,      \
                                               T lb, T ub, S st, S chunk) {                        \
        (void)loc, (void)gtid;                                                                     \
        dispatch_init(sched, (int64_t)lb, (int64_t)ub, (int64_t)st, (int64_t)chunk, U);            \
    }                                                                                              \
    KMP_API int __kmpc_dispatch_next_##suffix(ident_t *loc, kmp_int32 gtid, kmp_int32 *last,       \
                                              T *plb, T *pub, S *pst) {                            \
        (void)loc, (void)gtid;                                                                     \
        int64_t lb, ub, st;                                                                        \
        if (!dispatch_next(last, &lb, &ub, &st))                                                   \
            return 0;                                                                              \
        *plb = (T)lb;                                                                              \
        *pub = (T)ub;                                                                              \
        if (pst)                                                                                   \
            *pst = (S)st;                                                                          \
        return 1;                                                                                  \
    }                                                                                              \
    /* The end of an ordered iteration: the layer passes the turn with the */                      \
    /* next chunk, so nothing is left to do here. */                                               \
    KMP_API void __kmpc_dispatch_fini_##suffix(ident_t *loc, kmp_int32 gtid) {                     \
        (void)loc, (void)gtid;                                                                     \
    }                                                                                              \
    /* distribute parallel for, dynamic: the team's block, then the loop. */                       \
    KMP_API void __kmpc_dist_dispatch_init_##suffix(ident_t *loc, kmp_int32 gtid, kmp_int32 sched, \
                                                    kmp_int32 *last, T lb, T ub, S st, S chunk) {  \
        (void)loc, (void)gtid;                                                                     \
        long nteams, team;                                                                         \
        league_pos(&nteams, &team);                                                                \
        int64_t l = (int64_t)lb, u = (int64_t)ub, s;                                               \
        static_split(trip_count(l, u, (int64_t)st, U), nteams, team, 0, (int64_t)st, &l, &u, &s,   \
                     last);                                                                        \
        dispatch_init(sched, l, u, (int64_t)st, (int64_t)chunk, U);                                \
    }
DISPATCH(4, kmp_int32, kmp_int32, 0)
DISPATCH(4u, kmp_uint32, kmp_int32, 1)
DISPATCH(8, kmp_int64, kmp_int64, 0)
DISPATCH(8u, kmp_uint64, kmp_int64, 1)

/* -------------------------------------------------------------- doacross */

/* A doacross nest (ordered(n) with depend(sink/source)) is a worksharing
 * construct of its own before its loop's: its record holds the nest's
 * posted iterations (doacross.c), and the member keeps it aside while the
 * loop's construct comes and goes. Vectors are the loops' own values;
 * the layer counts logical iterations (value - lo) / st. */
#define KMP_MAX_NEST 16

struct kmp_dim {
    kmp_int64 lo, up, st;
};

typedef struct dx_member {
    omp_ws *ws;
    long k;
    int n;
    struct kmp_dim dims[KMP_MAX_NEST];
} dx_member;

static __thread dx_member *cur_dx;

KMP_API void __kmpc_doacross_init(ident_t *loc, kmp_int32 gtid, kmp_int32 num_dims,
                                  const struct kmp_dim *dims) {
    (void)loc, (void)gtid;
    if (num_dims < 1 || num_dims > KMP_MAX_NEST)
        herd__omp_fatal("a doacross loop nest of %d loops (herd handles 1 to %d)", num_dims,
                        KMP_MAX_NEST);
    omp_task *t = herd__omp_task();
    dx_member *m = malloc(sizeof *m);
    if (!m)
        herd__omp_fatal("out of memory for a doacross loop");
    m->n = num_dims;
    unsigned long long counts[KMP_MAX_NEST];
    for (int d = 0; d < num_dims; d++) {
        m->dims[d] = dims[d];
        counts[d] = trip_count(dims[d].lo, dims[d].up, dims[d].st, 0);
    }
    omp_ws *saved = t->ws;
    long saved_k = t->ws_k;
    if (herd__omp_ws_begin(t)) {
        omp_nest nest = {(unsigned)num_dims, counts, 1};
        herd__omp_doacross_init(t->ws, &nest);
        herd__omp_ws_publish(t);
    }
    m->ws = t->ws;
    m->k = t->ws_k;
    t->ws = saved;
    t->ws_k = saved_k;
    cur_dx = m; /* tied tasks: the member stays on this thread */
}

static int logical(const dx_member *m, const kmp_int64 *vec, unsigned long long *v) {
    for (int d = 0; d < m->n; d++) {
        const struct kmp_dim *x = &m->dims[d];
        int64_t off = x->st > 0 ? vec[d] - x->lo : x->lo - vec[d];
        int64_t s = x->st > 0 ? x->st : -x->st;
        if (off < 0 || off % s) /* outside the nest, or between iterations: no such iteration */
            return 0;
        v[d] = (unsigned long long)(off / s);
    }
    return 1;
}

static dx_member *need_dx(const char *what) {
    if (!cur_dx)
        herd__omp_fatal("%s outside a doacross loop", what);
    return cur_dx;
}

KMP_API void __kmpc_doacross_post(ident_t *loc, kmp_int32 gtid, const kmp_int64 *vec) {
    (void)loc, (void)gtid;
    dx_member *m = need_dx("ordered depend(source)");
    unsigned long long v[KMP_MAX_NEST];
    if (!logical(m, vec, v))
        herd__omp_fatal("ordered depend(source) in an iteration outside the loop nest");
    herd__omp_doacross_post_in(m->ws, v);
}

KMP_API void __kmpc_doacross_wait(ident_t *loc, kmp_int32 gtid, const kmp_int64 *vec) {
    (void)loc, (void)gtid;
    dx_member *m = need_dx("ordered depend(sink)");
    unsigned long long v[KMP_MAX_NEST];
    if (logical(m, vec, v)) /* a sink outside the nest waits for nothing */
        herd__omp_doacross_wait_in(m->ws, v);
}

KMP_API void __kmpc_doacross_fini(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    dx_member *m = need_dx("the end of a doacross loop");
    omp_task *t = herd__omp_task();
    omp_ws *saved = t->ws;
    long saved_k = t->ws_k;
    t->ws = m->ws;
    t->ws_k = m->k;
    herd__omp_ws_leave(t);
    t->ws = saved;
    t->ws_k = saved_k;
    cur_dx = NULL;
    free(m);
}
