/* The context switch on its own (src/arch/): transfer values, callee-saved
 * integer and floating-point registers kept across switches, floating-point
 * control state kept per context, stack alignment in fresh contexts; the
 * call on another stack (herd__ctx_call), returning or switched out of.
 * Depends only on arch/context.h, so the same file is cross-compiled for
 * AArch64 and run under qemu-user (tests/CMakeLists.txt, unit.context_aarch64). */
#include "arch/context.h"

#include <fenv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unwind.h>

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                            \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        exit(1);                                                                                   \
    } while (0)
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c))                                                                                  \
            FAIL("check failed: %s", #c);                                                          \
    } while (0)

#define STACK_BYTES (256 * 1024)
#define ROUNDS 10000

static void *main_ctx, *co_ctx;

/* noinline with many live values: they sit in callee-saved registers across
 * the switches, so a register the switch forgot would show up here. */
__attribute__((noinline)) static uint64_t churn(uint64_t seed, double dseed) {
    uint64_t a = seed * 3, b = seed ^ 0x5555, c = seed + 7, d = seed * seed, e = ~seed,
             f = seed >> 1;
    double x = dseed * 1.5, y = dseed + 2.25, z = dseed * dseed, t = dseed - 0.5;
    for (int i = 0; i < 4; i++) {
        uint64_t got =
            (uint64_t)(uintptr_t)herd__ctx_swap(&co_ctx, main_ctx, (void *)(uintptr_t)(seed + i));
        CHECK(got == (uint64_t)i + 1000);
        a += b, b ^= c, c += d, d ^= e, e += f, f ^= a;
        x += y, y *= 1.0001, z -= t, t += 0.125;
    }
    return a ^ b ^ c ^ d ^ e ^ f ^ (uint64_t)(x + y + z + t);
}

static uint64_t churn_expected(uint64_t seed, double dseed) {
    uint64_t a = seed * 3, b = seed ^ 0x5555, c = seed + 7, d = seed * seed, e = ~seed,
             f = seed >> 1;
    double x = dseed * 1.5, y = dseed + 2.25, z = dseed * dseed, t = dseed - 0.5;
    for (int i = 0; i < 4; i++) {
        a += b, b ^= c, c += d, d ^= e, e += f, f ^= a;
        x += y, y *= 1.0001, z -= t, t += 0.125;
    }
    return a ^ b ^ c ^ d ^ e ^ f ^ (uint64_t)(x + y + z + t);
}

__attribute__((noinline)) static int aligned_local_ok(void) {
    _Alignas(16) volatile unsigned char buf[16];
    buf[0] = 1;
    return ((uintptr_t)buf & 15) == 0;
}

static void co_entry(void *transfer) {
    /* The first transfer arrives as entry's argument. */
    CHECK((uintptr_t)transfer == 42);
    CHECK(aligned_local_ok());
    char text[64];
    snprintf(text, sizeof text, "%.3f", 2.5); /* varargs with a double: alignment-sensitive */
    CHECK(text[0] == '2');
    /* Ping-pong: each round returns the value received plus one. */
    uintptr_t v = (uintptr_t)herd__ctx_swap(&co_ctx, main_ctx, (void *)(uintptr_t)43);
    for (int i = 0; i < ROUNDS; i++)
        v = (uintptr_t)herd__ctx_swap(&co_ctx, main_ctx, (void *)(v + 1));
    /* Registers across switches. */
    uint64_t r = churn(v, 0.75);
    herd__ctx_swap(&co_ctx, main_ctx, (void *)(uintptr_t)r);
    /* Floating-point control state belongs to the context. */
    CHECK(fesetround(FE_UPWARD) == 0);
    herd__ctx_swap(&co_ctx, main_ctx, NULL);
    CHECK(fegetround() == FE_UPWARD);
    herd__ctx_swap(&co_ctx, main_ctx, (void *)(uintptr_t)7);
    FAIL("a finished context was resumed");
}

/* herd__ctx_call: fn runs on another stack and returns straight into the
 * caller, or switches to the caller's saved context, which returns from
 * the call just as well. */
static unsigned char *call_lo, *call_hi; /* the stack fn runs on */
static void *call_save, *call_co;
static int call_ran;
static uintptr_t call_arg;

static void call_plain(void *arg) {
    volatile unsigned char here = 0;
    CHECK((unsigned char *)&here >= call_lo && (unsigned char *)&here < call_hi);
    CHECK(aligned_local_ok());
    char text[64];
    snprintf(text, sizeof text, "%.3f", 2.5); /* varargs with a double: alignment-sensitive */
    CHECK(text[0] == '2');
    call_arg = (uintptr_t)arg;
    call_ran++;
}

static void call_leave(void *arg) {
    (void)arg;
    CHECK(fesetround(FE_UPWARD) == 0); /* the caller's own mode comes back with its context */
    call_ran++;
    herd__ctx_swap(&call_co, call_save, NULL);
    FAIL("an abandoned call context was resumed");
}

