/* Task dependences: depend(in/out/inout/mutexinoutset/depobj) and
 * taskwait depend (docs/design/openmp.md, "Dependences").
 *
 * Each task that creates tasks with dependences owns a table (omp_deps),
 * keyed by address, of the sibling tasks that last touched each address:
 * the last writer (out, inout, mutexinoutset) and the readers (in) since
 * it. Only the creating task reads or writes its table, so the table needs
 * no lock. A new task becomes a node: its predecessors are the readers
 * since the last writer (if it writes) or the last writer (if it reads).
 * Each predecessor gets an edge on its successor list, and the node counts
 * its unmet predecessors (npred, plus one hold while the edges are being
 * added). The task is queued when npred reaches zero, by whoever brings it
 * there: its creator (no predecessor left) or the predecessor whose
 * completion releases it. No worker ever blocks for a deferred task's
 * dependences; the task simply is not queued until they are met.
 *
 * Released tasks go into the creator's herd group (omp_deps.g), spawned
 * from whatever task releases them: they are not the creator's herd
 * children, so a wait for the creator's tasks (taskwait, barrier, the end
 * of a task or region: herd__omp_wait_tasks) waits for its children and
 * then for the group. The group covers the not-yet-released tasks too:
 * an unreleased node has an unfinished predecessor, and a predecessor
 * releases its successors (adding them to the group) before it leaves the
 * group itself, so the group empties only when every node is done.
 *
 * The edge protocol (D1..D3):
 *   D1 (creator) add_edge: npred += 1, then push the edge on the
 *      predecessor's list by CAS, unless the list is CLOSED (the
 *      predecessor completed: undo the count, no edge).
 *   D2 (completing predecessor) exchange the list with CLOSED; each edge's
 *      successor gets npred -= 1; the one that reaches 0 releases it.
 *   D3 (creator) after all edges, drop the hold: npred -= 1; 0 releases.
 * A list closed before the CAS fails it, so every pushed edge is seen by
 * D2's exchange; exactly one decrement reaches zero.
 *
 * mutexinoutset (and inoutset from a depobj) are ordered as inout: tasks of
 * one set then run one at a time in creation order, which is one of the
 * executions the set allows. GCC 12 has no omp_all_memory.
 *
 * Undeferred tasks with dependences (if(0), final) and taskwait depend are
 * "waiter" nodes: release fills a full/empty word that the creator reads
 * (it suspends as a task; its worker runs other tasks meanwhile). */
#include "omp/omp.h"

#include <stdlib.h>
#include <string.h>

typedef struct dep_node dep_node;

typedef struct dep_edge {
    dep_node *succ;
    struct dep_edge *next;
} dep_edge;

#define CLOSED ((dep_edge *)(uintptr_t)1)

struct dep_node {
    _Atomic int64_t npred;    /* unmet predecessors (+1 hold during creation) */
    _Atomic(dep_edge *) succ; /* successors; CLOSED once complete (D2) */
    _Atomic int refs;         /* table entries + 1 until complete */
    omp_deps *deps;           /* the creator's table */
    omp_task *parent;
    uintptr_t *red;     /* the creator's task reductions when it created it */
    const omp_icv *icv; /* the ICVs it starts from (herd__omp_icv_lend), NULL: its creator's */
    omp_taskgroup *tg;  /* the taskgroup it belongs to (omp_task.tg_cur) */
    omp_event *ev;      /* detach: completes once its event is fulfilled too */
    void (*fn)(void *);
    void *data; /* heap block (deferred tasks) */
    int final;
    int keep;             /* OMP_TASK_KEEP: its body runs even when discarded */
    int waiter;           /* its creator waits for its release (W1..W3 below) */
    _Atomic int released; /* WAIT_* */
    herd__ult *ult;       /* WAIT_BLOCKED: the creator's task */
};

/* A creator's wait for a node's release (an undeferred task, taskwait
 * depend), from any thread: the releaser may be a guest (pool.c).
 *  W1 the releaser exchanges `released` to RELEASED (acq_rel: its
 *     predecessors' writes; it sees `ult`), and readies `ult` when it was
 *     BLOCKED (herd__omp_word_set). After the exchange the creator may
 *     complete and free the node: the releaser touches it no more.
 *  W2 a creator that is a herd task spins, then suspends: its arm stores
 *     `ult` and CASes WAITING -> BLOCKED (release); a failed CAS (RELEASED)
 *     readies itself (herd__omp_word_wait).
 *  W3 a creator outside herd waits in herd__omp_pool_wait (running its
 *     team's pooled tasks); the releaser then wakes the pool's waiters. */
