/* Stack overflow reports (docs/design/stacks.md): a fault in a running
 * stack's guard region, a fault taken while the stack pointer is below the
 * running stack (a frame larger than the guard), or a smashed canary found
 * when a stack is switched away from (stacks without a guard), stops the
 * program with a message that names the task's function, the function that
 * overflowed, the stack size and the setting that sized it. Never a silent
 * corruption. */
#include "core/runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#define ALTSTACK_SIZE (64 * 1024)

static struct sigaction previous_segv;
static int installed;

static void describe_addr(void *p, char *buf, size_t len) {
    Dl_info info;
    if (p && dladdr(p, &info) && info.dli_sname)
        snprintf(buf, len, "%s", info.dli_sname);
    else if (p && dladdr(p, &info) && info.dli_fname)
        snprintf(buf, len,
                 "%p (%s+%#lx, not in the dynamic symbol table: addr2line -f -e %s %#lx names it, "
                 "or link with -rdynamic)",
                 p, info.dli_fname, (unsigned long)((char *)p - (char *)info.dli_fbase),
                 info.dli_fname, (unsigned long)((char *)p - (char *)info.dli_fbase));
    else
        snprintf(buf, len, "%p", p);
}

/* "8388608 bytes (8 MiB; <what>)" */
static void describe_size(size_t n, const char *what, char *buf, size_t len) {
    if (n >= ((size_t)1 << 20) && n % ((size_t)1 << 20) == 0)
        snprintf(buf, len, "%zu bytes (%zu MiB; %s)", n, n >> 20, what);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(buf, len, "%zu bytes (%zu KiB; %s)", n, n >> 10, what);
    else
        snprintf(buf, len, "%zu bytes (%s)", n, what);
}

static void report(herd__worker *w, const char *how, void *pc) {
    const herd__stack_conf *c = &w->rt->stacks;
    char task[512], where[600] = "", size[160], msg[1800];
    herd_fn fn = w->hot.frame ? w->hot.frame->fn : NULL;
    if (c->name_by_pc && pc)
        describe_addr(pc, task, sizeof task);
    else if (fn)
        describe_addr(*(void **)&fn, task, sizeof task);
    else
        snprintf(task, sizeof task, "(scheduler)");
    if (pc && !c->name_by_pc) {
        char f[512];
        describe_addr(pc, f, sizeof f);
        snprintf(where, sizeof where, ", overflowing in %s", f);
    }
    int n;
    if (w->cur && w->cur->stack->native) {
        describe_size(w->cur->stack->native_size, "the main thread's is ulimit -s", size,
                      sizeof size);
        n = snprintf(msg, sizeof msg,
                     "herd: stack overflow in task %s on worker %d (%s%s), on the thread's own "
                     "stack of %s; raise it or use less stack in the task.\n",
                     task, w->id, how, where, size);
    } else {
        describe_size(c->size, c->setting, size, sizeof size);
        n = snprintf(msg, sizeof msg,
                     "herd: stack overflow in task %s on worker %d (%s%s). Each task stack has "
                     "%s; raise %s or use less stack in the task.\n",
                     task, w->id, how, where, size, c->setting);
    }
    if (n > 0)
        (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

static void context_regs(void *ctx, uintptr_t *sp, void **pc) {
    *sp = 0;
    *pc = NULL;
    const ucontext_t *uc = ctx;
    if (!uc)
        return;
#if defined(__x86_64__)
    *sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    *pc = (void *)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    *sp = (uintptr_t)uc->uc_mcontext.sp;
    *pc = (void *)uc->uc_mcontext.pc;
#endif
}

static void on_segv(int sig, siginfo_t *si, void *ctx) {
    herd__worker *w = herd__self();
    uintptr_t sp;
    void *pc;
    context_regs(ctx, &sp, &pc);
    if (w && w->cur) {
        const herd__stack *s = w->cur->stack;
        const char *how = NULL;
        char buf[160];
        if (!s->native && herd__stack_in_guard(s, si->si_addr)) {
            how = "hit the guard region";
        } else if (herd__stack_sp_below(s, sp)) {
            /* A frame larger than what was left of the stack and its
             * guard: the fault is wherever its first store landed. */
            snprintf(buf, sizeof buf, "stack pointer %#lx bytes below the stack",
                     (unsigned long)((uintptr_t)s->low - sp));
            how = buf;
        }
        if (how) {
            report(w, how, pc);
            signal(SIGABRT, SIG_DFL);
            abort();
        }
    }
    /* Not ours: put the previous disposition back; the fault repeats and
     * reaches it. */
    sigaction(sig, &previous_segv, NULL);
}

int herd__overflow_install(void) {
    if (installed)
        return 0;
    if (herd__signal_take(SIGSEGV, on_segv, SA_ONSTACK, &previous_segv) != 0)
        return HERD_ESYS;
    installed = 1;
    return 0;
}

int herd__overflow_thread_init(herd__worker *w) {
    stack_t ss;
    ss.ss_sp = malloc(ALTSTACK_SIZE);
    if (!ss.ss_sp)
        return HERD_ENOMEM;
    ss.ss_size = ALTSTACK_SIZE;
    ss.ss_flags = 0;
    if (sigaltstack(&ss, NULL) != 0) {
        free(ss.ss_sp);
        return HERD_ESYS;
    }
    w->altstack = ss.ss_sp;
    return 0;
}

void herd__overflow_thread_fini(herd__worker *w) {
    if (!w->altstack)
        return;
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, NULL);
    free(w->altstack);
    w->altstack = NULL;
}

/* A thread that lends itself as a worker (adopt mode) runs tasks on herd's
 * stacks too: without an alternate signal stack, the fault of an overflow
 * could not be delivered (the stack it would run on is the one that is
 * full) and the kernel would kill the process with a bare SIGSEGV. A thread
 * that has one of its own keeps it; ours is freed when the thread exits. */
static pthread_key_t adopter_key;
static pthread_once_t adopter_once = PTHREAD_ONCE_INIT;

static void adopter_altstack_free(void *p) {
    stack_t ss, cur;
    if (sigaltstack(NULL, &cur) == 0 && cur.ss_sp == p) {
        memset(&ss, 0, sizeof ss);
        ss.ss_flags = SS_DISABLE;
        sigaltstack(&ss, NULL);
    }
    free(p);
}

static void adopter_key_make(void) {
    (void)pthread_key_create(&adopter_key, adopter_altstack_free);
}

/* Checked once per thread: adopt_enter runs at every outermost parallel
 * region, and a system call there would show in its overhead. */
static __thread int adopter_checked;

void herd__overflow_adopter_init(void) {
    if (adopter_checked)
        return;
    adopter_checked = 1;
    stack_t cur;
    if (sigaltstack(NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE))
        return; /* it has one of its own */
    pthread_once(&adopter_once, adopter_key_make);
    stack_t ss;
    ss.ss_sp = malloc(ALTSTACK_SIZE);
    if (!ss.ss_sp)
        return;
    ss.ss_size = ALTSTACK_SIZE;
    ss.ss_flags = 0;
    if (sigaltstack(&ss, NULL) != 0 || pthread_setspecific(adopter_key, ss.ss_sp) != 0) {
        adopter_altstack_free(ss.ss_sp);
        return;
    }
}

void herd__overflow_report_canary(herd__worker *w, herd__ult *u) {
    (void)u;
    report(w, "the canary at the bottom of the stack was overwritten", NULL);
    abort();
}
