/* Doacross loops: `for ordered(n)` with `ordered depend(sink: ...)` and
 * `ordered depend(source)` (OpenMP 4.5; docs/design/openmp.md,
 * "Doacross loops").
 *
 * GCC passes the loop nest's iteration counts (counts[0] is the outermost,
 * work-shared loop; the n - 1 loops inside it run whole, in order, in the
 * iteration of the outermost loop that encloses them) and names iterations
 * by their logical numbers from 0. The record keeps one word per outermost
 * iteration i: posted[i] is 1 + the flattened position of the last inner
 * iteration of i that reached its source (0: none yet). The inner loops run
 * in order on one thread, so each word only grows, and "iteration (i, j..)
 * has posted" is posted[i] > flat(j..). A wait spins on that word.
 *
 * D1 (post): a release store of the word; D2 (wait): relaxed reads in the
 * spin, then one acquire read (under ThreadSanitizer an acquire read in a
 * spin takes a lock that the releasing store needs: docs/design/tasks.md),
 * so the posting iteration's writes before its source are visible. A sink
 * outside the iteration space is ignored (the specification's rule; GCC
 * may pass such vectors, e.g. i - 1 at i = 0). */
#include "omp/omp.h"

#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>

struct omp_doacross {
    unsigned n;                  /* loops in the nest, 1..MAX_LOOPS */
    _Atomic long *posted;        /* counts[0] words */
    unsigned long long counts[]; /* n iteration counts */
};

/* Vectors as GCC passes them: logical iteration numbers (a sink before the
 * first iteration is negative: as unsigned it lies outside the space). */
#define MAX_LOOPS 64
/* Spins between two yields of a waiting member. */
#define WAIT_SPINS 64

void herd__omp_doacross_init(omp_ws *ws, const omp_nest *nest) {
    unsigned n = nest->n;
    if (n < 1 || n > MAX_LOOPS)
        herd__omp_fatal("a doacross loop nest %u loops deep (1 to %d)", n, MAX_LOOPS);
    omp_doacross *dx = malloc(sizeof *dx + n * sizeof dx->counts[0]);
    if (!dx)
        herd__omp_fatal("out of memory for a doacross loop");
    dx->n = n;
    unsigned long long inner = 1; /* the flattened positions must fit a long */
    int empty = 0;
    for (unsigned d = 0; d < n; d++) {
        unsigned long long c;
        if (empty) {
            /* A loop before is empty, so no iteration reaches an ordered
             * depend (they are in the innermost loop): GCC leaves the
             * counts after an empty loop unset. Not read. */
            dx->counts[d] = 0;
            continue;
        }
        if (nest->ull) {
            c = ((const unsigned long long *)nest->counts)[d];
        } else {
            long l = ((const long *)nest->counts)[d];
            c = l > 0 ? (unsigned long long)l : 0;
        }
        if (d > 0 && c > 1 && inner > (unsigned long long)LONG_MAX / 2 / c)
            herd__omp_fatal("a doacross loop nest whose inner loops run more than 2^62 iterations");
        if (d > 0 && c > 1)
            inner *= c;
        dx->counts[d] = c;
        empty = c == 0;
    }
    unsigned long long words = dx->counts[0] ? dx->counts[0] : 1;
    dx->posted = words <= SIZE_MAX / sizeof(long) ? calloc((size_t)words, sizeof(long)) : NULL;
    if (!dx->posted)
        herd__omp_fatal("out of memory for a doacross loop of %llu iterations", dx->counts[0]);
    ws->dx = dx;
}

void herd__omp_doacross_free(omp_ws *ws) {
    omp_doacross *dx = ws->dx;
    if (!dx)
        return;
    ws->dx = NULL;
    free(dx->posted);
    free(dx);
}

static omp_doacross *current(const char *what, void *caller) {
    omp_task *t = herd__omp_task();
    if (!t->ws || !t->ws->dx)
        herd__omp_fatal("%s outside a doacross loop (called from %p)", what, caller);
    return t->ws->dx;
}

