/* The rescue of tasks a worker keeps private while it spins in user code
 * (core/rescue.c; docs/design/split-deque.md, "R1..R5").
 *
 * A worker's newest tasks sit in the private part of its split deque until
 * the worker itself publishes them (S3), which it does at its next spawn or
 * scheduling point once a thief has asked. A task that creates a child and
 * then spins until another thread has started it (no scheduling point:
 * `while (!flag)`) never gets there, and waits for ever where libgomp's and
 * libomp's shared queues let another thread run the child. Runtimes started
 * with HERD__START_RESCUE (the OpenMP layer's) let a thief that has searched
 * in vain for RESCUE_AFTER_NS *poke* such a worker: a signal whose handler,
 * on the worker's own thread, publishes the private part when the thread was
 * interrupted in user code, where no step of the deque is half done.
 * Nothing is added to the spawn and pop paths but a flag set at a queued
 * spawn (herd__note_queued, core/seam_omp.h). */
#ifndef HERD_CORE_RESCUE_H
#define HERD_CORE_RESCUE_H

#include "core/runtime.h"

/* How long a thief searches in vain before it pokes, and the least time
 * between two pokes of one worker. */
#define HERD__RESCUE_AFTER_NS 100000u
#define HERD__RESCUE_GAP_NS 1000000u

/* herd_start / herd_stop of a runtime with rt->rescue: the handler of
 * SIGURG (a signal whose default action is to ignore it, so a stray one
 * harms nothing) and the address range of herd's own code. Start returns 0
 * or HERD_ESYS after printing why. */
int herd__rescue_start(herd__rt *rt);
void herd__rescue_stop(herd__rt *rt);

/* R1, the worker's thread: it runs w (w->tid), or no longer (0).
 * pthread_of_worker: the worker's own pthread (not an adopting thread). */
void herd__rescue_thread_enter(herd__worker *w, int pthread_of_worker);
void herd__rescue_thread_leave(herd__worker *w);

/* R2, thief w at time now, idle since idle_since: poke every other worker
 * that looks stuck with private tasks. Returns whether one looked stuck
 * (the thief then sleeps for at most HERD__RESCUE_GAP_NS, to poke again). */
int herd__rescue_poke(herd__worker *w, uint64_t now, uint64_t idle_since);

/* R5, owner only: a step of the deque that calls out of herd's code
 * half-way (S8's memmove, S7's malloc and lock) runs between hold and
 * release, and no poke publishes meanwhile. Nests. ORDER: signal fences
 * around the flag; they pair with those of the handler, which runs on
 * this thread (on_poke, core/rescue.c). */
static inline void herd__rescue_hold(herd__worker *w) {
    w->rescue_off++;
    atomic_signal_fence(memory_order_seq_cst);
}
static inline void herd__rescue_release(herd__worker *w) {
    atomic_signal_fence(memory_order_seq_cst);
    w->rescue_off--;
}

/* R4, owner only: the worker found its deque empty; its note is stale. */
static inline void herd__note_clear(herd__worker *w) {
    /* ORDER: relaxed; a hint for the thieves' pokes (R2). */
    if (atomic_load_explicit(&w->queued_note, memory_order_relaxed))
        atomic_store_explicit(&w->queued_note, 0, memory_order_relaxed);
}

#endif
