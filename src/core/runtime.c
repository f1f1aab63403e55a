/* Runtime lifecycle: herd_start, herd_stop, herd_run, statistics. */
#include "core/runtime.h"
#include "core/rescue.h"
#include "core/seam_tools.h"
#include "core/trace.h"
#include "core/watchdog.h"
#include "place/mapper.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define DEQUE_CAP (1u << 20)

herd__rt *herd__rt_global;

herd__rt *herd__rt_started(void) {
    return __atomic_load_n(&herd__rt_global, __ATOMIC_ACQUIRE); /* ORDER: as declared */
}

int herd__rt_adopted(const herd__rt *rt) {
    /* ORDER: acquire; pairs with the release store of herd__adopt_leave: a
     * thread that sees worker 0 free sees what its last holder did. */
    return atomic_load_explicit(&((herd__rt *)rt)->adopted, memory_order_acquire);
}

int herd__rt_oversubscribed(const herd__rt *rt) {
    return !rt->cpu_per_worker;
}
HERD_API __thread herd__hot *herd__tls __attribute__((tls_model("initial-exec")));

/* herd_run() calls in progress, and the lifecycle lock (start/stop). Kept
 * outside the runtime record so herd_run() can count itself in before it
 * looks at the record (see herd_run). */
static _Atomic long runs_in_progress;
static pthread_mutex_t lifecycle = PTHREAD_MUTEX_INITIALIZER;

HERD_API const char *herd_strerror(int err) {
    switch (err) {
    case HERD_OK:
        return "success";
    case HERD_EINVAL:
        return "invalid argument or setting";
    case HERD_ENOMEM:
        return "out of memory (descriptors, stacks or queue space)";
    case HERD_ENOTASK:
        return "only valid inside a herd task";
    case HERD_ESTATE:
        return "runtime not started, or already started";
    case HERD_EBUSY:
        return "object busy";
    case HERD_ESYS:
        return "the operating system refused";
    case HERD_ETASK:
        return "not valid inside a herd task";
    default:
        return "unknown herd error";
    }
}

/* ------------------------------------------------ mapped start-up (P1..P4)
 *
 * With HERD_BIND=static/bll/xll each worker chooses its PU itself when it
 * starts (paper 003, section 2), but the schedulers' shepherds and victim
 * orders are built from the placement. So herd_start starts the workers
 * first; each chooses and pins under the registry lock (P1) and counts
 * itself in `placed` (P2); the starting thread waits for all of them, builds
 * the schedulers on their choices (P3), and opens the gate (P4). Until the
 * gate opens a worker touches only w->pu and rt->pu_of_worker[w->id]. */

static herd__map_policy map_policy(herd__bind b) {
    return b == HERD__BIND_STATIC ? HERD__MAP_STATIC
           : b == HERD__BIND_BLL  ? HERD__MAP_BLL
                                  : HERD__MAP_XLL;
}

static const char *bind_value(herd__bind b) {
    return herd__map_policy_name(map_policy(b));
}

static int pin_worker(void *ctx, int pu, char *err, size_t errlen) {
    herd__rt *rt = ctx;
    return herd__topo_bind_self(&rt->topo, pu, err, errlen);
}

static void futex_wake_all(_Atomic int *word) {
    herd__futex_wake(word, INT_MAX);
}

/* The pin of an adopted worker 0 (adopt mode): its PU is recorded, but the
 * thread that will lend itself is not known yet, so nobody is pinned. */
static int pin_nobody(void *ctx, int pu, char *err, size_t errlen) {
    (void)ctx, (void)pu, (void)err, (void)errlen;
    return 0;
}

/* P1 and P2: choose w's PU (and pin the caller with pin). */
static void choose_pu(herd__worker *w, int (*pin)(void *ctx, int pu, char *err, size_t errlen)) {
    herd__rt *rt = w->rt;
    char err[512];
    int pu = 0;
    int rc = herd__map_choose(rt->reg, map_policy(rt->set.bind), rt->topo.npus, rt->topo.os_index,
                              w->id, pin, rt, &pu, err, sizeof err);
    if (rc) {
        fprintf(stderr, "herd: worker %d: HERD_BIND=%s: %s\n", w->id, bind_value(rt->set.bind),
                err);
        atomic_store_explicit(&rt->place_failed, 1, memory_order_relaxed); /* read after P2 */
    } else {
        w->pu = pu;
        rt->pu_of_worker[w->id] = pu;
    }
    /* P2. ORDER: release; pairs with the acquire load in wait_placed(): the
     * starting thread that counts this worker sees its PU and failure. */
    atomic_fetch_add_explicit(&rt->placed, 1, memory_order_release);
    futex_wake_all(&rt->placed);
}

/* P1, P2, then wait at the gate. Returns 0 when the gate opens, -1 when it
 * opens to abort. */
