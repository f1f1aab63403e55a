/* Worksharing: loops (every schedule, ordered, the ull flavour), sections,
 * single and copyprivate (docs/design/openmp.md, "Worksharing").
 *
 * A team has a ring of WS_RING construct records. Member t's k-th
 * construct uses ws[k % WS_RING]: the first member to arrive claims it (CAS
 * of free_for from k to ~k), sets it up and publishes ready_for = k; the
 * others wait for that. When the last member leaves construct k, the record
 * is reset and free_for becomes k + WS_RING. A member that runs WS_RING
 * nowait constructs ahead waits for the slowest to leave.
 *
 * Loops run in normalised iterations [0, n): chunk [lo, hi) is iterations
 * start + lo*incr .. start + hi*incr. Each member computes the loop (n, the
 * schedule, the bounds: omp_loop) from its own arguments, which OpenMP
 * requires to be the same in every member, so a member of a loop without a
 * doacross nest waits for no set-up: once the record is free of its last
 * use (free_for k or ~k, whose acquire load sees that use's reset of the
 * next iteration and the ordered turn) it takes chunks. With more threads
 * than CPUs, a member that waited for the claimer's publication yielded its
 * CPU to whoever shared it, which could hold it for a time slice (LLVM's
 * kmp_sch_simd_guided.c: 4 workers on 2 CPUs, members spinning in user
 * code). Ordered loops pass a turn from chunk to chunk in iteration order:
 * the turn is the start of the chunk allowed to run its ordered region; a
 * member hands it on (turn = its chunk's end) when it takes its next chunk
 * or ends the loop. */
#include "omp/omp.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The state a record is in between two constructs, which the next
 * construct's claimer and members count on (its set-up writes the loop or
 * the sections' count itself). Shared by the ring's start and by the last
 * member's reset (ws_leave); dx and mem are the caller's to free or clear.
 * ORDER: relaxed; what publishes it is the caller's (see there). */
static void ws_clear(omp_ws *ws) {
    atomic_store_explicit(&ws->left, 0, memory_order_relaxed);
    atomic_store_explicit(&ws->ready_for, -1, memory_order_relaxed);
    atomic_store_explicit(&ws->single, 0, memory_order_relaxed);
    atomic_store_explicit(&ws->ord_turn, 0, memory_order_relaxed);
    atomic_store_explicit(&ws->next, 0, memory_order_relaxed);
    ws->copy = NULL;
    ws->red = NULL;
    atomic_store_explicit(&ws->red_state, OMP_EXTRA_NONE, memory_order_relaxed);
    atomic_store_explicit(&ws->mem_state, OMP_EXTRA_NONE, memory_order_relaxed);
}

/* The ring of a new team, which region_start does not zero (2 KB: a third
 * of an empty region of one thread went to zeroing its team). The team's
 * members start after this (the queueing of their tasks orders it). */
void herd__omp_ws_ring_init(omp_team *team) {
    for (int i = 0; i < WS_RING; i++) {
        omp_ws *ws = &team->ws[i];
        ws_clear(ws);
        ws->dx = NULL;
        ws->mem = NULL;
        atomic_store_explicit(&ws->free_for, i, memory_order_relaxed);
    }
}

/* A worksharing construct met by a task outside any team (orphaned, outside
 * every parallel region) binds to a team of one: the task itself. Its
 * record is the task's alone, on the heap, freed when the task leaves it;
 * constructs of one task do not overlap (a closely nested worksharing
 * construct is not allowed), and other team-less tasks (run at once inside
 * its body) get their own records. Not a hot path. */
static int solo_begin(omp_task *t) {
    omp_ws *ws = aligned_alloc(_Alignof(omp_ws), sizeof *ws);
    if (!ws)
        herd__omp_fatal("out of memory for a worksharing construct");
    memset(ws, 0, sizeof *ws);
    atomic_init(&ws->ready_for, -1);
    t->ws = ws;
    t->ws_k = t->ws_next++;
    return 1;
}

