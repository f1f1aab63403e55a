/* The worker loop: find work, run it, and sleep when there is none.
 *
 * Where a worker looks, in order: its ready queue (resumed tasks, oldest
 * first: each holds a stack, so they go before new work), its own deque
 * (newest first), the injector (roots from herd_run), then the scheduler's
 * steal policy. After a yield, the deque and the injector go first, so a
 * task that yields in a loop lets the others run. Every 61st decision looks
 * at the injector first, so new roots start even on a busy worker.
 *
 * Sleep/wake protocol (docs/design/tasks.md, W1..W4):
 *  W1 a worker that found nothing for a while reads wake_seq, then announces
 *     itself in `sleepers` (seq_cst RMW, then a seq_cst fence);
 *  W2 it looks for work once more, asking every worker to publish private
 *     work (split requests), and sleeps on wake_seq only if it still finds
 *     none and wake_seq is unchanged;
 *  W3 whoever makes work visible (publish, ready push, injection) issues a
 *     seq_cst fence, then reads `sleepers`, and if non-zero bumps wake_seq
 *     and wakes one sleeper;
 *  W4 a woken worker that succeeds in stealing wakes the next sleeper if
 *     work remains visible (a chain, so one publish can wake many).
 * W1/W3 are the store-buffering pattern with seq_cst fences on both sides: a
 * waker that misses the announcement made its work visible before the
 * sleeper's recheck, which then sees it.
 *
 * Serving workers (herd__serve_hold, G1..G4): shared work (other workers'
 * deques, the scheduler's shared queues, the shepherds' placement queues)
 * is taken only by workers whose id is below rt->serving.
 *  G1 a worker stores searching = 1, then reads `serving`, looks at shared
 *     work only if its id is below, and stores searching = 0 (release) when
 *     the attempt is over;
 *  G2 lowering the limit to n (serve_lower) stores serving = n, then waits
 *     until it reads searching == 0 of every worker n..;
 *  G1/G2 are the store-buffering pattern: a full fence between each side's
 *     store and load makes it impossible that both miss the other's store,
 *     so either a worker's read of `serving` sees n (it takes nothing) or
 *     the closer sees its announcement and waits for the attempt to end;
 *     its next attempt comes after the closer's read and sees n. The
 *     worker's fence is the hot one (every steal attempt: 2.4% of fib(30)
 *     on 2 threads), so it is asymmetric where Linux allows: the closer's
 *     membarrier(PRIVATE_EXPEDITED) runs a full barrier on every running
 *     thread of the process, and the worker needs only a compiler barrier
 *     (rt->serve_asym; else seq_cst fences on both sides);
 *  G3 a worker at or above the limit parks on serve_seq (read before it
 *     rechecks the limit and its own resumed tasks, a seq_cst fence
 *     between); raising the limit (serve_raise) and herd__wake_worker bump
 *     serve_seq and wake the parked ones;
 *  G4 the limit outlives the holder's region: herd__serve_release only
 *     marks it unheld, the next hold changes it only to a different size,
 *     and work from outside a team (herd__inject) raises it to every worker
 *     while no team holds it (herd__serve_unheld). serve_lock orders every
 *     change but the one at stop (herd__serve_all, when no team runs) and
 *     serve_held. A program of regions smaller than the workers pays no
 *     membarrier or futex wake per region.
 * A worker's own deque, its resumed tasks, the tasks placed on it alone and
 * the injector (roots from herd_run) are its own to take at any time. */
#include "core/rescue.h"
#include "core/runtime.h"
#include "core/trace.h"

#include <errno.h>
#include <limits.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FAIRNESS_PERIOD 61
#define SPIN_ROUNDS 64

/* W3's "fence, then read sleepers". ThreadSanitizer does not model fences,
 * so its builds read with a seq_cst read-modify-write instead (the same
 * guarantee: an RMW reads the latest value in the total order). */
