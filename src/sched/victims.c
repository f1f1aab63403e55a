/* Victim orders and the steal attempt shared by ws, numa, numa-random and
 * hier (see victims.h). */
#include "sched/victims.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int herd__dist_topology(const herd__sched_env *env, const void *ctx, int a, int b) {
    (void)ctx;
    return herd__topo_distance(env->topo, env->pu_of_worker[a], env->pu_of_worker[b]);
}

int herd__dist_ids(const herd__sched_env *env, const void *ctx, int a, int b) {
    (void)ctx;
    int d = abs(a - b);
    return d < env->nworkers - d ? d : env->nworkers - d;
}

int herd__victims_alloc(herd__sched_worker *sw, int n) {
    sw->order = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    sw->class_end = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    sw->norder = sw->nclasses = 0;
    return sw->order && sw->class_end ? 0 : HERD_ENOMEM;
}

void herd__sched_no_fini(herd__sched_env *env) {
    (void)env;
}

void herd__victims_add(herd__sched_worker *sw, int victim) {
    sw->order[sw->norder++] = victim;
}

void herd__victims_close(herd__sched_worker *sw) {
    int start = sw->nclasses ? sw->class_end[sw->nclasses - 1] : 0;
    if (sw->norder > start)
        sw->class_end[sw->nclasses++] = sw->norder;
}

int herd__victims_sorted(herd__sched_env *env, herd__victim_dist dist, const void *ctx) {
    int n = env->nworkers;
    int *d = malloc((size_t)n * sizeof(int));
    if (!d)
        return HERD_ENOMEM;
    for (int i = 0; i < n; i++) {
        herd__sched_worker *sw = &env->workers[i];
        if (herd__victims_alloc(sw, n - 1) != 0) {
            free(d);
            return HERD_ENOMEM;
        }
        for (int v = 0; v < n; v++)
            d[v] = dist(env, ctx, i, v);
        /* Insertion sort by (distance, id): n is at most a few thousand and
         * this runs once. */
        for (int v = 0; v < n; v++) {
            if (v == i)
                continue;
            int k = sw->norder++;
            while (k > 0 && d[sw->order[k - 1]] > d[v]) {
                sw->order[k] = sw->order[k - 1];
                k--;
            }
            sw->order[k] = v;
        }
        for (int k = 0; k < sw->norder; k++)
            if (k + 1 == sw->norder || d[sw->order[k + 1]] != d[sw->order[k]])
                sw->class_end[sw->nclasses++] = k + 1;
    }
    free(d);
    return 0;
}

herd__steal_result herd__steal_from(herd__sched_worker *w, int v, herd__work *out) {
    const herd__sched_env *env = w->env;
    herd__sdq *victim = env->workers[v].q;
    /* Work that only w may take arrived (a region's member in its box, a
     * homed task resumed): end the search, the loop takes it next. A sweep
     * of ws's 2n random victims went on for about 2 us at 16 workers
     * before the member was looked at (the 16-core device: members started
     * 1,800 cycles after their placement on average, the last 6,000). */
    if (herd__sched_own_work(w))
        return HERD__STEAL_EMPTY;
    herd__sched_count(w->attempts);
    if (herd__steal_ready(w, v, out))
        return HERD__STEAL_OK;
    herd__steal_result r;
    herd__steal_amount amount = env->steal;
    if (amount == HERD__TAKE_HALF || amount == HERD__TAKE_CHUNK)
        r = herd__sdq_steal_many(victim, (uint32_t)env->steal_chunk, amount == HERD__TAKE_HALF,
                                 w->q, &out->task, &out->ntasks);
    else
        r = herd__sdq_steal(victim, &out->task);
    if (r == HERD__STEAL_OK) {
        out->ult = herd__cont_ult(&out->task); /* K2: a stolen continuation resumes */
        if (herd__sdq_public_size(victim))
            herd__wake_one(env->rt); /* W4 */
    } else if (r == HERD__STEAL_RETRY) {
        herd__sched_count(w->failed);
    }
    return r;
}

int herd__steal_rescued(herd__sched_worker *w, herd__work *out) {
    const herd__sched_env *env = w->env;
    int n = env->nworkers;
    /* A relaxed look at each ts word (a line of its own, written by the
     * owner only when it publishes, takes back or shares): nothing is
     * public on these deques but what a rescue published. */
    for (int k = 1; k < n; k++) {
        int v = (w->id + k) % n;
        if (herd__sdq_public_size(env->workers[v].q) &&
            herd__steal_from(w, v, out) == HERD__STEAL_OK)
            return 1;
    }
    return 0;
}

void herd__ask_share(const herd__sched_env *env, const int *ids, int n, int self) {
    for (int k = 0; k < n; k++) {
        int v = ids ? ids[k] : k;
        if (v != self)
            herd__sdq_ask(env->workers[v].q);
    }
}

