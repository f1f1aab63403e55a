/* Explicit tasks: task, taskwait, taskgroup, taskyield, taskloop
 * (docs/design/openmp.md, "Tasks").
 *
 * A deferred task is a herd task (herd_spawn): its argument is a 24-byte
 * header and, when it fits, the task's data itself, so a task with up to
 * 16 bytes of data rides in a deque slot with no allocation (the inline
 * spawn path). Larger data up to HERD_ARG_MAX goes into the deque's side
 * area; data built by a copy function (firstprivate constructors, VLA
 * fix-ups that point into the block) lives in a heap block, never moved.
 *
 * A herd task completes after its children, so taskwait (wait for the
 * children) is herd_wait() (plus the task's open taskgroups and its
 * dependent tasks: herd__omp_wait_tasks). Tasks created inside a taskgroup
 * are spawned into the taskgroup's herd group, so its end waits for them
 * (and, through them, their descendants) and not for the encountering
 * task's other children. */
#include "omp/omp.h"
#include "omp/throttle.h"

#include <stdlib.h>
#include <string.h>

typedef struct task_hdr {
    void (*fn)(void *);
    omp_task *parent;
    uint32_t size; /* data bytes (inline), or 0 with HDR_HEAP */
    uint16_t align;
    uint16_t flags; /* HDR_* */
} task_hdr;
_Static_assert(sizeof(task_hdr) == 24, "the header of an inline task");

#define HDR_FINAL 1u
#define HDR_HEAP 2u   /* the data is a heap block whose pointer follows */
#define HDR_RED 4u    /* the creator's task reductions (omp_task.red) follow the header */
#define HDR_DETACH 8u /* then its detach event (omp_event *) */
#define HDR_TG 16u    /* then the taskgroup it belongs to (omp_task.tg_cur) */
#define HDR_KEEP 32u  /* run its body even when discarded (OMP_TASK_KEEP) */
#define HDR_ICV 128u  /* then the ICVs it starts from (herd__omp_icv_lend) */

/* A task run outside herd: a guest runs its team's pooled tasks (pool.c)
 * as its member, whose number its current task has. */
static __attribute__((noinline)) int thread_num_outside(const omp_task *parent) {
    const omp_task *cur = herd__omp_cur;
    return cur && cur->team == parent->team ? cur->thread_num : parent->thread_num;
}

static inline int thread_num_of(const omp_task *parent) {
    int w = herd__self_id();
    if (__builtin_expect(w < 0, 0))
        return thread_num_outside(parent);
    /* Outermost team: member i runs on worker i, and only the team's
     * workers run its tasks (herd__serve_hold): a task reports the worker
     * that runs it, one running task's number at a time. */
    const omp_team *team = parent->team;
    return team && team->outer && w < team->nthreads ? w : parent->thread_num;
}

/* A new task record: child of parent, thread number thread_num, its herd
 * children counted as frame_mode says (OMP_FRAME_*), in taskgroup tg_cur
 * (omp_task.tg_cur, which the creator changes as it runs). Its ICVs are
 * its caller's to set (icv.c, "A task's ICVs"). */
static inline __attribute__((always_inline)) void task_init(omp_task *me, omp_task *parent,
                                                            int thread_num, int final,
                                                            int frame_mode, omp_taskgroup *tg_cur) {
    /* Every field before `frame` and the implicit tasks' worksharing state,
     * one by one: no memset under the stores that follow. */
    me->frame_mode = frame_mode;
    me->deps = NULL;
    me->tg = NULL;
    me->tg_cur = tg_cur;
    me->kred = NULL;
    me->team = parent->team;
    me->parent = parent;
    me->thread_num = thread_num;
    /* A store of its own: the task's first GOMP_task reads `final` at once,
     * and a load from the middle of a merged 8-byte vector store of
     * thread_num and final missed store forwarding (a quarter of
     * GOMP_task's time, perf, fib(30)). */
    *(volatile int *)&me->final = final;
}

/* The ICVs of a deferred task: the block its creator lent it (icv: a
 * snapshot; NULL: the creator's icv_src), which no one writes while the
 * task may start. */
static inline __attribute__((always_inline)) void icv_deferred(omp_task *me, const omp_task *parent,
                                                               const omp_icv *icv) {
    const omp_icv *src = icv ? icv : parent->icv_src;
    me->icv = me->icv_src = src;
    me->icv_snaps = NULL;
}

/* The ICVs of a task run at once: its creator's now, which its creator
 * cannot change before it returns. A creator that changed its own: the
 * tasks this one creates need snapshots of them (as if it had changed
 * them itself). */
static inline __attribute__((always_inline)) void icv_here(omp_task *me, const omp_task *parent) {
    me->icv = parent->icv;
    me->icv_src = parent->icv_src;
    me->icv_snaps = NULL;
    if (__builtin_expect(parent->icv_snaps != NULL, 0)) {
        me->icv_snaps = &herd__omp_icv_end_mark;
        me->icv_stale = 1;
    }
}

static void task_entry(void *p);

