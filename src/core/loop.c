/* Parallel loops on top of spawn/wait (paper 000 §2.1: one task per
 * iteration, self-scheduled chunks; plus recursive range splitting).
 *
 * HERD_LOOP_SPLIT halves the range, spawns the upper half and recurses into
 * the lower half on the caller's stack, down to `grain` iterations: the
 * spawns form a tree, so no worker's deque holds more than log2(n) of them
 * and thieves take the biggest pieces first. HERD_LOOP_EACH is the same with
 * a grain of one (a task per iteration, spawned as a tree so that a loop of
 * any length fits in the deques). Reductions combine along the same tree:
 * each task's partial lives on its stack until its parent's wait returns.
 *
 * HERD_LOOP_CHUNKS starts one task per worker; each takes `grain` iterations
 * at a time from a shared counter (fetch-and-add) until the range is used
 * up, accumulating into its own partial, which it folds into the total under
 * a herd mutex once at the end.
 *
 * HERD_LOOP_SHEPHERDS splits the range evenly over the shepherds, and each
 * shepherd's share evenly over its workers: one task per worker, placed on
 * its shepherd's queue (only that shepherd's workers take it), which then
 * splits its piece recursively like HERD_LOOP_SPLIT. Partials are combined
 * in iteration order at the end. */
#include "core/runtime.h"

#include <stdlib.h>
#include <string.h>

typedef struct loop {
    herd_reduce_fn body; /* reductions */
    herd_loop_fn plain;  /* plain loops */
    herd_combine_fn combine;
    void *arg;
    const void *identity;
    size_t size;
    int64_t grain;
    int64_t end;
    _Atomic int64_t next; /* HERD_LOOP_CHUNKS: first iteration not yet taken */
    herd_mutex lock;      /* HERD_LOOP_CHUNKS: guards *total */
    void *total;
} loop;

static void run_range(loop *l, int64_t b, int64_t e, void *partial) {
    if (l->plain)
        l->plain(b, e, l->arg);
    else
        l->body(b, e, l->arg, partial);
}

typedef struct split_arg {
    loop *l;
    int64_t begin, end;
    void *partial; /* where this range accumulates; NULL for plain loops */
} split_arg;

static void split_task(void *p) {
    split_arg a = *(split_arg *)p;
    loop *l = a.l;
    if (a.end - a.begin <= l->grain) {
        run_range(l, a.begin, a.end, a.partial);
        return;
    }
    int64_t mid = a.begin + (a.end - a.begin) / 2;
    unsigned char upper_partial[l->size ? l->size : 1] __attribute__((aligned(16)));
    split_arg up = {l, mid, a.end, l->size ? upper_partial : NULL};
    if (l->size)
        memcpy(upper_partial, l->identity, l->size);
    if (herd_spawn(split_task, &up, sizeof up) != 0) {
        split_task(&up); /* the deque is full: run it here, still correct */
    }
    split_arg low = {l, a.begin, mid, a.partial};
    split_task(&low);
    herd_wait();
    if (l->size)
        l->combine(a.partial, upper_partial, l->arg);
}

static void chunk_task(void *p) {
    loop *l = *(loop **)p;
    unsigned char partial[l->size ? l->size : 1] __attribute__((aligned(16)));
    if (l->size)
        memcpy(partial, l->identity, l->size);
    for (;;) {
        /* ORDER: relaxed; the counter only hands out disjoint ranges. The
         * iterations' writes reach the caller through the tasks' joins. */
        int64_t b = atomic_fetch_add_explicit(&l->next, l->grain, memory_order_relaxed);
        if (b >= l->end)
            break;
        int64_t e = l->end - b < l->grain ? l->end : b + l->grain;
        run_range(l, b, e, l->size ? partial : NULL);
    }
    if (l->size) {
        herd_mutex_lock(&l->lock);
        l->combine(l->total, partial, l->arg);
        herd_mutex_unlock(&l->lock);
    }
}

/* One piece per worker, in worker order within shepherd order: piece k of
 * n covers [begin + k*len/n, begin + (k+1)*len/n). */