static int sleepers_after_fence(herd__rt *rt) {
#if defined(HERD_TSAN)
    /* ORDER: seq_cst RMW; pairs with the seq_cst increment in idle_sleep(). */
    return atomic_fetch_add_explicit(&rt->sleepers, 0, memory_order_seq_cst);
#else
    /* ORDER: seq_cst fence; pairs with the fence after the sleepers
     * increment in idle_sleep(): the work we just made visible is seen by
     * that sleeper's recheck, or its announcement is seen here. */
    atomic_thread_fence(memory_order_seq_cst);
    return atomic_load_explicit(&rt->sleepers, memory_order_relaxed);
#endif
}

void herd__wake_one(herd__rt *rt) {
    /* W3 */
    if (sleepers_after_fence(rt) == 0)
        return;
    /* ORDER: release; pairs with the acquire load of wake_seq in idle_sleep(). */
    atomic_fetch_add_explicit(&rt->wake_seq, 1, memory_order_release);
    herd__futex_wake(&rt->wake_seq, 1);
}

/* G3: wake every parked worker. */
static void wake_parked(herd__rt *rt) {
    /* ORDER: release; pairs with the acquire load of serve_seq in park(). */
    atomic_fetch_add_explicit(&rt->serve_seq, 1, memory_order_release);
    herd__futex_wake(&rt->serve_seq, INT_MAX);
}

/* Bump wake_seq and wake every sleeper; the caller has done W3's fence. */
static void wake_every(herd__rt *rt) {
    /* ORDER: release; pairs with the acquire load of wake_seq in idle_sleep(). */
    atomic_fetch_add_explicit(&rt->wake_seq, 1, memory_order_release);
    herd__futex_wake(&rt->wake_seq, INT_MAX);
}

void herd__wake_all(herd__rt *rt) {
    (void)sleepers_after_fence(rt); /* as in herd__wake_one() */
    wake_every(rt);
}

/* Sleepers share one futex word, and a futex wake picks its sleepers
 * arbitrarily, so work that only w may take (its home queue, its own placed
 * tasks) wakes every sleeper: w is among them if it sleeps, and the others
 * find nothing and sleep again. Free while nobody sleeps. */
void herd__wake_workers(herd__rt *rt, int max_id) {
    if (sleepers_after_fence(rt) != 0) /* W3 */
        wake_every(rt);
    /* G3: one may be parked (its resumed and placed tasks are its own to
     * run). ORDER: seq_cst; after the fence above, as park()'s recheck is. */
    if (max_id >= atomic_load_explicit(&rt->serving, memory_order_seq_cst))
        wake_parked(rt);
}

void herd__wake_worker(herd__worker *w) {
    herd__wake_workers(w->rt, w->id);
}

void herd__wake_for_ready(herd__worker *w) {
    /* One sleeper will do when any worker may take the ULT; under mts only
     * the shepherd's may, and one woken elsewhere found nothing and slept
     * again while the ULT waited behind a task that spun for it
     * (cpp.tasks@mts@2x2x2, 8 workers on 2 CPUs: a hang in about one run
     * of 15). */
    if (w->rt->sched->flags & HERD__SCHED_SHEPHERD_READY)
        herd__wake_for_shepherd(w->rt, w->shepherd);
    else
        herd__wake_one(w->rt);
}

void herd__wake_for_shepherd(herd__rt *rt, int shepherd) {
    (void)shepherd;                    /* see sched/sched.h: every sleeper */
    if (sleepers_after_fence(rt) != 0) /* W3 */
        wake_every(rt);
}

/* The scheduler seam's services (sched/sched.h). */

int herd__steal_ready(herd__sched_worker *w, int v, herd__work *out) {
    herd__worker *victim = &w->core->rt->workers[v];
    /* The back of a ready queue: the oldest work-first continuation, or the
     * most recently resumed task. */
    herd__ult *u = herd__readyq_pop_back(&victim->ready);
    out->victim = v;
    out->victim_shepherd = victim->shepherd;
    out->ntasks = 1;
    out->ult = u;
    return u != NULL;
}