/* Hand-up (J6, docs/design/tasks.md; herd__frame_hand_up): a task run at
 * once that queued children may complete before them, as OpenMP allows
 * (only a taskwait waits for a task's children) and as libgomp's team
 * queue lets an untaken task wait; its children that nobody has taken go
 * to the frame below, that of its nearest ancestor with a frame (the
 * ancestors between run at once, lazily, on the same stack), whose task
 * then runs or waits for them when it waits. Before, the task ran them
 * itself at its end (a herd task completes after its children), and with
 * the creation throttle almost every deferral was undone by its own
 * creator a moment later (OpenMP UTS: 93% of them, round 21); handed down,
 * they stay queued while the worker goes on, the throttle counts them and
 * runs the tasks created meanwhile at once, and thieves find older tasks.
 * Each moved task's header then names that ancestor as its creator: it
 * is alive as long as its frame, and the task's team, thread number and
 * ICVs are the same through it. The ancestor to hand to, or NULL when the
 * tasks must stay: the task or one between has a taskgroup (which waits
 * for their descendants) or dependences, the team has guests (pooled
 * tasks and their stubs), or the throttle is off (then nothing would bound
 * the tasks waiting in the deque: a loop of if(0) tasks that each queue a
 * child would fill it, where each task's end ran its child before). */
static omp_task *hand_up_target(omp_task *me) {
    if (me->frame_mode != OMP_FRAME_OWN || me->deps || me->tg || me->tg_cur ||
        !herd__omp_g.throttle || herd__omp_mixed(me->team))
        return NULL;
    for (omp_task *t = me->parent; t; t = t->parent) {
        if (t->tg || t->tg_cur || t->team != me->team)
            return NULL;
        if (t->frame_mode != OMP_FRAME_LAZY)
            return t;
    }
    return NULL;
}

/* herd__frame_hand_up's visit: only plain tasks of this layer move (no task
 * reductions, detach event, cancellable taskgroup or lent ICVs, which name
 * records of their creator's), and their header gets their new creator. */
static int hand_up_visit(herd_fn fn, unsigned char *arg, size_t size, int move, void *to) {
    task_hdr h;
    if (fn != task_entry || size < sizeof h)
        return 0;
    memcpy(&h, arg, sizeof h);
    if (!move)
        return !(h.flags & (HDR_RED | HDR_DETACH | HDR_TG | HDR_ICV));
    h.parent = to;
    memcpy(arg, &h, sizeof h);
    return 1;
}

/* The end of a task that has something to wait for or free: its herd
 * children (then the frame it opened is closed), its dependent tasks, its
 * dependence table. */
static __attribute__((noinline)) void task_end(omp_task *me) {
    if (herd__self()) {
        omp_task *to = hand_up_target(me);
        if (to)
            herd__frame_hand_up(&me->frame, hand_up_visit, to);
        herd__omp_wait_children(me);
        if (me->deps)
            herd__omp_wait_tasks(me); /* the released dependent tasks too */
        if (me->frame_mode == OMP_FRAME_OWN)
            herd__tls->frame = me->frame.up; /* tied: the same worker; read it again all the same */
        herd__omp_cur = me;                  /* the waits may have suspended it (wait_tasks) */
    } else {
        herd__omp_pool_wait_kids(me); /* a guest's pooled tasks (pool.c) */
    }
    if (me->deps)
        herd__omp_deps_free(me);
    herd__omp_icv_end(me);
}

/* Run fn(data) as task `me`, a deferred task that herd runs in a frame of
 * its own, child of parent, in taskgroup tg (omp_task.tg_cur), on the
 * caller's stack; `me` completes after its tasks. */
static inline __attribute__((always_inline)) void run_as(omp_task *me, omp_task *parent,
                                                         uintptr_t *red, omp_taskgroup *tg,
                                                         const omp_icv *icv, int final,
                                                         void (*fn)(void *), void *data) {
    /* Not the creator's tg_cur: the creator may be changing it now (a
     * taskgroup's end; TSan saw it with a guest running the task). */
    task_init(me, parent, thread_num_of(parent), final, OMP_FRAME_HERD, tg);
    icv_deferred(me, parent, icv);
    me->gkids = 0; /* a lazy task's is set when it stops being lazy (pool.c) */
    me->red = red;
    omp_task *prev = herd__omp_cur;
    herd__omp_cur = me;
    fn(data);
    task_end(me);
    herd__omp_cur = prev;
}

void herd__omp_run_task(omp_task *me, omp_task *parent, uintptr_t *red, omp_taskgroup *tg,
                        const omp_icv *icv, int final, void (*fn)(void *), void *data) {
    run_as(me, parent, red, tg, icv, final, fn, data);
}

static void task_entry(void *p) {
    task_hdr h;
    memcpy(&h, p, sizeof h);
    unsigned char *src = (unsigned char *)p + sizeof h;
    uintptr_t *red = NULL;
    if (h.flags & HDR_RED) {
        memcpy(&red, src, sizeof red);
        src += sizeof red;
    }
    omp_event *ev = NULL;
    if (h.flags & HDR_DETACH) {
        memcpy(&ev, src, sizeof ev);
        src += sizeof ev;
    }
    omp_taskgroup *tg = NULL;
    if (h.flags & HDR_TG) {
        memcpy(&tg, src, sizeof tg);
        src += sizeof tg;
    }
    const omp_icv *icv = NULL;
    if (h.flags & HDR_ICV) {
        memcpy(&icv, src, sizeof icv);
        src += sizeof icv;
    }
    /* Discarded: its taskgroup was cancelled before it started (cancel.c).
     * A detached one runs all the same: it completes with its event, which
     * its own body may be the one to fulfil. */
    int run = !tg || ev || (h.flags & HDR_KEEP) || !herd__omp_tg_cancelled(tg);
    omp_task me;
    if (h.flags & HDR_HEAP) {
        void *block;
        memcpy(&block, src, sizeof block);
        if (run)
            run_as(&me, h.parent, red, tg, icv, h.flags & HDR_FINAL, h.fn, block);
        free(block);
    } else if (run && ((uintptr_t)src & (h.align - 1)) == 0) {
        run_as(&me, h.parent, red, tg, icv, h.flags & HDR_FINAL, h.fn, src);
    } else if (run) {
        unsigned char buf[h.size + h.align];
        unsigned char *d =
            (unsigned char *)(((uintptr_t)buf + h.align - 1) & ~(uintptr_t)(h.align - 1));
        memcpy(d, src, h.size);
        run_as(&me, h.parent, red, tg, icv, h.flags & HDR_FINAL, h.fn, d);
    }
    if (ev)
        herd__omp_event_wait(ev); /* it completes once its event is fulfilled too */
}

