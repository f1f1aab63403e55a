/* Task reductions through the LLVM ABI (taskgroup task_reduction,
 * in_reduction, and the reduction(task, ...) modifier). LLVM's protocol
 * leaves the copies to the runtime: __kmpc_taskred_init registers the
 * reduction items in the innermost taskgroup and returns a handle; a task
 * asks __kmpc_task_reduction_get_th_data for its thread's copy of an item;
 * when the taskgroup ends, the runtime combines every copy into the item
 * and finalises the copies.
 *
 * The copies are one per thread number of the team (below max(team size,
 * workers)): a thread number is one running task's at a time (the layer's
 * invariant, reduction.c), so two tasks never update one copy at once; a
 * task suspended between its reads and writes of a copy is at a scheduling
 * point, where the compiler's code holds no partial update. Copies are made
 * and initialised at registration, so the lookup is a search and an index. */
#include "omp/kmp/kmp.h"

#include <stdlib.h>
#include <string.h>

typedef struct red_item {
    void *shar, *orig;
    size_t size;
    void *init, *fini;
    void (*comb)(void *shar, void *priv);
    int init_two; /* init(priv, orig) (taskred) or init(priv) (task_red) */
    char *priv;   /* ncopies * size */
} red_item;

typedef struct red_reg {
    int n, ncopies;
    struct red_reg *outer; /* the registration it was made inside, or NULL */
    red_item items[];
} red_reg;

/* The compiler's two input layouts. */
typedef struct kmp_taskred_input { /* __kmpc_taskred_init (OpenMP 5.0) */
    void *reduce_shar, *reduce_orig;
    size_t reduce_size;
    void *reduce_init, *reduce_fini, *reduce_comb;
    uint32_t flags;
} kmp_taskred_input;

typedef struct kmp_task_red_input { /* __kmpc_task_reduction_init (4.5-era) */
    void *reduce_shar;
    size_t reduce_size;
    void *reduce_init, *reduce_fini, *reduce_comb;
    uint32_t flags;
} kmp_task_red_input;

/* The innermost registration that t sees: its own taskgroups', then, for
 * an explicit task, what its creator saw when it created it (kept in its
 * record: a creator may have ended since), for an implicit or undeferred
 * one its encountering task's (alive while it runs). */
static red_reg *innermost(const omp_task *t) {
    for (; t; t = t->team && !t->parent ? t->team->parent : t->parent) {
        for (const omp_taskgroup *g = t->tg; g; g = g->prev)
            if (g->on_end == herd__kmp_taskred_end)
                return g->on_end_arg;
        if (t->kred)
            return t->kred == KMP_RED_NONE ? NULL : t->kred;
    }
    return NULL;
}

/* Registrations alive anywhere: while none is, no walk is needed. */
static _Atomic int live;

void *herd__kmp_red_seen(const omp_task *parent) {
    /* ORDER: relaxed; a registration visible to parent was counted before
     * parent saw it (program order on the registering thread, and the
     * task's creation after it). */
    if (!atomic_load_explicit(&live, memory_order_relaxed))
        return NULL;
    return innermost(parent);
}

static void init_copy(red_item *it, char *p) {
    if (!it->init)
        memset(p, 0, it->size);
    else if (it->init_two)
        ((void (*)(void *, void *))it->init)(p, it->orig);
    else
        ((void (*)(void *))it->init)(p);
}

static red_reg *reg_new(int n) {
    omp_task *t = herd__omp_task();
    if (!t->tg)
        herd__omp_fatal("a task reduction outside a taskgroup");
    if (t->tg->on_end)
        herd__omp_fatal("two task reduction registrations in one taskgroup");
    red_reg *r = calloc(1, sizeof *r + (size_t)n * sizeof(red_item));
    if (!r)
        herd__omp_fatal("out of memory for a task reduction");
    int team = t->team ? t->team->nthreads : 1;
    r->n = n;
    r->ncopies = team > herd__omp_g.workers ? team : herd__omp_g.workers;
    r->outer = innermost(t);
    t->tg->on_end = herd__kmp_taskred_end;
    t->tg->on_end_arg = r;
    atomic_fetch_add_explicit(&live, 1, memory_order_relaxed); /* ORDER: as above */
    return r;
}

static void item_copies(red_reg *r, red_item *it) {
    it->priv = malloc((size_t)r->ncopies * (it->size ? it->size : 1));
    if (!it->priv)
        herd__omp_fatal("out of memory for %d copies of a task reduction item", r->ncopies);
    for (int i = 0; i < r->ncopies; i++)
        init_copy(it, it->priv + (size_t)i * it->size);
}