static int place_self(herd__worker *w) {
    herd__rt *rt = w->rt;
    choose_pu(w, pin_worker);
    int g;
    /* P4. ORDER: acquire; pairs with the release store in open_gate(): the
     * schedulers' per-worker state built at P3 is visible once it opens. */
    while ((g = atomic_load_explicit(&rt->gate, memory_order_acquire)) == HERD__GATE_CLOSED)
        herd__futex_wait(&rt->gate, HERD__GATE_CLOSED);
    return g == HERD__GATE_OPEN ? 0 : -1;
}

/* P3's first half: wait until n workers have chosen. Returns 0, or
 * HERD_ESYS when one failed (it said why). */
static int wait_placed(herd__rt *rt, int n) {
    int k;
    /* ORDER: acquire; pairs with the release increments in place_self(). */
    while ((k = atomic_load_explicit(&rt->placed, memory_order_acquire)) < n)
        herd__futex_wait(&rt->placed, (uint32_t)k);
    return atomic_load_explicit(&rt->place_failed, memory_order_relaxed) ? HERD_ESYS : 0;
}

static void open_gate(herd__rt *rt, int how) {
    /* P4. ORDER: release; pairs with the acquire loads in place_self(). */
    atomic_store_explicit(&rt->gate, how, memory_order_release);
    futex_wake_all(&rt->gate);
}

static void *worker_main(void *p) {
    herd__worker *w = p;
    herd__rt *rt = w->rt;
    char err[256];
    if (HERD__BIND_MAPPED(rt->set.bind)) {
        if (place_self(w) != 0)
            return NULL; /* the gate was opened to abort */
    } else if (rt->set.bind != HERD__BIND_NONE &&
               herd__topo_bind_self(&rt->topo, w->pu, err, sizeof err) != 0)
        fprintf(stderr, "herd: worker %d not pinned: %s\n", w->id, err);
    /* Paper 002 section IV: a worker's runtime data on its own NUMA node. The
     * record is a page of its own (herd__worker's alignment), filled by the
     * starting thread; move it. Stacks and deque pages are first touched here
     * already (docs/design/topology.md, section 8). Worker 0 speaks for all
     * when the kernel refuses, and only where the user asked for NUMA care. */
    if (rt->set.bind != HERD__BIND_NONE && rt->topo.ndomains[HERD__LVL_NUMA] > 1 &&
        herd__topo_membind_near(&rt->topo, w, sizeof *w, w->pu, err, sizeof err) < 0 &&
        w->id == 0 && rt->set.bind == HERD__BIND_NUMA_PRIORITY)
        fprintf(stderr, "herd: worker records left off their NUMA nodes: %s\n", err);
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &w->native_low, &w->native_size);
        pthread_attr_destroy(&attr);
    }
    herd__overflow_thread_init(w);
    herd__rescue_thread_enter(w, 1); /* R1 */
    herd__worker_enter(w);
    herd__rescue_thread_leave(w);
    herd__overflow_thread_fini(w);
    herd__worker_free_cache(w);
    /* herd__tls is left as it is: the thread ends here, and nothing reads
     * its TLS again. (Clearing it made ThreadSanitizer, which models every
     * task stack as a thread of its own, report a race between this thread
     * and a task that once ran on it: two accesses by one OS thread.) */
    return NULL;
}

static void sched_free(herd__rt *rt);

void herd__rt_free(herd__rt *rt) {
    if (rt->reg) {
        char err[512];
        /* Return this process's PUs (the workers are joined, or never ran). */
        if (rt->holding && herd__map_release(rt->reg, err, sizeof err) != 0)
            fprintf(stderr, "herd: warning: PUs not returned to the registry: %s\n", err);
        herd__reg_close(rt->reg);
        rt->reg = NULL;
    }
    herd__trace_free(rt);
    sched_free(rt);
    herd__ult_pool_free(rt);
    if (rt->workers) {
        for (int i = 0; i < rt->nworkers; i++) {
            herd__sdq_fini(&rt->workers[i].hot.q);
            herd__tq_fini(&rt->workers[i].mine);
        }
        free(rt->workers);
    }
    if (rt->shepherds) {
        for (int s = 0; s < rt->nshepherds; s++) {
            herd__tq_fini(&rt->shepherds[s].placed);
            free(rt->shepherds[s].workers);
        }
        free(rt->shepherds);
    }
    free(rt->pu_of_worker);
    herd__topo_free(&rt->topo);
    free(rt);
}

/* A start-up allocation failed: say which, how much it asked for, and the
 * address-space limit when there is one (the usual cause: `ulimit -v`), so
 * that HERD_ENOMEM from herd_start never comes without its cause. errno is
 * the allocator's. */
