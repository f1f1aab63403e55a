/* User-level context switch: the one piece of herd written per ISA.
 *
 * A context is just a saved stack pointer: herd__ctx_swap() pushes the
 * callee-saved registers (and the floating-point control words the ABI
 * says are callee-saved) on the current stack, stores the stack pointer in
 * *save, loads `to`, pops that context's registers and returns into it,
 * handing it `transfer`. A fresh context made by herd__ctx_make() starts in
 * entry(transfer) instead; entry must never return. */
#ifndef HERD_ARCH_CONTEXT_H
#define HERD_ARCH_CONTEXT_H

#include <stddef.h>

typedef void (*herd__ctx_entry)(void *transfer);

/* Save the current context in *save and switch to the context `to`.
 * Returns the `transfer` value of the switch that resumes this context. */
void *herd__ctx_swap(void **save, void *to, void *transfer);

/* Prepare a context on the stack whose highest usable address is
 * `stack_top` (exclusive) that starts in entry(transfer). Returns it. */
void *herd__ctx_make(void *stack_top, herd__ctx_entry entry);

/* Save the current context in *save, as herd__ctx_swap does, and call
 * fn(arg) on the stack whose top (exclusive, 16-byte aligned) is sp.
 * Returns when fn returns, without a switch, or when a switch to *save
 * resumes the caller. fn may return only while no such switch has
 * happened or can still happen (the caller's stack is then as it left
 * it); once one did, fn's context must end by switching away. */
void herd__ctx_call(void **save, void *sp, void (*fn)(void *), void *arg);

#endif