KMP_API void *__kmpc_taskred_init(kmp_int32 gtid, kmp_int32 num, void *data) {
    (void)gtid;
    const kmp_taskred_input *in = data;
    red_reg *r = reg_new(num);
    for (int i = 0; i < num; i++) {
        red_item *it = &r->items[i];
        it->shar = in[i].reduce_shar;
        it->orig = in[i].reduce_orig ? in[i].reduce_orig : in[i].reduce_shar;
        it->size = in[i].reduce_size;
        it->init = in[i].reduce_init;
        it->fini = in[i].reduce_fini;
        it->comb = (void (*)(void *, void *))in[i].reduce_comb;
        it->init_two = 1;
        item_copies(r, it);
    }
    return r;
}

KMP_API void *__kmpc_task_reduction_init(kmp_int32 gtid, kmp_int32 num, void *data) {
    (void)gtid;
    const kmp_task_red_input *in = data;
    red_reg *r = reg_new(num);
    for (int i = 0; i < num; i++) {
        red_item *it = &r->items[i];
        it->shar = it->orig = in[i].reduce_shar;
        it->size = in[i].reduce_size;
        it->init = in[i].reduce_init;
        it->fini = in[i].reduce_fini;
        it->comb = (void (*)(void *, void *))in[i].reduce_comb;
        item_copies(r, it);
    }
    return r;
}

/* reduction(task, ...) on parallel or a worksharing construct: each member
 * reduces its own copy of the item (the compiler's private one) in a
 * taskgroup of its own, then the construct's reduction combines the
 * members' copies as usual. */
KMP_API void *__kmpc_taskred_modifier_init(ident_t *loc, int gtid, int is_ws, int num, void *data) {
    GOMP_taskgroup_start();
    herd__omp_task()->tg->workshare = is_ws; /* as reduction.c's (cancel.c) */
    (void)loc;
    return __kmpc_taskred_init(gtid, num, data);
}
KMP_API void *__kmpc_task_reduction_modifier_init(ident_t *loc, int gtid, int is_ws, int num,
                                                  void *data) {
    (void)loc;
    GOMP_taskgroup_start();
    herd__omp_task()->tg->workshare = is_ws; /* as reduction.c's (cancel.c) */
    return __kmpc_task_reduction_init(gtid, num, data);
}
KMP_API void __kmpc_task_reduction_modifier_fini(ident_t *loc, int gtid, int is_ws) {
    (void)loc, (void)gtid, (void)is_ws;
    GOMP_taskgroup_end();
}

/* The calling thread's copy of the item whose original (or whose copy) is
 * at data, in registration tg or, if NULL, the innermost one the current
 * task sees; enclosing registrations are searched too. */
KMP_API void *__kmpc_task_reduction_get_th_data(int gtid, void *tg, void *data) {
    (void)gtid;
    omp_task *t = herd__omp_task();
    const char *d = data;
    for (red_reg *r = tg ? tg : innermost(t); r; r = r->outer) {
        for (int i = 0; i < r->n; i++) {
            red_item *it = &r->items[i];
            size_t sz = it->size, all = (size_t)r->ncopies * sz, off;
            if (d >= (char *)it->shar && d < (char *)it->shar + (sz ? sz : 1))
                off = (size_t)(d - (char *)it->shar);
            else if (d >= (char *)it->orig && d < (char *)it->orig + (sz ? sz : 1))
                off = (size_t)(d - (char *)it->orig);
            /* another thread's copy (clang passes the enclosing task's copy
             * as the item of a nested in_reduction): the same place in ours */
            else if (d >= it->priv && d < it->priv + all)
                off = (size_t)(d - it->priv) % sz;
            else
                continue;
            if (t->thread_num < 0 || t->thread_num >= r->ncopies)
                herd__omp_fatal("a task reduction's copy for thread %d of %d", t->thread_num,
                                r->ncopies);
            return it->priv + (size_t)t->thread_num * sz + off;
        }
    }
    herd__omp_fatal("in_reduction on an item no enclosing taskgroup reduces");
}

void herd__kmp_taskred_end(void *p) {
    red_reg *r = p;
    for (int i = 0; i < r->n; i++) {
        red_item *it = &r->items[i];
        for (int k = 0; k < r->ncopies; k++) {
            char *c = it->priv + (size_t)k * it->size;
            it->comb(it->shar, c);
            if (it->fini)
                ((void (*)(void *))it->fini)(c);
        }
        free(it->priv);
    }
    free(r);
    /* ORDER: relaxed; the taskgroup's tasks have all ended (its end). */
    atomic_fetch_sub_explicit(&live, 1, memory_order_relaxed);
}