static int start_no_memory(const char *what, size_t bytes) {
    int e = errno;
    char limit[128] = "";
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        snprintf(limit, sizeof limit,
                 "; this process's address space is limited to %llu KiB (ulimit -v)",
                 (unsigned long long)rl.rlim_cur / 1024);
    char size[48] = "";
    if (bytes)
        snprintf(size, sizeof size, ": %zu bytes", bytes);
    fprintf(stderr, "herd: herd_start: cannot allocate %s%s (%s)%s\n", what, size,
            e ? strerror(e) : "no memory", limit);
    return HERD_ENOMEM;
}

/* Group the workers by their domain at the shepherd level, shepherds
 * numbered in order of their first worker. */
static int build_shepherds(herd__rt *rt) {
    const herd__settings *set = &rt->set;
    herd__level level = set->shepherd;
    if (!set->shepherd_set && rt->sched->shepherd_level)
        level = rt->sched->shepherd_level;
    rt->shepherd_level = level;
    int n = rt->nworkers;
    rt->shepherds = calloc((size_t)n, sizeof *rt->shepherds);
    if (!rt->shepherds)
        return start_no_memory("the shepherd records", (size_t)n * sizeof *rt->shepherds);
    for (int i = 0; i < n; i++) {
        int dom = rt->topo.domain[level][rt->pu_of_worker[i]];
        int s = 0;
        while (s < rt->nshepherds && rt->shepherds[s].domain != dom)
            s++;
        herd__shepherd *sh = &rt->shepherds[s];
        if (s == rt->nshepherds) {
            rt->nshepherds++;
            sh->domain = dom;
            herd__tq_init(&sh->placed);
            sh->workers = malloc((size_t)n * sizeof(int));
            if (!sh->workers)
                return start_no_memory("a shepherd's worker list", (size_t)n * sizeof(int));
        }
        sh->workers[sh->nworkers++] = i;
        rt->workers[i].shepherd = s;
    }
    return 0;
}

/* The registry, for mapped policies and HERD_WORKERS=auto. A modelled
 * machine's PUs are not this machine's: it must not share the real record. */
static int open_registry(herd__rt *rt) {
    char err[512];
    const char *what = rt->set.workers_auto && !HERD__BIND_MAPPED(rt->set.bind)
                           ? "HERD_WORKERS=auto"
                       : HERD__BIND_MAPPED(rt->set.bind) ? "HERD_BIND"
                                                         : NULL;
    if (!what || rt->reg)
        return 0;
    if (rt->topo.synthetic && !rt->set.registry[0]) {
        fprintf(stderr,
                "herd: %s%s%s: the machine is modelled (HERD_TOPOLOGY), so its PUs are not "
                "this machine's; give it a registry of its own with HERD_REGISTRY=<path>\n",
                what, HERD__BIND_MAPPED(rt->set.bind) ? "=" : "",
                HERD__BIND_MAPPED(rt->set.bind) ? bind_value(rt->set.bind) : "");
        return HERD_EINVAL;
    }
    int rc = herd__reg_open(&rt->reg, rt->set.registry, err, sizeof err);
    if (rc)
        fprintf(stderr, "herd: machine-wide registry (needed by %s%s%s): %s\n", what,
                HERD__BIND_MAPPED(rt->set.bind) ? "=" : "",
                HERD__BIND_MAPPED(rt->set.bind) ? bind_value(rt->set.bind) : "", err);
    return rc;
}

/* The CPUs this process may run on. */
static int process_cpus(void) {
    cpu_set_t cpus;
    return sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
}

/* How long an adaptive idle worker searches before it sleeps. A sleeper
 * misses work that is published and taken back before the futex wake-up
 * lands (tens of microseconds), and a task-parallel program has such gaps at
 * every taskwait; so search 1 ms when each worker can have a CPU of its own.
 * With more workers than the CPUs this process may use, a searching worker
 * takes CPU time from a busy one: search 50 us (docs/design/tasks.md,
 * "Worker loop and sleep"). HERD_IDLE=adaptive:US sets it. */
static uint64_t adaptive_spin_ns(const herd__settings *set, int cpu_per_worker) {
    if (set->spin_us)
        return (uint64_t)set->spin_us * 1000;
    return cpu_per_worker ? 1000000 : 50000;
}

/* One worker per PU of the topology unless HERD_WORKERS says otherwise; a
 * modelled machine has at most HERD__WORKERS_MAX PUs (herd__topo_load
 * refuses more), and a real machine with more PUs than that gets that many
 * workers, said once. */
static int default_workers(const herd__topo *t) {
    if (t->npus <= HERD__WORKERS_MAX)
        return t->npus;
    fprintf(stderr,
            "herd: %d PUs, more than the %d workers herd runs: %d workers (set "
            "HERD_WORKERS to choose)\n",
            t->npus, HERD__WORKERS_MAX, HERD__WORKERS_MAX);
    return HERD__WORKERS_MAX;
}

