/* Suspending and resuming tasks: context switches between ULTs, the
 * post-switch action, ready queues and the per-worker stack cache.
 *
 * Every ULT runs the scheduler loop at the bottom of its stack; a task runs
 * above it. To suspend, a task switches to a fresh ULT of the same worker;
 * the fresh ULT first runs the `post` action its predecessor left (typically:
 * put the suspended ULT on a wait list and release that list's lock), then
 * its own scheduler loop. Because `post` runs only after the old context is
 * completely saved, a waker that finds the ULT on a wait list may resume it
 * at once on any worker. */
#include "core/runtime.h"

#include "arch/context.h"
#include "core/trace.h"
#include "core/watchdog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(HERD_TSAN)
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
#endif
#if defined(HERD_ASAN)
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#endif

/* Free stacks: each worker keeps up to STACK_CACHE_MAX for itself (no
 * lock), and overflows into one shared pool of up to STACK_POOL_MAX, which
 * every worker draws on before it maps a new stack. The pool matters when
 * stacks flow one way -- suspended on one worker, finished on another, as
 * parents whose children were shared do under the shared-queue schedulers -- where per-worker
 * caches alone would map on one side and unmap on the other, and each map or unmap takes the
 * process's mmap lock and shoots down TLBs. Cached stacks keep the pages their tasks touched: the
 * pool bounds that memory. */
#define STACK_CACHE_MAX 16
#define STACK_POOL_MAX 1024

/* The ready queue's links (runtime.h): head is the front, tail the back;
 * all under rq->lock. */
static void rq_link_back(herd__readyq *rq, herd__ult *u) {
    u->next = NULL;
    u->prev = rq->tail;
    if (rq->tail)
        rq->tail->next = u;
    else
        rq->head = u;
    rq->tail = u;
}

static void rq_link_front(herd__readyq *rq, herd__ult *u) {
    u->prev = NULL;
    u->next = rq->head;
    if (rq->head)
        rq->head->prev = u;
    else
        rq->tail = u;
    rq->head = u;
}

static void rq_unlink(herd__readyq *rq, herd__ult *u) {
    if (u->prev)
        u->prev->next = u->next;
    else
        rq->head = u->next;
    if (u->next)
        u->next->prev = u->prev;
    else
        rq->tail = u->prev;
    u->next = u->prev = NULL;
}

static void rq_push(herd__readyq *rq, herd__ult *u, int front) {
    herd__spin_lock(&rq->lock);
    if (front)
        rq_link_front(rq, u);
    else
        rq_link_back(rq, u);
    atomic_fetch_add_explicit(&rq->size, 1, memory_order_relaxed);
    herd__spin_unlock(&rq->lock);
}

static herd__ult *rq_pop(herd__readyq *rq, int back) {
    /* ORDER: relaxed; a hint. A push that we miss is seen by the sleep
     * protocol's recheck (W2) or by the pusher's wake-up (W3). */
    if (atomic_load_explicit(&rq->size, memory_order_relaxed) == 0)
        return NULL;
    herd__spin_lock(&rq->lock);
    herd__ult *u = back ? rq->tail : rq->head;
    if (u) {
        rq_unlink(rq, u);
        atomic_fetch_sub_explicit(&rq->size, 1, memory_order_relaxed);
    }
    herd__spin_unlock(&rq->lock);
    return u;
}

void herd__readyq_push(herd__readyq *rq, herd__ult *u) {
    rq_push(rq, u, 0);
}
void herd__readyq_push_front(herd__readyq *rq, herd__ult *u) {
    rq_push(rq, u, 1);
}
herd__ult *herd__readyq_pop(herd__readyq *rq) {
    return rq_pop(rq, 0);
}
herd__ult *herd__readyq_pop_back(herd__readyq *rq) {
    return rq_pop(rq, 1);
}

