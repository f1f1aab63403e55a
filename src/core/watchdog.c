/* The hang watchdog and the dump of blocked tasks (watchdog.h).
 *
 * Progress: the sum over workers of four counters the runtime keeps anyway
 * (tasks spawned, tasks run inline, tasks run from a queue, suspensions);
 * nothing is added to the task paths. A hang: that sum unchanged for
 * HERD_WATCHDOG seconds while at least one task is blocked. The thread
 * samples the sum a few times per period, sleeping in poll() between; it
 * walks the ULT list only once the sum has stood still for the whole period.
 *
 * SIGQUIT (while herd runs, unless HERD_WATCHDOG=off): the handler only sets
 * a flag and writes to an eventfd (both async-signal-safe); this thread
 * wakes and prints the dump, and the program goes on. A handler the
 * program had installed runs after ours; an ignored SIGQUIT stays ignored. */
#include "core/watchdog.h"

void herd__wait_enter(herd__wait_ctx *c, int kind, const void *obj, void *ra) {
    herd__worker *w = herd__self();
    c->kind = HERD__WAIT_NONE;
    if (!w || !w->cur)
        return;
    c->kind = kind;
    c->obj = obj;
    c->ra = ra;
    c->prev = w->cur->ctx;
    w->cur->ctx = c;
}

void herd__wait_leave(herd__wait_ctx *c) {
    if (c->kind == HERD__WAIT_NONE)
        return;
    /* The task may have resumed on another worker, on the same ULT. */
    herd__ult *u = herd__self()->cur;
    HERD_ASSERT(u->ctx == c);
    u->ctx = c->prev;
}

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* ------------------------------------------------------- the ULT records */

void herd__ult_track(herd__rt *rt, herd__ult *u) {
    herd__spin_lock(&rt->ults_lock);
    u->all_prev = NULL;
    u->all_next = rt->ults;
    if (rt->ults)
        rt->ults->all_prev = u;
    rt->ults = u;
    herd__spin_unlock(&rt->ults_lock);
}

void herd__ult_untrack(herd__rt *rt, herd__ult *u) {
    herd__spin_lock(&rt->ults_lock);
    if (u->all_prev)
        u->all_prev->all_next = u->all_next;
    else
        rt->ults = u->all_next;
    if (u->all_next)
        u->all_next->all_prev = u->all_prev;
    herd__spin_unlock(&rt->ults_lock);
}

void herd__wait_record(herd__worker *w, herd__ult *u, int kind, const void *obj, void *ra) {
    HERD_ASSERT_OWNER(w);
    herd__waitrec *r = &u->wait;
    int lvl = 1;
    /* ORDER: relaxed stores throughout, published by the release store of
     * kind[0] below (the dump's acquire load of kind[0] pairs). */
    for (herd__wait_ctx *c = u->ctx; c && lvl < HERD__WAIT_LEVELS; c = c->prev, lvl++) {
        atomic_store_explicit(&r->kind[lvl], c->kind, memory_order_relaxed);
        atomic_store_explicit(&r->obj[lvl], c->obj, memory_order_relaxed);
        atomic_store_explicit(&r->ra[lvl], c->ra, memory_order_relaxed);
    }
    if (lvl < HERD__WAIT_LEVELS)
        atomic_store_explicit(&r->kind[lvl], HERD__WAIT_NONE, memory_order_relaxed);
    herd_fn fn = w->hot.frame ? w->hot.frame->fn : NULL;
    atomic_store_explicit(&r->fn, *(void **)&fn, memory_order_relaxed);
    atomic_store_explicit(&r->worker, w->id, memory_order_relaxed);
    atomic_store_explicit(&r->obj[0], obj, memory_order_relaxed);
    atomic_store_explicit(&r->ra[0], ra, memory_order_relaxed);
    atomic_store_explicit(&r->kind[0], kind, memory_order_release);
}

/* ------------------------------------------------------------- the dump */