/* Settings, topology, the number of workers and their records; no PU is
 * chosen yet. */
static int rt_prepare(herd__rt *rt, const herd_config *cfg) {
    char err[512];
    int rc = herd__settings_resolve(cfg, &rt->set);
    if (rc)
        return rc;
    rc = herd__topo_load(&rt->topo, rt->set.topology, err, sizeof err);
    if (rc) {
        fprintf(stderr, "herd: HERD_TOPOLOGY: %s\n", err);
        return rc;
    }
    rc = open_registry(rt);
    if (rc)
        return rc;
    rt->nworkers = rt->set.workers ? rt->set.workers : default_workers(&rt->topo);
    atomic_init(&rt->serving, rt->nworkers);
    if (rt->set.workers_auto) {
        rc = herd__map_auto_workers(rt->reg, rt->topo.npus, rt->topo.os_index, &rt->nworkers, err,
                                    sizeof err);
        if (rc) {
            fprintf(stderr, "herd: HERD_WORKERS=auto: %s\n", err);
            return rc;
        }
    }
    int ncpus = process_cpus();
    rt->cpu_per_worker = rt->nworkers <= ncpus;
    rt->spare_cpus = rt->cpu_per_worker ? ncpus - rt->nworkers : 0;
    rt->spin_ns = adaptive_spin_ns(&rt->set, rt->cpu_per_worker);
    herd__stack_conf_init(&rt->stacks, rt->set.stack_size, rt->set.stack_guard,
                          rt->set.stack_guard_size, NULL);
    rt->pu_of_worker = calloc((size_t)rt->nworkers, sizeof(int));
    if (!rt->pu_of_worker)
        return start_no_memory("the workers' PU table", (size_t)rt->nworkers * sizeof(int));
    rt->workers =
        aligned_alloc(_Alignof(herd__worker), sizeof(herd__worker) * (size_t)rt->nworkers);
    if (!rt->workers)
        return start_no_memory("the worker records", sizeof(herd__worker) * (size_t)rt->nworkers);
    memset(rt->workers, 0, sizeof(herd__worker) * (size_t)rt->nworkers);
    for (int i = 0; i < rt->nworkers; i++) {
        rt->workers[i].rt = rt;
        rt->workers[i].id = i;
    }
    return 0;
}

/* The placement decided before the workers start: every policy but the
 * mapped ones, whose workers choose (P1), and which `herd topo` previews. */
static int place_up_front(herd__rt *rt, int preview) {
    char err[512];
    int rc;
    if (HERD__BIND_MAPPED(rt->set.bind) && preview)
        rc = herd__map_preview(rt->reg, map_policy(rt->set.bind), rt->topo.npus, rt->topo.os_index,
                               rt->nworkers, rt->pu_of_worker, err, sizeof err);
    else
        rc = herd__topo_place(&rt->topo, rt->set.bind, rt->nworkers, rt->pu_of_worker, err,
                              sizeof err);
    if (rc)
        fprintf(stderr, "herd: HERD_BIND: %s\n", err);
    return rc;
}

/* The HERD_SPAWN / HERD_STEAL settings against the scheduler: prints the
 * problem and returns HERD_EINVAL when they do not fit together. */
static int sched_check(const herd__sched_ops *s, const herd__settings *set) {
    char names[256];
    if (set->spawn == HERD__SPAWN_WORK_FIRST && !(s->flags & HERD__SCHED_WORK_FIRST)) {
        herd__sched_names_joined(names, sizeof names, HERD__SCHED_WORK_FIRST);
        fprintf(stderr,
                "herd: HERD_SPAWN=work-first: not with HERD_SCHED=%s, whose tasks go through "
                "shared queues; work-first needs a scheduler that steals from every worker: "
                "%s\n",
                s->name, names);
        return HERD_EINVAL;
    }
    if (set->steal != HERD__TAKE_DEFAULT && !(s->flags & HERD__SCHED_STEALS)) {
        herd__sched_names_joined(names, sizeof names, HERD__SCHED_STEALS);
        fprintf(stderr,
                "herd: HERD_STEAL: not with HERD_SCHED=%s, which does not steal; HERD_STEAL "
                "applies to: %s\n",
                s->name, names);
        return HERD_EINVAL;
    }
    if (set->spawn == HERD__SPAWN_WORK_FIRST &&
        (set->steal == HERD__TAKE_HALF || set->steal == HERD__TAKE_CHUNK)) {
        fprintf(stderr, "herd: HERD_STEAL: with HERD_SPAWN=work-first a steal takes one "
                        "parent continuation (a suspended task); accepted: one\n");
        return HERD_EINVAL;
    }
    return 0;
}

/* What the scheduler sees of rt (sched/sched.h): the workers and their
 * placement, for `auto` and the victim orders. */