static void fatal_no_stack(herd__worker *w) {
    const herd__stack_conf *c = &w->rt->stacks;
    fprintf(stderr,
            "herd: cannot map a task stack (%zu bytes, %s, and a guard region of %zu bytes, "
            "address space only): %s. Too many suspended tasks for the memory, the address "
            "space (ulimit -v) or vm.max_map_count; lower %s or HERD_STACK_GUARD, or suspend "
            "fewer tasks at once.\n",
            c->size, c->setting, c->guard_size, strerror(errno), c->setting);
    abort();
}

static herd__ult *pool_get(herd__rt *rt) {
    /* ORDER: relaxed; a hint, a miss only maps a new stack. */
    if (atomic_load_explicit(&rt->npool, memory_order_relaxed) == 0)
        return NULL;
    herd__spin_lock(&rt->pool_lock);
    herd__ult *u = rt->pool;
    if (u) {
        rt->pool = u->next;
        /* ORDER: relaxed; npool changes only under pool_lock, whose
         * acquire/release order the list itself; lock-free reads are hints. */
        atomic_store_explicit(&rt->npool,
                              atomic_load_explicit(&rt->npool, memory_order_relaxed) - 1,
                              memory_order_relaxed);
    }
    herd__spin_unlock(&rt->pool_lock);
    return u;
}

static int pool_put(herd__rt *rt, herd__ult *u) {
    /* ORDER: relaxed throughout, as in pool_get(). */
    if (atomic_load_explicit(&rt->npool, memory_order_relaxed) >= STACK_POOL_MAX)
        return 0;
    /* It leaves its worker with nothing deep kept (the probe of
     * herd__ult_put may miss a frame that spanned it: ult/stack.h);
     * outside the lock, and not for a stack about to be unmapped. */
    herd__stack_trim(&rt->stacks, u->stack, 1);
    herd__spin_lock(&rt->pool_lock);
    int n = atomic_load_explicit(&rt->npool, memory_order_relaxed);
    if (n < STACK_POOL_MAX) {
        u->next = rt->pool;
        rt->pool = u;
        atomic_store_explicit(&rt->npool, n + 1, memory_order_relaxed);
    }
    herd__spin_unlock(&rt->pool_lock);
    return n < STACK_POOL_MAX;
}

void herd__ult_pool_free(herd__rt *rt) {
    while (rt->pool) {
        herd__ult *u = rt->pool;
        rt->pool = u->next;
        herd__ult_untrack(rt, u);
        herd__stack_delete(&rt->stacks, u->stack);
        free(u);
    }
    atomic_store_explicit(&rt->npool, 0, memory_order_relaxed);
}

/* A ULT from w's own cache, or NULL. */
static inline herd__ult *cache_take(herd__worker *w) {
    HERD_ASSERT_OWNER(w);
    herd__ult *u = w->cache;
    if (u) {
        w->cache = u->next;
        w->ncache--;
    }
    return u;
}

herd__ult *herd__ult_get(herd__worker *w) {
    herd__ult *u = cache_take(w);
    if (u)
        return u;
    u = pool_get(w->rt);
    if (u)
        return u;
    u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    u->stack = herd__stack_new(&w->rt->stacks);
    if (!u->stack) {
        free(u);
        return NULL;
    }
    HERD__COUNT(w, stacks_allocated);
    herd__ult_track(w->rt, u);
    return u;
}

void herd__ult_put(herd__worker *w, herd__ult *u) {
    HERD_ASSERT_OWNER(w); /* the cache */
    if (u->ran_task)
        herd__stack_trim(&w->rt->stacks, u->stack, 0);
    u->ran_task = 0;
    u->frame = NULL;
    u->first_level = NULL;
    u->home = NULL;
    u->ctx = NULL;
    if (w->ncache >= STACK_CACHE_MAX) {
        if (pool_put(w->rt, u))
            return;
        herd__ult_untrack(w->rt, u);
        herd__stack_delete(&w->rt->stacks, u->stack);
        free(u);
        return;
    }
    u->next = w->cache;
    w->cache = u;
    w->ncache++;
}

/* Runs on the landing side of every switch: the action left by the ULT that
 * switched here (see the file comment). */