static void solo_leave(omp_ws *ws) {
    herd__omp_doacross_free(ws);
    free(ws->mem);
    free(ws);
}

/* need_setup: wait for the claimer's publication (else only for the
 * record to be free of its last use). */
static int ws_enter(omp_task *t, int need_setup) {
    if (__builtin_expect(!t->team, 0))
        return solo_begin(t);
    long k = t->ws_next++;
    omp_ws *ws = &t->team->ws[k % WS_RING];
    t->ws = ws;
    t->ws_k = k;
    for (;;) {
        /* ORDER: acquire; pairs with the release store in ws_publish: the
         * set-up fields are visible. */
        if (atomic_load_explicit(&ws->ready_for, memory_order_acquire) == k)
            return 0;
        /* ORDER: acquire; pairs with the release store of free_for in
         * ws_leave (the claim's CAS continues its release sequence): the
         * last users are done with the record and its reset is visible. */
        long f = atomic_load_explicit(&ws->free_for, memory_order_acquire);
        if (f == k && atomic_compare_exchange_strong_explicit(
                          &ws->free_for, &f, ~k, memory_order_acquire, memory_order_acquire))
            return 1;
        if (f == ~k && !need_setup)
            return 0;
        herd__omp_relax();
    }
}

int herd__omp_ws_begin(omp_task *t) {
    return ws_enter(t, 1);
}

int herd__omp_ws_begin_loop(omp_task *t) {
    return ws_enter(t, 0);
}

void herd__omp_ws_publish(omp_task *t) {
    /* ORDER: release; pairs with the acquire load in ws_enter(). */
    atomic_store_explicit(&t->ws->ready_for, t->ws_k, memory_order_release);
}

void herd__omp_ws_leave(omp_task *t) {
    omp_ws *ws = t->ws;
    if (!ws)
        return;
    t->ws = NULL;
    if (!t->team) {
        solo_leave(ws);
        return;
    }
    /* ORDER: acq_rel; the leavers' RMWs form a release sequence, so the last
     * one sees every member done with the record before it resets it. */
    if (atomic_fetch_add_explicit(&ws->left, 1, memory_order_acq_rel) + 1 != t->team->nthreads)
        return;
    /* The reset. The release store of free_for below publishes it to the
     * next construct's members (ws_enter's acquire). */
    ws_clear(ws);
    herd__omp_doacross_free(ws);
    free(ws->mem);
    ws->mem = NULL;
    /* ORDER: release; pairs with the acquire load and CAS in ws_enter(). */
    atomic_store_explicit(&ws->free_for, t->ws_k + WS_RING, memory_order_release);
}

int herd__omp_ws_extra(_Atomic int *state) {
    int none = OMP_EXTRA_NONE;
    /* ORDER: relaxed claim; the claimant publishes with the release store
     * in herd__omp_ws_extra_ready(). */
    if (atomic_compare_exchange_strong_explicit(state, &none, OMP_EXTRA_CLAIMED,
                                                memory_order_relaxed, memory_order_relaxed))
        return 1;
    OMP_SAVE();
    /* ORDER: acquire; pairs with the release store: the extra is visible. */
    while (atomic_load_explicit(state, memory_order_acquire) != OMP_EXTRA_READY)
        herd__omp_relax();
    OMP_RESTORE();
    return 0;
}

void herd__omp_ws_extra_ready(_Atomic int *state) {
    /* ORDER: release; pairs with the acquire load in herd__omp_ws_extra(). */
    atomic_store_explicit(state, OMP_EXTRA_READY, memory_order_release);
}

/* GCC's worksharing memory: *mem holds its size; it gets zeroed memory
 * that the members of the construct share. */
