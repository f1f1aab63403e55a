/* HERD_ASSERT: an invariant checked in debug builds (HERD_DEBUG, or no
 * NDEBUG), nothing in release builds. Every layer may use it. */
#ifndef HERD_ARCH_ASSERT_H
#define HERD_ARCH_ASSERT_H

/* HERD_ASSERTS: 1 where HERD_ASSERT checks, 0 where it is nothing. */
#if defined(HERD_DEBUG) || !defined(NDEBUG)
#define HERD_ASSERTS 1
#else
#define HERD_ASSERTS 0
#endif

#if HERD_ASSERTS
#include <stdio.h>
#include <stdlib.h>
#define HERD_ASSERT(c)                                                                             \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "herd: assertion failed: %s (%s:%d)\n", #c, __FILE__, __LINE__);       \
            abort();                                                                               \
        }                                                                                          \
    } while (0)
#else
#define HERD_ASSERT(c) ((void)0)
#endif

#endif