int herd__sched_own_work(const herd__sched_worker *w) {
    return herd__own_work_arrived(w->core);
}

static int take_injected(herd__rt *rt, herd__work *out) {
    /* ORDER: relaxed; a hint, see herd__readyq_pop(). */
    if (atomic_load_explicit(&rt->inject_size, memory_order_relaxed) == 0)
        return 0;
    herd__spin_lock(&rt->inject_lock);
    herd__inject_node *n = rt->inject_head;
    if (n) {
        rt->inject_head = n->next;
        if (!rt->inject_head)
            rt->inject_tail = NULL;
        atomic_fetch_sub_explicit(&rt->inject_size, 1, memory_order_relaxed);
    }
    herd__spin_unlock(&rt->inject_lock);
    if (!n)
        return 0;
    out->ult = NULL;
    out->task = n->task;
    free(n);
    return 1;
}

void herd__run_injected(herd__worker *w) {
    herd__work work;
    while (take_injected(w->rt, &work)) {
        herd__run_root(w, &work.task);
        w = herd__self(); /* the root may have suspended */
    }
}

static int take_ready(herd__worker *w, herd__work *out) {
    herd__ult *u = herd__readyq_pop(&w->ready);
    if (!u)
        return 0;
    out->ult = u;
    return 1;
}

static int take_own(herd__worker *w, herd__work *out) {
    herd__pop_result r = herd__sdq_pop(&w->hot.q, 0, &out->task);
    if (r == HERD__POP_OK) {
        out->ult = herd__cont_ult(&out->task); /* K2: a continuation resumes */
        return 1;
    }
    if (r == HERD__POP_STOLEN)
        herd__sdq_reset(&w->hot.q, 0);
    herd__note_clear(w); /* R4 */
    return 0;
}

/* Resumed ULTs homed on this worker (tied mode): nobody else may take them. */
static int take_home(herd__worker *w, herd__work *out) {
    herd__ult *u = herd__readyq_pop(&w->home);
    if (!u)
        return 0;
    out->ult = u;
    return 1;
}

/* Tasks placed on this worker alone (herd__group_place_worker): its box,
 * then its queue. */
static int take_mine(herd__worker *w, herd__work *out) {
    return herd__take_placed_mine(w, out);
}

/* The scheduler's own queue for this worker (mts, central, lifo, fifo: its
 * shepherd's; hier: its first-level tasks; none under the others); a task
 * another worker shared there counts as a steal from it. */
static int take_queued(herd__worker *w, herd__work *out) {
    if (!w->rt->sched->take || !w->rt->sched->take(w->sched_self, out))
        return 0;
    if (!out->ult)
        herd__count_shared_take(w, &out->task);
    return 1;
}

/* Tasks placed on this worker's shepherd (herd_loop's per-shepherd split). */
static int take_placed(herd__worker *w, herd__work *out) {
    return herd__qtask_pop(&w->rt->shepherds[w->shepherd].placed, 1, out);
}

/* G1: may w take shared work now? Pair with shared_end(). */
static int shared_begin(herd__worker *w) {
    herd__rt *rt = w->rt;
    if (!rt->serve_limits)
        return 1; /* only a runtime started with HERD__START_SERVING limits serving */
    atomic_store_explicit(&w->searching, 1, memory_order_relaxed);
    /* ORDER: G1's full fence between the store and the load; pairs with
     * the closer's membarrier or fence in serve_lower. */
    if (rt->serve_asym)
        atomic_signal_fence(memory_order_seq_cst); /* the membarrier does the rest */
    else
        atomic_thread_fence(memory_order_seq_cst);
    return w->id < atomic_load_explicit(&rt->serving, memory_order_relaxed);
}

static void shared_end(herd__worker *w) {
    /* ORDER: release; the closer's seq_cst load reads it (G2). */
    atomic_store_explicit(&w->searching, 0, memory_order_release);
}