static void ws_mem(omp_task *t, void **mem) {
    omp_ws *ws = t->ws;
    if (herd__omp_ws_extra(&ws->mem_state)) {
        size_t size = (size_t)(uintptr_t)*mem;
        ws->mem = calloc(1, size ? size : 1);
        if (!ws->mem)
            herd__omp_fatal("out of memory for a worksharing construct (%zu bytes)", size);
        herd__omp_ws_extra_ready(&ws->mem_state);
    }
    *mem = ws->mem;
}

/* ------------------------------------------------------------------ loops */

static int resolve_kind(const omp_task *t, long sched, long *chunk) {
    int kind = (int)(sched & ~(long)OMP_SCHED_MONOTONIC);
    if (kind == OMP_SCHED_RUNTIME) {
        /* the default: libgomp's (GCC's loops) */
        kind = herd__omp_run_sched(t->icv->run_sched, t->icv->run_chunk, 0, chunk) &
               ~(int)OMP_SCHED_MONOTONIC;
    }
    if (kind == OMP_SCHED_AUTO)
        kind = OMP_SCHED_STATIC, *chunk = 0;
    if (kind == OMP_SCHED_TRAPEZOIDAL) /* libomp's: chunks that shrink, as guided's do */
        kind = OMP_SCHED_GUIDED;
    if (kind != OMP_SCHED_STATIC && *chunk < 1)
        *chunk = 1;
    return kind;
}

static void loop_common(omp_loop *lp, const omp_task *t, long sched, long n, long chunk) {
    lp->simd = 0;
    lp->kind = resolve_kind(t, sched, &chunk);
    lp->chunk = chunk;
    lp->n = n;
}

static long count_signed(long start, long end, long incr) {
    if (incr > 0)
        return end > start
                   ? (long)(((unsigned long)end - (unsigned long)start + (unsigned long)incr - 1) /
                            (unsigned long)incr)
                   : 0;
    return start > end
               ? (long)(((unsigned long)start - (unsigned long)end - (unsigned long)incr - 1) /
                        (unsigned long)-incr)
               : 0;
}

void herd__omp_loop_init(omp_loop *lp, const omp_task *t, long sched, long start, long end,
                         long incr, long chunk) {
    lp->ull = 0;
    lp->start = start;
    lp->incr = incr;
    loop_common(lp, t, sched, count_signed(start, end, incr), chunk);
}

static void loop_init_ull(omp_loop *lp, const omp_task *t, long sched, bool up,
                          unsigned long long start, unsigned long long end, unsigned long long incr,
                          unsigned long long chunk) {
    lp->ull = 1;
    lp->up = up;
    lp->ustart = start;
    lp->uincr = incr;
    long n;
    if (up)
        n = end > start ? (long)((end - start + incr - 1) / incr) : 0;
    else
        n = start > end ? (long)((start - end - incr - 1) / -incr) : 0;
    loop_common(lp, t, sched, n, (long)chunk);
}

