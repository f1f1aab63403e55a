/* The hang watchdog and the dump of blocked tasks (core/watchdog.c).
 *
 * Every suspension that waits for something records why in its ULT
 * (herd__block_on): the primitive (mutex, barrier, full/empty word...), the
 * object, the return address of the public call, and the constructs the task
 * is inside (herd__wait_enter/leave: the OpenMP layer's barrier, taskwait...).
 * The watchdog thread finds the suspended ULTs on the runtime's list of
 * ULT records and prints them: when no task made progress for HERD_WATCHDOG
 * seconds while some are blocked, or on SIGQUIT. */
#ifndef HERD_CORE_WATCHDOG_H
#define HERD_CORE_WATCHDOG_H

#include "core/runtime.h"

/* A new ULT record joins the runtime's list; one about to be freed leaves
 * it (both rare: they map or unmap a stack beside). */
void herd__ult_track(herd__rt *rt, herd__ult *u);
void herd__ult_untrack(herd__rt *rt, herd__ult *u);

/* herd__block_on, before the switch: record why u (w's current ULT)
 * suspends. Owner only. */
void herd__wait_record(herd__worker *w, herd__ult *u, int kind, const void *obj, void *ra);

/* Resumed: u waits for nothing. ORDER: relaxed; the watchdog reads a
 * snapshot, and a task resumed while it reads may show as blocked once. */
static inline void herd__wait_clear(herd__ult *u) {
    atomic_store_explicit(&u->wait.kind[0], HERD__WAIT_NONE, memory_order_relaxed);
}

/* herd_start / herd_stop: the watchdog thread (always, for SIGQUIT, unless
 * HERD_WATCHDOG=off) and the SIGQUIT handler. Start returns 0 or
 * HERD_ESYS after printing why. */
int herd__watchdog_start(herd__rt *rt);
void herd__watchdog_stop(herd__rt *rt);

#endif