static void *block_new(long size, long align) {
    void *b = NULL;
    if (posix_memalign(&b, align < (long)sizeof(void *) ? sizeof(void *) : (size_t)align,
                       size ? (size_t)size : 1))
        herd__omp_fatal("out of memory for a task's data (%ld bytes)", size);
    return b;
}

void *herd__omp_task_data(void *data, void (*cpyfn)(void *, void *), long size, long align) {
    void *b = block_new(size, align);
    if (cpyfn)
        cpyfn(b, data);
    else if (size > 0) /* no data: GCC may pass NULL */
        memcpy(b, data, (size_t)size);
    return b;
}

/* Frames. A task run at once (run_here: herd not running, if(0), final,
 * the creation throttle) starts in its creator's herd frame, with no frame
 * of its own (OMP_FRAME_LAZY): most of them, the throttle's, never queue a
 * child, and opening and closing a frame for each was a fifth of their cost
 * (fib(30)). Before its first herd child it opens one (task_frame) and
 * becomes the worker's current frame; from then on its children are counted
 * there, and its end (task_end) waits for them and closes the frame. A task
 * that has no frame of its own has no herd children, so its taskwait waits
 * for none (herd__omp_wait_children): the creator's queued children are
 * not its own. Tasks in a taskgroup or with dependences go into herd groups,
 * which need no frame. */
static inline __attribute__((always_inline)) void task_frame(omp_task *t, herd__hot *h) {
    if (__builtin_expect(t->frame_mode == OMP_FRAME_LAZY, 0)) {
        herd__frame_open(&t->frame, h, NULL, h->frame);
        h->frame = &t->frame;
        t->frame_mode = OMP_FRAME_OWN;
    }
}

/* A task that an implicit task queued is shared at once when its worker
 * has nothing public (S3 unasked, docs/design/split-deque.md): a member's
 * body may run user code for long after it (a single producer; a thread
 * that waits, spinning, for another to start the task it created: LLVM's
 * taskdep_if0_2.c), and a thief that asked only after the spawn would
 * wait for the owner's next one, as libgomp's and libomp's shared queues
 * never make it wait. The tasks explicit tasks create (the recursive
 * decompositions) are shared when a thief asks (S3), their cheap path. */
static inline void share_now(herd__hot *h) {
    if (herd__sdq_public_empty(&h->q))
        herd__publish_slow();
}

void herd__omp_share_now(void) {
    herd__hot *h = herd__tls;
    if (h)
        share_now(h);
}

/* A herd child of the current task, or a task of its open taskgroup; in a
 * team with guests, in the team's pool too (pool.c) when a guest creates
 * it, or a worker where herd__omp_pools_here says. */
static int queue(omp_task *parent, const void *arg, size_t len) {
    if (__builtin_expect(herd__omp_mixed(parent->team), 0) &&
        (!herd__tls || herd__omp_pools_here(parent))) {
        if (herd__tls && !parent->tg)
            task_frame(parent, herd__tls); /* the stub is its child */
        herd__omp_pool_spawn(parent->team, herd__tls ? NULL : parent,
                             parent->tg ? &parent->tg->g : NULL, task_entry, arg, len);
    } else if (parent->tg) {
        if (herd__tls)
            herd__note_queued(herd__tls); /* R3: the creator may now spin (core/rescue.h) */
        int rc = herd_group_spawn(&parent->tg->g, task_entry, arg, len);
        if (rc)
            return rc;
    } else {
        herd__hot *h = herd__tls;
        if (h) {
            task_frame(parent, h);
            herd__note_queued(h); /* R3 */
        }
        /* A block that fits a deque slot is queued at the slot's full,
         * constant size (arg is a HERD_ARG_MAX buffer): the inline path then
         * copies it with a few fixed moves instead of a variable-length
         * copy, which was the largest single cost of a fine-grain task
         * (perf, fib(30)). The task reads only the header's size. */
        int rc =
            herd_spawn(task_entry, arg, len <= HERD__SLOT_INLINE_ARG ? HERD__SLOT_INLINE_ARG : len);
        if (rc)
            return rc;
    }
    if (herd__omp_member_task(parent))
        herd__omp_share_now();
    return 0;
}

/* The common small task (no copy function, header and data fit a slot, no
 * open taskgroup): header and data written straight into the deque slot,
 * 8 bytes at a time, as GCC's caller stored the data. 0 when it cannot. */