/* The member's next chunk [lo, hi) of the loop it is in; 0 when none. */
static int next_chunk(omp_task *t, long *lo, long *hi) {
    omp_ws *ws = t->ws;
    const omp_loop *lp = &t->loop;
    long n = lp->n, c = lp->chunk, T = t->team ? t->team->nthreads : 1;
    switch (lp->kind) {
    case OMP_SCHED_STATIC:
        if (c <= 0) { /* one block per member */
            if (t->st_trip++)
                return 0;
            long q = n / T, r = n % T, i = t->thread_num;
            *lo = i < r ? i * (q + 1) : r * (q + 1) + (i - r) * q;
            *hi = *lo + (i < r ? q + 1 : q);
            return *lo < *hi;
        } else {
            long ci = t->thread_num + t->st_trip++ * T;
            if (ci > n / c + 1 || ci * c >= n)
                return 0;
            *lo = ci * c;
            *hi = *lo + c < n ? *lo + c : n;
            return 1;
        }
    case OMP_SCHED_DYNAMIC: {
        /* ORDER: relaxed; the counter hands out distinct ranges, nothing
         * else is published through it. */
        long a = atomic_fetch_add_explicit(&ws->next, c, memory_order_relaxed);
        if (a >= n)
            return 0;
        *lo = a;
        *hi = a + c < n ? a + c : n;
        return 1;
    }
    default: { /* guided */
        long a = atomic_load_explicit(&ws->next, memory_order_relaxed);
        for (;;) {
            if (a >= n)
                return 0;
            long q = (n - a + T - 1) / T;
            if (q < c)
                q = c;
            if (__builtin_expect(lp->simd > 1, 0))
                q = (q + lp->simd - 1) / lp->simd * lp->simd;
            long b = a + q < n ? a + q : n;
            /* ORDER: relaxed, as for dynamic. */
            if (atomic_compare_exchange_weak_explicit(&ws->next, &a, b, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                *lo = a;
                *hi = b;
                return 1;
            }
        }
    }
    }
}

/* Polls of the turn between two offers of the CPU (herd__omp_relax): the
 * turn usually comes from the member running the previous chunk within a
 * few hundred nanoseconds, sooner than a yield returns. */
#define TURN_SPINS 32

/* Pauses per chunk between a waiter's chunk and the turn: members further
 * from their turn look at it less often, so that each pass of the turn is
 * read at once by the member it goes to rather than queued behind every
 * member's read of the new line (EPCC ORDERED on the 16-core device, 16
 * threads: 0.43 -> 0.34 us; 8 threads: 0.45 -> 0.32, libgomp 0.34). */
#define TURN_BACKOFF 4
#define TURN_BACKOFF_MAX 64

/* Is it t's turn? If not, pause in proportion to how far off it is before
 * the caller looks again (herd__spin_wait's predicate, and the loop below). */
static int look_at_turn(void *p) {
    omp_task *t = p;
    /* ORDER: relaxed; wait_turn's acquire load follows. */
    long turn = atomic_load_explicit(&t->ws->ord_turn, memory_order_relaxed);
    if (turn == t->ch_lo)
        return 1;
    /* Chunks before ours (counted in chunks of our size: exact for static
     * and dynamic loops, more for guided ones, whose earlier chunks are
     * larger), less the next one: its member polls at once. */
    long len = t->ch_hi > t->ch_lo ? t->ch_hi - t->ch_lo : 1;
    long before = (t->ch_lo - turn) / len - 1;
    for (long i = 0; i < TURN_BACKOFF * before && i < TURN_BACKOFF_MAX; i++)
        herd__cpu_relax();
    return 0;
}

static void wait_turn(omp_task *t) {
    /* A member with a CPU of its own and nothing else to run waits for its
     * turn there, as for a barrier or a lock: with 16 members the turn
     * comes round every few microseconds, and a yield every 32 polls
     * (herd__omp_relax) made each member look away when it came (EPCC
     * ORDERED, 16 threads on the 16-core device: 0.44 us, libgomp 0.22).
     * Otherwise (or after that spin) poll, offering the CPU every
     * TURN_SPINS looks, or at every look with more workers than CPUs. */
    herd__worker *self = herd__self();
    if (!self || !herd__spin_wait(self, look_at_turn, t))
        for (unsigned i = 1; !look_at_turn(t); i++)
            herd__omp_poll_pause(i, TURN_SPINS);
    /* ORDER: acquire; pairs with the release store in pass_turn: the
     * previous chunk's ordered writes are visible. */
    (void)atomic_load_explicit(&t->ws->ord_turn, memory_order_acquire);
}

static void pass_turn(omp_task *t) {
    if (!t->ordered || t->ch_lo < 0)
        return;
    wait_turn(t);
    /* ORDER: release; pairs with the acquire load in wait_turn(). */
    atomic_store_explicit(&t->ws->ord_turn, t->ch_hi, memory_order_release);
    t->ch_lo = t->ch_hi = -1;
}

static bool take(omp_task *t, long *lo, long *hi) {
    pass_turn(t);
    if (!next_chunk(t, lo, hi))
        return false;
    t->ch_lo = *lo;
    t->ch_hi = *hi;
    return true;
}

static bool next_signed(long *istart, long *iend) {
    omp_task *t = herd__omp_task();
    long lo, hi;
    if (!take(t, &lo, &hi))
        return false;
    *istart = t->loop.start + lo * t->loop.incr;
    *iend = t->loop.start + hi * t->loop.incr;
    return true;
}

static bool next_ull(unsigned long long *istart, unsigned long long *iend) {
    omp_task *t = herd__omp_task();
    long lo, hi;
    if (!take(t, &lo, &hi))
        return false;
    *istart = t->loop.ustart + (unsigned long long)lo * t->loop.uincr;
    *iend = t->loop.ustart + (unsigned long long)hi * t->loop.uincr;
    return true;
}

static void enter_loop(omp_task *t, int ordered) {
    t->st_trip = 0;
    t->ordered = ordered;
    t->ch_lo = t->ch_hi = -1;
}

/* Enter the record of t's next construct, a loop: a doacross loop's
 * claimer sets up its nest (doacross.c) and publishes it, which the other
 * members wait for; any other loop needs nothing of the record's set-up
 * (herd__omp_ws_begin_loop), so it publishes nothing. */
static void loop_enter(omp_task *t, const omp_nest *nest) {
    if (!nest) {
        (void)herd__omp_ws_begin_loop(t);
    } else if (herd__omp_ws_begin(t)) {
        herd__omp_doacross_init(t->ws, nest);
        herd__omp_ws_publish(t);
    }
}

/* nest: a doacross loop's nest (doacross.c), set up with the loop; NULL for
 * any other loop. */
static bool start_signed(long sched, int ordered, long start, long end, long incr, long chunk,
                         long *istart, long *iend, const omp_nest *nest) {
    omp_task *t = herd__omp_task();
    herd__omp_loop_init(&t->loop, t, sched, start, end, incr, chunk);
    loop_enter(t, nest);
    enter_loop(t, ordered);
    return istart ? next_signed(istart, iend) : true;
}

static bool start_ull(long sched, int ordered, bool up, unsigned long long start,
                      unsigned long long end, unsigned long long incr, unsigned long long chunk,
                      unsigned long long *istart, unsigned long long *iend, const omp_nest *nest) {
    omp_task *t = herd__omp_task();
    loop_init_ull(&t->loop, t, sched, up, start, end, incr, chunk);
    loop_enter(t, nest);
    enter_loop(t, ordered);
    return istart ? next_ull(istart, iend) : true;
}

/* Doacross loops (doacross.c): the outermost loop's logical iterations
 * [0, counts[0]) are shared like any loop's, and the member that sets the
 * loop up sets up the nest's record of posted iterations too. */
static bool start_doacross_signed(long sched, unsigned n, const long *counts, long chunk,
                                  long *istart, long *iend) {
    omp_nest nest = {n, counts, 0};
    return start_signed(sched, 0, 0, counts[0] > 0 ? counts[0] : 0, 1, chunk, istart, iend, &nest);
}

static bool start_doacross_ull(long sched, unsigned n, const unsigned long long *counts,
                               unsigned long long chunk, unsigned long long *istart,
                               unsigned long long *iend) {
    omp_nest nest = {n, counts, 1};
    return start_ull(sched, 0, true, 0, counts[0], 1, chunk, istart, iend, &nest);
}

#define DOACROSS(name, sched)                                                                      \
    OMP_API bool GOMP_loop_doacross_##name##_start(unsigned n, long *counts, long c, long *is,     \
                                                   long *ie) {                                     \
        return start_doacross_signed(sched, n, counts, c, is, ie);                                 \
    }                                                                                              \
    OMP_API bool GOMP_loop_ull_doacross_##name##_start(                                            \
        unsigned n, unsigned long long *counts, unsigned long long c, unsigned long long *is,      \
        unsigned long long *ie) {                                                                  \
        return start_doacross_ull(sched, n, counts, c, is, ie);                                    \
    }

