/* The seam between core and the OpenMP layer (src/omp/): everything the
 * layer may use of core, and nothing else. The layer includes this header,
 * never core/runtime.h: workers, ULTs and the runtime are opaque here, and
 * core's own files see the same declarations through runtime.h (one
 * source). Below core sit the arch primitives (futex, clock, spin locks),
 * the split deque's owner queries (queue/) and the installed fast path
 * (herd/herd_fast.h), which the layer may use too. */
#ifndef HERD_CORE_SEAM_OMP_H
#define HERD_CORE_SEAM_OMP_H

#include "arch/assert.h"
#include "arch/os.h"
#include "arch/spin.h"
#include "core/config.h"
#include "core/wait.h"
#include "herd/herd.h"
#include "herd/herd_fast.h"
#include "queue/split_deque.h" /* the worker's deque: herd__sdq_queued, _wants_publish */
#include "queue/task_queue.h"  /* herd__tq_size, for herd__self_queued_reach */
#include "sched/sched.h"       /* herd__sched_worker, for herd__self_queued_reach */

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

typedef struct herd__worker herd__worker; /* core/runtime.h */
typedef struct herd__ult herd__ult;
typedef struct herd__rt herd__rt;

/* The started runtime, NULL before herd_start and after herd_stop.
 * ORDER: an acquire load; pairs with herd_start's publication of it. */
herd__rt *herd__rt_started(void);
/* Whether a thread holds worker 0 (adopt-mode runtimes). ORDER: acquire;
 * pairs with the release store of herd__adopt_leave. */
int herd__rt_adopted(const herd__rt *rt);
/* Whether the workers share CPUs (more workers than the CPUs they run on). */
int herd__rt_oversubscribed(const herd__rt *rt);

/* Threads of the program beside the workers that want a CPU now: the
 * OpenMP layer's guests while they are not asleep (omp/guest.c, team.c).
 * While there are more of them than CPUs the workers leave free
 * (rt->spare_cpus), an idle worker yields its CPU after each failed
 * search, not after every SPIN_ROUNDS-th, and a worker's spin-wait yields
 * as it spins: with more threads than cores (a team larger than the
 * workers, nested teams) a guest waited for a searching worker's time
 * slice. While they fit the spare CPUs nobody waits for a CPU, and a
 * yield per search only slows the worker's answer (EPCC's nested region,
 * a team of 1 around one of 2 on 2 CPUs: 1 worker and 1 guest). ORDER:
 * relaxed everywhere; a hint for how often to yield, which no correctness
 * hangs on. */
extern _Atomic int herd__threads_beside;
static inline void herd__beside_add(int delta) {
    atomic_fetch_add_explicit(&herd__threads_beside, delta, memory_order_relaxed);
}
static inline int herd__beside_count(void) {
    return atomic_load_explicit(&herd__threads_beside, memory_order_relaxed);
}
/* Whether threads of the program may be waiting for a CPU: more workers
 * than CPUs, or more such threads awake than the CPUs the workers leave
 * free; also when no runtime runs (nothing known). */
int herd__cpus_crowded(void);

/* The worker running the caller, or NULL. Read it again after anything that
 * may suspend the task: it may resume on another worker. */
static inline herd__worker *herd__self(void) {
    return (herd__worker *)(void *)herd__tls;
}
/* What a worker begins with (core/runtime.h checks it): its hot part, which
 * herd__tls points at, then its index, then its scheduler's record, whose
 * shares_into and nshares_into are the queues it shares its tasks into
 * (mts, central, lifo, fifo; NULL and 0 under the others). */
typedef struct herd__worker_head {
    herd__hot hot;
    int id;
    const herd__sched_worker *sched_self;
    _Atomic int queued_note; /* core/rescue.h */
} herd__worker_head;
/* The index of the worker running the caller, -1 outside the workers:
 * herd_worker_id(), inline (a deferred task's thread number, omp/task.c). */