static int spawn_in_slot(omp_task *parent, void (*fn)(void *), const void *data, long size,
                         long align, int final) {
    if (parent->tg || parent->tg_cur || parent->icv_snaps || herd__omp_pools_here(parent) ||
        herd__omp_red_of(parent) || size < 0 ||
        sizeof(task_hdr) + (size_t)size > HERD__SLOT_INLINE_ARG || (size & 7) || align > 8)
        return 0;
    herd__hot *h = herd__tls;
    if (!h)
        return 0;
    task_frame(parent, h);
    herd__slot *s = herd__spawn_reserve();
    if (!s)
        return 0;
    herd__note_queued(h); /* R3: the creator may now spin (core/rescue.h) */
    /* The header as three 8-byte words (size, align and flags packed as
     * task_hdr lays them out on a little-endian machine): built in
     * registers, not staged in a struct whose narrow stores an 8-byte load
     * would wait for. */
    _Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && offsetof(task_hdr, size) == 16 &&
                       offsetof(task_hdr, align) == 20 && offsetof(task_hdr, flags) == 22,
                   "the packed header word");
    uint64_t w = (uint64_t)(uint32_t)size | (uint64_t)(align < 1 ? 1 : align) << 32 |
                 (uint64_t)(final ? HDR_FINAL : 0) << 48;
    memcpy(s->arg, &fn, 8);
    memcpy(s->arg + 8, &parent, 8);
    memcpy(s->arg + 16, &w, 8);
    for (long i = 0; i < size; i += 8)
        memcpy(s->arg + sizeof(task_hdr) + i, (const char *)data + i, 8);
    herd__spawn_commit(task_entry, sizeof(task_hdr) + (size_t)size);
    if (herd__omp_member_task(parent))
        share_now(h);
    return 1;
}

/* The words after a queued task's header: what its creator's task
 * reductions are (HDR_RED), its detach event (HDR_DETACH), its taskgroup
 * (HDR_TG), the ICVs it starts from (HDR_ICV). Returns the header's and
 * their length. */
static size_t hdr_extras(task_hdr *h, unsigned char *arg, omp_task *parent, omp_event *ev) {
    size_t len = sizeof *h;
    uintptr_t *red = herd__omp_red_of(parent);
    if (red) {
        h->flags |= HDR_RED;
        memcpy(arg + len, &red, sizeof red);
        len += sizeof red;
    }
    if (ev) {
        h->flags |= HDR_DETACH;
        memcpy(arg + len, &ev, sizeof ev);
        len += sizeof ev;
    }
    if (parent->tg_cur) {
        h->flags |= HDR_TG;
        memcpy(arg + len, &parent->tg_cur, sizeof parent->tg_cur);
        len += sizeof parent->tg_cur;
    }
    const omp_icv *icv = herd__omp_icv_lend(parent);
    if (icv) {
        h->flags |= HDR_ICV;
        memcpy(arg + len, &icv, sizeof icv);
        len += sizeof icv;
    }
    return len;
}

/* The header flags of a task of GCC's flags (OMP_TASK_KEEP among them),
 * final or not. */
static uint16_t hdr_flags(unsigned flags, int final) {
    return (final ? HDR_FINAL : 0) | (flags & OMP_TASK_KEEP ? HDR_KEEP : 0);
}

/* Queue fn on data (copied now) as a child of the current task; hflags:
 * HDR_FINAL, HDR_KEEP; ev: its detach event, or NULL. */
static void spawn(omp_task *parent, void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                  long size, long align, uint16_t hflags, omp_event *ev) {
    if (!cpyfn && !ev && spawn_in_slot(parent, fn, data, size, align, hflags & HDR_FINAL))
        return;
    unsigned char arg[HERD_ARG_MAX] __attribute__((aligned(16)));
    /* Data that a copy function built (C++ copy constructors) is destroyed
     * by the task's body: never discarded, as libgomp's are not. */
    if (cpyfn)
        hflags |= HDR_KEEP;
    task_hdr h = {fn, parent, 0, (uint16_t)(align < 1 ? 1 : align), hflags};
    size_t len = hdr_extras(&h, arg, parent, ev);
    if (!cpyfn && len + (size_t)size <= HERD_ARG_MAX && align <= 4096) {
        h.size = (uint32_t)size;
        if (size == 16) /* two pointers: the commonest (shared a, and a value) */
            memcpy(arg + len, data, 16);
        else if (size == 8)
            memcpy(arg + len, data, 8);
        else if (size > 0) /* GCC passes no data (NULL) for a task without any */
            memcpy(arg + len, data, (size_t)size);
        len += (size_t)size;
    } else {
        void *b = herd__omp_task_data(data, cpyfn, size, align);
        h.flags |= HDR_HEAP;
        memcpy(arg + len, &b, sizeof b);
        len += sizeof b;
    }
    memcpy(arg, &h, sizeof h);
    int rc = queue(parent, arg, len);
    if (rc)
        herd__omp_fatal("cannot queue a task: %s", herd_strerror(rc));
}

static void spawn_heap(omp_task *parent, void (*fn)(void *), void *b, long align, int final) {
    /* Room for every extra (hdr_extras: up to 4 words) and the block's
     * pointer; queue() reads a whole slot's worth when they fit one. A slot's
     * 40 bytes held the header, the task reductions and the taskgroup, but
     * not the pointer after them (reductions with OMP_CANCELLATION=true). */
    unsigned char arg[HERD_ARG_MAX] __attribute__((aligned(16)));
    /* built by a copy function, which the body undoes: kept (spawn) */
    task_hdr h = {fn, parent, 0, (uint16_t)(align < 1 ? 1 : align),
                  HDR_HEAP | HDR_KEEP | hdr_flags(0, final)};
    size_t len = hdr_extras(&h, arg, parent, NULL);
    memcpy(arg, &h, sizeof h);
    memcpy(arg + len, &b, sizeof b);
    int rc = queue(parent, arg, len + sizeof b);
    if (rc)
        herd__omp_fatal("cannot queue a task: %s", herd_strerror(rc));
}

/* Run fn(data) at once, as a child of parent, on this stack (the task is
 * tied to its creator's thread, so its thread number is its parent's); it
 * waits for its own tasks (task_end) only if it has any: the children it
 * ran at once have completed. The finest-grained path there is (the
 * throttle's): inline, the end tested in a few loads, the rest out of line. */
