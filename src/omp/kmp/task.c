/* Explicit tasks through the LLVM ABI. The compiler asks the runtime for a
 * task block (__kmpc_omp_task_alloc: LLVM's kmp_task_t, the privates and
 * the shared variables' pointers), fills it, and hands it back to be run
 * (__kmpc_omp_task) or runs its body itself (if(0): between
 * __kmpc_omp_task_begin_if0 and _complete_if0). herd puts a header of its
 * own before the block and queues the block's address as the layer's task
 * (task.c), so every scheduler, throttle, dependence and detach path is the
 * layer's; taskloop makes the layer's split of the block's copies. */
#include "omp/kmp/kmp.h"

#include <stdlib.h>
#include <string.h>

typedef kmp_int32 (*kmp_routine)(kmp_int32 gtid, void *task);

void omp_fulfill_event(uintptr_t event); /* detach.c */

/* LLVM's kmp_task_t: what the compiler reads and writes of the block. */
typedef struct kmp_task {
    void *shareds;
    kmp_routine routine;
    kmp_int32 part_id;
    union {
        kmp_int32 priority;
        kmp_routine destructors;
    } data1, data2; /* destructors in data1, priority in data2 */
} kmp_task_t;

/* kmp_tasking_flags_t, the compiler's half. */
enum {
    KF_TIED = 1u << 0,
    KF_FINAL = 1u << 1,
    KF_MERGED_IF0 = 1u << 2,
    KF_DESTRUCTORS = 1u << 3,
    KF_PROXY = 1u << 4,
    KF_PRIORITY = 1u << 5,
    KF_DETACHABLE = 1u << 6,
};

/* herd's header, just before the block (16-byte aligned, so is the block). */
typedef struct kmp_hdr {
    omp_task *if0;  /* begin_if0..complete_if0: the undeferred task's record */
    omp_event *ev;  /* allow_completion_event: its event, NULL: none */
    void *red;      /* the task reductions its creator saw (taskred.c), NULL: none */
    size_t size;    /* bytes of the block (task, privates, shareds) */
    size_t sh_off;  /* the shareds' offset in the block, 0: none */
    uint32_t flags; /* KF_* */
    int running;    /* its body runs (an untied task re-queued from there: again) */
    int again;
    /* a proxy task (KF_PROXY): its body's end and its completion
     * (__kmpc_proxy_task_completed), the last of the two finishes the block */
    _Atomic int proxy_left;
} __attribute__((aligned(16))) kmp_hdr;

static kmp_hdr *hdr_of(kmp_task_t *t) {
    return (kmp_hdr *)(void *)t - 1;
}

/* Small blocks (the commonest: a few privates and shared pointers) come
 * from a per-thread cache of BLOCK_SMALL-byte blocks, LIFO, at most
 * CACHE_MAX of them: a block freed on another thread (a stolen task) joins
 * that thread's cache. malloc and free were a quarter of a task's cost in a
 * fib without cut-off (clang build, one thread). A thread that exits leaves
 * its cache (at most 16 KiB) behind: herd's own threads live as long as the
 * process. */
#define BLOCK_SMALL 256
#define CACHE_MAX 64
typedef struct free_block {
    struct free_block *next;
} free_block;
static __thread free_block *cache;
static __thread int cached;

static kmp_hdr *block_get(size_t bytes) {
    if (bytes <= BLOCK_SMALL && cache) {
        free_block *b = cache;
        cache = b->next;
        cached--;
        return (kmp_hdr *)(void *)b;
    }
    return malloc(bytes <= BLOCK_SMALL ? BLOCK_SMALL : bytes);
}

static void block_put(kmp_hdr *h, size_t bytes) {
    if (bytes <= BLOCK_SMALL && cached < CACHE_MAX) {
        free_block *b = (free_block *)(void *)h;
        b->next = cache;
        cache = b;
        cached++;
        return;
    }
    free(h);
}