static inline int herd__self_id(void) {
    herd__hot *h = herd__tls;
    return h ? ((const herd__worker_head *)(void *)h)->id : -1;
}
/* Do the tasks worker h queued that nobody has started number at least
 * `enough`? Its deque's count, and under mts, central, lifo and fifo those
 * in the queues it shares into, which hold its shepherd-mates' too (lifo,
 * fifo: every shepherd's queue, with every worker's deals; an estimate,
 * team-wide as libgomp's count is). Counted only until `enough`. For the
 * OpenMP creation throttle. */
static inline int herd__self_queued_reach(herd__hot *h, uint32_t enough) {
    uint32_t n = herd__sdq_queued(&h->q);
    const herd__sched_worker *sw = ((const herd__worker_head *)(void *)h)->sched_self;
    for (int i = 0; i < sw->nshares_into && n < enough; i++)
        n += herd__tq_size(&sw->shares_into[i]);
    return n >= enough;
}

/* R3 (core/rescue.h): the running task is about to queue a task in worker
 * h's deque, perhaps privately, and may then spin in user code until
 * another thread starts it: thieves of a runtime started with
 * HERD__START_RESCUE may poke the worker once they have searched in vain
 * for a while. Call before the spawn. Owner only; cleared when the worker
 * finds its deque empty (R4). */
static inline void herd__note_queued(herd__hot *h) {
    _Atomic int *n = &((herd__worker_head *)(void *)h)->queued_note;
    /* ORDER: relaxed load and store, then a seq_cst fence before the
     * spawn's read of split_req; pairs with the thieves' fence in
     * herd__rescue_poke (core/rescue.c). Once per note, not per spawn. */
    if (!atomic_load_explicit(n, memory_order_relaxed)) {
#if defined(HERD_TSAN) /* TSan does not model fences: a seq_cst RMW instead */
        atomic_exchange_explicit(n, 1, memory_order_seq_cst);
#else
        atomic_store_explicit(n, 1, memory_order_relaxed);
        atomic_thread_fence(memory_order_seq_cst);
#endif
    }
}

/* herd_spawn's inline path (S1, split-deque.md) in two halves, for a caller
 * that builds the argument in place (no staging copy, whose mixed-width
 * stores and loads stall store forwarding): herd__spawn_reserve answers the
 * slot whose arg[HERD__SLOT_INLINE_ARG] the caller fills, or NULL when the
 * caller must take herd_spawn instead; herd__spawn_commit(fn, size) then
 * queues it as a child of the running task. Owner only, nothing between. */
static inline __attribute__((always_inline)) herd__slot *herd__spawn_reserve(void) {
    herd__hot *h = herd__tls;
    if (__builtin_expect(!h || !h->frame || h->q.head >= h->spawn_limit, 0))
        return NULL;
    return &h->q.slots[h->q.head];
}

static inline __attribute__((always_inline)) void herd__spawn_commit(herd_fn fn, size_t size) {
    herd__hot *h = herd__tls;
    herd__slot_set(&h->q.slots[h->q.head], fn, &h->frame->join, HERD__KIND_TASK, size);
    h->q.head++;
    h->frame->nspawned++;
    herd__count(&h->spawned);
    /* ORDER: relaxed; a late view only delays publication (S3). */
    if (__builtin_expect(__atomic_load_n(&h->q.split_req, __ATOMIC_RELAXED) != 0, 0))
        herd__publish_slow();
}

/* core/task.c: wait until frame f's children have finished (the task
 * suspends if some still run elsewhere). Context: the task that opened f. */
void herd__frame_wait(herd__frame *f);
/* core/task.c: give frame f's children that wait in the worker's deque to
 * the frame below it, f->up, as if f->up's task had queued them (J6,
 * docs/design/tasks.md): the deque's part above f's base is taken back from
 * the thieves first (S9); f then holds none of them, and its wait waits only
 * for its children that were taken. Nothing moves when f has no frame
 * below, when a slot above f's base is not its own task (a group task), or
 * when visit(fn, arg, size, 0, ctx) answers 0 for one of them; else
 * visit(fn, arg, size, 1, ctx) is called for each as it moves (its argument
 * block, which it may rewrite). Returns how many moved. For the OpenMP layer, whose tasks may
 * complete before their children; a herd task may not (its children may write into its frame).
 * Context: the owner; f is the worker's current frame. */
