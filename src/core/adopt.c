/* Adopt mode: a thread of the application lends itself to the runtime as
 * worker 0 (docs/design/openmp.md, "Core mechanisms").
 *
 * The runtime started with HERD__START_ADOPT creates no pthread for worker
 * 0. herd__adopt_enter() makes the calling thread worker 0: herd__tls points
 * at worker 0, and the caller's own stack becomes worker 0's running ULT
 * (native_ult, whose stack record is flagged `native`: no guard page of
 * ours, no canary, never cached or freed). The caller goes on as a task in
 * the frame it passed: it may spawn, wait, block. When it blocks, herd__block
 * switches worker 0 to a pooled stack running the scheduler loop, exactly as
 * for any task; in tied mode the caller is homed on worker 0, so it resumes
 * on its own thread. herd__adopt_leave() waits for the frame's children (and,
 * when worker 0 is the only worker, runs what the injector holds) and
 * clears herd__tls: worker 0 has no thread until the next enter.
 *
 * Why not a pthread for worker 0 that the caller waits for: then the caller
 * sleeps in the kernel while its region runs, and a 2-core machine runs the
 * region on one worker plus a sleeping thread.
 *
 * One holder at a time: `adopted` is taken by CAS. Contract of leave:
 * nothing that started on worker 0 during the adoption is still alive (in
 * tied mode such a task would be homed on a worker with no thread). The
 * OpenMP layer meets it: every task of a region descends from the region's
 * frame, whose children leave waits for. */
#include "core/rescue.h"
#include "core/runtime.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(HERD_TSAN)
void *__tsan_get_current_fiber(void);
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
#endif

/* The calling thread's stack bounds, looked up once per thread
 * (pthread_getattr_np reads /proc/self/maps for the main thread). */
static __thread void *native_low;
static __thread size_t native_size;

static void native_bounds(void **low, size_t *size) {
    if (!native_low) {
        pthread_attr_t attr;
        void *l = NULL;
        size_t n = 0;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            pthread_attr_getstack(&attr, &l, &n);
            pthread_attr_destroy(&attr);
        }
        native_low = l;
        native_size = n;
    }
    *low = native_low;
    *size = native_size;
}

/* ThreadSanitizer models each task stack as a thread of its own, and
 * reports a store to herd__tls against an earlier read by a task stack that
 * ran on this very OS thread (the false positive worker_main() avoids by
 * never clearing it; an adopting thread must set and clear it). */
static void set_tls(herd__hot *h) {
#if defined(HERD_TSAN)
    __tsan_ignore_thread_begin();
    herd__tls = h;
    __tsan_ignore_thread_end();
#else
    herd__tls = h;
#endif
}

/* The adopter is worker 0 and is pinned like one: to worker 0's PU, under
 * every policy but `none` (and never on a synthetic topology). Left
 * floating next to pinned workers, it can share a PU with a searching
 * worker while another PU idles, which halves the region's speed (measured:
 * health on 2 cores ran at one core's speed in about one run out of three).
 * The pin is set once per adopting thread and kept across regions (the
 * thread runs worker 0's share of each); the thread's own mask comes back
 * when another thread adopts or at herd_stop. */
static __thread pid_t my_tid;
static __thread const herd__rt *pinned_by;  /* this thread is (or was) rt's pinned adopter */
static __thread const herd__rt *failed_for; /* pinning this thread for rt failed: said once */

static void restore_mask(herd__rt *rt) {
    /* The previous adopter may have exited (ESRCH): nothing to restore. */
    if (rt->adopt_pinned_tid)
        (void)sched_setaffinity(rt->adopt_pinned_tid, sizeof rt->adopt_saved_mask,
                                &rt->adopt_saved_mask);
    rt->adopt_pinned_tid = 0;
}

static void pin_adopter(herd__rt *rt) {
    if (!my_tid)
        my_tid = gettid();
    if ((pinned_by == rt && rt->adopt_pinned_tid == my_tid) || failed_for == rt)
        return; /* the common case: the same thread, region after region */
    if (rt->set.bind == HERD__BIND_NONE || rt->topo.synthetic)
        return;
    restore_mask(rt);
    cpu_set_t mine;
    char err[256];
    int rc = sched_getaffinity(0, sizeof mine, &mine) == 0
                 ? herd__topo_bind_self(&rt->topo, rt->pu_of_worker[0], err, sizeof err)
                 : (snprintf(err, sizeof err, "cannot read its CPU mask: %s", strerror(errno)),
                    HERD_ESYS);
    if (rc) {
        /* Not fatal: the region is correct on any PU. Said once per thread. */
        fprintf(stderr, "herd: worker 0 (the thread running the region) stays unpinned: %s\n", err);
        failed_for = rt;
        return;
    }
    rt->adopt_saved_mask = mine;
    rt->adopt_pinned_tid = my_tid;
    pinned_by = rt;
}

void herd__adopt_unpin(herd__rt *rt) {
    restore_mask(rt);
}

int herd__adopt_enter(herd__frame *fr) {
    if (herd__self())
        return HERD_ETASK;
    /* ORDER: acquire; pairs with the release stores in herd_start/herd_stop. */
    herd__rt *rt = __atomic_load_n(&herd__rt_global, __ATOMIC_ACQUIRE);
    if (!rt || !rt->adopt || atomic_load_explicit(&rt->closing, memory_order_relaxed))
        return HERD_ESTATE;
    int expect = 0;
    /* ORDER: acquire; pairs with the release store in herd__adopt_leave():
     * the previous holder's writes to worker 0 (caches, counters, trace) are
     * visible to us. */
    if (!atomic_compare_exchange_strong_explicit(&rt->adopted, &expect, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return HERD_EBUSY;
    pin_adopter(rt);
    herd__overflow_adopter_init();
    herd__worker *w = &rt->workers[0];
    herd__stack *s = &w->native_stack;
    void *low;
    size_t size;
    native_bounds(&low, &size);
    s->native = 1;
    s->guarded = 1; /* herd__stack_arm: nothing to map */
    s->low = low;
    s->map = low; /* herd__stack_in_guard: an empty range */
    s->native_size = size;
#if defined(HERD_TSAN)
    s->tsan_fiber = __tsan_get_current_fiber();
#endif
    w->native_ult.stack = s;
    w->native_ult.home = NULL;
    w->native_ult.frame = NULL;
    set_tls(&w->hot);
    herd__rescue_thread_enter(w, 0); /* R1 */
    herd__ult_set_cur(w, &w->native_ult);
    herd__frame_open(fr, &w->hot, NULL, NULL);
    w->hot.frame = fr;
    return 0;
}

void herd__adopt_leave(herd__frame *fr) {
    herd__frame_wait(fr);
    herd__worker *w = herd__self();
    /* With no other worker, what the injector holds would wait for the next
     * adoption, and herd_stop for it (herd__inject_group's tasks): run it. */
    if (w->rt->nworkers == 1)
        herd__run_injected(w);
    /* Tied or not, the caller is back on its own thread: herd__block homes
     * a native stack's ULT on the worker it blocked on, always. */
    HERD_ASSERT(w && w->id == 0 && w->cur == &w->native_ult);
    HERD_ASSERT(atomic_load_explicit(&w->home.size, memory_order_relaxed) == 0);
    w->hot.frame = NULL;
    w->cur = NULL;
    herd__rescue_thread_leave(w);
    set_tls(NULL);
    /* ORDER: release; pairs with the acquire CAS in herd__adopt_enter() and
     * the acquire load in herd_stop(). */
    atomic_store_explicit(&w->rt->adopted, 0, memory_order_release);
}
