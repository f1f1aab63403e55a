/* Shared assertions for the herd runtime tests.
 *
 * CHECK(cond) prints file:line and the failed expression, then ends the
 * process with status 1 at once. It may be used from any thread, including
 * herd tasks: the process exits with _exit() so that atexit handlers and
 * destructors do not run while workers still run tasks. */
#ifndef HERD_TESTS_CHECK_H
#define HERD_TESTS_CHECK_H

#include "herd/herd.h"
#include "sanitized.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void check__fail(const char *file, int line, const char *expr) {
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, expr);
    fflush(stdout);
    fflush(stderr);
    _exit(1);
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            check__fail(__FILE__, __LINE__, #cond);                                                \
    } while (0)

/* Compare two integers; prints both values on failure. */
#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long check__a = (long long)(a), check__b = (long long)(b);                            \
        if (check__a != check__b) {                                                                \
            fprintf(stderr, "%s:%d: %s == %s: %lld != %lld\n", __FILE__, __LINE__, #a, #b,         \
                    check__a, check__b);                                                           \
            check__fail(__FILE__, __LINE__, #a " == " #b);                                         \
        }                                                                                          \
    } while (0)

/* Compare two 64-bit unsigned values (checksums); prints both in hex. */
#define CHECK_EQ_U64(a, b)                                                                         \
    do {                                                                                           \
        unsigned long long check__a = (unsigned long long)(a);                                     \
        unsigned long long check__b = (unsigned long long)(b);                                     \
        if (check__a != check__b) {                                                                \
            fprintf(stderr, "%s:%d: %s == %s: %#llx != %#llx\n", __FILE__, __LINE__, #a, #b,       \
                    check__a, check__b);                                                           \
            check__fail(__FILE__, __LINE__, #a " == " #b);                                         \
        }                                                                                          \
    } while (0)

/* A herd call that must return `want` (a herd_error code); prints the
 * code it returned and its description otherwise. */
#define CHECK_RC(call, want)                                                                       \
    do {                                                                                           \
        int check__rc = (call), check__want = (want);                                              \
        if (check__rc != check__want) {                                                            \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s)\n", __FILE__, __LINE__,  \
                    #call, check__rc, herd_strerror(check__rc), check__want,                       \
                    herd_strerror(check__want));                                                   \
            check__fail(__FILE__, __LINE__, #call);                                                \
        }                                                                                          \
    } while (0)

#define CHECK_OK(call) CHECK_RC(call, HERD_OK)

/* Progress line on stdout: when a test hangs and times out, the last line
 * CTest shows names the case that did not finish. */
#define STEP(...)                                                                                  \
    do {                                                                                           \
        printf("-- ");                                                                             \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        fflush(stdout);                                                                            \
    } while (0)

/* splitmix64: a deterministic hash of a 64-bit seed, for reproducible
 * random shapes whose expected results a sequential twin recomputes. */
static inline uint64_t check_mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* A size for this build: `normal`, or `tsan` under ThreadSanitizer. */
#define CHECK_SIZE(normal, tsan) (CHECK_TSAN ? (tsan) : (normal))

/* The divisor in the CHECK_SCALE environment variable (default 1): the
 * scheduler matrix (tests/CMakeLists.txt) runs the stress tests under every
 * scheduler at a tenth of their size. Malformed values stop the test. */
static inline long check_scale(void) {
    static long scale;
    if (scale == 0) {
        const char *v = getenv("CHECK_SCALE");
        char *end = NULL;
        long n = v ? strtol(v, &end, 10) : 1;
        if (n < 1 || (v && *end != '\0')) {
            fprintf(stderr, "CHECK_SCALE=%s: expected a positive integer\n", v);
            exit(2);
        }
        scale = n;
    }
    return scale;
}
#define CHECK_SCALED(n) ((n) / check_scale())

#endif