static inline __attribute__((always_inline)) void run_here(omp_task *parent, void (*fn)(void *),
                                                           void *data, int final) {
    omp_task me;
    /* run at once: it belongs where its creator is now */
    task_init(&me, parent, parent->thread_num, final, OMP_FRAME_LAZY, parent->tg_cur);
    icv_here(&me, parent);
    herd__omp_cur = &me;
    fn(data);
    if (__builtin_expect(me.frame_mode != OMP_FRAME_LAZY || me.deps != NULL || me.icv_snaps, 0))
        task_end(&me);
    herd__omp_cur = parent;
}

/* run_here in two halves, for a front end whose compiler calls the body
 * itself between them (kmp/task.c, if(0) tasks): `me` must not move. */
void herd__omp_task_begin_here(omp_task *me, omp_task *parent, int final) {
    task_init(me, parent, parent->thread_num, final, OMP_FRAME_LAZY, parent->tg_cur);
    icv_here(me, parent);
    herd__omp_cur = me;
}

void herd__omp_task_end_here(omp_task *me) {
    if (me->frame_mode != OMP_FRAME_LAZY || me->deps != NULL || me->icv_snaps)
        task_end(me);
    herd__omp_cur = me->parent;
}

/* Data that a copy function builds for a task run at once lives in the
 * running frame when it is this small (it never moves while the task runs). */
#define UNDEFERRED_STACK_DATA 1024
/* Data of at most this size, aligned to at most 16 (UTS's firstprivate
 * node: 24 bytes), goes to a fixed buffer (run_copied_small): a buffer
 * sized at run time costs each task some 30 instructions more. */
#define UNDEFERRED_SMALL_DATA 64

static inline int copied_small_fits(long size, long align) {
    return size >= 0 && size <= UNDEFERRED_SMALL_DATA && align <= 16;
}

/* Not inlined: GOMP_task, which calls it for its common case, would carry
 * the buffer in its frame for every task it runs at once, and a guest's
 * chain of tasks run at once (ASan, omp-san.tasks@guests) has no stack to
 * spare for it. */
static __attribute__((noinline)) void run_copied_small(omp_task *parent, void (*fn)(void *),
                                                       void *data, void (*cpyfn)(void *, void *),
                                                       int final) {
    unsigned char buf[UNDEFERRED_SMALL_DATA] __attribute__((aligned(16)));
    cpyfn(buf, data);
    run_here(parent, fn, buf, final);
}

void herd__omp_run_undeferred(omp_task *parent, void (*fn)(void *), void *data,
                              void (*cpyfn)(void *, void *), long size, long align, int final) {
    if (!cpyfn) {
        run_here(parent, fn, data, final);
        return;
    }
    if (copied_small_fits(size, align)) {
        run_copied_small(parent, fn, data, cpyfn, final);
        return;
    }
    if (size >= 0 && align <= 64 && size <= UNDEFERRED_STACK_DATA) {
        /* Sized to the data: deep recursions of tasks run at once each keep
         * one of these on the stack. */
        uintptr_t a = align < 1 ? 1 : (uintptr_t)align;
        unsigned char buf[size + (long)a];
        unsigned char *d = (unsigned char *)(((uintptr_t)buf + a - 1) & ~(a - 1));
        cpyfn(d, data);
        run_here(parent, fn, d, final);
        return;
    }
    void *b = herd__omp_task_data(data, cpyfn, size, align);
    run_here(parent, fn, b, final);
    free(b);
}

#define run_now herd__omp_run_undeferred

/* This thread's creation throttle (omp/throttle.h). */
static __thread omp_throttle throttle_of_thread;

void herd__omp_throttle_restart(void) {
    throttle_of_thread = (omp_throttle){0, 0};
}

/* A thief asked worker h for work (split_req): whether to queue the task
 * (its spawn then publishes, S3) and raise the bound. Not when no other
 * worker may take the task: an outermost team of one parks the other
 * workers (herd__serve_hold), but a request one of them raised before it
 * parked stays up until answered. Raised for it, the bound reached 64
 * times the setting at the team's first task, and a team of one deferred
 * every task it made: GCC's priority.c (64 tasks with priorities, which
 * herd does not order by) then checked libgomp's order and failed, at 2
 * and 4 threads under every scheduler. Out of line: the inlined creation
 * path keeps one test of split_req and one of `shift`. */
static __attribute__((noinline)) int throttle_asked(int limit) {
    if (!herd__others_serve())
        return 0;
    if (limit)
        omp_throttle_asked(&throttle_of_thread);
    return 1;
}

static __attribute__((noinline)) void throttle_calm(omp_throttle *t) {
    omp_throttle_calm(t);
}

/* Creation throttle. A deferrable task is run at once, by the encountering
 * thread, while its worker's deque already holds at least the bound
 * (HERD_OMP_THROTTLE, default 4, raised while thieves ask: omp/throttle.h)
 * tasks that nobody has taken (public or private,
 * docs/design/split-deque.md; under mts, central, lifo and fifo with those
 * in the scheduler's queues it shares into, herd__self_queued_reach): those are the older, larger
 * tasks that thieves take first, so a further task adds no parallelism, only the cost of deferring
 * it (the queue slot and the pop: about twice an undeferred call, fib(30)). The OpenMP
 * specification lets the encountering thread execute a task immediately; libgomp throttles likewise
 * on a team-wide count. Tasks run at once open a herd frame of their own if they queue a child
 * (Frames, above). Low on stack, they are deferred as usual (their frames would deepen the stack).
 * h: the worker, parent: the encountering task. */
