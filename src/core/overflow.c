/* Stack overflow reports: a fault in a running stack's guard page, or a
 * smashed canary found when a stack is switched away from, stops the program
 * with a message that names the task's function. Never a silent corruption. */
#include "core/runtime.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ALTSTACK_SIZE (64 * 1024)

static struct sigaction previous_segv;
static int installed;

static void describe_fn(herd_fn fn, char *buf, size_t len) {
    Dl_info info;
    void *p = *(void **)&fn;
    if (p && dladdr(p, &info) && info.dli_sname)
        snprintf(buf, len, "%s", info.dli_sname);
    else if (p && dladdr(p, &info) && info.dli_fname)
        snprintf(buf, len,
                 "%p (%s+%#lx, not in the dynamic symbol table: addr2line -f -e %s %#lx names it, "
                 "or link with -rdynamic)",
                 p,
                 info.dli_fname, (unsigned long)((char *)p - (char *)info.dli_fbase),
                 info.dli_fname, (unsigned long)((char *)p - (char *)info.dli_fbase));
    else
        snprintf(buf, len, "%p", p);
}

static void report(herd__worker *w, const char *how) {
    char name[512];
    describe_fn(w->hot.frame ? w->hot.frame->fn : NULL, name, sizeof name);
    char msg[1024];
    int n = snprintf(msg, sizeof msg,
                     "herd: stack overflow in task %s on worker %d (%s). Each task stack has %zu "
                     "bytes (HERD_STACK); raise HERD_STACK or use less stack in the task.\n",
                     w->hot.frame ? name : "(scheduler)", w->id, how, w->rt->stacks.size);
    if (n > 0)
        (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

static void on_segv(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    herd__worker *w = herd__self();
    if (w && w->cur && herd__stack_in_guard(w->cur->stack, si->si_addr)) {
        report(w, "hit the guard page");
        signal(SIGABRT, SIG_DFL);
        abort();
    }
    /* Not ours: put the previous disposition back; the fault repeats and
     * reaches it. */
    sigaction(sig, &previous_segv, NULL);
}

int herd__overflow_install(void) {
    if (installed)
        return 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &previous_segv) != 0)
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

void herd__overflow_report_canary(herd__worker *w, herd__ult *u) {
    (void)u;
    report(w, "the canary above the guard page was overwritten");
    abort();
}
