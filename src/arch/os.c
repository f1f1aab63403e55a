/* The operating system's primitives (arch/os.h). */
#include "arch/os.h"

#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

uint64_t herd__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The process-private futex pair, for every 32-bit word herd sleeps on. */
void herd__futex_wait(void *word, uint32_t val) {
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

void herd__futex_wait_ns(void *word, uint32_t val, uint64_t ns) {
    struct timespec t = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, &t, NULL, 0); /* relative timeout */
}

void herd__futex_wake(void *word, int n) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

int herd__signal_take(int sig, herd__sig_handler h, int flags, struct sigaction *prev) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = h;
    sa.sa_flags = SA_SIGINFO | flags;
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, prev);
}

int herd__signal_ours(int sig, herd__sig_handler h) {
    struct sigaction cur;
    return sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == h;
}

void herd__signal_give_back(int sig, herd__sig_handler h, const struct sigaction *prev) {
    if (herd__signal_ours(sig, h))
        sigaction(sig, prev, NULL);
}

void herd__signal_chain(const struct sigaction *prev, int sig, siginfo_t *si, void *uc) {
    if (prev->sa_flags & SA_SIGINFO) {
        if (prev->sa_sigaction)
            prev->sa_sigaction(sig, si, uc);
    } else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
        prev->sa_handler(sig);
    }
}
