/* HERD_ASSERT: an invariant checked in debug builds (HERD_DEBUG, or no
 * NDEBUG), nothing in release builds. Every layer may use it. */
#ifndef HERD_ARCH_ASSERT_H
#define HERD_ARCH_ASSERT_H

#if defined(HERD_DEBUG) || !defined(NDEBUG)
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