/* The scheduler's shared queues and the shepherd's placement queue. */
static int take_shared_queued(herd__worker *w, herd__work *out) {
    if (!w->rt->sched->take && !herd__tq_size(&w->rt->shepherds[w->shepherd].placed))
        return 0;
    int got = shared_begin(w) && (take_queued(w, out) || take_placed(w, out));
    shared_end(w);
    return got;
}

/* Everything this worker may take without stealing, newest work first. */
static int take_local(herd__worker *w, herd__work *out) {
    return take_mine(w, out) || take_own(w, out) || take_shared_queued(w, out) ||
           take_injected(w->rt, out);
}

static int take_stolen(herd__worker *w, herd__work *out) {
    herd__rt *rt = w->rt;
    if (rt->nworkers < 2 || !rt->sched->steal)
        return 0;
    int got = shared_begin(w) && rt->sched->steal(w->sched_self, out);
    shared_end(w);
    return got;
}

static void count_steal(herd__worker *w, const herd__work *out) {
    HERD__COUNT(w, steals);
    if (out->victim_shepherd == w->shepherd)
        HERD__COUNT(w, steals_local);
    else
        HERD__COUNT(w, steals_remote);
    HERD__ADD(w, stolen_tasks, out->ntasks);
    if (out->ntasks > atomic_load_explicit(&w->stats.max_chunk, memory_order_relaxed))
        atomic_store_explicit(&w->stats.max_chunk, out->ntasks, memory_order_relaxed);
}

void herd__count_shared_take(herd__worker *w, const herd__taskcopy *t) {
    if (t->from < 0 || t->from == w->id)
        return;
    herd__work got = {.ult = NULL,
                      .victim = t->from,
                      .victim_shepherd = w->rt->workers[t->from].shepherd,
                      .ntasks = 1};
    count_steal(w, &got);
    HERD__COUNT(w, steal_attempts);
    herd__trace_steal(w, &got);
}

static int find_work(herd__worker *w, herd__work *out) {
    herd__rt *rt = w->rt;
    if (++w->tick % FAIRNESS_PERIOD == 0 && take_injected(rt, out))
        return 1;
    if (w->yielded) {
        /* A task just yielded: whatever else is queued goes first. */
        w->yielded = 0;
        if (take_local(w, out))
            return 1;
    }
    /* Resumed tasks first: each holds a stack, and finishing them frees it
     * (and often ends the wait of yet another suspended task). */
    if (take_home(w, out) || take_ready(w, out) || take_local(w, out))
        return 1;
    if (take_stolen(w, out)) {
        count_steal(w, out);
        herd__trace_steal(w, out);
        return 1;
    }
    return 0;
}

/* Is there work anywhere that this worker could take? Raises split requests
 * on every other worker as a side effect (W2). */
static int work_visible(herd__worker *w) {
    herd__rt *rt = w->rt;
    if (atomic_load_explicit(&rt->inject_size, memory_order_relaxed) ||
        atomic_load_explicit(&w->ready.size, memory_order_relaxed) ||
        atomic_load_explicit(&w->home.size, memory_order_relaxed) || herd__placed_pending(w) ||
        herd__tq_size(&rt->shepherds[w->shepherd].placed) ||
        (rt->sched->has_work && rt->sched->has_work(w->sched_self)))
        return 1;
    for (int i = 0; i < rt->nworkers; i++) {
        herd__worker *v = &rt->workers[i];
        if (v == w)
            continue;
        if (herd__sdq_public_size(&v->hot.q) ||
            atomic_load_explicit(&v->ready.size, memory_order_relaxed))
            return 1;
        if (!atomic_load_explicit(&v->hot.q.split_req, memory_order_relaxed))
            atomic_store_explicit(&v->hot.q.split_req, 1, memory_order_relaxed);
    }
    return 0;
}

/* Sleep until woken (W1..W4), or for at most HERD__RESCUE_GAP_NS when a
 * worker looks stuck (R2): a poke may have found it in herd's code, and
 * the next search pokes again. Returns whether the sleep was that short. */