static void sched_env_open(herd__rt *rt) {
    herd__sched_env *env = &rt->sched_env;
    env->rt = rt;
    env->nworkers = rt->nworkers;
    env->pu_of_worker = rt->pu_of_worker;
    env->topo = &rt->topo;
    env->steal = rt->set.steal;
    env->steal_chunk = rt->set.steal_chunk;
    env->serving = &rt->serving;
    env->rescue_after_ns = rt->rescue ? HERD__RESCUE_AFTER_NS : 0;
}

/* The scheduler's per-worker records, filled, then its init. */
static int sched_begin(herd__rt *rt) {
    herd__sched_env *env = &rt->sched_env;
    env->nshepherds = rt->nshepherds;
    env->shepherds = rt->shepherds;
    size_t bytes = (size_t)rt->nworkers * sizeof(herd__sched_worker);
    env->workers = aligned_alloc(64, bytes);
    if (!env->workers)
        return HERD_ENOMEM;
    memset(env->workers, 0, bytes);
    for (int i = 0; i < rt->nworkers; i++) {
        herd__worker *w = &rt->workers[i];
        herd__sched_worker *sw = &env->workers[i];
        sw->env = env;
        sw->core = w;
        sw->q = &w->hot.q;
        sw->id = i;
        sw->shepherd = w->shepherd;
        sw->attempts = &w->stats.steal_attempts;
        sw->failed = &w->stats.failed_steals;
        sw->rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
        w->sched_self = sw;
    }
    return herd__sched_start(rt->sched, env);
}

static void sched_free(herd__rt *rt) {
    herd__sched_env *env = &rt->sched_env;
    herd__sched_stop(rt->sched, env);
    if (env->workers) {
        for (int i = 0; i < rt->nworkers; i++)
            rt->workers[i].sched_self = NULL;
        free(env->workers);
        env->workers = NULL;
    }
}

/* Everything that depends on the placement: the scheduler, the shepherds,
 * the per-worker queues, the trace. */
static int rt_finish(herd__rt *rt) {
    int rc;
    sched_env_open(rt);
    rt->sched = herd__sched_find(rt->set.sched, &rt->sched_env, rt->set.shepherd);
    if (!rt->sched) {
        fprintf(stderr, "herd: HERD_SCHED=%s: no such scheduler in this build\n", rt->set.sched);
        return HERD_EINVAL;
    }
    snprintf(rt->set.sched, sizeof rt->set.sched, "%s", rt->sched->name); /* auto: the choice */
    if (sched_check(rt->sched, &rt->set))
        return HERD_EINVAL;
    /* herd_spawn's inline path pushes into the worker's own deque; it is
     * closed (every spawn takes the slow path) when the child must run
     * first. */
    int inline_spawn = rt->set.spawn == HERD__SPAWN_HELP_FIRST;
    for (int i = 0; i < rt->nworkers; i++) {
        herd__worker *w = &rt->workers[i];
        w->pu = rt->pu_of_worker[i];
        herd__tq_init(&w->mine);
        if (herd__sdq_init(&w->hot.q, DEQUE_CAP) != 0) {
            char what[64];
            snprintf(what, sizeof what, "worker %d's task deque (address space)", i);
            return start_no_memory(what, herd__sdq_reserved(DEQUE_CAP));
        }
        w->spawn_limit_open = inline_spawn ? w->hot.q.cap : 0;
        w->hot.spawn_limit = w->spawn_limit_open;
    }
    rc = build_shepherds(rt);
    if (rc)
        return rc;
    if (sched_begin(rt) != 0) {
        char what[64];
        snprintf(what, sizeof what, "scheduler %s's per-worker state", rt->sched->name);
        return start_no_memory(what, 0);
    }
    rc = herd__trace_open(rt);
    return rc == HERD_ENOMEM ? start_no_memory("the trace buffers (HERD_TRACE)", 0) : rc;
}

int herd__rt_build(herd__rt *rt, const herd_config *cfg) {
    int rc = rt_prepare(rt, cfg);
    if (rc == 0)
        rc = place_up_front(rt, 1);
    return rc ? rc : rt_finish(rt);
}

static void stop_workers(herd__rt *rt, int started) {
    /* ORDER: seq_cst; pairs with the acquire loads of `stopping` in the
     * worker loop and in idle_sleep()'s recheck; the wake-up below makes
     * sleeping workers look. */
    atomic_store_explicit(&rt->stopping, 1, memory_order_seq_cst);
    herd__wake_all(rt);
    herd__serve_all(rt);                              /* and the parked ones */
    for (int i = rt->adopt ? 1 : 0; i < started; i++) /* adopt: worker 0 has no pthread */
        pthread_join(rt->workers[i].thread, NULL);
    /* Adopt mode: worker 0's stack cache has no thread to free it. No
     * thread holds worker 0 now (herd_stop waited; a failed start never
     * adopted). A start that failed before the worker records were made
     * (a malformed setting) has no worker 0. */
    if (rt->adopt && rt->workers) {
        herd__worker_free_cache(&rt->workers[0]);
        herd__adopt_unpin(rt);
    }
}