enum { WAIT_WAITING, WAIT_RELEASED, WAIT_BLOCKED };

typedef struct dep_entry {
    void *addr;     /* NULL: free slot */
    dep_node *out;  /* last writer */
    dep_node **ins; /* readers since it */
    int nin, capin;
} dep_entry;

/* An undeferred detached task whose body has run: it completes when its
 * event is fulfilled (detach.c). Kept by its creator, waited for where the
 * creator waits for its tasks. */
typedef struct pending_event {
    omp_event *e;
    int dep; /* the task had depend clauses */
    struct pending_event *next;
} pending_event;

struct omp_deps {
    herd_group g; /* released deferred tasks (not `outside`) */
    /* its creator runs outside herd (a guest of a team with guests): its
     * released tasks are counted in the creator's gkids (pool.c), and its
     * undeferred ones wait in herd__omp_pool_wait */
    int outside;
    dep_node *all;         /* the last task with depend(omp_all_memory), held; NULL: none */
    pending_event *events; /* owner only, like the table */
    dep_entry *tab;
    size_t cap, used; /* open addressing, cap a power of 2 */
};

/* Kinds as GCC passes them in depobj records (gomp-constants.h). */
enum { DEP_IN = 1, DEP_OUT = 2, DEP_INOUT = 3, DEP_MUTEXINOUTSET = 4, DEP_INOUTSET = 5 };

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (!p)
        herd__omp_fatal("out of memory for task dependences");
    return p;
}

static void unref(dep_node *n) {
    /* ORDER: acq_rel; the last reference sees every other holder's writes. */
    if (atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) == 1)
        free(n);
}

static int done(dep_node *n) {
    /* ORDER: acquire; pairs with D2's exchange: a done node's writes are seen. */
    return atomic_load_explicit(&n->succ, memory_order_acquire) == CLOSED;
}

/* ------------------------------------------------------------ the table */

static size_t hash(const void *a) {
    uint64_t x = (uint64_t)(uintptr_t)a;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    return (size_t)(x ^ (x >> 32));
}

static dep_entry *slot(omp_deps *d, void *addr) {
    size_t m = d->cap - 1;
    for (size_t i = hash(addr) & m;; i = (i + 1) & m)
        if (d->tab[i].addr == addr || !d->tab[i].addr)
            return &d->tab[i];
}

static void grow(omp_deps *d) {
    dep_entry *old = d->tab;
    size_t oldcap = d->cap;
    d->cap = oldcap ? oldcap * 2 : 64;
    d->tab = calloc(d->cap, sizeof *d->tab);
    if (!d->tab)
        herd__omp_fatal("out of memory for task dependences");
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].addr)
            *slot(d, old[i].addr) = old[i];
    free(old);
}

static dep_entry *entry(omp_deps *d, void *addr) {
    if ((d->used + 1) * 4 > d->cap * 3)
        grow(d);
    dep_entry *e = slot(d, addr);
    if (!e->addr) {
        e->addr = addr;
        d->used++;
    }
    return e;
}

static omp_deps *deps_of(omp_task *parent) {
    if (!parent->deps) {
        omp_deps *d = xmalloc(sizeof *d);
        memset(d, 0, sizeof *d);
        herd_group_init(&d->g);
        d->outside = herd__self() == NULL; /* a task never changes sides */
        parent->deps = d;
    }
    return parent->deps;
}

/* ----------------------------------------------------- the edge protocol */

/* D1: pred -> succ, unless pred has completed. */
static void add_edge(dep_node *pred, dep_node *succ) {
    if (!pred || pred == succ)
        return;
    dep_edge *head = atomic_load_explicit(&pred->succ, memory_order_acquire);
    if (head == CLOSED)
        return;
    dep_edge *e = xmalloc(sizeof *e);
    e->succ = succ;
    /* ORDER: relaxed; the creator's hold keeps npred above zero until D3,
     * and the release CAS below publishes the increment with the edge. */
    atomic_fetch_add_explicit(&succ->npred, 1, memory_order_relaxed);
    do {
        if (head == CLOSED) {
            atomic_fetch_sub_explicit(&succ->npred, 1, memory_order_relaxed);
            free(e);
            return;
        }
        e->next = head;
        /* ORDER: release; pairs with D2's acquire exchange, so the completing
         * predecessor sees e's fields. acquire on failure: a CLOSED list
         * comes with the predecessor's writes. */
    } while (!atomic_compare_exchange_weak_explicit(&pred->succ, &head, e, memory_order_release,
                                                    memory_order_acquire));
}