uint32_t herd__frame_hand_up(herd__frame *f,
                             int (*visit)(herd_fn fn, unsigned char *arg, size_t size, int move,
                                          void *ctx),
                             void *ctx);
/* Run fn(arg) now, on the calling task's stack, as a task of its own: its
 * own frame, whose children it waits for before returning. Context: a task. */
void herd__call_task(herd_fn fn, void *arg);
/* core/task.c: queue fn(copy of arg) in group g (NULL: a group nobody
 * waits for) on the injector, from any thread, a worker's or not (the
 * OpenMP layer's guests); some worker runs it. herd_stop waits for it.
 * Returns 0, HERD_EINVAL, HERD_ENOMEM, HERD_ESTATE (herd is not started
 * or stopping: nothing queued). */
int herd__inject_group(herd_group *g, herd_fn fn, const void *arg, size_t arg_size);

/* core/ult.c: suspending and resuming tasks. Suspend the calling task. `arm` runs on the worker's
 * next stack once the caller's context is saved (so a waker can never resume a half-saved context);
 * it must arrange for herd__ult_ready(u) to be called eventually. */
void herd__block(void (*arm)(herd__worker *w, herd__ult *u, void *arg), void *arg);
/* The same, recording why (kind, the object waited on, the return address
 * of the public call that waits) for the watchdog's dump. */
void herd__block_on(int kind, const void *obj, void *ra,
                    void (*arm)(herd__worker *w, herd__ult *u, void *arg), void *arg);
/* Make a suspended ULT runnable: on its home worker's home queue when it
 * has one (callable from any thread then), else on the calling worker's
 * ready queue (callable from a worker only). */
void herd__ult_ready(herd__ult *u);

/* core/worker.c: before a task suspends to wait for something that another worker
 * (or a thread beside the workers) is about to do (a barrier's last
 * arrival, a group's last task, a guest member's end): spin until
 * done(arg), up to HERD__SPIN_WAIT_NS, and only while w has nothing else to
 * run and each worker has a CPU (otherwise the time is better given to that
 * work, or to the thread being waited for). 1 when done(arg) came true.
 * done() reads relaxed, and the caller reads again with acquire when it
 * returns 1: a spin of acquire loads under ThreadSanitizer takes, at each
 * load, a lock that the releasing store needs, and many spinners on few
 * CPUs starved that store (stress.topology hung, round 3). */
#define HERD__SPIN_WAIT_NS 20000
int herd__spin_wait(herd__worker *w, int (*done)(void *), void *arg);

/* core/runtime.c: herd_start with internal options.
 * HERD__START_ADOPT: worker 0 gets no pthread; a thread lends its own through
 * herd__adopt_enter()/herd__adopt_leave() (core/adopt.c), one at a time.
 * HERD__START_TIED: a task that suspends resumes on the worker it suspended
 * on (so on the kernel thread that started it: thread identity holds).
 * HERD__START_NAME_BY_PC: the caller's task functions are trampolines (the
 * OpenMP layer's): an overflow report names the function that overflowed.
 * HERD__START_SERVING: the caller may limit which workers take shared work
 * (herd__serve_hold, G1..G4 in core/worker.c); only such a runtime's
 * searching workers pay G1's fences. Without it herd__serve_hold does
 * nothing.
 * HERD__START_RESCUE: thieves may poke a worker that keeps tasks private
 * while it spins in user code (core/rescue.h, herd__note_queued).
 * stack_setting: the setting an overflow report tells the user to raise
 * (the OpenMP layer passes "OMP_STACKSIZE"); NULL: HERD_STACK, or
 * herd_config.stack_size when cfg set it. */