static inline __attribute__((always_inline)) int throttled(herd__hot *h, const omp_task *parent) {
    int limit = herd__omp_g.throttle;
    /* A thief found the public part empty and asks for more: queue the task
     * (the spawn then publishes, S3), and raise the bound. Without this, the
     * thieves of an unbalanced tree (UTS) took the few queued tasks, often
     * leaves, and searched while the owner ran a large subtree here. */
    if (__builtin_expect(herd__sdq_wants_publish(&h->q), 0) && throttle_asked(limit))
        return 0;
    omp_throttle *t = &throttle_of_thread;
    if (__builtin_expect(t->shift != 0, 0))
        throttle_calm(t);
    if (!limit || !herd__self_queued_reach(h, omp_throttle_bound(t, (uint32_t)limit)) ||
        (char *)__builtin_frame_address(0) < h->stack_limit)
        return 0;
    /* The task about to run here may be long, and it may spawn nothing:
     * share the older half of the private part first, so that thieves
     * need not wait for the owner's next spawn or wait to ask for it (S3). */
    if (h->q.head != h->q.split)
        herd__publish_slow();
    return 1;
}

/* A guest of a team with guests queues a deferrable task in the team's
 * pool (pool.c; with dependences, through its table: depend.c) unless it
 * has a detach event or task reductions (those run at once, as on any
 * thread outside herd), or the team's pooled tasks already number
 * HERD_OMP_THROTTLE per member (the creation throttle's bound). A task of
 * a cancellable taskgroup (cancel-var true) is pooled too, its taskgroup in
 * its header (HDR_TG, which task_entry checks before it runs the body); it
 * ran at once until round 19, and a task that waited for a sibling it had
 * not let its creator create yet hung (test_cancel_on.c). */
static int pooled_here(const omp_task *parent, unsigned flags, const omp_event *ev) {
    const omp_team *team = parent->team;
    if (!herd__omp_mixed(team) || ev || herd__omp_red_of(parent))
        return 0;
    long limit = herd__omp_g.throttle;
    /* ORDER: relaxed; a count for the throttle only */
    return !limit || atomic_load_explicit(&team->pool_live, memory_order_relaxed) <
                         limit * (long)team->nthreads;
}

static __attribute__((noinline)) void taskwait_general(void *ra) {
    OMP_SAVE();
    herd__wait_ctx c; /* for the watchdog's dump (core/watchdog.h) */
    herd__wait_enter(&c, HERD__WAIT_OMP_TASKWAIT, omp__saved, ra);
    if (omp__saved->tg || omp__saved->deps)
        herd__omp_wait_tasks(omp__saved);
    else
        herd__omp_wait_children(omp__saved); /* run them here, inline */
    herd__wait_leave(&c);
    OMP_RESTORE();
}

/* Outside herd every task ran undeferred, or is pooled (a guest's). Out of
 * line: the herd path keeps its small frame. */
static __attribute__((noinline)) void taskwait_outside(void) {
    omp_task *t = herd__omp_cur;
    if (!t)
        return;
    herd__omp_pool_wait_kids(t);
    if (t->deps)
        herd__omp_wait_events(t, 0); /* undeferred detached tasks */
}

OMP_API void GOMP_taskwait(void) {
    herd__hot *h = herd__tls;
    if (!h) {
        taskwait_outside();
        return;
    }
    /* The commonest waits on the finest grain, with no taskgroup and no
     * dependences: a task that never queued a child (Frames), or one whose
     * children are neither queued nor out (herd_wait's own early exit, J0). */
    omp_task *t = herd__omp_cur;
    if (__builtin_expect(t && !t->tg && !t->deps, 1)) {
        if (t->frame_mode == OMP_FRAME_LAZY)
            return;
        herd__frame *f = h->frame;
        if (f && h->q.head <= f->base && !f->nspawned)
            return;
    }
    taskwait_general(__builtin_return_address(0));
}

/* Everything but the common task (GOMP_task's own path): copy functions,
 * dependences, detach, large data, open taskgroups. Out of line, so that the
 * common path keeps a small frame and few saved registers. */
static __attribute__((noinline)) void task_general(void (*fn)(void *), void *data,
                                                   void (*cpyfn)(void *, void *), long arg_size,
                                                   long arg_align, bool if_clause, unsigned flags,
                                                   void **depend, omp_event *ev) {
    OMP_SAVE();
    omp_task *parent = omp__saved;
    /* A task created in a cancelled taskgroup is discarded (cancel.c), but a
     * detached one and one that must run to release its data. */
    if (parent->tg_cur && !ev && !(flags & OMP_TASK_KEEP) &&
        herd__omp_tg_cancelled(parent->tg_cur)) {
        OMP_RESTORE();
        return;
    }
    int final = (flags & OMP_TASK_FINAL) || parent->final;
    if (!herd__omp_red_deferrable(parent))
        if_clause = false; /* reduction.c: run at once, on this thread */
    if ((flags & OMP_TASK_DEPEND) && !parent->final &&
        (herd__self() || herd__omp_mixed(parent->team))) {
        /* The dependence table: on a worker, and on a guest of a team with
         * guests (its tasks are pooled). Elsewhere outside herd, and under a
         * final task, every task runs undeferred, in creation order: the
         * dependences hold without a table. */
        herd__omp_task_depend(parent, fn, data, cpyfn, arg_size, arg_align,
                              (final ? OMP_TASK_FINAL : 0) | (flags & OMP_TASK_KEEP), if_clause,
                              depend, ev);
        OMP_RESTORE();
        return;
    }
    /* A detached task is never throttled: run at once, it would hold its
     * creator until its event, which a later task may be the one to fulfil.
     * Outside herd a task runs at once but a guest's plain one (pooled). */
    if (!if_clause || parent->final ||
        (herd__self() ? !ev && !(flags & OMP_TASK_THROTTLE_ASKED) && throttled(herd__tls, parent)
                      : !pooled_here(parent, flags, ev))) {
        /* Run in creation order (outside herd, or under a final task): its
         * predecessors have run, but detached ones may not be complete. */
        if ((flags & OMP_TASK_DEPEND) && parent->deps)
            herd__omp_wait_events(parent, 1);
        run_now(parent, fn, data, cpyfn, arg_size, arg_align, final);
        /* Its body has run, which is all an undeferred task holds its
         * creator for; it completes with its event, which a later task may
         * be the one to fulfil: its creator waits for it with its tasks. */
        if (ev)
            herd__omp_add_event(parent, ev, (flags & OMP_TASK_DEPEND) != 0);
    } else {
        spawn(parent, fn, data, cpyfn, arg_size, arg_align, hdr_flags(flags, final), ev);
    }
    OMP_RESTORE(); /* work-first spawns suspend the encountering task */
}