static void task_body(void *p);

/* npred reached zero: queue the task, or wake its waiting creator. */
static void release(dep_node *n) {
    omp_task *parent = n->parent;
    int outside = n->deps->outside;
    /* Read before the spawn: once queued, n and its creator may be gone. */
    int member = herd__omp_member_task(parent), pooled = herd__omp_pools_here(parent);
    if (n->waiter) {
        herd__omp_word_set(&n->released, WAIT_BLOCKED, WAIT_RELEASED, &n->ult); /* W1 */
        if (outside)
            herd__omp_pool_wake(); /* W3 */
        return;
    }
    /* Its team's pool (pool.c), as task.c's queue() pools: from any thread. */
    if (herd__omp_mixed(parent->team) && (outside || pooled)) {
        herd__omp_pool_spawn(parent->team, outside ? parent : NULL, &n->deps->g, task_body, &n,
                             sizeof n);
        return;
    }
    if (herd__tls)
        herd__note_queued(herd__tls); /* R3 (core/rescue.h): this thread may now spin */
    int rc = herd_group_spawn(&n->deps->g, task_body, &n, sizeof n);
    if (rc)
        herd__omp_fatal("cannot queue a task: %s", herd_strerror(rc));
    if (member)
        herd__omp_share_now();
}

/* D2: n has completed; release the successors whose last predecessor it was. */
static void complete(dep_node *n) {
    /* ORDER: acq_rel; acquire pairs with D1's release CAS (the edges' fields);
     * release publishes the task's writes to D1's acquire that sees CLOSED. */
    dep_edge *e = atomic_exchange_explicit(&n->succ, CLOSED, memory_order_acq_rel);
    while (e) {
        dep_edge *next = e->next;
        dep_node *s = e->succ;
        free(e);
        /* ORDER: acq_rel; the decrement that reaches zero has seen every
         * predecessor's writes (each released them here) before it queues s. */
        if (atomic_fetch_sub_explicit(&s->npred, 1, memory_order_acq_rel) == 1)
            release(s);
        e = next;
    }
    unref(n);
}

static void task_body(void *p) {
    dep_node *n;
    memcpy(&n, p, sizeof n);
    omp_task me;
    /* Discarded when its taskgroup was cancelled before it started, as
     * task.c's; it still completes, which releases its successors. */
    if (!n->tg || n->ev || n->keep || !herd__omp_tg_cancelled(n->tg))
        herd__omp_run_task(&me, n->parent, n->red, n->tg, n->icv, n->final, n->fn, n->data);
    if (n->ev)
        herd__omp_event_wait(n->ev);
    free(n->data);
    complete(n);
}

/* ------------------------------------------------ GCC's depend array */

typedef struct dep_list {
    void **addr;
    int *out; /* 1: out/inout/mutexinoutset, 0: in */
    int n;
} dep_list;

/* Decode GCC's array: old form {n, nout, out..., in...}; new form
 * {0, n, nout, nmutexinoutset, nin, out..., mutexinoutset..., in..., depobj...},
 * a depobj being a pointer to {address, kind}. */
static void decode(void **depend, dep_list *l) {
    size_t n, nout, nmut = 0, nin, base;
    if (depend[0]) {
        n = (uintptr_t)depend[0];
        nout = (uintptr_t)depend[1];
        nin = n - nout;
        base = 2;
    } else {
        n = (uintptr_t)depend[1];
        nout = (uintptr_t)depend[2];
        nmut = (uintptr_t)depend[3];
        nin = (uintptr_t)depend[4];
        base = 5;
    }
    l->addr = xmalloc(n * sizeof *l->addr);
    l->out = xmalloc(n * sizeof *l->out);
    l->n = (int)n;
    for (size_t i = 0; i < n; i++) {
        void *a = depend[base + i];
        int out = i < nout + nmut;
        if (i >= nout + nmut + nin) { /* depobj */
            void **obj = a;
            uintptr_t kind = (uintptr_t)obj[1];
            a = obj[0];
            out = kind != DEP_IN;
        }
        l->addr[i] = a;
        l->out[i] = out;
    }
}