static const char *const kind_names[HERD__WAIT_NKINDS] = {
    [HERD__WAIT_NONE] = "nothing",
    [HERD__WAIT_MUTEX] = "mutex",
    [HERD__WAIT_COND] = "condition variable",
    [HERD__WAIT_BARRIER] = "barrier",
    [HERD__WAIT_FEB] = "full/empty word",
    [HERD__WAIT_FUTURE] = "future",
    [HERD__WAIT_GROUP] = "group",
    [HERD__WAIT_CHILDREN] = "children (herd_wait, or the end of a task) of frame",
    [HERD__WAIT_OMP_BARRIER] = "OpenMP barrier",
    [HERD__WAIT_OMP_TASKWAIT] = "OpenMP taskwait of task",
    [HERD__WAIT_OMP_TASKGROUP] = "OpenMP taskgroup",
    [HERD__WAIT_OMP_LOCK] = "OpenMP lock",
    [HERD__WAIT_OMP_CRITICAL] = "OpenMP critical",
    [HERD__WAIT_OMP_DEPEND] = "OpenMP dependences of task",
    [HERD__WAIT_OMP_REGION] = "end of the OpenMP parallel region of team",
    [HERD__WAIT_FORK] = "tasks of the fork (one per worker) at",
};

typedef struct snap {
    int kind[HERD__WAIT_LEVELS];
    const void *obj[HERD__WAIT_LEVELS];
    void *ra[HERD__WAIT_LEVELS];
    void *fn;
    int worker;
} snap;

/* Copy u's record into *s if u is blocked: 1, else 0. */
static int take(herd__ult *u, snap *s) {
    /* ORDER: acquire; pairs with herd__wait_record()'s release store. */
    s->kind[0] = atomic_load_explicit(&u->wait.kind[0], memory_order_acquire);
    if (s->kind[0] <= HERD__WAIT_NONE || s->kind[0] >= HERD__WAIT_NKINDS)
        return 0;
    for (int i = 0; i < HERD__WAIT_LEVELS; i++) {
        /* ORDER: relaxed; see above. */
        if (i)
            s->kind[i] = atomic_load_explicit(&u->wait.kind[i], memory_order_relaxed);
        s->obj[i] = atomic_load_explicit(&u->wait.obj[i], memory_order_relaxed);
        s->ra[i] = atomic_load_explicit(&u->wait.ra[i], memory_order_relaxed);
    }
    s->fn = atomic_load_explicit(&u->wait.fn, memory_order_relaxed);
    s->worker = atomic_load_explicit(&u->wait.worker, memory_order_relaxed);
    return 1;
}