/* Start the workers' threads (all but worker 0 in adopt mode: a thread
 * lends itself later); *started is one past the last worker started. */
static int start_threads(herd__rt *rt, int *started) {
    for (int i = rt->adopt ? 1 : 0; i < rt->nworkers; i++) {
        int e = pthread_create(&rt->workers[i].thread, NULL, worker_main, &rt->workers[i]);
        if (e) {
            fprintf(stderr, "herd: cannot start worker %d of %d: %s\n", i, rt->nworkers,
                    strerror(e));
            return HERD_ESYS;
        }
        *started = i + 1;
    }
    return 0;
}

/* Undo a start that failed after the workers below `started` began. */
static void abort_start(herd__rt *rt, int started, int gated) {
    if (gated) {
        open_gate(rt, HERD__GATE_ABORT);
        for (int i = rt->adopt ? 1 : 0; i < started; i++)
            pthread_join(rt->workers[i].thread, NULL);
    } else {
        stop_workers(rt, started);
    }
    herd__rescue_stop(rt);
}

/* What an overflow report names (core/overflow.c), and the one note on a
 * guard cut short by a limited address space (docs/design/stacks.md). */
static void stack_report_setup(herd__rt *rt, const herd_config *cfg, unsigned flags,
                               const char *setting) {
    rt->stacks.setting = setting                       ? setting
                         : cfg && cfg->stack_size != 0 ? "herd_config.stack_size"
                                                       : "HERD_STACK";
    rt->stacks.name_by_pc = (flags & HERD__START_NAME_BY_PC) != 0;
    if (rt->stacks.guard_cut)
        fprintf(stderr,
                "herd: %s: each task stack's guard region is %zu KiB, its stack size, instead "
                "of %zu MiB; a frame larger than that may jump it unreported. "
                "HERD_STACK_GUARD=SIZE sets the guard.\n",
                rt->stacks.guard_cut == HERD__GUARD_CUT_AS
                    ? "the address space is limited (RLIMIT_AS, ulimit -v)"
                    : "every mapping is committed memory (vm.overcommit_memory=2)",
                rt->stacks.guard_size >> 10, HERD__STACK_GUARD_FLOOR >> 20);
}

HERD_API int herd_start(const herd_config *cfg) {
    return herd__start_ex(cfg, 0, NULL);
}

int herd__start_ex(const herd_config *cfg, unsigned flags, const char *stack_setting) {
    pthread_mutex_lock(&lifecycle);
    if (herd__rt_global) {
        pthread_mutex_unlock(&lifecycle);
        return HERD_ESTATE;
    }
    if (herd__self()) {
        pthread_mutex_unlock(&lifecycle);
        return HERD_ETASK;
    }
    herd__rt *rt = calloc(1, sizeof *rt);
    if (!rt) {
        pthread_mutex_unlock(&lifecycle);
        return start_no_memory("the runtime record", sizeof *rt);
    }
    int started = 0;
    rt->adopt = (flags & HERD__START_ADOPT) != 0;
    rt->tied = (flags & HERD__START_TIED) != 0;
    rt->serve_limits = (flags & HERD__START_SERVING) != 0;
    rt->rescue = (flags & HERD__START_RESCUE) != 0;
    if (rt->serve_limits)
        herd__serve_init(rt);
    int rc = rt_prepare(rt, cfg);
    if (rc == 0)
        stack_report_setup(rt, cfg, flags, stack_setting);
    int gated = rc == 0 && HERD__BIND_MAPPED(rt->set.bind);
    rt->start_ns = herd__now_ns();
    if (gated) {
        rt->holding = 1;
        if (rt->adopt)
            choose_pu(&rt->workers[0], pin_nobody); /* P1, P2 for the lent thread */
        rc = start_threads(rt, &started);           /* each chooses its PU: P1, P2 */
        int wrc = wait_placed(rt, started > 0 ? started : rt->adopt);
        if (rc == 0)
            rc = wrc;
    } else if (rc == 0) {
        rc = place_up_front(rt, 0);
    }
    if (rc == 0)
        rc = rt_finish(rt); /* P3 */
    if (rc == 0 && (rc = herd__overflow_install()) != 0)
        fprintf(stderr,
                "herd: herd_start: cannot install the stack-overflow handler "
                "(sigaction SIGSEGV): %s\n",
                strerror(errno));
    if (rc == 0)
        rc = herd__rescue_start(rt); /* before the workers that poke */
    if (rc == 0 && !gated)
        rc = start_threads(rt, &started);
    if (rc == 0)
        rc = herd__watchdog_start(rt); /* last: nothing after it fails */
    if (rc) {
        abort_start(rt, started, gated);
        herd__rt_free(rt);
        pthread_mutex_unlock(&lifecycle);
        return rc;
    }
    if (gated)
        open_gate(rt, HERD__GATE_OPEN); /* P4 */
    /* ORDER: release; pairs with the acquire load in herd_run(), so a run
     * that sees the runtime sees it fully built. */
    __atomic_store_n(&herd__rt_global, rt, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lifecycle);
    return 0;
}

