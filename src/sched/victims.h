/* What the stealing schedulers share: the victim orders they precompute at
 * start-up (one array per worker, grouped in classes of equally near
 * victims), and one steal attempt on one victim. */
#ifndef HERD_SCHED_VICTIMS_H
#define HERD_SCHED_VICTIMS_H

#include "arch/assert.h"
#include "sched/sched.h"

/* Distance between workers a and b as a victim order sees it; ctx is the
 * order's own data (NULL for the two below). */
typedef int (*herd__victim_dist)(const herd__sched_env *env, const void *ctx, int a, int b);

/* Topology distance between the PUs of two workers (herd__topo_distance). */
int herd__dist_topology(const herd__sched_env *env, const void *ctx, int a, int b);
/* Distance between worker ids on a ring (paper 000's "nearest id"). */
int herd__dist_ids(const herd__sched_env *env, const void *ctx, int a, int b);

/* Give every worker its victims sorted by (dist, id), one class per
 * distance. Returns 0 or HERD_ENOMEM. */
int herd__victims_sorted(herd__sched_env *env, herd__victim_dist dist, const void *ctx);
/* Start a worker's order; herd__victims_add appends, herd__victims_close
 * ends a class. Used by orders that are not a sort (hier). */
int herd__victims_alloc(herd__sched_worker *w, int n);
void herd__victims_add(herd__sched_worker *w, int victim);
void herd__victims_close(herd__sched_worker *w);

/* The orders live in the schedulers' per-worker records, which
 * herd__sched_stop frees: a scheduler that only builds
 * an order needs no fini of its own. */
void herd__sched_no_fini(herd__sched_env *env);

/* One steal attempt on one victim. */
typedef herd__steal_result (*herd__steal_try)(herd__sched_worker *w, int v, herd__work *out);

/* Visit w's victims in order (random_in_class: each class from a random
 * member on), trying each once with herd__steal_from. 1 with *out filled
 * on success. */
int herd__steal_in_order(herd__sched_worker *w, int random_in_class, herd__work *out);
/* The same with another attempt per victim (hier: its first-level queue). */
int herd__steal_in_order_with(herd__sched_worker *w, int random_in_class, herd__steal_try attempt,
                              herd__work *out);
/* One steal attempt on worker v: its ready queue (from the back), then its
 * split deque (as much as HERD_STEAL says). */
herd__steal_result herd__steal_from(herd__sched_worker *w, int v, herd__work *out);
/* For schedulers whose thieves read no deque (mts, central, lifo, fifo): take what a
 * rescue published on another worker's deque (core/rescue.c, R5: a worker
 * that spins in user code with tasks queued), the next ids on first. 1 with
 * *out filled on success. */
int herd__steal_rescued(herd__sched_worker *w, herd__work *out);

/* Shared queues filled on demand (mts, central; scheduler-seam.md): ask
 * workers ids[0..n) but `self` (ids NULL: workers 0..n-1) to share. */
void herd__ask_share(const herd__sched_env *env, const int *ids, int n, int self);
/* The asked worker's answer (its scheduler's `share`): clear the request
 * and move the older half of its queued tasks (at least one) to q, oldest
 * first (S7), so that q's back is the newest of them; wake a sleeper (W3)
 * if any moved. With nothing private on the deque the request stands, as
 * S3 leaves it (the asker may sleep until an answer wakes it). */
void herd__share_into(herd__sched_worker *w, herd__tq *q);
/* The same answer dealt over several queues (lifo, fifo): the moved tasks, oldest
 * first, in up to `parts` contiguous parts of equal size (the last may be
 * shorter), part after part to qs[pick(w)], a fresh pick for each, and a
 * wake of the sleepers of shepherd pick(w) for each: qs[s] is shepherd s's
 * queue. pick NULL: one part to qs[0] and herd__wake_one (herd__share_into). */
void herd__share_dealt(herd__sched_worker *w, herd__tq *qs, int parts,
                       int (*pick)(herd__sched_worker *w));
/* The deal itself: tasks[0..k) (herd__qtask records), in order, in up to
 * `parts` contiguous parts as above, with the same picks and wakes. Returns
 * how many were queued: a prefix of tasks (out of memory, the rest are the
 * caller's still). */
uint32_t herd__deal(herd__sched_worker *w, void *const *tasks, uint32_t k, herd__tq *qs, int parts,
                    int (*pick)(herd__sched_worker *w));
/* Tasks one share moves, at most. */
#define HERD__SHARE_BATCH 64u

/* "1 2 | 3 4 5": w's order with classes separated, cut to fit buf. */
void herd__victims_describe(const herd__sched_env *env, int worker, char *buf, size_t len);

#endif
