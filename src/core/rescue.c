/* The rescue of tasks a worker keeps private while it spins in user code
 * (rescue.h; docs/design/split-deque.md, "Rescue").
 *
 *  R1 Each worker records the kernel thread that runs it (tid): its
 *     pthread, or in adopt mode the thread that holds worker 0, 0 between
 *     holders.
 *  R2 A thief that has searched in vain for HERD__RESCUE_AFTER_NS pokes
 *     every other worker v whose queued_note is set, that a thief asked for
 *     work (split_req) and that its owner has not answered, that runs (its
 *     thread is in state R: a thread asleep in a system call is not
 *     interrupted, so a task's sleep() is not cut short), and that was not
 *     poked in the last HERD__RESCUE_GAP_NS unless that poke was answered
 *     (a CAS on poked_ns: one thief pokes; a handler that published sets
 *     it back to 0). The poke is tgkill(SIGURG).
 *  R3 The OpenMP layer sets queued_note when a task queues a task.
 *  R4 The owner clears it when it finds its deque empty, and the handler
 *     when it finds the private part empty.
 *  R5 The handler, on v's thread, publishes v's whole private part (S3,
 *     repeated) when the thread was interrupted outside herd's code and no
 *     step of the deque that calls out of herd's code is half done
 *     (rescue_off, herd__rescue_hold: S8's memmove, S7's malloc and lock).
 *     Elsewhere in herd's code a step may be half done; outside it, the
 *     owner is in the task's body (or a function it called), in libc
 *     called by a push (S1: the slot above head, not yet counted) or by a
 *     pop (S2: the slot at head, already taken away), and the deque's
 *     owner-side state is whole. Interrupted at a bad moment, the handler
 *     does nothing, and the next poke tries again.
 * The handler runs on the owner's thread, so it is the owner: S3 is its
 * own step. Not in ThreadSanitizer builds, whose runtime runs a handler
 * at the thread's next intercepted call, where the program counter it was
 * given no longer says where the thread is. Under a scheduler that shares
 * through queues of its own (mts, central) the handler publishes all the
 * same, on a deque no thief of theirs reads otherwise: their thieves take
 * what a rescue published (herd__steal_rescued, sched/victims.c), and S7
 * shares nothing while any of the deque is public. */
#include "core/rescue.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__x86_64__)
#define PC_OF(uc) ((uintptr_t)(uc)->uc_mcontext.gregs[REG_RIP])
#elif defined(__aarch64__)
#define PC_OF(uc) ((uintptr_t)(uc)->uc_mcontext.pc)
#endif

static struct {
    int installed;
    struct sigaction prev;
    uintptr_t lo, hi; /* herd's own code (the object this file is in) */
} rs;

/* herd's own code: the executable segments of the object this file is
 * linked into (libherd, or libherd-omp which contains core). */
static int find_text(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size;
    uintptr_t me = (uintptr_t)arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (me < lo || me >= hi)
        return 0;
    rs.lo = lo;
    rs.hi = hi;
    return 1;
}

static void publish_all(herd__worker *w) {
    herd__sdq *q = &w->hot.q;
    while (q->head != q->split) {
        if (herd__sdq_publish(q) == 0)
            break;
    }
    herd__wake_one(w->rt); /* W3 */
}

/* R5. */
static void on_poke(int sig, siginfo_t *si, void *ucv) {
    if (si->si_code != SI_TKILL || si->si_pid != getpid()) {
        herd__signal_chain(&rs.prev, sig, si, ucv); /* the program's own (out-of-band data) */
        return;
    }
#ifdef PC_OF
    int saved = errno;
    herd__worker *w = herd__self();
    uintptr_t pc = PC_OF((ucontext_t *)ucv);
    /* ORDER: the handler runs on the owner's thread; the signal fences keep
     * the compiler from moving its accesses to the owner's fields past
     * them, and pair with those around rescue_off (core/task.c). */
    atomic_signal_fence(memory_order_seq_cst);
    if (w && w->hot.q.cap && !w->rescue_off && (pc < rs.lo || pc >= rs.hi)) {
        if (w->hot.q.head != w->hot.q.split) {
            publish_all(w);
            HERD__COUNT(w, rescues); /* only this handler writes it */
            /* ORDER: relaxed; answered: the next stuck spell may be poked
             * at once, not a gap after this poke (R2). */
            atomic_store_explicit(&w->poked_ns, 0, memory_order_relaxed);
        } else {
            herd__note_clear(w);
        }
    }
    atomic_signal_fence(memory_order_seq_cst);
    errno = saved;
#endif
}

