/* The operating system's primitives that every layer shares: the futex
 * pair herd sleeps on and the monotonic clock (arch/os.c). */
#ifndef HERD_ARCH_OS_H
#define HERD_ARCH_OS_H

#include <signal.h>
#include <stdint.h>

/* Private futex on a 32-bit word: sleep while *word == val (returns at once
 * otherwise, or on a signal: callers recheck), and wake up to n sleepers. */
void herd__futex_wait(void *word, uint32_t val); /* word: any 32-bit atomic */
void herd__futex_wake(void *word, int n);
/* herd__futex_wait for at most ns nanoseconds. */
void herd__futex_wait_ns(void *word, uint32_t val, uint64_t ns);

/* The signal handlers herd installs while it runs (the watchdog's SIGQUIT,
 * the stack-overflow SIGSEGV, the rescue's SIGURG), one way:
 * take: install h (SA_SIGINFO | flags, no signal blocked), the previous
 * disposition in *prev; 0, or -1 with errno. ours: whether h is the
 * handler now (the program may have replaced it). give_back: put *prev
 * back, unless the program replaced h. chain: call the handler *prev
 * names, if any (from h, for a signal h does not serve). */
typedef void (*herd__sig_handler)(int sig, siginfo_t *si, void *uc);
int herd__signal_take(int sig, herd__sig_handler h, int flags, struct sigaction *prev);
int herd__signal_ours(int sig, herd__sig_handler h);
void herd__signal_give_back(int sig, herd__sig_handler h, const struct sigaction *prev);
void herd__signal_chain(const struct sigaction *prev, int sig, siginfo_t *si, void *uc);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t herd__now_ns(void);

#endif
