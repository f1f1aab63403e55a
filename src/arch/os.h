/* The operating system's primitives that every layer shares: the futex
 * pair herd sleeps on and the monotonic clock (arch/os.c). */
#ifndef HERD_ARCH_OS_H
#define HERD_ARCH_OS_H

#include <stdint.h>

/* Private futex on a 32-bit word: sleep while *word == val (returns at once
 * otherwise, or on a signal: callers recheck), and wake up to n sleepers. */
void herd__futex_wait(void *word, uint32_t val); /* word: any 32-bit atomic */
void herd__futex_wake(void *word, int n);
/* herd__futex_wait for at most ns nanoseconds. */
void herd__futex_wait_ns(void *word, uint32_t val, uint64_t ns);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t herd__now_ns(void);

#endif