DOACROSS(static, OMP_SCHED_STATIC)
DOACROSS(dynamic, OMP_SCHED_DYNAMIC)
DOACROSS(guided, OMP_SCHED_GUIDED)

OMP_API bool GOMP_loop_doacross_runtime_start(unsigned n, long *counts, long *is, long *ie) {
    return start_doacross_signed(OMP_SCHED_RUNTIME, n, counts, 0, is, ie);
}

OMP_API bool GOMP_loop_ull_doacross_runtime_start(unsigned n, unsigned long long *counts,
                                                  unsigned long long *is, unsigned long long *ie) {
    return start_doacross_ull(OMP_SCHED_RUNTIME, n, counts, 0, is, ie);
}

/* The worksharing loop GOMP_parallel_loop_* set up: members enter it at
 * their start (team.c) and only call *_next; enter_loop state is zero. */

#define LOOP(name, sched, ord)                                                                     \
    OMP_API bool GOMP_loop_##name##_start(long s, long e, long i, long c, long *is, long *ie) {    \
        return start_signed(sched, ord, s, e, i, c, is, ie, NULL);                                 \
    }                                                                                              \
    OMP_API bool GOMP_loop_##name##_next(long *is, long *ie) {                                     \
        return next_signed(is, ie);                                                                \
    }                                                                                              \
    OMP_API bool GOMP_loop_ull_##name##_start(bool up, unsigned long long s, unsigned long long e, \
                                              unsigned long long i, unsigned long long c,          \
                                              unsigned long long *is, unsigned long long *ie) {    \
        return start_ull(sched, ord, up, s, e, i, c, is, ie, NULL);                                \
    }                                                                                              \
    OMP_API bool GOMP_loop_ull_##name##_next(unsigned long long *is, unsigned long long *ie) {     \
        return next_ull(is, ie);                                                                   \
    }