static void run_post(herd__worker *w) {
    void (*post)(herd__worker *, herd__ult *, void *) = w->post;
    if (post) {
        w->post = NULL;
        post(w, w->post_ult, w->post_arg);
    }
}

static void swap(herd__worker *w, void **save, herd__ult *to, int from_dies) {
#if defined(HERD_TSAN)
    __tsan_switch_to_fiber(to->stack->tsan_fiber, 0);
#endif
#if defined(HERD_ASAN)
    void *fake = NULL;
    __sanitizer_start_switch_fiber(from_dies ? NULL : &fake, to->stack->low,
                                   to->stack->native
                                       ? to->stack->native_size
                                       : (size_t)((unsigned char *)to->stack - to->stack->low));
#endif
    herd__ctx_swap(save, to->stack->sp, NULL);
#if defined(HERD_ASAN)
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
    (void)w;
    (void)from_dies;
}

/* Waits run children inline only while this much stack is left (tasks.md):
 * deeper children run on fresh stacks, so task depth is bounded by memory,
 * not by one stack. */
#define SPILL_BYTES (16 * 1024)

void herd__ult_set_cur(herd__worker *w, herd__ult *u) {
    w->cur = u;
    w->hot.stack_limit = (char *)u->stack->low + SPILL_BYTES;
    w->hot.inline_floor =
        w->rt->sched->flags & HERD__SCHED_OLDEST_FIRST ? (char *)UINTPTR_MAX : w->hot.stack_limit;
}

static void ult_entry(void *transfer) {
    (void)transfer;
    herd__worker *w = herd__self();
#if defined(HERD_ASAN)
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
    run_post(w);
    herd__sched_loop(herd__self());
}

#if defined(HERD_TSAN)
#define TSAN_FIBER_CONTEXTS 16
#endif

/* Make u's stack ready to run a new context (sanitizers' state), and its
 * record that of a ULT that has not run. */
static void ult_reset(herd__ult *u) {
#if defined(HERD_TSAN)
    /* A recycled stack's fiber still has the abandoned context's frames on
     * TSan's shadow call stack (3 or 4 entries: the trampoline's, ult_entry's
     * and the loop's or the work-first child's call sites), which nothing
     * ever pops; a context started over on it pushes on top, and unbounded
     * that would overflow the shadow stack (a release TSan does not check).
     * A new fiber for every context cost a fiber's mapping and its page
     * faults at every start, about 0.6 ms (cpp_sync: 5.6 s; 0.72 s with the
     * bound). So a fiber hosts up to TSAN_FIBER_CONTEXTS contexts, and a race
     * report from a task may end with up to 4 * (TSAN_FIBER_CONTEXTS - 1)
     * stale entries below the task's own frames (ult_entry and
     * herd__sched_loop, repeated). */
    if (++u->stack->tsan_contexts > TSAN_FIBER_CONTEXTS) {
        __tsan_destroy_fiber(u->stack->tsan_fiber);
        u->stack->tsan_fiber = __tsan_create_fiber(0);
        u->stack->tsan_contexts = 1;
    }
#endif
#if defined(HERD_ASAN)
    /* The same for ASan: the abandoned context's frames (a ULT ends by
     * switching away, so its frames never return) left their redzones
     * poisoned in the shadow; new frames at those addresses would read as
     * overflows. */
    __asan_unpoison_memory_region(u->stack->low,
                                  (size_t)((unsigned char *)u->stack - u->stack->low));
#endif
    u->frame = NULL;
    u->first_level = NULL;
    u->home = NULL;
    u->ctx = NULL;
}

/* Prepare u to start in the scheduler loop when next switched to. */
static void ult_fresh(herd__ult *u) {
    ult_reset(u);
    u->stack->sp = herd__ctx_make(herd__stack_top(u->stack), ult_entry);
}