static int idle_sleep(herd__worker *w, uint64_t idle_since) {
    herd__rt *rt = w->rt;
    /* W1. ORDER: acquire; pairs with the release increment in herd__wake_one(). */
    uint32_t seq = atomic_load_explicit(&rt->wake_seq, memory_order_acquire);
    atomic_fetch_add_explicit(&rt->sleepers, 1, memory_order_seq_cst);
#if !defined(HERD_TSAN) /* TSan builds: the seq_cst RMW above is the fence */
    /* ORDER: seq_cst fence; pairs with the fence in herd__wake_one() (W3). */
    atomic_thread_fence(memory_order_seq_cst);
#endif
    int stuck = 0;
    if (!work_visible(w) && !atomic_load_explicit(&rt->stopping, memory_order_acquire)) {
        /* R2, after W2 raised the requests it pairs with. */
        stuck = rt->rescue && herd__rescue_poke(w, herd__now_ns(), idle_since);
        if (stuck)
            herd__futex_wait_ns(&rt->wake_seq, seq, HERD__RESCUE_GAP_NS);
        else
            herd__futex_wait(&rt->wake_seq, seq); /* W2: returns at once if seq moved */
    }
    atomic_fetch_sub_explicit(&rt->sleepers, 1, memory_order_relaxed);
    return stuck;
}

_Atomic int herd__threads_beside;

/* Pauses between two searches of an idle worker. A pause takes 25 ns on
 * the 2-core AMD EPYC VM (measured; recent cores differ widely): 32 of them
 * (0.8 us) made a worker notice a new parallel region's member 0.4 us late
 * on average, half of OpenMP's region cost on 2 threads (an empty region:
 * 1.23 -> 0.65 us with 8; fib(30) unchanged). */
#define IDLE_PAUSES 8

/* Threads of the program may wait for a CPU: more workers than CPUs, or
 * more threads beside the workers want one than the workers leave free
 * (seam_omp.h). */
static int crowded(const herd__rt *rt) {
    return !rt->cpu_per_worker || herd__beside_count() > rt->spare_cpus;
}

int herd__cpus_crowded(void) {
    const herd__rt *rt = herd__rt_started();
    return !rt || crowded(rt);
}

/* One failed search: pause, or sleep once an adaptive worker has searched
 * for rt->spin_ns since it last found work or woke up (*spin_since, 0 when
 * not yet started). */
static void idle_step(herd__worker *w, unsigned *fails, uint64_t *spin_since, uint64_t idle_since) {
    herd__idle mode = w->rt->set.idle;
    uint64_t now = 0;
    if (mode == HERD__IDLE_ADAPTIVE) {
        now = herd__now_ns();
        if (!*spin_since)
            *spin_since = now;
        else if (now - *spin_since >= w->rt->spin_ns)
            mode = HERD__IDLE_SLEEP;
    }
    if (mode == HERD__IDLE_SLEEP) {
        /* After a short sleep (R2) one search, then sleep again. */
        if (!idle_sleep(w, idle_since))
            *spin_since = 0;
        *fails = 0;
        return;
    }
    /* R2 (core/rescue.h): a worker may keep tasks private while it spins.
     * Every 64th failed search: the notes lie on the workers' own lines. */
    if (w->rt->rescue && *fails % 64 == 0)
        herd__rescue_poke(w, now ? now : herd__now_ns(), idle_since);
    (*fails)++;
    /* Work placed on this worker (a region's member) ends the pause: a
     * pause costs 25 ns on some cores and 140 cycles on others. */
    for (int i = 0; i < IDLE_PAUSES && !herd__placed_pending(w); i++)
        herd__cpu_relax();
    /* A searching worker may share its core with a busy one: with more
     * workers than cores (every search fails while the worker whose task
     * would end the wait has no CPU: OpenMP members spinning in user code
     * for member 0, LLVM's kmp_sch_simd_guided.c with 4 workers on 2 CPUs,
     * 20 s a team of 4 against 2.4 s after, libomp 2.6-3.4), or while
     * threads beside the workers want more CPUs than the workers leave
     * free (crowded), give the CPU away after each failed search;
     * otherwise now and then. */
    if (*fails % SPIN_ROUNDS == 0 || crowded(w->rt))
        sched_yield();
}