static void call_pause(void *arg) {
    (void)arg;
    CHECK(fesetround(FE_UPWARD) == 0);
    herd__ctx_swap(&call_co, call_save, NULL); /* the caller's call returns */
    CHECK(fegetround() == FE_UPWARD);          /* resumed with its own mode */
    herd__ctx_swap(&call_co, main_ctx, (void *)(uintptr_t)11);
    FAIL("a finished call context was resumed");
}

/* Unwinding from fn's stack reaches the caller (the call's CFI): what a
 * debugger's backtrace from a work-first child shows. */
static void *unwind_want;
static int unwind_found;

static _Unwind_Reason_Code unwind_step(struct _Unwind_Context *ctx, void *arg) {
    (void)arg;
    void *pc = (void *)_Unwind_GetIP(ctx);
    if (pc && _Unwind_FindEnclosingFunction((char *)pc - 1) == unwind_want)
        unwind_found = 1;
    return _URC_NO_REASON;
}

static void call_unwind(void *arg) {
    (void)arg;
    _Unwind_Backtrace(unwind_step, NULL);
    call_ran++;
}

/* As churn, with calls instead of switches. */
__attribute__((noinline)) static uint64_t churn_call(uint64_t seed, double dseed,
                                                     void (*fn)(void *)) {
    uint64_t a = seed * 3, b = seed ^ 0x5555, c = seed + 7, d = seed * seed, e = ~seed,
             f = seed >> 1;
    double x = dseed * 1.5, y = dseed + 2.25, z = dseed * dseed, t = dseed - 0.5;
    for (int i = 0; i < 4; i++) {
        herd__ctx_call(&call_save, call_hi, fn, (void *)(uintptr_t)(100 + i));
        a += b, b ^= c, c += d, d ^= e, e += f, f ^= a;
        x += y, y *= 1.0001, z -= t, t += 0.125;
    }
    return a ^ b ^ c ^ d ^ e ^ f ^ (uint64_t)(x + y + z + t);
}

__attribute__((noinline, noclone)) static void test_call(void) {
    call_lo = malloc(STACK_BYTES);
    CHECK(call_lo != NULL);
    call_hi = call_lo + STACK_BYTES;
    for (int i = 0; i < ROUNDS; i++)
        herd__ctx_call(&call_save, call_hi, call_plain, (void *)(uintptr_t)i);
    CHECK(call_ran == ROUNDS && call_arg == ROUNDS - 1);
    call_ran = 0;
    CHECK(churn_call(77, 0.75, call_plain) == churn_expected(77, 0.75));
    CHECK(call_ran == 4 && call_arg == 103);
    call_ran = 0;
    CHECK(churn_call(78, 0.5, call_leave) == churn_expected(78, 0.5));
    CHECK(call_ran == 4);
    CHECK(fegetround() == FE_TONEAREST);
    call_ran = 0;
    unwind_want = (void *)test_call;
    herd__ctx_call(&call_save, call_hi, call_unwind, NULL);
    CHECK(call_ran == 1 && unwind_found);
    herd__ctx_call(&call_save, call_hi, call_pause, NULL);
    CHECK(fegetround() == FE_TONEAREST);
    CHECK((uintptr_t)herd__ctx_swap(&main_ctx, call_co, NULL) == 11);
    CHECK(fegetround() == FE_TONEAREST);
    free(call_lo);
}

int main(void) {
    unsigned char *stack = malloc(STACK_BYTES);
    CHECK(stack != NULL);
    co_ctx = herd__ctx_make(stack + STACK_BYTES, co_entry);
    CHECK(((uintptr_t)co_ctx & 15) == 0);

    uintptr_t v = (uintptr_t)herd__ctx_swap(&main_ctx, co_ctx, (void *)(uintptr_t)42);
    CHECK(v == 43);
    for (int i = 0; i < ROUNDS; i++) {
        uintptr_t back = (uintptr_t)herd__ctx_swap(&main_ctx, co_ctx, (void *)(v + 1));
        CHECK(back == v + 2);
        v = back;
    }
    /* churn() runs on the coroutine: answer its four swaps. */
    uintptr_t seed = v + 1;
    uintptr_t got = (uintptr_t)herd__ctx_swap(&main_ctx, co_ctx, (void *)seed);
    for (int i = 0; i < 4; i++) {
        CHECK(got == seed + (uintptr_t)i);
        got = (uintptr_t)herd__ctx_swap(&main_ctx, co_ctx, (void *)(uintptr_t)(1000 + i));
    }
    CHECK(got == churn_expected(seed, 0.75));

    CHECK(fegetround() == FE_TONEAREST);
    herd__ctx_swap(&main_ctx, co_ctx, NULL); /* the coroutine sets FE_UPWARD */
    CHECK(fegetround() == FE_TONEAREST);
    v = (uintptr_t)herd__ctx_swap(&main_ctx, co_ctx, NULL);
    CHECK(v == 7);
    CHECK(fegetround() == FE_TONEAREST);
    free(stack);
    test_call();
    printf("test_context: all checks passed (%d round trips, %d calls)\n", ROUNDS, ROUNDS + 10);
    return 0;
}