void herd__switch(herd__worker *w, herd__ult *from, herd__ult *to) {
    if (from && !herd__stack_canary_ok(from->stack))
        herd__overflow_report_canary(w, from);
    if (herd__stack_arm(&w->rt->stacks, to->stack) != 0)
        fatal_no_stack(w);
    herd__ult_set_cur(w, to);
    swap(w, from ? &from->stack->sp : &w->native_sp, to, 0);
    /* Landed back in `from`, possibly on another worker. */
    run_post(herd__self());
}

static void post_free(herd__worker *w, herd__ult *u, void *arg) {
    (void)arg;
    herd__ult_put(w, u);
}

/* u runs next on w in place of the current ULT, whose stack goes back to
 * the cache once u runs (post_free: it holds nothing u needs). */
static void hand_over(herd__worker *w, herd__ult *u) {
    herd__ult *me = w->cur;
    herd__trace_resume(w, u);
    if (!herd__stack_canary_ok(me->stack))
        herd__overflow_report_canary(w, me);
    if (herd__stack_arm(&w->rt->stacks, u->stack) != 0)
        fatal_no_stack(w);
    w->post = post_free;
    w->post_ult = me;
    w->post_arg = NULL;
    herd__ult_set_cur(w, u);
}

/* From the scheduler loop: resume u; the current ULT goes back to the cache
 * (its stack holds nothing but an idle scheduler loop). Never returns. */
void herd__resume_from_loop(herd__worker *w, herd__ult *u) {
    hand_over(w, u);
    void *dead;
    swap(w, &dead, u, 1);
    __builtin_unreachable();
}

/* me, w's current ULT, is about to leave w; `arm`, when given, runs on the
 * other side of the switch (run_post). */
static void leave(herd__worker *w, herd__ult *me,
                  void (*arm)(herd__worker *w, herd__ult *u, void *arg), void *arg) {
    me->frame = w->hot.frame;
    /* Tied mode, or a thread's own stack (adopt mode, which can run on no
     * other thread): resume here only (herd__ult_ready). Written before the
     * switch, so before `arm` publishes me to any waker. */
    me->home = (w->rt->tied || me->stack->native) ? w : NULL;
    w->hot.frame = NULL;
    me->first_level = w->first_level;
    if (me->first_level)
        herd__set_first_level(w, NULL);
    w->post = arm;
    w->post_ult = me;
    w->post_arg = arg;
    HERD__COUNT(w, blocks);
    herd__stack_park(&w->rt->stacks, me->stack);
    herd__trace_task_end(w, HERD__TRACE_SUSPENDED);
}

/* me is back, maybe on another worker, its arrival's post action done. */
static void landed(herd__ult *me) {
    /* J5: our frames' children were all counted in their nspawned before
     * we suspended, and any still queued run as roots; from now on our
     * frames spawn at this worker's head. */
    herd__worker *w = herd__self();
    for (herd__frame *f = me->frame; f; f = f->up)
        f->base = w->hot.q.head;
    w->hot.frame = me->frame;
    if (me->first_level)
        herd__set_first_level(w, me->first_level);
}

void herd__block(void (*arm)(herd__worker *w, herd__ult *u, void *arg), void *arg) {
    herd__block_on(HERD__WAIT_NONE, NULL, NULL, arm, arg);
}

void herd__block_on(int kind, const void *obj, void *ra,
                    void (*arm)(herd__worker *w, herd__ult *u, void *arg), void *arg) {
    herd__worker *w = herd__self();
    herd__ult *me = w->cur;
    if (kind != HERD__WAIT_NONE) /* the watchdog's record (watchdog.h), before arm publishes me */
        herd__wait_record(w, me, kind, obj, ra);
    me->nsuspend++;
    herd__ult *next = herd__ult_get(w);
    if (!next)
        fatal_no_stack(w);
    ult_fresh(next);
    leave(w, me, arm, arg);
    herd__switch(w, me, next);
    landed(me);
    herd__wait_clear(me);
}

/* A work-first child returns straight into its parent's spawn
 * (herd__ctx_call), except where a sanitizer follows the stacks: TSan's
 * fiber switch must come after the child's frames have returned (their
 * exits pop the fiber's shadow call stack), so there the child switches
 * back as any ULT would, and ASan's builds do the same. */