OMP_API void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
                       long arg_align, bool if_clause, unsigned flags, void **depend, int priority,
                       void *detach) {
    (void)priority; /* a hint; herd's schedulers have no priorities */
    omp_task *cur = herd__omp_cur;
    /* tg_cur: cancel-var true and a taskgroup, which may discard it */
    if (__builtin_expect(cur && !cur->tg_cur && !(flags & (OMP_TASK_DETACH | OMP_TASK_DEPEND)),
                         1)) {
        int final = (flags & OMP_TASK_FINAL) || cur->final;
        herd__hot *h = herd__tls;
        if (!h || !if_clause || cur->final || throttled(h, cur)) {
            if (__builtin_expect(!h && if_clause && !cur->final && herd__omp_mixed(cur->team), 0))
                goto general; /* a guest of a team with guests: its pool (task_general) */
            if (__builtin_expect(!cpyfn, 1))
                run_here(cur, fn, data, final);
            else if (copied_small_fits(arg_size, arg_align))
                /* GCC's copy function (firstprivate(child) in UTS's loop):
                 * run_now's first case, without its call */
                run_copied_small(cur, fn, data, cpyfn, final);
            else
                run_now(cur, fn, data, cpyfn, arg_size, arg_align, final);
            return;
        }
        if (!cpyfn && spawn_in_slot(cur, fn, data, arg_size, arg_align, final))
            return;
        /* A copy function or large data: queued by task_general, which must
         * not ask the throttle a second time (a thief's request would raise
         * the bound twice, and the quiet count would move by two). */
        flags |= OMP_TASK_THROTTLE_ASKED;
    }
general:;
    omp_event *ev = NULL;
    if (flags & OMP_TASK_DETACH) {
        ev = herd__omp_event_new();
        /* The handle goes to the encountering task's variable and to the
         * first word of the task's data (GCC's layout), before it is copied. */
        *(omp_event **)detach = ev;
        if (data)
            *(omp_event **)data = ev;
    }
    task_general(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, ev);
}

void herd__omp_task_launch(void (*fn)(void *), void *data, long size, long align, bool if_clause,
                           unsigned flags, void **depend, int priority, omp_event *ev) {
    if (!ev)
        GOMP_task(fn, data, NULL, size, align, if_clause, flags & ~OMP_TASK_DETACH, depend,
                  priority, NULL);
    else
        task_general(fn, data, NULL, size, align, if_clause, flags, depend, ev);
}

OMP_API void GOMP_taskwait_depend(void **depend) {
    if (!herd__self()) { /* outside herd every task ran undeferred, or is pooled */
        omp_task *t = herd__omp_task();
        if (herd__omp_mixed(t->team) && !t->final) {
            herd__omp_taskwait_depend(t, depend); /* a guest's table (depend.c) */
            return;
        }
        if (t->deps)
            herd__omp_wait_events(t, 1); /* detached ones with dependences: a superset */
        return;
    }
    OMP_SAVE();
    if (!omp__saved->final)
        herd__omp_taskwait_depend(omp__saved, depend);
    OMP_RESTORE();
}

OMP_API void GOMP_taskyield(void) {
    if (!herd__self())
        return;
    OMP_SAVE();
    herd_yield();
    OMP_RESTORE();
}

OMP_API void GOMP_taskgroup_start(void) {
    omp_task *t = herd__omp_task();
    omp_taskgroup *tg = malloc(sizeof *tg);
    if (!tg)
        herd__omp_fatal("out of memory for a taskgroup");
    herd_group_init(&tg->g);
    tg->prev = t->tg;
    tg->red = NULL;
    tg->on_end = NULL;
    tg->outer = t->tg_cur;
    tg->workshare = 0;
    atomic_init(&tg->cancelled, 0);
    atomic_init(&tg->gkids, 0);
    t->tg = tg;
    if (herd__omp_g.cancellation)
        t->tg_cur = tg;
}