int herd__rescue_start(herd__rt *rt) {
#if !defined(PC_OF) || defined(HERD_TSAN)
    /* No program counter to look at, or (ThreadSanitizer) a handler that
     * runs later than the signal, at the thread's next intercepted call,
     * which may be half-way through a step of the deque: no rescue. */
    (void)rt;
    return 0;
#else
    if (!rt->rescue || rs.installed)
        return 0;
    if (!rs.hi)
        dl_iterate_phdr(find_text, (void *)(uintptr_t)&on_poke);
    if (herd__signal_take(SIGURG, on_poke, SA_RESTART | SA_ONSTACK, &rs.prev) != 0) {
        fprintf(stderr, "herd: herd_start: cannot install the SIGURG handler: %s\n",
                strerror(errno));
        return HERD_ESYS;
    }
    rs.installed = 1;
    return 0;
#endif
}

void herd__rescue_stop(herd__rt *rt) {
    (void)rt;
    if (!rs.installed)
        return;
    herd__signal_give_back(SIGURG, on_poke, &rs.prev);
    rs.installed = 0;
}

static __thread pid_t self_tid; /* once per thread: adopt_enter runs per region */

void herd__rescue_thread_enter(herd__worker *w, int pthread_of_worker) {
    if (!w->rt->rescue)
        return;
    if (!self_tid)
        self_tid = (pid_t)syscall(SYS_gettid);
    /* ORDER: relaxed; a thief that reads a stale tid pokes a thread that
     * no longer runs w, whose handler then finds another worker or none. */
    atomic_store_explicit(&w->tid, self_tid, memory_order_relaxed);
    if (pthread_of_worker) {
        /* Some runtimes start threads with signals blocked (ASan's
         * pthread_create blocks them all): let the pokes in. The program's
         * own thread (adopt mode) keeps the mask it chose. */
        sigset_t urg;
        sigemptyset(&urg);
        sigaddset(&urg, SIGURG);
        pthread_sigmask(SIG_UNBLOCK, &urg, NULL);
    }
}

void herd__rescue_thread_leave(herd__worker *w) {
    if (w->rt->rescue)
        atomic_store_explicit(&w->tid, 0, memory_order_relaxed); /* ORDER: as enter */
}

/* Is thread tid of this process running (state R), not asleep in a call? */
static int running(pid_t tid) {
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the name may hold spaces and ')' */
    return p && p[1] == ' ' && p[2] == 'R';
}

/* Does v look stuck: a task queued, a thief's request unanswered, a thread? */
static pid_t stuck(herd__worker *v) {
    /* ORDER: relaxed; hints (R2), checked again by the handler (R5). */
    if (!atomic_load_explicit(&v->queued_note, memory_order_relaxed) ||
        !atomic_load_explicit(&v->hot.q.split_req, memory_order_relaxed))
        return 0;
    return atomic_load_explicit(&v->tid, memory_order_relaxed);
}

int herd__rescue_poke(herd__worker *w, uint64_t now, uint64_t idle_since) {
    herd__rt *rt = w->rt;
    if (!rt->rescue || !rs.installed)
        return 0;
    /* ORDER: seq_cst fence between this thief's requests (split_req, raised
     * by S4 or W2 before) and its reads of the notes; pairs with the fence
     * after a note's store (herd__note_queued) before the owner's next read
     * of split_req: the owner sees the request (and publishes at that
     * spawn), or this thief sees the note (and pokes, or sleeps short). */
    atomic_thread_fence(memory_order_seq_cst);
    int poke = now - idle_since >= HERD__RESCUE_AFTER_NS, any = 0;
    for (int i = 0; i < rt->nworkers; i++) {
        herd__worker *v = &rt->workers[i];
        pid_t tid;
        if (v == w || !(tid = stuck(v)))
            continue;
        any = 1;
        if (!poke)
            continue;
        /* ORDER: relaxed; the CAS only elects one poker per gap. */
        uint64_t last = atomic_load_explicit(&v->poked_ns, memory_order_relaxed);
        if (now - last < HERD__RESCUE_GAP_NS ||
            !atomic_compare_exchange_strong_explicit(&v->poked_ns, &last, now, memory_order_relaxed,
                                                     memory_order_relaxed))
            continue;
        if (running(tid) && herd__signal_ours(SIGURG, on_poke))
            syscall(SYS_tgkill, getpid(), tid, SIGURG);
    }
    return any;
}