#if !defined(HERD_TSAN) && !defined(HERD_ASAN)
#define SPAWN_CALLS 1
#else
#define SPAWN_CALLS 0
#endif

herd__ult *herd__ult_start(herd__worker *w, size_t reserve, void **area) {
    herd__ult *u = cache_take(w); /* herd__ult_get's first step, without its call */
    if (!u && !(u = herd__ult_get(w)))
        fatal_no_stack(w);
    ult_reset(u); /* before the caller writes the area (ASan's unpoison) */
    *area = (void *)(((uintptr_t)herd__stack_top(u->stack) - reserve) & ~(uintptr_t)63);
    return u;
}

void herd__ult_entered(void) {
#if defined(HERD_ASAN)
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
}

void herd__spawn_switch(herd__ult *next, void *area, void (*body)(void *)) {
    herd__worker *w = herd__self();
    herd__ult *me = w->cur; /* nsuspend stays (K3) */
    leave(w, me, NULL, NULL);
    if (!herd__stack_canary_ok(me->stack))
        herd__overflow_report_canary(w, me);
    if (herd__stack_arm(&w->rt->stacks, next->stack) != 0)
        fatal_no_stack(w);
    herd__ult_set_cur(w, next);
#if SPAWN_CALLS
    herd__ctx_call(&me->stack->sp, area, body, NULL);
#else
    next->stack->sp = herd__ctx_make(area, body);
    swap(w, &me->stack->sp, next, 0);
#endif
    /* Back: body returned (K3), or a worker resumed the continuation. */
    run_post(herd__self());
    landed(me);
}

void herd__spawn_return(herd__worker *w, herd__ult *parent) {
#if SPAWN_CALLS
    hand_over(w, parent); /* its post_free runs in the parent, off this stack */
#else
    herd__resume_from_loop(w, parent);
#endif
}

void herd__ult_ready(herd__ult *u) {
    herd__worker *w = herd__self();
    herd__worker *home = u->home;
    if (home) { /* any thread may ready a homed ULT, even one with no worker */
        herd__readyq_push(&home->home, u);
        if (home != w)
            herd__wake_worker(home); /* W3, for the one worker that may take it */
        return;
    }
    HERD_ASSERT(w != NULL);
    herd__readyq_push(&w->ready, u);
    herd__wake_for_ready(w); /* W3 */
}

void herd__worker_enter(herd__worker *w) {
    herd__tls = &w->hot;
#if defined(HERD_TSAN)
    w->tsan_native = __tsan_get_current_fiber();
#endif
    herd__ult *u = herd__ult_get(w);
    if (!u)
        fatal_no_stack(w);
    ult_fresh(u);
    w->post = NULL;
    herd__switch(w, NULL, u);
    /* Back on the pthread's own stack: the scheduler loop has exited. */
}

/* From the scheduler loop at shutdown: back to the pthread's own context. */
void herd__worker_exit(herd__worker *w) {
    herd__ult *me = w->cur;
    w->post = post_free;
    w->post_ult = me;
    w->cur = NULL;
#if defined(HERD_TSAN)
    __tsan_switch_to_fiber(w->tsan_native, 0);
#endif
#if defined(HERD_ASAN)
    __sanitizer_start_switch_fiber(NULL, w->native_low, w->native_size);
#endif
    void *dead;
    herd__ctx_swap(&dead, w->native_sp, NULL);
    __builtin_unreachable();
}

/* Not HERD_ASSERT_OWNER: in adopt mode herd_stop frees worker 0's cache
 * from its own thread, once no thread holds worker 0 (runtime.c). */
void herd__worker_free_cache(herd__worker *w) {
    while (w->cache) {
        herd__ult *u = w->cache;
        w->cache = u->next;
        herd__ult_untrack(w->rt, u);
        herd__stack_delete(&w->rt->stacks, u->stack);
        free(u);
    }
    w->ncache = 0;
}