#define LOAD_ROOTS(c) atomic_load_explicit(&(c)->roots, memory_order_relaxed)

static void collect_stats(herd__rt *rt, herd_worker_stats *out, int n) {
    uint64_t elapsed = herd__now_ns() - rt->start_ns;
    for (int i = 0; i < n; i++) {
        herd__counters *c = &rt->workers[i].stats;
#define LOAD(f) atomic_load_explicit(&c->f, memory_order_relaxed)
        out[i] = (herd_worker_stats){
            .spawned = atomic_load_explicit(&rt->workers[i].hot.spawned, memory_order_relaxed),
            .inlined = atomic_load_explicit(&rt->workers[i].hot.inlined, memory_order_relaxed),
            .steals = LOAD(steals),
            .steals_local = LOAD(steals_local),
            .steals_remote = LOAD(steals_remote),
            .stolen_tasks = LOAD(stolen_tasks),
            .max_chunk = LOAD(max_chunk),
            .steal_attempts = LOAD(steal_attempts),
            .failed_steals = LOAD(failed_steals),
            .blocks = LOAD(blocks),
            .stacks_allocated = LOAD(stacks_allocated),
            .rescues = LOAD(rescues),
            .idle_ns = LOAD(idle_ns),
        };
#undef LOAD
        out[i].executed = out[i].inlined + LOAD_ROOTS(c);
        out[i].shepherd = rt->workers[i].shepherd;
        out[i].busy_ns = elapsed > out[i].idle_ns ? elapsed - out[i].idle_ns : 0;
    }
}

HERD_API int herd_stop(void) {
    if (herd__self())
        return HERD_ETASK;
    pthread_mutex_lock(&lifecycle);
    herd__rt *rt = herd__rt_global;
    if (!rt) {
        pthread_mutex_unlock(&lifecycle);
        return HERD_ESTATE;
    }
    /* Refuse new runs, then wait for the ones in progress (see herd_run).
     * ORDER: seq_cst store then load; pairs with herd_run()'s seq_cst
     * increment then load of `closing`. */
    atomic_store_explicit(&rt->closing, 1, memory_order_seq_cst);
    while (atomic_load_explicit(&runs_in_progress, memory_order_seq_cst) != 0)
        usleep(1000);
    /* Adopt mode: and for the thread holding worker 0. ORDER: acquire; pairs
     * with the release in herd__adopt_leave(): its work on worker 0 is done. */
    while (atomic_load_explicit(&rt->adopted, memory_order_acquire) != 0)
        usleep(1000);
    herd__watchdog_stop(rt);
    herd_worker_stats *st = calloc((size_t)rt->nworkers, sizeof *st);
    stop_workers(rt, rt->nworkers);
    herd__rescue_stop(rt); /* after the workers, which poke */
    int rc = 0;
    if (st) {
        collect_stats(rt, st, rt->nworkers);
        rc = herd__stats_report(&rt->set, st, rt->nworkers);
        free(st);
    }
    /* The workers are joined: their trace buffers are ours to read. */
    int trc = herd__trace_write(rt);
    if (trc)
        rc = trc;
    /* ORDER: release; pairs with the acquire loads in herd_run() and
     * herd_num_workers() (no run is in progress: closing refused new ones). */
    __atomic_store_n(&herd__rt_global, NULL, __ATOMIC_RELEASE);
    herd__rt_free(rt);
    pthread_mutex_unlock(&lifecycle);
    return rc;
}

/* A run begins: counted in runs_in_progress, so that herd_stop waits for
 * it; *out the runtime. HERD_ESTATE (not counted) when none is started or
 * herd_stop began. */
static int run_begin(herd__rt **out) {
    /* ORDER: seq_cst; pairs with herd_stop(): either stop sees this run and
     * waits for it, or this run sees `closing` and backs out. */
    atomic_fetch_add_explicit(&runs_in_progress, 1, memory_order_seq_cst);
    herd__rt *rt = __atomic_load_n(&herd__rt_global, __ATOMIC_ACQUIRE);
    if (!rt || atomic_load_explicit(&rt->closing, memory_order_seq_cst)) {
        atomic_fetch_sub_explicit(&runs_in_progress, 1, memory_order_seq_cst);
        return HERD_ESTATE;
    }
    *out = rt;
    return 0;
}