#define LOOP_RT(name, ord)                                                                         \
    OMP_API bool GOMP_loop_##name##_start(long s, long e, long i, long *is, long *ie) {            \
        return start_signed(OMP_SCHED_RUNTIME, ord, s, e, i, 0, is, ie, NULL);                     \
    }                                                                                              \
    OMP_API bool GOMP_loop_##name##_next(long *is, long *ie) {                                     \
        return next_signed(is, ie);                                                                \
    }                                                                                              \
    OMP_API bool GOMP_loop_ull_##name##_start(bool up, unsigned long long s, unsigned long long e, \
                                              unsigned long long i, unsigned long long *is,        \
                                              unsigned long long *ie) {                            \
        return start_ull(OMP_SCHED_RUNTIME, ord, up, s, e, i, 0, is, ie, NULL);                    \
    }                                                                                              \
    OMP_API bool GOMP_loop_ull_##name##_next(unsigned long long *is, unsigned long long *ie) {     \
        return next_ull(is, ie);                                                                   \
    }

LOOP(static, OMP_SCHED_STATIC, 0)
LOOP(dynamic, OMP_SCHED_DYNAMIC, 0)
LOOP(guided, OMP_SCHED_GUIDED, 0)
LOOP(nonmonotonic_dynamic, OMP_SCHED_DYNAMIC, 0)
LOOP(nonmonotonic_guided, OMP_SCHED_GUIDED, 0)
LOOP(ordered_static, OMP_SCHED_STATIC, 1)
LOOP(ordered_dynamic, OMP_SCHED_DYNAMIC, 1)
LOOP(ordered_guided, OMP_SCHED_GUIDED, 1)
LOOP_RT(runtime, 0)
LOOP_RT(nonmonotonic_runtime, 0)
LOOP_RT(maybe_nonmonotonic_runtime, 0)
LOOP_RT(ordered_runtime, 1)

/* The 5.0 entry points: reduction(task, ...) arrays, worksharing memory
 * (lastprivate(conditional:), scan), once the construct is set up. */