static int over_shepherds(loop *l, herd_group *g, herd__rt *rt, int64_t begin, int64_t end,
                          void *result) {
    int n = rt->nworkers;
    unsigned char *partials = NULL;
    if (l->size) {
        partials = malloc((size_t)n * l->size);
        if (!partials)
            return HERD_ENOMEM;
        for (int k = 0; k < n; k++)
            memcpy(partials + (size_t)k * l->size, l->identity, l->size);
    }
    /* Evenly over shepherds first, then over each shepherd's workers. */
    int64_t len = end - begin;
    int k = 0, rc = 0;
    int64_t b = begin;
    for (int s = 0; s < rt->nshepherds; s++) {
        int64_t shep_end = begin + (int64_t)((__int128)len * (s + 1) / rt->nshepherds);
        int m = rt->shepherds[s].nworkers;
        int64_t shep_len = shep_end - b;
        int64_t pb = b;
        for (int j = 0; j < m; j++, k++) {
            int64_t pe = b + (int64_t)((__int128)shep_len * (j + 1) / m);
            split_arg a = {l, pb, pe, partials ? partials + (size_t)k * l->size : NULL};
            if (pe > pb && rc == 0)
                rc = herd__group_place(g, s, split_task, &a, sizeof a);
            pb = pe;
        }
        b = shep_end;
    }
    int wrc = herd_group_wait(g);
    if (partials && rc == 0)
        for (int j = 0; j < n; j++)
            l->combine(result, partials + (size_t)j * l->size, l->arg);
    free(partials);
    return rc ? rc : wrc;
}

static int run_loop(loop *l, int64_t begin, int64_t end, herd_loop_kind kind, void *result) {
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
        return HERD_ENOTASK;
    if (kind == HERD_LOOP_EACH)
        l->grain = 1;
    if ((!l->body && !l->plain) || l->grain < 1 ||
        (l->size && (!l->combine || !l->identity || !result || l->size > HERD_ARG_MAX)))
        return HERD_EINVAL;
    if (kind != HERD_LOOP_EACH && kind != HERD_LOOP_SPLIT && kind != HERD_LOOP_CHUNKS &&
        kind != HERD_LOOP_SHEPHERDS)
        return HERD_EINVAL;
    l->end = end;
    if (l->size && result)
        memcpy(result, l->identity, l->size);
    if (end <= begin)
        return 0;
    /* The loop's tasks go in a group of their own, so that the final wait is
     * for them only, not for the caller's other children. */
    herd_group g;
    herd_group_init(&g);
    if (kind == HERD_LOOP_CHUNKS) {
        atomic_init(&l->next, begin);
        herd_mutex_init(&l->lock);
        l->total = result;
        for (int i = 0; i < w->rt->nworkers; i++)
            if (herd_group_spawn(&g, chunk_task, &l, sizeof l) != 0)
                chunk_task(&l); /* the deque is full: take part here */
        return herd_group_wait(&g);
    }
    if (kind == HERD_LOOP_SHEPHERDS)
        return over_shepherds(l, &g, w->rt, begin, end, result);
    split_arg a = {l, begin, end, l->size ? result : NULL};
    int rc = herd_group_spawn(&g, split_task, &a, sizeof a);
    if (rc)
        return rc;
    return herd_group_wait(&g);
}

HERD_API int herd_loop(int64_t begin, int64_t end, int64_t grain, herd_loop_kind kind,
                       herd_loop_fn body, void *arg) {
    loop l = {.plain = body, .arg = arg, .grain = grain};
    if (!body)
        return HERD_EINVAL;
    return run_loop(&l, begin, end, kind, NULL);
}

HERD_API int herd_loop_reduce(int64_t begin, int64_t end, int64_t grain, herd_loop_kind kind,
                              herd_reduce_fn body, herd_combine_fn combine, void *arg,
                              const void *identity, void *result, size_t size) {
    loop l = {.body = body,
              .combine = combine,
              .arg = arg,
              .identity = identity,
              .size = size ? size : 1,
              .grain = grain};
    if (!body || size == 0)
        return HERD_EINVAL;
    return run_loop(&l, begin, end, kind, result);
}