/* Anything w could run instead of spinning? */
static int has_local_work(herd__worker *w) {
    return w->hot.q.head != w->hot.q.split || herd__sdq_public_size(&w->hot.q) ||
           atomic_load_explicit(&w->ready.size, memory_order_relaxed) ||
           atomic_load_explicit(&w->home.size, memory_order_relaxed) || herd__placed_pending(w);
}

int herd__spin_wait(herd__worker *w, int (*done)(void *), void *arg) {
    /* Only another worker, or a thread beside the workers (an OpenMP
     * guest: a nested team's member), can end the wait while w spins. */
    if (!w->rt->cpu_per_worker || (w->rt->nworkers < 2 && herd__beside_count() == 0))
        return 0;
    uint64_t start = 0;
    for (unsigned i = 0;; i++) {
        if (done(arg))
            return 1;
        if (i % 64 == 0) {
            uint64_t now = herd__now_ns();
            if (!start)
                start = now;
            else if (now - start >= HERD__SPIN_WAIT_NS || has_local_work(w))
                return 0;
            if (crowded(w->rt)) /* the awaited may be a guest, without a CPU */
                sched_yield();
        }
        herd__cpu_relax();
    }
}

/* G3: a worker that may not take shared work waits for the limit to rise,
 * for a task of its own to resume, or for the runtime to stop. */
static void park(herd__worker *w) {
    herd__rt *rt = w->rt;
    /* ORDER: acquire; pairs with the release increment in wake_parked(). */
    uint32_t seq = atomic_load_explicit(&rt->serve_seq, memory_order_acquire);
    /* ORDER: seq_cst fence; pairs with the fence of the W3 waker that
     * pushed a resumed task of w's before it read `serving`. */
    atomic_thread_fence(memory_order_seq_cst);
    if (w->id < atomic_load_explicit(&rt->serving, memory_order_seq_cst) ||
        atomic_load_explicit(&w->ready.size, memory_order_relaxed) ||
        atomic_load_explicit(&w->home.size, memory_order_relaxed) || herd__placed_pending(w) ||
        atomic_load_explicit(&rt->stopping, memory_order_acquire))
        return;
    herd__futex_wait(&rt->serve_seq, seq);
}

void herd__serve_init(herd__rt *rt) {
    rt->serve_asym = 0;
#if !defined(HERD_TSAN)
    rt->serve_asym = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#endif
}

/* G2: lower the limit to n; under serve_lock. */
static void serve_lower(herd__rt *rt, int n) {
    atomic_store_explicit(&rt->serving, n, memory_order_seq_cst);
    /* G2. ORDER: the full fence between the store and the loads below, on
     * this thread and (membarrier) on every worker running now; pairs with
     * shared_begin(). Once registered it does not fail (EINVAL, EPERM
     * are registration errors); if it did, the workers' side would be
     * unfenced, so stop rather than run on. */
    if (rt->serve_asym && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
        fprintf(stderr, "herd: membarrier(PRIVATE_EXPEDITED) failed: %s\n", strerror(errno));
        abort();
    }
    atomic_thread_fence(memory_order_seq_cst);
    /* ORDER: acquire; pairs with the release store that ends a worker's
     * search (shared_end): what it took before is ordered before us. */
    for (int i = n; i < rt->nworkers; i++)
        for (unsigned spins = 0;
             atomic_load_explicit(&rt->workers[i].searching, memory_order_acquire);)
            herd__spin_backoff(&spins); /* it may wait for our CPU to end its attempt */
}

/* Raise the limit to n and wake the parked (G3); under serve_lock, or at
 * stop. */