static kmp_task_t *alloc_block(uint32_t flags, size_t task_size, size_t shareds_size,
                               kmp_routine entry) {
    /* Hand-written callers declare the task without data1, data2 (and pass
     * a smaller size): the block has room for them all the same. */
    if (task_size < sizeof(kmp_task_t))
        task_size = sizeof(kmp_task_t);
    size_t sh_off = (task_size + sizeof(void *) - 1) & ~(sizeof(void *) - 1);
    kmp_hdr *h = block_get(sizeof *h + sh_off + shareds_size);
    if (!h)
        herd__omp_fatal("out of memory for a task (%zu bytes)", sh_off + shareds_size);
    memset(h, 0, sizeof *h);
    h->size = sh_off + shareds_size;
    h->sh_off = shareds_size ? sh_off : 0;
    h->flags = flags;
    kmp_task_t *t = (kmp_task_t *)(void *)(h + 1);
    memset(t, 0, sizeof *t);
    t->shareds = shareds_size ? (char *)t + sh_off : NULL;
    t->routine = entry;
    if (flags & KF_PROXY) { /* detached from the start: see proxy_done */
        h->ev = herd__omp_event_new();
        atomic_init(&h->proxy_left, 2);
    }
    return t;
}

KMP_API void *__kmpc_omp_task_alloc(ident_t *loc, kmp_int32 gtid, kmp_int32 flags,
                                    size_t sizeof_kmp_task_t, size_t sizeof_shareds,
                                    kmp_routine task_entry) {
    (void)loc, (void)gtid;
    return alloc_block((uint32_t)flags, sizeof_kmp_task_t, sizeof_shareds, task_entry);
}

/* target nowait on the host: a task like any other. */
KMP_API void *__kmpc_omp_target_task_alloc(ident_t *loc, kmp_int32 gtid, kmp_int32 flags,
                                           size_t sizeof_kmp_task_t, size_t sizeof_shareds,
                                           kmp_routine task_entry, kmp_int64 device_id) {
    (void)device_id;
    return __kmpc_omp_task_alloc(loc, gtid, flags, sizeof_kmp_task_t, sizeof_shareds, task_entry);
}

/* The block's end: its destructors (the compiler's thunk), its memory. */
static void finish(kmp_task_t *t, kmp_int32 gtid) {
    kmp_hdr *h = hdr_of(t);
    if (h->flags & KF_DESTRUCTORS)
        t->data1.destructors(gtid, t);
    block_put(h, sizeof *h + h->size);
}

/* A proxy task's body has ended, or it was completed: the second of the
 * two finishes its block (the completion may come first, from another
 * thread). ORDER: acq_rel; pairs with the other's fetch_sub, so the last
 * one sees the other's use of the block done before it runs the
 * destructors and frees it. */
static void proxy_done(kmp_task_t *t, kmp_int32 gtid) {
    if (atomic_fetch_sub_explicit(&hdr_of(t)->proxy_left, 1, memory_order_acq_rel) == 1)
        finish(t, gtid);
}
/* The block's end after its body: a proxy task's waits for its completion. */
static void body_done(kmp_task_t *t, kmp_int32 gtid) {
    if (hdr_of(t)->flags & KF_PROXY)
        proxy_done(t, gtid);
    else
        finish(t, gtid);
}

/* The layer's task body: data holds the block's address. An untied task
 * that re-queues itself at a scheduling point (the compiler's code for
 * untied parts) runs its next part here at once. */
static void run_block(void *data) {
    kmp_task_t *t;
    memcpy(&t, data, sizeof t);
    kmp_hdr *h = hdr_of(t);
    kmp_int32 gtid = herd__kmp_gtid();
    herd__omp_task()->kred = h->red ? h->red : KMP_RED_NONE;
    /* Its taskgroup was cancelled before it started: only its end. A
     * detached one runs (it completes with its event, as task.c's do). */
    if (!h->ev && herd__omp_task_discarded()) {
        finish(t, gtid);
        return;
    }
    do { /* no routine: a task for its dependences only */
        h->again = 0;
        h->running = 1;
        if (t->routine)
            t->routine(gtid, t);
    } while (h->again);
    h->running = 0;
    body_done(t, gtid);
}

/* LLVM's depend list as GCC's array {0, n, nout, nmutex, nin, addresses}
 * (depend.c reads it while the task is created): out and inout first, then
 * mutexinoutset, then in; inoutset is ordered as inout, as depend.c orders
 * a depobj's. */
typedef struct kmp_depend_info {
    intptr_t base_addr;
    size_t len;
    uint8_t flags; /* in 1, out 2, mutexinoutset 4, inoutset 8, omp_all_memory 0x80 */
} kmp_depend_info;

enum { DEP_IN = 1, DEP_OUT = 2, DEP_MTX = 4, DEP_SET = 8, DEP_ALL = 0x80 };

