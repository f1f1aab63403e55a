/* Scheduler internals that unit tests reach into (tests/unit/test_sched.c). */
#ifndef HERD_SCHED_TESTING_H
#define HERD_SCHED_TESTING_H

#include "sched/sched.h"

/* mts: set or clear shepherd's "a worker is stealing" flag. */
void herd__mts_hold_steal(herd__sched_env *env, int shepherd, int held);

#endif