static void extras(uintptr_t *reductions, void **mem) {
    omp_task *t = herd__omp_task();
    if (mem)
        ws_mem(t, mem);
    if (reductions)
        herd__omp_ws_red_start(t, reductions);
}

static bool with_extras(bool more, uintptr_t *reductions, void **mem) {
    extras(reductions, mem);
    return more;
}

OMP_API bool GOMP_loop_start(long s, long e, long i, long sched, long c, long *is, long *ie,
                             uintptr_t *reductions, void **mem) {
    return with_extras(start_signed(sched, 0, s, e, i, c, is, ie, NULL), reductions, mem);
}

OMP_API bool GOMP_loop_ordered_start(long s, long e, long i, long sched, long c, long *is, long *ie,
                                     uintptr_t *reductions, void **mem) {
    return with_extras(start_signed(sched, 1, s, e, i, c, is, ie, NULL), reductions, mem);
}

OMP_API bool GOMP_loop_ull_start(bool up, unsigned long long s, unsigned long long e,
                                 unsigned long long i, long sched, unsigned long long c,
                                 unsigned long long *is, unsigned long long *ie,
                                 uintptr_t *reductions, void **mem) {
    return with_extras(start_ull(sched, 0, up, s, e, i, c, is, ie, NULL), reductions, mem);
}

OMP_API bool GOMP_loop_ull_ordered_start(bool up, unsigned long long s, unsigned long long e,
                                         unsigned long long i, long sched, unsigned long long c,
                                         unsigned long long *is, unsigned long long *ie,
                                         uintptr_t *reductions, void **mem) {
    return with_extras(start_ull(sched, 1, up, s, e, i, c, is, ie, NULL), reductions, mem);
}

OMP_API bool GOMP_loop_doacross_start(unsigned n, long *counts, long sched, long c, long *is,
                                      long *ie, uintptr_t *reductions, void **mem) {
    return with_extras(start_doacross_signed(sched, n, counts, c, is, ie), reductions, mem);
}

OMP_API bool GOMP_loop_ull_doacross_start(unsigned n, unsigned long long *counts, long sched,
                                          unsigned long long c, unsigned long long *is,
                                          unsigned long long *ie, uintptr_t *reductions,
                                          void **mem) {
    return with_extras(start_doacross_ull(sched, n, counts, c, is, ie), reductions, mem);
}

/* The LLVM front end's loops (kmp/loop.c): set up by count, chunks taken
 * as normalised ranges [lo, hi), left when the last is taken. */
void herd__omp_loop_begin_n(long sched, int ordered, long start, long incr, long n, long chunk,
                            long simd) {
    omp_task *t = herd__omp_task();
    omp_loop *lp = &t->loop;
    lp->ull = 0;
    lp->start = start;
    lp->incr = incr;
    loop_common(lp, t, sched, n, chunk);
    if (simd > 1) { /* chunks of `chunk` simd widths (the last excepted) */
        long T = t->team ? t->team->nthreads : 1;
        if (lp->kind == OMP_SCHED_STATIC && lp->chunk <= 0) /* one block each, whole widths */
            lp->chunk = ((n + T - 1) / T + simd - 1) / simd * simd;
        else
            lp->chunk *= simd;
        lp->simd = lp->kind == OMP_SCHED_GUIDED ? lp->chunk : 0; /* guided: whole chunks */
    }
    loop_enter(t, NULL);
    enter_loop(t, ordered);
}

bool herd__omp_loop_take(omp_task *t, long *lo, long *hi) {
    return take(t, lo, hi);
}

void herd__omp_loop_leave(omp_task *t) {
    pass_turn(t);
    t->ordered = 0;
    herd__omp_ws_leave(t);
}

OMP_API void GOMP_loop_end_nowait(void) {
    herd__omp_loop_leave(herd__omp_task());
}