static int dep_class(uint8_t f) {
    if (f & (DEP_ALL | DEP_OUT | DEP_SET))
        return 0; /* omp_all_memory: an out dependence on everything */
    if (f & DEP_MTX)
        return 1;
    if (f & (DEP_OUT | DEP_SET))
        return 0;
    if (f & DEP_IN)
        return 2;
    herd__omp_fatal("a task dependence of kind %#x, unknown to herd", f);
}

static void **gcc_deps(kmp_int32 n1, const kmp_depend_info *l1, kmp_int32 n2,
                       const kmp_depend_info *l2) {
    size_t n = (size_t)(n1 > 0 ? n1 : 0) + (size_t)(n2 > 0 ? n2 : 0);
    void **a = malloc((5 + n) * sizeof *a);
    if (!a)
        herd__omp_fatal("out of memory for a task's %zu dependences", n);
    size_t cnt[3] = {0, 0, 0}, at[3];
    for (int k = 0; k < 2; k++) {
        const kmp_depend_info *l = k ? l2 : l1;
        for (kmp_int32 i = 0; i < (k ? n2 : n1); i++)
            cnt[dep_class(l[i].flags)]++;
    }
    a[0] = NULL;
    a[1] = (void *)(uintptr_t)n;
    a[2] = (void *)(uintptr_t)cnt[0];
    a[3] = (void *)(uintptr_t)cnt[1];
    a[4] = (void *)(uintptr_t)cnt[2];
    at[0] = 5;
    at[1] = 5 + cnt[0];
    at[2] = 5 + cnt[0] + cnt[1];
    for (int k = 0; k < 2; k++) {
        const kmp_depend_info *l = k ? l2 : l1;
        for (kmp_int32 i = 0; i < (k ? n2 : n1); i++)
            a[at[dep_class(l[i].flags)]++] =
                l[i].flags & DEP_ALL ? HERD_DEP_ALL : (void *)l[i].base_addr;
    }
    return a;
}

static void launch(kmp_task_t *t, bool if_clause, void **depend) {
    kmp_hdr *h = hdr_of(t);
    unsigned flags = 0;
    if (h->flags & KF_FINAL)
        flags |= OMP_TASK_FINAL;
    if (depend)
        flags |= OMP_TASK_DEPEND;
    if (h->ev)
        flags |= OMP_TASK_DETACH;
    flags |= OMP_TASK_KEEP; /* a discarded task still frees its block (run_block) */
    int prio = h->flags & KF_PRIORITY ? t->data2.priority : 0;
    omp_task *parent = herd__omp_task();
    h->red = herd__kmp_red_seen(parent);
    if (h->red && !(parent->team && parent->team->outer))
        if_clause = false;
    herd__omp_task_launch(run_block, &t, sizeof t, _Alignof(kmp_task_t *), if_clause, flags, depend,
                          prio, h->ev);
}

KMP_API kmp_int32 __kmpc_omp_task(ident_t *loc, kmp_int32 gtid, void *task) {
    (void)loc, (void)gtid;
    kmp_task_t *t = task;
    kmp_hdr *h = hdr_of(t);
    if (h->running) { /* an untied task's next part: run_block runs it */
        h->again = 1;
        return 0;
    }
    launch(t, true, NULL);
    return 0; /* TASK_CURRENT_NOT_QUEUED: the caller goes on */
}

KMP_API kmp_int32 __kmpc_omp_task_with_deps(ident_t *loc, kmp_int32 gtid, void *task,
                                            kmp_int32 ndeps, kmp_depend_info *dep_list,
                                            kmp_int32 ndeps_noalias,
                                            kmp_depend_info *noalias_dep_list) {
    (void)loc, (void)gtid;
    if (ndeps + ndeps_noalias <= 0)
        return __kmpc_omp_task(loc, gtid, task);
    void **d = gcc_deps(ndeps, dep_list, ndeps_noalias, noalias_dep_list);
    launch(task, true, d);
    free(d);
    return 0;
}

/* An undeferred task with dependences: wait for its predecessors, then the
 * compiler runs it (begin_if0 .. complete_if0). */
KMP_API void __kmpc_omp_wait_deps(ident_t *loc, kmp_int32 gtid, kmp_int32 ndeps,
                                  kmp_depend_info *dep_list, kmp_int32 ndeps_noalias,
                                  kmp_depend_info *noalias_dep_list) {
    (void)loc, (void)gtid;
    if (ndeps + ndeps_noalias <= 0)
        return;
    void **d = gcc_deps(ndeps, dep_list, ndeps_noalias, noalias_dep_list);
    GOMP_taskwait_depend(d);
    free(d);
}