static int has_all(const dep_list *l) {
    for (int i = 0; i < l->n; i++)
        if (l->addr[i] == HERD_DEP_ALL)
            return 1;
    return 0;
}

/* The predecessors of a task with dependences l, as edges to n (D1).
 * depend(omp_all_memory) (an out dependence on every address): every
 * address's last writer and readers; and every task after such a task
 * follows it (record() empties the table behind it, so it stands for
 * everything before it). */
static void link_preds(omp_deps *d, dep_list *l, dep_node *n) {
    if (!d->cap)
        grow(d);
    add_edge(d->all, n);
    if (has_all(l)) {
        for (size_t i = 0; i < d->cap; i++) {
            dep_entry *e = &d->tab[i];
            if (!e->addr)
                continue;
            add_edge(e->out, n);
            for (int k = 0; k < e->nin; k++)
                add_edge(e->ins[k], n);
        }
        return;
    }
    for (int i = 0; i < l->n; i++) {
        dep_entry *e = entry(d, l->addr[i]);
        if (!l->out[i] || !e->nin) {
            add_edge(e->out, n);
            continue;
        }
        for (int k = 0; k < e->nin; k++)
            add_edge(e->ins[k], n);
    }
}

static void hold(dep_node *n) {
    /* ORDER: relaxed; only the creator adds references, and the release
     * decrement in unref() orders them before any free. */
    atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
}

static void forget(dep_entry *e) {
    if (e->out)
        unref(e->out);
    for (int k = 0; k < e->nin; k++)
        unref(e->ins[k]);
    free(e->ins);
    memset(e, 0, sizeof *e);
}

/* Record n as the latest writer or reader of its addresses. */
static void record(omp_deps *d, dep_list *l, dep_node *n) {
    if (has_all(l)) { /* n orders everything before it: the table restarts behind n */
        for (size_t i = 0; i < d->cap; i++)
            if (d->tab[i].addr)
                forget(&d->tab[i]);
        d->used = 0;
        if (d->all)
            unref(d->all);
        hold(n);
        d->all = n;
        return;
    }
    for (int i = 0; i < l->n; i++) { /* writers first: a reader of the same address is moot */
        if (!l->out[i])
            continue;
        dep_entry *e = entry(d, l->addr[i]);
        if (e->out == n)
            continue;
        for (int k = 0; k < e->nin; k++)
            unref(e->ins[k]);
        e->nin = 0;
        if (e->out)
            unref(e->out);
        hold(n);
        e->out = n;
    }
    for (int i = 0; i < l->n; i++) {
        if (l->out[i])
            continue;
        dep_entry *e = entry(d, l->addr[i]);
        if (e->out == n || (e->nin && e->ins[e->nin - 1] == n))
            continue;
        int keep = 0; /* drop readers that are done: a long run of readers stays short */
        for (int k = 0; k < e->nin; k++) {
            if (done(e->ins[k]))
                unref(e->ins[k]);
            else
                e->ins[keep++] = e->ins[k];
        }
        e->nin = keep;
        if (e->nin == e->capin) {
            e->capin = e->capin ? e->capin * 2 : 4;
            e->ins = realloc(e->ins, (size_t)e->capin * sizeof *e->ins);
            if (!e->ins)
                herd__omp_fatal("out of memory for task dependences");
        }
        hold(n);
        e->ins[e->nin++] = n;
    }
}

static dep_node *node_new(omp_deps *d, omp_task *parent) {
    dep_node *n = xmalloc(sizeof *n);
    memset(n, 0, sizeof *n);
    atomic_init(&n->npred, 1); /* the creator's hold, dropped at D3 */
    atomic_init(&n->succ, NULL);
    atomic_init(&n->refs, 1); /* until complete */
    n->deps = d;
    n->parent = parent;
    return n;
}

/* D3: drop the creator's hold; 1 when the node is released now. */
static int drop_hold(dep_node *n) {
    /* ORDER: acq_rel; as in complete(): reaching zero sees the predecessors. */
    return atomic_fetch_sub_explicit(&n->npred, 1, memory_order_acq_rel) == 1;
}

static int released(void *p) {
    /* ORDER: acquire; pairs with W1's exchange: the predecessors' writes. */
    return atomic_load_explicit(&((dep_node *)p)->released, memory_order_acquire) == WAIT_RELEASED;
}