/* 1 + the flattened position of inner iteration v[1..n-1]; 0 when a
 * coordinate lies outside the iteration space. */
static long position(const omp_doacross *dx, const unsigned long long *v) {
    unsigned long long p = 0;
    for (unsigned d = 1; d < dx->n; d++) {
        if (v[d] >= dx->counts[d])
            return 0;
        p = p * dx->counts[d] + v[d];
    }
    return (long)p + 1;
}

static void post(omp_doacross *dx, const unsigned long long *v) {
    if (v[0] >= dx->counts[0])
        herd__omp_fatal("ordered depend(source) in iteration %llu of a loop of %llu", v[0],
                        dx->counts[0]);
    long p = position(dx, v);
    if (!p)
        herd__omp_fatal("ordered depend(source) in an iteration outside the loop nest");
    /* D1. ORDER: release; pairs with D2's acquire read. */
    atomic_store_explicit(&dx->posted[v[0]], p, memory_order_release);
}

/* An orphaned loop (no team) runs in a team of one too (ws.c). */
static int team_of_one(const omp_task *t) {
    return !t->team || t->team->nthreads == 1;
}

static void wait_for(omp_doacross *dx, const unsigned long long *v) {
    if (v[0] >= dx->counts[0])
        return;
    long p = position(dx, v);
    if (!p)
        return;
    _Atomic long *w = &dx->posted[v[0]];
    for (unsigned i = 1; atomic_load_explicit(w, memory_order_relaxed) < p; i++) {
        if (i == 1 && team_of_one(herd__omp_task()))
            herd__omp_fatal("ordered depend(sink) waits for an iteration that a team of one thread "
                            "has not run: the sink names a later iteration");
        herd__omp_poll_pause(i, WAIT_SPINS); /* its member may share our worker or CPU */
    }
    /* D2. ORDER: acquire; pairs with D1's release store. */
    (void)atomic_load_explicit(w, memory_order_acquire);
}

/* The LLVM front end (kmp/loop.c): a nest's record by its construct, the
 * iteration as logical numbers. */
void herd__omp_doacross_post_in(omp_ws *ws, const unsigned long long *v) {
    post(ws->dx, v);
}
void herd__omp_doacross_wait_in(omp_ws *ws, const unsigned long long *v) {
    wait_for(ws->dx, v);
}

#define SOURCE "ordered depend(source)"
#define SINK "ordered depend(sink)"

OMP_API void GOMP_doacross_post(long *counts) {
    omp_doacross *dx = current(SOURCE, __builtin_return_address(0));
    unsigned long long v[MAX_LOOPS];
    v[0] = (unsigned long long)counts[0]; /* n >= 1 (init) */
    for (unsigned d = 1; d < dx->n; d++)
        v[d] = (unsigned long long)counts[d];
    post(dx, v);
}

OMP_API void GOMP_doacross_ull_post(unsigned long long *counts) {
    post(current(SOURCE, __builtin_return_address(0)), counts);
}

OMP_API void GOMP_doacross_wait(long first, ...) {
    omp_doacross *dx = current(SINK, __builtin_return_address(0));
    unsigned long long v[MAX_LOOPS];
    v[0] = (unsigned long long)first;
    va_list ap;
    va_start(ap, first);
    for (unsigned d = 1; d < dx->n; d++)
        v[d] = (unsigned long long)va_arg(ap, long);
    va_end(ap);
    wait_for(dx, v);
}

OMP_API void GOMP_doacross_ull_wait(unsigned long long first, ...) {
    omp_doacross *dx = current(SINK, __builtin_return_address(0));
    unsigned long long v[MAX_LOOPS];
    v[0] = first;
    va_list ap;
    va_start(ap, first);
    for (unsigned d = 1; d < dx->n; d++)
        v[d] = va_arg(ap, unsigned long long);
    va_end(ap);
    wait_for(dx, v);
}
