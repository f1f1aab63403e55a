/* The creation throttle's bound on one thread (task.c, "Creation throttle"):
 * HERD_OMP_THROTTLE queued tasks, raised to its highest (the setting times
 * 2^OMP_THROTTLE_RAISE_MAX) each time a thief asks the thread's worker for
 * work, halved after each OMP_THROTTLE_CALM tasks created without a thief
 * asking, down to the setting.
 *
 * Why it moves: a thief asks when it found the worker's public part empty.
 * With the setting's few queued tasks, which are the newest children of the
 * node the worker runs (leaves mostly, in an unbalanced tree such as UTS's
 * binomial T3), a thief got about a microsecond of work per steal and came
 * back for more: 242,590 steals of one task each in a 4.1M-node tree on 2
 * threads. While thieves keep asking, more queued tasks give them the older,
 * larger ones; once they stop, the bound falls back, because a raised bound
 * defers every task below it, about twice the cost of a call for a
 * fine-grained task (fib without a cut-off).
 *
 * Why at once: until round 28 each request doubled the bound, so it took six
 * requests, each within OMP_THROTTLE_CALM creations of the last, to reach the
 * top; meanwhile the worker ran at once the tasks a thief could have had,
 * and the thief came back for more. Raised at once, T3 on 2 threads took a
 * median of 19,165 steals instead of 47,059 and deferred 261,470 tasks
 * instead of 634,256 (31 alternated runs each, 2-core AMD VM;
 * docs/benchmarks.md, round 28).
 * A request counts only when another worker may take the task (task.c,
 * throttle_asked): round 27's first try raised the bound for a request
 * left over from a worker that an outermost team of one had parked since,
 * and the team deferred all its tasks (GCC's priority.c).
 *
 * One thread's state, read and written by that thread alone: no ordering. */
#ifndef HERD_OMP_THROTTLE_H
#define HERD_OMP_THROTTLE_H

#include <stdint.h>

#define OMP_THROTTLE_RAISE_MAX 6 /* at most 64 times the setting */
#define OMP_THROTTLE_CALM 1024   /* tasks created before a raised bound halves */

typedef struct omp_throttle {
    uint32_t shift; /* the bound is the setting << shift */
    uint32_t calm;  /* tasks created since the last raise or fall */
} omp_throttle;

/* The bound for the setting `limit` (1..1000000: no overflow at << 6). */
static inline uint32_t omp_throttle_bound(const omp_throttle *t, uint32_t limit) {
    return limit << t->shift;
}

/* A thief asked for work: the highest bound, for OMP_THROTTLE_CALM tasks. */
static inline void omp_throttle_asked(omp_throttle *t) {
    t->shift = OMP_THROTTLE_RAISE_MAX;
    t->calm = 0;
}

/* A task is created with no thief asking (call only while raised: shift > 0). */
static inline void omp_throttle_calm(omp_throttle *t) {
    if (++t->calm >= OMP_THROTTLE_CALM) {
        t->shift--;
        t->calm = 0;
    }
}

#endif
