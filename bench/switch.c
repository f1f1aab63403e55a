/* bench/switch.c -- the cost of one user-level context switch pair, and of
 * one call on another stack.
 *
 *   bench_switch [--n SWITCHES] [--reps R]
 *
 * Two contexts hand the CPU back and forth with herd__ctx_swap(), the switch
 * every herd task suspension and resumption makes (src/arch/): one pair is
 * the main context switching to the other and being switched back to. No
 * scheduler, no queue, no stack allocation: this is the floor under any
 * task that leaves its stack and comes back, such as a work-first spawn
 * (HERD_SPAWN=work-first), which runs the child on a fresh stack and
 * returns to the parent's (docs/benchmarks.md, "Work-first's floor").
 * Then the same for a call on another stack (herd__ctx_call of an empty
 * function), what a work-first spawn makes instead since round 29 when
 * nobody steals the parent's continuation. Each repetition times n pairs
 * (n calls); the JSON line gives ns per pair and per call (the medians of
 * the repetitions, and each one's). */
#include "common.h"

#include "arch/context.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "bench_switch [--n SWITCHES] [--reps R]";

#define STACK_BYTES (64 * 1024)

static void *main_sp, *other_sp;
static uint64_t turns; /* written by the other context, read by main: a check */

static uint64_t calls; /* written by the called function, read by main: a check */

__attribute__((noinline)) static void called(void *arg) {
    (void)arg;
    calls++;
}

static void other(void *transfer) {
    (void)transfer;
    for (;;) {
        turns++;
        herd__ctx_swap(&other_sp, main_sp, NULL);
    }
}

int main(int argc, char **argv) {
    long n = 10000000, reps = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n"))
            n = bench_int_arg(argc, argv, &i, 1, 1000000000L, usage);
        else if (!strcmp(argv[i], "--reps"))
            reps = bench_int_arg(argc, argv, &i, 1, 1000, usage);
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            bench_help(usage);
        else
            bench_usage_error(usage, "unknown option", argv[i]);
    }
    unsigned char *stack = aligned_alloc(64, STACK_BYTES),
                  *call_stack = aligned_alloc(64, STACK_BYTES);
    double *ns = malloc((size_t)reps * sizeof *ns), *call_ns = malloc((size_t)reps * sizeof *ns);
    if (!stack || !call_stack || !ns || !call_ns) {
        perror("malloc");
        return 1;
    }
    other_sp = herd__ctx_make(stack + STACK_BYTES, other);
    for (long r = 0; r < reps; r++) {
        uint64_t before = turns;
        double t0 = bench_now();
        for (long i = 0; i < n; i++)
            herd__ctx_swap(&main_sp, other_sp, NULL);
        double t = bench_now() - t0;
        if (turns - before != (uint64_t)n) {
            fprintf(stderr, "bench_switch: %llu turns for %ld switches\n",
                    (unsigned long long)(turns - before), n);
            return 1;
        }
        ns[r] = t / (double)n * 1e9;
        fprintf(stderr, "switch pair rep %ld: %.2f ns\n", r, ns[r]);
    }
    void *save;
    for (long r = 0; r < reps; r++) {
        uint64_t before = calls;
        double t0 = bench_now();
        for (long i = 0; i < n; i++)
            herd__ctx_call(&save, call_stack + STACK_BYTES, called, NULL);
        double t = bench_now() - t0;
        if (calls - before != (uint64_t)n) {
            fprintf(stderr, "bench_switch: %llu calls made for %ld\n",
                    (unsigned long long)(calls - before), n);
            return 1;
        }
        call_ns[r] = t / (double)n * 1e9;
        fprintf(stderr, "call on a stack rep %ld: %.2f ns\n", r, call_ns[r]);
    }
    printf("{\"kernel\":\"switch\",\"params\":{\"n\":%ld},\"ns_per_pair\":%.3f,"
           "\"ns_per_call\":%.3f,\"verified\":true,\"reps\":%ld,\"ns\":[",
           n, bench_median(ns, (int)reps), bench_median(call_ns, (int)reps), reps);
    for (long r = 0; r < reps; r++)
        printf("%s%.3f", r ? "," : "", ns[r]);
    printf("],\"call_ns\":[");
    for (long r = 0; r < reps; r++)
        printf("%s%.3f", r ? "," : "", call_ns[r]);
    printf("]}\n");
    free(call_ns);
    free(ns);
    free(call_stack);
    free(stack);
    return 0;
}