void herd__run_end(void) {
    /* ORDER: seq_cst; pairs with herd_stop()'s seq_cst load of runs_in_progress. */
    atomic_fetch_sub_explicit(&runs_in_progress, 1, memory_order_seq_cst);
}

int herd__inject(herd_fn fn, const void *arg, size_t arg_size, uint16_t kind, void *parent) {
    if (!fn || arg_size > HERD_ARG_MAX || (arg_size && !arg))
        return HERD_EINVAL;
    herd__rt *rt;
    int rc = run_begin(&rt);
    if (rc)
        return rc;
    /* Work from outside an OpenMP team: every worker serves again, unless a
     * team holds the limit now (G4). */
    herd__serve_unheld(rt);
    herd__inject_node *n = malloc(sizeof *n);
    if (!n) {
        herd__run_end();
        return HERD_ENOMEM;
    }
    n->next = NULL;
    n->task.fn = fn;
    n->task.parent = parent;
    n->task.kind = kind;
    n->task.size = (uint16_t)arg_size;
    if (arg_size)
        memcpy(n->task.arg, arg, arg_size);
    herd__spin_lock(&rt->inject_lock);
    if (rt->inject_tail)
        rt->inject_tail->next = n;
    else
        rt->inject_head = n;
    rt->inject_tail = n;
    atomic_fetch_add_explicit(&rt->inject_size, 1, memory_order_relaxed);
    herd__spin_unlock(&rt->inject_lock);
    herd__wake_one(rt); /* W3 */
    return 0;
}

HERD_API int herd_run(herd_fn fn, const void *arg, size_t arg_size) {
    if (herd__self())
        return HERD_ETASK;
    herd__join done;
    atomic_init(&done.pending, 1);
    atomic_init(&done.waiter, HERD__WAITER_EXTERNAL);
    atomic_init(&done.futex, 0);
    int rc = herd__inject(fn, arg, arg_size, HERD__KIND_ROOT, &done);
    if (rc)
        return rc;
    /* ORDER: acquire; pairs with the release store in herd__join_done(): the
     * root's and its descendants' writes are visible when we return. */
    while (atomic_load_explicit(&done.futex, memory_order_acquire) == 0)
        herd__futex_wait(&done.futex, 0);
    herd__run_end();
    return 0;
}

HERD_API int herd_num_workers(void) {
    /* ORDER: acquire; pairs with the release stores in herd_start()/herd_stop(). */
    herd__rt *rt = __atomic_load_n(&herd__rt_global, __ATOMIC_ACQUIRE);
    return rt ? rt->nworkers : 0;
}

HERD_API int herd_worker_id(void) {
    herd__worker *w = herd__self();
    return w ? w->id : -1;
}

HERD_API int herd_stats(herd_worker_stats *out, int max) {
    herd__worker *self = herd__self();
    if (self) {
        /* Inside a task the runtime cannot stop under us (herd_stop waits for
         * every run), and herd_stop may hold the lock while it waits. */
        int n = self->rt->nworkers;
        if (out && max > 0)
            collect_stats(self->rt, out, max < n ? max : n);
        return n;
    }
    pthread_mutex_lock(&lifecycle);
    herd__rt *rt = herd__rt_global;
    if (!rt) {
        pthread_mutex_unlock(&lifecycle);
        return HERD_ESTATE;
    }
    int n = rt->nworkers;
    if (out && max > 0)
        collect_stats(rt, out, max < n ? max : n);
    pthread_mutex_unlock(&lifecycle);
    return n;
}

/* ------------------------------------------------- `herd topo` (seam_tools.h) */

int herd__plan_build(herd__rt **out, herd__plan *plan) {
    *out = NULL;
    herd__rt *rt = calloc(1, sizeof *rt);
    if (!rt) {
        fprintf(stderr, "herd: out of memory\n");
        return HERD_ENOMEM;
    }
    int rc = herd__rt_build(rt, NULL); /* prints what is wrong */
    if (rc != 0) {
        herd__rt_free(rt);
        return rc;
    }
    *plan = (herd__plan){.set = &rt->set,
                         .topo = &rt->topo,
                         .nworkers = rt->nworkers,
                         .pu_of_worker = rt->pu_of_worker,
                         .shepherd_level = rt->shepherd_level,
                         .nshepherds = rt->nshepherds,
                         .shepherds = rt->shepherds,
                         .sched = rt->sched->name,
                         .reg = rt->reg};
    *out = rt;
    return 0;
}

void herd__plan_victims(const herd__rt *rt, int worker, char *buf, size_t len) {
    rt->sched->describe_victims(&rt->sched_env, worker, buf, len);
}

void herd__plan_free(herd__rt *rt) {
    herd__rt_free(rt);
}