void herd__share_into(herd__sched_worker *w, herd__tq *to) {
    herd__share_dealt(w, to, 1, NULL);
}

void herd__share_dealt(herd__sched_worker *w, herd__tq *qs, int parts,
                       int (*pick)(herd__sched_worker *w)) {
    herd__sdq *q = w->q;
    /* Nothing private: the request stands, as S3 leaves it. */
    if (q->head == q->split)
        return;
    /* ORDER: relaxed; cleared before the moves, as S3 does: a request
     * raised after this is seen at a later spawn, never lost. */
    atomic_store_explicit(&q->split_req, 0, memory_order_relaxed);
    herd__slot *oldest = herd__sdq_oldest_private(q);
    if (!oldest)
        return; /* some of the deque is public (a rescue): thieves take that */
    uint32_t n = (q->head - q->split + 1) / 2;
    if (n > HERD__SHARE_BATCH)
        n = HERD__SHARE_BATCH;
    /* What a fifo wait reversed leaves in spawn order, so that a FIFO queue
     * takes it oldest first. */
    herd__sdq_spawn_order(q, n);
    /* Copied and queued first, each part under one acquisition of its
     * queue's lock (idle workers keep polling it: one per task slowed the
     * busy sharer down), then dropped: another worker may run a task in
     * between, but this worker does nothing else with its deque. Out of
     * memory, the tasks not queued stay on the deque, where their parents'
     * waits run them. */
    void *batch[HERD__SHARE_BATCH];
    uint32_t k = 0;
    for (; k < n; k++) {
        herd__slot *s = &oldest[k];
        batch[k] =
            herd__qtask_new(s->fn, s->parent, s->kind, herd__sdq_argp(q, s, s->size), s->size);
        if (!batch[k])
            break;
        ((herd__qtask *)batch[k])->from = w->id; /* another worker's take is a steal */
    }
    /* Contiguous parts, oldest first, so that what is queued is always a
     * prefix of the deque's oldest private slots: the drop below removes
     * exactly those. */
    uint32_t queued = herd__deal(w, batch, k, qs, parts, pick);
    for (uint32_t i = queued; i < k; i++)
        free(batch[i]);
    for (uint32_t i = 0; i < queued; i++)
        herd__sdq_drop_oldest(q);
}

uint32_t herd__deal(herd__sched_worker *w, void *const *tasks, uint32_t k, herd__tq *qs, int parts,
                    int (*pick)(herd__sched_worker *w)) {
    uint32_t nparts = parts < 1 ? 1 : (uint32_t)parts;
    if (nparts > k)
        nparts = k ? k : 1;
    uint32_t per = (k + nparts - 1) / nparts, queued = 0;
    while (queued < k) {
        uint32_t len = k - queued < per ? k - queued : per;
        int qi = pick ? pick(w) : 0;
        if (herd__tq_push_many(&qs[qi], tasks + queued, len) != 0)
            break;
        queued += len;
        if (pick)
            herd__wake_for_shepherd(w->env->rt, qi); /* W3: only its workers take it */
        else
            herd__wake_one(w->env->rt); /* W3 */
    }
    return queued;
}

int herd__steal_in_order(herd__sched_worker *w, int random_in_class, herd__work *out) {
    return herd__steal_in_order_with(w, random_in_class, herd__steal_from, out);
}

int herd__steal_in_order_with(herd__sched_worker *w, int random_in_class, herd__steal_try attempt,
                              herd__work *out) {
    const herd__sched_worker *sw = w;
    int start = 0;
    for (int c = 0; c < sw->nclasses; c++) {
        int end = sw->class_end[c], size = end - start;
        int first = random_in_class ? (int)(herd__rand(w) % (uint64_t)size) : 0;
        for (int k = 0; k < size; k++) {
            int v = sw->order[start + (first + k) % size];
            if (attempt(w, v, out) == HERD__STEAL_OK)
                return 1;
        }
        start = end;
    }
    return 0;
}

void herd__victims_describe(const herd__sched_env *env, int worker, char *buf, size_t len) {
    const herd__sched_worker *sw = &env->workers[worker];
    size_t o = 0;
    if (sw->norder == 0) {
        snprintf(buf, len, "none (no other worker)");
        return;
    }
    buf[0] = '\0';
    for (int c = 0, k = 0; c < sw->nclasses; c++) {
        for (; k < sw->class_end[c]; k++) {
            const char *sep = k == 0 ? "" : (c > 0 && k == sw->class_end[c - 1]) ? " | " : " ";
            int n = snprintf(buf + o, len - o, "%s%d", sep, sw->order[k]);
            if (n < 0 || (size_t)n + 5 >= len - o) {
                snprintf(buf + o, len - o, " ...");
                return;
            }
            o += (size_t)n;
        }
    }
}