#define HERD__START_ADOPT 1u
#define HERD__START_TIED 2u
#define HERD__START_NAME_BY_PC 4u
#define HERD__START_SERVING 8u
#define HERD__START_RESCUE 16u
int herd__start_ex(const herd_config *cfg, unsigned flags, const char *stack_setting);

/* core/adopt.c. Enter: the calling thread (outside any task) becomes worker
 * 0 and runs as a task on its own stack, in frame fr (which the caller
 * keeps alive until leave). Returns 0; HERD_ESTATE when the runtime is not
 * started in adopt mode; HERD_EBUSY while another thread holds worker 0;
 * HERD_ETASK inside a task. Leave: waits for fr's children, then gives
 * worker 0 back; everything that started on worker 0 meanwhile must have
 * finished (the caller's contract: all of it descends from fr). */
int herd__adopt_enter(herd__frame *fr);
void herd__adopt_leave(herd__frame *fr);

/* core/worker.c: from now on only workers 0..n-1 take shared work (other
 * workers' deques, the schedulers' shared queues, the shepherds' placement
 * queues); the others park. Returns once no worker n.. can still take
 * shared work that is queued after the return (G2). The OpenMP layer holds
 * the limit at its outermost team's workers, so that the team's tasks run
 * on its own threads, and releases the hold at the region's end; the limit
 * itself stays (G4) until the next hold changes it, or until work comes
 * from outside a team (herd__inject calls herd__serve_unheld), so that a
 * program of regions of one size pays no change per region. One holder at
 * a time (the holder of worker 0); only adopt-mode runtimes serve fewer
 * (elsewhere these do nothing, and the workers skip G1's two accesses).
 * herd__serve_all lets every worker serve again, at stop. */
void herd__serve_hold(herd__rt *rt, int n);
void herd__serve_release(herd__rt *rt);
void herd__serve_all(herd__rt *rt);
/* Whether a worker other than the caller's may take shared work now: one
 * below the serving limit (herd__serve_hold), or any other worker of a
 * runtime that does not limit serving. A thief's request (split_req) may
 * have been raised before a hold parked its asker: under an outermost team
 * of one, no other worker takes the team's tasks, whoever asked. ORDER:
 * relaxed; a hint (the OpenMP creation throttle's: how many tasks wait).
 * Context: a worker. */
int herd__others_serve(void);

/* core/task.c: a fork (herd__fork, F1..F5): count tasks at once, one on
 * each worker first..first+count-1 (first >= 1), each fn(copy of arg) (a
 * task learns its worker by herd__self_id()), and one wake-up for all.
 * arg_size at most HERD__FORK_ARG (24) bytes. Returns 0, HERD_ENOTASK
 * outside a task, HERD_EINVAL. Context: a task on worker 0, the only
 * placer, whose previous fork was joined (F3). */
int herd__fork(int first, int count, herd_fn fn, const void *arg, size_t arg_size);
/* Wait until every task of the caller's last fork has ended (F4, F5):
 * spinning while that pays (herd__spin_wait), else suspended. Context: the
 * task that forked, on worker 0. */
void herd__fork_join(void);

/* core/sync.c: herd_barrier_init on the caller's memory (64-byte aligned,
 * `bytes` long), which the caller frees after the last wait, never
 * herd_barrier_destroy. HERD_EINVAL when too small for count (then the
 * caller may use herd_barrier_init). */
int herd__barrier_init_at(herd_barrier *b, int64_t count, void *mem, size_t bytes);

/* core/places.c: the places of an abstract OMP_PLACES name (threads,
 * cores, sockets, ll_caches, numa_domains): each PU, core, package, L3
 * cache or NUMA node of the real machine (hwloc's model, whatever
 * HERD_TOPOLOGY says), as the set of its OS CPUs that the process may run
 * on, in the topology's order; one with none of them is no place. Writes at
 * most max into out and returns how many, or -1 with a sentence in err. */
int herd__machine_places(const char *name, cpu_set_t *out, int max, char *err, size_t errlen);

#endif
