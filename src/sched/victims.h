/* What the stealing schedulers share: the victim orders they precompute at
 * start-up (one array per worker, grouped in classes of equally near
 * victims), and one steal attempt on one victim. */
#ifndef HERD_SCHED_VICTIMS_H
#define HERD_SCHED_VICTIMS_H

#include "core/runtime.h"

/* A scheduler's own record for one worker (herd__worker.sched_self;
 * allocated before the scheduler's init, freed after its fini, with its
 * order arrays: sched/registry.c). One cache line each: the owner writes
 * rr at every placement. */
typedef struct herd__sched_worker {
    /* Victim order (NULL for random and queue schedulers): order[0..norder),
     * grouped in classes of equal distance; class_end[c] is one past the
     * last index of class c. */
    int *order;
    int norder;
    int *class_end;
    int nclasses;
    unsigned rr; /* round-robin placement cursor (fifo, lifo, hier); owner only */
} __attribute__((aligned(64))) herd__sched_worker;

static inline herd__sched_worker *herd__sw(const herd__worker *w) {
    return (herd__sched_worker *)w->sched_self;
}

/* Distance between workers a and b as a victim order sees it; ctx is the
 * order's own data (NULL for the two below). */
typedef int (*herd__victim_dist)(const herd__rt *rt, const void *ctx, int a, int b);

/* Topology distance between the PUs of two workers (herd__topo_distance). */
int herd__dist_topology(const herd__rt *rt, const void *ctx, int a, int b);
/* Distance between worker ids on a ring (paper 000's "nearest id"). */
int herd__dist_ids(const herd__rt *rt, const void *ctx, int a, int b);

/* Give every worker its victims sorted by (dist, id), one class per
 * distance. Returns 0 or HERD_ENOMEM. */
int herd__victims_sorted(herd__rt *rt, herd__victim_dist dist, const void *ctx);
/* Start a worker's order; herd__victims_add appends, herd__victims_close
 * ends a class. Used by orders that are not a sort (hier). */
int herd__victims_alloc(herd__worker *w, int n);
void herd__victims_add(herd__worker *w, int victim);
void herd__victims_close(herd__worker *w);

/* The orders live in the schedulers' per-worker records, which
 * herd__sched_stop frees with their arrays: a scheduler that only builds
 * an order needs no fini of its own. */
void herd__sched_no_fini(herd__rt *rt);

/* One steal attempt on one victim. */
typedef herd__steal_result (*herd__steal_try)(herd__worker *w, int v, herd__work *out);

/* Visit w's victims in order (random_in_class: each class from a random
 * member on), trying each once with herd__steal_from. 1 with *out filled
 * on success. */
int herd__steal_in_order(herd__worker *w, int random_in_class, herd__work *out);
/* The same with another attempt per victim (hier: its first-level queue). */
int herd__steal_in_order_with(herd__worker *w, int random_in_class, herd__steal_try attempt,
                              herd__work *out);
/* Take a suspended task from the back of worker v's ready queue; 1 with
 * *out filled (victim, shepherd, one task) when there was one. */
int herd__steal_ready(herd__worker *w, int v, herd__work *out);
/* One steal attempt on worker v: its ready queue (from the back), then its
 * split deque (as much as HERD_STEAL says). */
herd__steal_result herd__steal_from(herd__worker *w, int v, herd__work *out);

/* Shared queues filled on demand (mts, central; scheduler-seam.md): ask
 * workers ids[0..n) but `self` (ids NULL: workers 0..n-1) to share. */
void herd__ask_share(herd__rt *rt, const int *ids, int n, int self);
/* The asked worker's answer (its scheduler's `share`): clear the request
 * and move the older half of its queued tasks (at least one) to q, oldest
 * first (S7), so that q's back is the newest of them; wake a sleeper (W3)
 * if any moved. */
void herd__share_into(herd__worker *w, herd__tq *q);

/* "1 2 | 3 4 5": w's order with classes separated, cut to fit buf. */
void herd__victims_describe(const herd__rt *rt, int worker, char *buf, size_t len);

#endif