static void serve_raise(herd__rt *rt, int n) {
    /* ORDER: seq_cst; a parked worker's seq_cst recheck sees it, or the wake
     * below comes after its read of serve_seq. */
    atomic_store_explicit(&rt->serving, n, memory_order_seq_cst);
    wake_parked(rt);
}

void herd__serve_hold(herd__rt *rt, int n) {
    if (!rt->serve_limits)
        return;
    herd__spin_lock(&rt->serve_lock);
    rt->serve_held = 1;
    /* ORDER: relaxed; serving changes only under serve_lock (or at stop,
     * when no team runs), so this is the last value stored. */
    int cur = atomic_load_explicit(&rt->serving, memory_order_relaxed);
    if (n < cur)
        serve_lower(rt, n);
    else if (n > cur)
        serve_raise(rt, n);
    herd__spin_unlock(&rt->serve_lock);
}

void herd__serve_release(herd__rt *rt) {
    if (!rt->serve_limits)
        return;
    herd__spin_lock(&rt->serve_lock);
    rt->serve_held = 0;
    herd__spin_unlock(&rt->serve_lock);
}

void herd__serve_unheld(herd__rt *rt) {
    /* ORDER: relaxed; a hint. A value below nworkers that is already
     * stale only takes the lock for nothing; one at nworkers that is stale
     * belongs to a team being held now, which work from outside the team
     * must not widen anyway. */
    if (!rt->serve_limits ||
        atomic_load_explicit(&rt->serving, memory_order_relaxed) == rt->nworkers)
        return;
    herd__spin_lock(&rt->serve_lock);
    if (!rt->serve_held)
        serve_raise(rt, rt->nworkers);
    herd__spin_unlock(&rt->serve_lock);
}

int herd__others_serve(void) {
    herd__worker *w = herd__self();
    herd__rt *rt = w->rt;
    if (!rt->serve_limits)
        return rt->nworkers > 1;
    /* ORDER: relaxed; see the declaration (seam_omp.h). */
    int n = atomic_load_explicit(&rt->serving, memory_order_relaxed);
    return n - (w->id < n) > 0;
}

void herd__serve_all(herd__rt *rt) {
    if (atomic_load_explicit(&rt->serving, memory_order_relaxed) == rt->nworkers)
        return;
    serve_raise(rt, rt->nworkers);
}

void herd__sched_loop(herd__worker *w) {
    unsigned fails = 0;
    uint64_t idle_since = 0, spin_since = 0;
    for (;;) {
        herd__work work;
        if (find_work(w, &work)) {
            if (idle_since) {
                uint64_t d = herd__now_ns() - idle_since;
                herd__trace_idle(w, idle_since, idle_since + d);
                HERD__ADD(w, idle_ns, d);
                idle_since = 0;
            }
            fails = 0;
            spin_since = 0;
            if (work.ult)
                herd__resume_from_loop(w, work.ult);
            herd__run_root(w, &work.task);
            w = herd__self(); /* the root may have suspended and moved us */
            continue;
        }
        if (!idle_since)
            idle_since = herd__now_ns();
        if (w->id >= atomic_load_explicit(&w->rt->serving, memory_order_relaxed)) {
            park(w);
            continue;
        }
        /* ORDER: acquire; pairs with the seq_cst store in stop_workers(). */
        if (atomic_load_explicit(&w->rt->stopping, memory_order_acquire)) {
            /* herd_stop() runs only when no herd_run() is in progress, so no
             * task exists anywhere: leaving is safe. */
            uint64_t d = herd__now_ns() - idle_since;
            herd__trace_idle(w, idle_since, idle_since + d);
            atomic_store_explicit(&w->stats.idle_ns,
                                  atomic_load_explicit(&w->stats.idle_ns, memory_order_relaxed) + d,
                                  memory_order_relaxed);
            herd__worker_exit(w);
        }
        idle_step(w, &fails, &spin_since, idle_since);
    }
}