KMP_API void __kmpc_omp_task_begin_if0(ident_t *loc, kmp_int32 gtid, void *task) {
    (void)loc, (void)gtid;
    kmp_hdr *h = hdr_of(task);
    omp_task *parent = herd__omp_task();
    h->if0 = malloc(sizeof *h->if0);
    if (!h->if0)
        herd__omp_fatal("out of memory for an undeferred task");
    herd__omp_task_begin_here(h->if0, parent, (h->flags & KF_FINAL) || parent->final);
}

KMP_API void __kmpc_omp_task_complete_if0(ident_t *loc, kmp_int32 gtid, void *task) {
    (void)loc;
    kmp_hdr *h = hdr_of(task);
    if (!h->if0)
        herd__omp_fatal("__kmpc_omp_task_complete_if0 without its begin");
    omp_task *parent = h->if0->parent;
    herd__omp_task_end_here(h->if0);
    free(h->if0);
    h->if0 = NULL;
    /* Its body has run, which is all an undeferred task holds its creator
     * for; detached, it completes with its event, which its creator waits
     * for with its tasks (depend.c), as on the GCC side (task.c). */
    if (h->ev)
        herd__omp_add_event(parent, h->ev, 0);
    body_done(task, gtid);
}

KMP_API kmp_int32 __kmpc_omp_taskwait(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    GOMP_taskwait();
    return 0;
}
KMP_API kmp_int32 __kmpc_omp_taskyield(ident_t *loc, kmp_int32 gtid, int end_part) {
    (void)loc, (void)gtid, (void)end_part;
    GOMP_taskyield();
    return 0;
}
KMP_API void __kmpc_taskgroup(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    GOMP_taskgroup_start();
}
KMP_API void __kmpc_end_taskgroup(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    GOMP_taskgroup_end();
}

/* A task's part (the Intel compilers' untied tasks): queued as a task,
 * as libomp queues it. */
KMP_API kmp_int32 __kmpc_omp_task_parts(ident_t *loc, kmp_int32 gtid, void *task) {
    return __kmpc_omp_task(loc, gtid, task);
}

/* A proxy task (KF_PROXY: one whose completion is signalled from outside,
 * libomptarget's asynchronous work) is a detached task whose event the
 * block's header holds from its allocation: its body runs, and it is
 * complete for taskwait, taskgroups, barriers and its dependent tasks once
 * a completion call fulfils the event (detach.c). The two calls differ in
 * libomp by the thread that may make them (the owner's, in order; any, out
 * of order); herd's event takes either from any thread. */
static void proxy_complete(void *task, const char *who) {
    kmp_task_t *t = task;
    kmp_hdr *h = t ? hdr_of(t) : NULL;
    if (!h || !(h->flags & KF_PROXY))
        herd__omp_fatal("%s(%p): not a proxy task (allocated without its flag)", who, task);
    omp_event *ev = h->ev; /* read before the block may go */
    proxy_done(t, herd__kmp_gtid());
    /* Fatal there if the event was fulfilled before; a second completion
     * is the program's error all the same (the block may be gone by then). */
    omp_fulfill_event((uintptr_t)ev);
}
KMP_API void __kmpc_proxy_task_completed(kmp_int32 gtid, void *ptask) {
    (void)gtid;
    proxy_complete(ptask, "__kmpc_proxy_task_completed");
}
KMP_API void __kmpc_proxy_task_completed_ooo(void *ptask) {
    proxy_complete(ptask, "__kmpc_proxy_task_completed_ooo");
}

/* The current task's id and its parent's (0: none). libomp's release
 * builds give every task ~0; herd gives a task's record's address, which
 * tells the tasks alive at one time apart. */
KMP_API kmp_uint64 __kmpc_get_taskid(void) {
    return (kmp_uint64)(uintptr_t)herd__omp_task();
}
KMP_API kmp_uint64 __kmpc_get_parent_taskid(void) {
    return (kmp_uint64)(uintptr_t)herd__omp_task()->parent;
}

/* The affinity clause is a hint herd does not use. */
KMP_API kmp_int32 __kmpc_omp_reg_task_with_affinity(ident_t *loc, kmp_int32 gtid, void *task,
                                                    kmp_int32 naffins, void *affin_list) {
    (void)loc, (void)gtid, (void)task, (void)naffins, (void)affin_list;
    return 0;
}