static void wait_released(dep_node *n) {
    if (n->deps->outside) {
        herd__omp_pool_wait_kids_of(n->parent->team, n->parent, released, n); /* W3 */
        return;
    }
    herd__wait_ctx c; /* for the watchdog's dump (core/watchdog.h) */
    herd__wait_enter(&c, HERD__WAIT_OMP_DEPEND, n->parent, NULL);
    herd__omp_word_wait(&n->released, WAIT_WAITING, WAIT_BLOCKED, WAIT_RELEASED, &n->ult); /* W2 */
    herd__wait_leave(&c);
}

void herd__omp_task_depend(omp_task *parent, void (*fn)(void *), void *data,
                           void (*cpyfn)(void *, void *), long size, long align, unsigned flags,
                           int deferred, void **depend, omp_event *ev) {
    int final = (flags & OMP_TASK_FINAL) != 0;
    omp_deps *d = deps_of(parent);
    dep_list l;
    decode(depend, &l);
    dep_node *n = node_new(d, parent);
    n->fn = fn;
    n->red = herd__omp_red_of(parent);
    n->tg = parent->tg_cur;
    n->keep = (flags & OMP_TASK_KEEP) || cpyfn; /* copy constructors: as task.c's spawn */
    n->ev = deferred ? ev : NULL;
    n->final = final;
    n->waiter = !deferred;
    if (deferred) {
        n->data = herd__omp_task_data(data, cpyfn, size, align);
        n->icv = herd__omp_icv_lend(parent);
    }
    link_preds(d, &l, n);
    record(d, &l, n);
    free(l.addr);
    free(l.out);
    if (drop_hold(n))
        release(n);
    if (deferred)
        return;
    wait_released(n);
    herd__omp_run_undeferred(parent, fn, data, cpyfn, size, align, final);
    if (ev)
        herd__omp_event_wait(ev);
    complete(n);
}

void herd__omp_taskwait_depend(omp_task *parent, void **depend) {
    omp_deps *d = deps_of(parent);
    dep_list l;
    decode(depend, &l);
    dep_node *n = node_new(d, parent);
    n->waiter = 1;
    link_preds(d, &l, n); /* not recorded: later tasks do not wait for a taskwait */
    free(l.addr);
    free(l.out);
    if (drop_hold(n))
        release(n);
    wait_released(n);
    complete(n);
}

herd_group *herd__omp_deps_group(omp_deps *d) {
    return &d->g;
}

void herd__omp_add_event(omp_task *parent, omp_event *e, int dep) {
    HERD_ASSERT(herd__omp_cur == parent); /* owner only: the creating task */
    omp_deps *d = deps_of(parent);
    pending_event *p = xmalloc(sizeof *p);
    p->e = e;
    p->dep = dep;
    p->next = d->events;
    d->events = p;
}

void herd__omp_wait_events(omp_task *t, int dep_only) {
    omp_deps *d = t->deps;
    if (!d)
        return;
    HERD_ASSERT(herd__omp_cur == t); /* owner only: the creating task */
    for (pending_event **pp = &d->events; *pp;) {
        pending_event *p = *pp;
        if (dep_only && !p->dep) {
            pp = &p->next;
            continue;
        }
        *pp = p->next;
        herd__omp_event_wait(p->e); /* and drops the task's reference */
        free(p);
    }
}

void herd__omp_wait_tasks(omp_task *t) {
    herd__omp_wait_children(t);
    for (omp_taskgroup *tg = t->tg; tg; tg = tg->prev)
        herd_group_wait(&tg->g);
    if (t->deps)
        herd_group_wait(&t->deps->g);
    /* t is the current task, but a wait may have suspended it, and its
     * thread ran other tasks meanwhile, which may have left theirs current
     * (herd__omp_wait_events checks it is t's). */
    herd__omp_cur = t;
    if (t->deps)
        herd__omp_wait_events(t, 0);
}

void herd__omp_deps_free(omp_task *t) {
    omp_deps *d = t->deps;
    if (!d)
        return;
    herd__omp_wait_events(t, 0); /* its undeferred detached tasks complete first */
    for (size_t i = 0; i < d->cap; i++)
        if (d->tab[i].addr)
            forget(&d->tab[i]);
    if (d->all)
        unref(d->all);
    free(d->tab);
    free(d);
    t->deps = NULL;
}