OMP_API void GOMP_taskgroup_end(void) {
    OMP_SAVE();
    omp_task *t = omp__saved;
    omp_taskgroup *tg = t->tg;
    if (herd__self()) {
        herd__wait_ctx c;
        herd__wait_enter(&c, HERD__WAIT_OMP_TASKGROUP, tg, __builtin_return_address(0));
        herd_group_wait(&tg->g);
        /* Dependent tasks are queued in the task's one dependence group,
         * wherever they were created: waiting for all of them is a
         * superset of the taskgroup's (see docs/design/openmp.md). */
        if (t->deps)
            herd_group_wait(herd__omp_deps_group(t->deps));
        herd__wait_leave(&c);
        OMP_RESTORE(); /* the waits may have suspended it (wait_tasks) */
    } else {
        herd__omp_pool_wait_group(t->team, tg); /* a guest's pooled tasks in it */
    }
    if (t->deps)
        herd__omp_wait_events(t, 0); /* undeferred detached tasks (a superset too) */
    if (tg->on_end)
        tg->on_end(tg->on_end_arg); /* its tasks are done */
    t->tg = tg->prev;
    t->tg_cur = tg->outer;
    if (tg->red) { /* its registration ends with it (GCC's code frees the copies) */
        /* ORDER: relaxed; the count only lets herd__omp_red_of skip its walk,
         * and every task that could see this registration has ended. */
        atomic_fetch_sub_explicit(&herd__omp_g.red_live, 1, memory_order_relaxed);
    }
    free(tg);
    OMP_RESTORE();
}

unsigned long herd__omp_taskloop_split(const omp_task *parent, unsigned flags,
                                       unsigned long num_tasks, unsigned long n,
                                       unsigned long *strict) {
    *strict = 0;
    if ((flags & OMP_TASK_GRAINSIZE) && (flags & OMP_TASK_STRICT)) {
        /* grainsize(strict: g): g iterations each, the last task the rest */
        *strict = num_tasks ? num_tasks : 1;
        return n / *strict + (n % *strict != 0);
    }
    if (flags & OMP_TASK_GRAINSIZE) {
        unsigned long g = num_tasks ? num_tasks : 1;
        return n / g ? n / g : 1; /* each task gets >= g and < 2g iterations */
    }
    if (num_tasks)
        return num_tasks < n ? num_tasks : n;
    unsigned long t = parent->team ? (unsigned long)parent->team->nthreads : 1;
    return t < n ? t : n;
}

/* A taskloop of n iterations from start by step. The bounds are 64-bit
 * words in wrapping arithmetic, so the signed and the unsigned long long
 * flavours share it: each task's copy of the data starts with its bounds
 * (GCC's layout), in the loop variable's type. */
static void taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
                     long arg_align, unsigned flags, unsigned long num_tasks, unsigned long n,
                     uint64_t start, uint64_t step) {
    /* reduction: GCC's data starts {bounds, bounds, its reduction arrays} */
    uintptr_t *red = flags & OMP_TASK_REDUCTION ? ((uintptr_t **)data)[2] : NULL;
    if (n == 0) {
        if (red)
            red[2] = 0; /* nothing registered: GCC's code combines nothing */
        return;
    }
    OMP_SAVE();
    omp_task *parent = omp__saved;
    unsigned long strict, ntasks = herd__omp_taskloop_split(parent, flags, num_tasks, n, &strict);
    int final = (flags & OMP_TASK_FINAL) || parent->final;
    int deferred = (flags & OMP_TASK_IF) && !parent->final && herd__self();
    int group = !(flags & OMP_TASK_NOGROUP);
    if (group)
        GOMP_taskgroup_start(); /* the implicit taskgroup */
    if (group && red)
        GOMP_taskgroup_reduction_register(red);
    deferred = deferred && herd__omp_red_deferrable(parent);
    unsigned long q = n / ntasks, r = n % ntasks, lo = 0;
    for (unsigned long k = 0; k < ntasks; k++) {
        if (herd__omp_tg_cancelled(parent->tg_cur))
            break; /* the rest are discarded (cancel.c) */
        unsigned long cnt = strict ? (k + 1 < ntasks ? strict : n - lo) : q + (k < r);
        void *b = herd__omp_task_data(data, cpyfn, arg_size, arg_align);
        ((uint64_t *)b)[0] = start + (uint64_t)lo * step;
        ((uint64_t *)b)[1] = start + (uint64_t)(lo + cnt) * step;
        lo += cnt;
        if (deferred && cpyfn) {
            spawn_heap(parent, fn, b, arg_align, final); /* never moved: the task frees it */
            continue;
        }
        if (deferred)
            spawn(parent, fn, b, NULL, arg_size, arg_align, hdr_flags(0, final), NULL);
        else
            run_now(parent, fn, b, NULL, arg_size, arg_align, final);
        free(b);
        herd__omp_cur = parent;
    }
    if (group)
        GOMP_taskgroup_end();
    OMP_RESTORE();
}

OMP_API void GOMP_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                           long arg_size, long arg_align, unsigned flags, unsigned long num_tasks,
                           int priority, long start, long end, long step) {
    (void)priority;
    unsigned long n;
    if (step > 0)
        n = end > start ? ((unsigned long)end - (unsigned long)start + (unsigned long)step - 1) /
                              (unsigned long)step
                        : 0;
    else
        n = start > end ? ((unsigned long)start - (unsigned long)end - (unsigned long)step - 1) /
                              (unsigned long)-step
                        : 0;
    taskloop(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, n, (uint64_t)start,
             (uint64_t)step);
}

/* The unsigned long long flavour: OMP_TASK_UP tells the direction (a
 * downward step comes negated, as an unsigned value). */
OMP_API void GOMP_taskloop_ull(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                               long arg_size, long arg_align, unsigned flags,
                               unsigned long num_tasks, int priority, unsigned long long start,
                               unsigned long long end, unsigned long long step) {
    (void)priority;
    unsigned long long n;
    if (flags & OMP_TASK_UP)
        n = end > start ? (end - start + step - 1) / step : 0;
    else
        n = start > end ? (start - end - step - 1) / -step : 0;
    taskloop(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, (unsigned long)n, start, step);
}