OMP_API void GOMP_loop_end(void) {
    GOMP_loop_end_nowait();
    GOMP_barrier();
}

/* The end of a loop in a region that may be cancelled: true when the
 * region (parallel) is, and the member goes to its end. */
OMP_API bool GOMP_loop_end_cancel(void) {
    GOMP_loop_end_nowait();
    return GOMP_barrier_cancel();
}

OMP_API void GOMP_ordered_start(void) {
    omp_task *t = herd__omp_task();
    if (t->ws && t->ordered)
        wait_turn(t);
}

OMP_API void GOMP_ordered_end(void) {}

/* --------------------------------------------------------------- sections */

OMP_API unsigned GOMP_sections_next(void) {
    omp_task *t = herd__omp_task();
    /* ORDER: relaxed; hands out distinct section numbers. */
    unsigned i = atomic_fetch_add_explicit(&t->ws->sect_next, 1, memory_order_relaxed);
    /* ORDER: relaxed; a cancel is seen soon enough (a cancellation point) */
    if (t->team && atomic_load_explicit(&t->team->ws_cancelled, memory_order_relaxed))
        return 0;
    return i <= t->ws->sect_count ? i : 0;
}

OMP_API unsigned GOMP_sections_start(unsigned count) {
    omp_task *t = herd__omp_task();
    if (herd__omp_ws_begin(t)) {
        t->ws->sect_count = count;
        atomic_store_explicit(&t->ws->sect_next, 1, memory_order_relaxed);
        herd__omp_ws_publish(t);
    }
    return GOMP_sections_next();
}

OMP_API unsigned GOMP_sections2_start(unsigned count, uintptr_t *reductions, void **mem) {
    unsigned first = GOMP_sections_start(count);
    extras(reductions, mem);
    return first;
}

OMP_API void GOMP_sections_end_nowait(void) {
    herd__omp_ws_leave(herd__omp_task());
}

OMP_API void GOMP_sections_end(void) {
    GOMP_sections_end_nowait();
    GOMP_barrier();
}

OMP_API bool GOMP_sections_end_cancel(void) {
    GOMP_sections_end_nowait();
    return GOMP_barrier_cancel();
}

/* ----------------------------------------------------------------- single */

/* A single without copyprivate shares no record: the member that finds
 * the team's count at its own count of singles met claims it (every single
 * before it was claimed by the first to arrive, so the count is never
 * behind; one CAS, where a worksharing record cost four RMWs). */
OMP_API bool GOMP_single_start(void) {
    omp_task *t = herd__omp_task();
    if (!t->team)
        return true;
    unsigned long k = t->singles++;
    /* ORDER: relaxed; only one member may win, nothing is published. */
    return atomic_load_explicit(&t->team->single_count, memory_order_relaxed) == k &&
           atomic_compare_exchange_strong_explicit(&t->team->single_count, &k, k + 1,
                                                   memory_order_relaxed, memory_order_relaxed);
}

/* copyprivate: the executor stores its data pointer and meets the others at
 * a barrier; they read it after the barrier. GCC emits a second barrier
 * after the copies, so the executor's data outlives them. */
OMP_API void *GOMP_single_copy_start(void) {
    omp_task *t = herd__omp_task();
    if (!t->team)
        return NULL;
    if (herd__omp_ws_begin(t))
        herd__omp_ws_publish(t);
    if (atomic_exchange_explicit(&t->ws->single, 1, memory_order_relaxed) == 0)
        return NULL;          /* executor: leaves in GOMP_single_copy_end */
    GOMP_barrier();           /* t is still ours after it: GOMP_barrier restores the record */
    void *data = t->ws->copy; /* the barrier orders the executor's store before */
    herd__omp_ws_leave(t);
    return data;
}

OMP_API void GOMP_single_copy_end(void *data) {
    omp_task *t = herd__omp_task();
    if (!t->team)
        return;
    t->ws->copy = data;
    GOMP_barrier();
    herd__omp_ws_leave(t);
}