/* Append u's record to *v if u is blocked; 0, or -1 when out of memory. */
static int add(herd__ult *u, snap **v, int *n, int *cap) {
    if (*n == *cap) {
        int ncap = *cap ? 2 * *cap : 16;
        snap *nv = realloc(*v, (size_t)ncap * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = ncap;
    }
    *n += take(u, &(*v)[*n]);
    return 0;
}

/* The blocked tasks now, in a malloc'ed array (*out); returns how many. */
static int collect(herd__rt *rt, snap **out) {
    int n = 0, cap = 0;
    snap *v = NULL;
    /* Adopt mode: a thread's own stack, lent to worker 0. */
    for (int i = 0; i < rt->nworkers; i++)
        if (add(&rt->workers[i].native_ult, &v, &n, &cap))
            break;
    herd__spin_lock(&rt->ults_lock); /* records are not freed meanwhile */
    for (herd__ult *u = rt->ults; u; u = u->all_next)
        if (add(u, &v, &n, &cap))
            break; /* out of memory: print what we have */
    herd__spin_unlock(&rt->ults_lock);
    *out = v;
    return n;
}

static void describe(void *p, char *buf, size_t len) {
    Dl_info info;
    if (p && dladdr(p, &info) && info.dli_fname) {
        unsigned long off = (unsigned long)((char *)p - (char *)info.dli_saddr);
        if (info.dli_sname && off == 0)
            snprintf(buf, len, "%s (%s)", info.dli_sname, info.dli_fname);
        else if (info.dli_sname)
            snprintf(buf, len, "%s+%#lx (%s)", info.dli_sname, off, info.dli_fname);
        else
            snprintf(buf, len, "%s+%#lx", info.dli_fname,
                     (unsigned long)((char *)p - (char *)info.dli_fbase));
    } else {
        snprintf(buf, len, "%p", p);
    }
}

static void print_one(const snap *s, int i, int n) {
    char where[600], fn[600];
    describe(s->ra[0], where, sizeof where);
    describe(s->fn, fn, sizeof fn);
    fprintf(stderr,
            "herd: blocked task %d/%d on worker %d: waits on %s %p at %s; task function %s\n",
            i + 1, n, s->worker, kind_names[s->kind[0]], s->obj[0], where, fn);
    for (int l = 1; l < HERD__WAIT_LEVELS; l++) {
        if (s->kind[l] <= HERD__WAIT_NONE || s->kind[l] >= HERD__WAIT_NKINDS)
            break;
        describe(s->ra[l], where, sizeof where);
        fprintf(stderr, "herd:     inside %s %p at %s\n", kind_names[s->kind[l]], s->obj[l], where);
    }
}

/* ----------------------------------------------------- the watchdog thread */

static struct {
    herd__rt *rt;
    pthread_t thread;
    int running;
    int efd;
    int efd_open;
    _Atomic int stop;
    int quit_installed;
    struct sigaction prev_quit;
} wd;

/* Read by the signal handler: the eventfd, -1 when none. */
static _Atomic int quit_fd = -1;
static _Atomic int dump_requested;

static uint64_t progress(herd__rt *rt) {
    uint64_t sum = 0;
    for (int i = 0; i < rt->nworkers; i++) {
        herd__worker *w = &rt->workers[i];
        /* ORDER: relaxed; owner-written counters, a late view only delays
         * the watchdog's verdict. */
        sum += atomic_load_explicit(&w->hot.spawned, memory_order_relaxed) +
               atomic_load_explicit(&w->hot.inlined, memory_order_relaxed) +
               atomic_load_explicit(&w->stats.roots, memory_order_relaxed) +
               atomic_load_explicit(&w->stats.blocks, memory_order_relaxed);
    }
    return sum;
}

/* Print the blocked tasks; returns how many. On the watchdog's verdict
 * (secs > 0) nothing is printed when none is blocked. */
static int dump(herd__rt *rt, unsigned secs) {
    snap *v;
    int n = collect(rt, &v);
    if (secs && n == 0) {
        free(v);
        return 0;
    }
    if (secs)
        fprintf(stderr,
                "herd: watchdog: no task started, finished or switched for %u s while %d %s "
                "blocked (HERD_WATCHDOG=%u%s):\n",
                secs, n, n == 1 ? "task is" : "tasks are", secs,
                rt->set.watchdog_report ? ",report" : "");
    else
        fprintf(stderr, "herd: blocked tasks on request (SIGQUIT): %d\n", n);
    for (int i = 0; i < n; i++)
        print_one(&v[i], i, n);
    fprintf(stderr, "herd: end of the dump\n");
    free(v);
    return n;
}

static void *watchdog_main(void *arg) {
    herd__rt *rt = arg;
    /* The thread takes no signal but SIGQUIT: a program whose threads all
     * block SIGQUIT still gets its dump, and the handler then runs in a
     * thread that sleeps in poll(), which ThreadSanitizer's deferred signal
     * delivery also serves (a worker in a raw futex call would hold it).
     * Set here, not inherited: ASan's pthread_create starts threads with
     * every signal blocked. */
    sigset_t mask;
    sigfillset(&mask);
    sigdelset(&mask, SIGQUIT);
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    unsigned secs = rt->set.watchdog_s;
    uint64_t period = (uint64_t)secs * 1000000000u;
    int tick_ms = secs ? (int)(secs * 1000u / 4 < 1000 ? secs * 1000u / 4 : 1000) : -1;
    uint64_t last = progress(rt), since = herd__now_ns();
    int reported = 0;
    for (;;) {
        struct pollfd p = {.fd = wd.efd, .events = POLLIN};
        if (poll(&p, 1, tick_ms) > 0) {
            uint64_t v;
            (void)!read(wd.efd, &v, sizeof v);
        }
        /* A dump asked for before herd_stop is printed, even at the stop.
         * ORDER: relaxed; the eventfd's write/read orders the handler's store. */
        if (atomic_exchange_explicit(&dump_requested, 0, memory_order_relaxed))
            dump(rt, 0);
        /* ORDER: acquire; pairs with the release store in herd__watchdog_stop(). */
        if (atomic_load_explicit(&wd.stop, memory_order_acquire))
            return NULL;
        if (!secs)
            continue;
        uint64_t now_p = progress(rt), now = herd__now_ns();
        if (now_p != last) {
            last = now_p;
            since = now;
            reported = 0;
            continue;
        }
        if (reported || now - since < period)
            continue;
        if (dump(rt, secs) == 0) {
            since = now; /* standing still with nothing blocked: not a hang */
            continue;
        }
        if (!rt->set.watchdog_report) {
            fprintf(stderr,
                    "herd: watchdog: aborting (HERD_WATCHDOG=%u,report reports "
                    "without stopping)\n",
                    secs);
            abort();
        }
        fprintf(stderr, "herd: watchdog: the program goes on (report only)\n");
        reported = 1;
    }
}

static void on_quit(int sig, siginfo_t *si, void *uc) {
    int saved = errno;
    /* ORDER: relaxed; published by the eventfd write (a system call). */
    atomic_store_explicit(&dump_requested, 1, memory_order_relaxed);
    int fd = atomic_load_explicit(&quit_fd, memory_order_relaxed);
    if (fd >= 0) {
        uint64_t one = 1;
        (void)!write(fd, &one, sizeof one);
    }
    errno = saved;
    herd__signal_chain(&wd.prev_quit, sig, si, uc); /* a handler the program had installed */
}

static void install_quit(void) {
    struct sigaction old;
    if (sigaction(SIGQUIT, NULL, &old) != 0 ||
        (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN))
        return; /* ignored on purpose (a background job): leave it so */
    if (herd__signal_take(SIGQUIT, on_quit, SA_RESTART, &wd.prev_quit) == 0)
        wd.quit_installed = 1;
}

static void uninstall_quit(void) {
    if (!wd.quit_installed)
        return;
    herd__signal_give_back(SIGQUIT, on_quit, &wd.prev_quit);
    wd.quit_installed = 0;
}

int herd__watchdog_start(herd__rt *rt) {
    if (rt->set.watchdog_off)
        return 0;
    /* One eventfd for the process, never closed: a signal handler that
     * read quit_fd just before a stop must not write into a reused fd. */
    if (!wd.efd_open) {
        wd.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (wd.efd < 0) {
            fprintf(stderr, "herd: cannot start the watchdog: eventfd: %s\n", strerror(errno));
            return HERD_ESYS;
        }
        wd.efd_open = 1;
    }
    atomic_store_explicit(&wd.stop, 0, memory_order_relaxed);
    wd.rt = rt;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* none before it sets its own mask */
    int rc = pthread_create(&wd.thread, NULL, watchdog_main, rt);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        fprintf(stderr, "herd: cannot start the watchdog thread: %s\n", strerror(rc));
        return HERD_ESYS;
    }
    wd.running = 1;
    atomic_store_explicit(&quit_fd, wd.efd, memory_order_relaxed); /* ORDER: see on_quit */
    install_quit();
    return 0;
}

void herd__watchdog_stop(herd__rt *rt) {
    (void)rt;
    if (!wd.running)
        return;
    uninstall_quit();
    atomic_store_explicit(&quit_fd, -1, memory_order_relaxed); /* ORDER: see on_quit */
    /* ORDER: release; pairs with the acquire load in watchdog_main(). */
    atomic_store_explicit(&wd.stop, 1, memory_order_release);
    uint64_t one = 1;
    (void)!write(wd.efd, &one, sizeof one);
    pthread_join(wd.thread, NULL);
    uint64_t v;
    (void)!read(wd.efd, &v, sizeof v); /* drain, for the next start */
    wd.running = 0;
}