/* detach(event): the task's event, made before the task is handed over. */
KMP_API void *__kmpc_task_allow_completion_event(ident_t *loc, kmp_int32 gtid, void *task) {
    (void)loc, (void)gtid;
    kmp_hdr *h = hdr_of(task);
    if (!h->ev)
        h->ev = herd__omp_event_new();
    return h->ev;
}

/* ------------------------------------------------------------- taskloop */

/* Split the pattern block's loop lb..ub by st (64-bit fields inside the
 * block, at *lb and *ub) into the layer's number of tasks; each gets a
 * copy of the block with its bounds (task_dup copies the firstprivates and
 * marks the last). The pattern is finished after (its destructors run). */
static void taskloop(kmp_task_t *t, int if_val, kmp_uint64 *lb, kmp_uint64 *ub, kmp_int64 st,
                     int nogroup, int sched, kmp_uint64 grainsize, int strict,
                     void (*task_dup)(void *dst, void *src, kmp_int32 lastpriv)) {
    kmp_hdr *h = hdr_of(t);
    size_t lb_off = (size_t)((char *)lb - (char *)t), ub_off = (size_t)((char *)ub - (char *)t);
    if (lb_off + 8 > h->size || ub_off + 8 > h->size)
        herd__omp_fatal("a taskloop whose bounds lie outside its task block");
    kmp_uint64 lower = *lb, upper = *ub;
    unsigned long n;
    if (st > 0)
        n = (int64_t)upper < (int64_t)lower ? 0 : (upper - lower) / (kmp_uint64)st + 1;
    else if (st < 0)
        n = (int64_t)lower < (int64_t)upper ? 0 : (lower - upper) / (kmp_uint64)-st + 1;
    else
        herd__omp_fatal("a taskloop with a zero increment");
    if (!nogroup)
        GOMP_taskgroup_start();
    omp_task *parent = herd__omp_task();
    unsigned flags = 0;
    if (sched == 1)
        flags |= OMP_TASK_GRAINSIZE | (strict ? OMP_TASK_STRICT : 0);
    unsigned long strict_cnt,
        ntasks =
            n ? herd__omp_taskloop_split(parent, flags, sched ? grainsize : 0, n, &strict_cnt) : 0;
    unsigned long q = ntasks ? n / ntasks : 0, r = ntasks ? n % ntasks : 0, lo = 0;
    kmp_int32 gtid = herd__kmp_gtid();
    size_t tsz = h->sh_off ? h->sh_off : h->size; /* the task and its privates */
    for (unsigned long k = 0; k < ntasks; k++) {
        unsigned long cnt = strict_cnt ? (k + 1 < ntasks ? strict_cnt : n - lo) : q + (k < r);
        kmp_task_t *c = alloc_block(h->flags, tsz, h->size - tsz, t->routine);
        memcpy(c, t, h->size);
        if (h->sh_off)
            c->shareds = (char *)c + h->sh_off;
        kmp_uint64 a = lower + (kmp_uint64)lo * (kmp_uint64)st;
        kmp_uint64 b = lower + (kmp_uint64)(lo + cnt - 1) * (kmp_uint64)st;
        memcpy((char *)c + lb_off, &a, 8);
        memcpy((char *)c + ub_off, &b, 8);
        if (task_dup)
            task_dup(c, t, k + 1 == ntasks);
        lo += cnt;
        launch(c, if_val != 0, NULL);
    }
    finish(t, gtid);
    if (!nogroup)
        GOMP_taskgroup_end();
}

KMP_API void __kmpc_taskloop(ident_t *loc, kmp_int32 gtid, void *task, int if_val, kmp_uint64 *lb,
                             kmp_uint64 *ub, kmp_int64 st, int nogroup, int sched,
                             kmp_uint64 grainsize, void *task_dup) {
    (void)loc, (void)gtid;
    taskloop(task, if_val, lb, ub, st, nogroup, sched, grainsize, 0,
             (void (*)(void *, void *, kmp_int32))task_dup);
}

/* OpenMP 5.1's form: modifier 1 is grainsize(strict:) or num_tasks(strict:). */
KMP_API void __kmpc_taskloop_5(ident_t *loc, kmp_int32 gtid, void *task, int if_val, kmp_uint64 *lb,
                               kmp_uint64 *ub, kmp_int64 st, int nogroup, int sched,
                               kmp_uint64 grainsize, int modifier, void *task_dup) {
    (void)loc, (void)gtid;
    taskloop(task, if_val, lb, ub, st, nogroup, sched, grainsize, modifier,
             (void (*)(void *, void *, kmp_int32))task_dup);
}
