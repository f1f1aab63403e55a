/* 100,000 tasks blocked at the same time, with stack overflow detection on
 * (the default), then released; all complete.
 *
 * Each blocked task holds a stack of its own, and a guarded stack costs two
 * kernel memory areas, more than vm.max_map_count allows for 100,000 stacks
 * (65,530 by default). The runtime must stay within the limit by giving
 * guards back from suspended stacks (src/ult/stack.c) instead of failing.
 * While every task is blocked the test counts the process's memory areas
 * (/proc/self/maps) and checks they stay under the limit, and that the
 * runtime's count of guards stays within its budget.
 *
 * The last variant has the OpenMP layer's default stacks (8 MiB, each with
 * a 64 MiB guard region: 7 TiB of address space at 100,000).
 *
 * Two ways to block them all: readFF on one empty word (released by one
 * writeF), and a barrier of N+1 (the root is the last arrival). */
// herd-test-matrix: stress
// herd-test-env: HERD_STACK=64K HERD_WORKERS=2
// herd-test-env: HERD_STACK=64K HERD_WORKERS=4 HERD_IDLE=sleep
// herd-test-env: HERD_STACK=64K HERD_WORKERS=1
// herd-test-env: HERD_STACK=8M HERD_WORKERS=2
// herd-test-timeout: 300
#include "../common/check.h"

#include "ult/stack.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* Under ASan, a recycled stack's whole shadow is cleared (core/ult.c,
 * ult_fresh): with 8 MiB stacks that is 1 MiB per stack, so that variant
 * blocks a quarter as many there. */
static int big_stacks(void) {
    const char *s = getenv("HERD_STACK");
    return s && strchr(s, 'M') != NULL;
}
#define NBLOCKED                                                                                   \
    ((int)CHECK_SCALED(CHECK_TSAN        ? 1000                                                    \
                       : CHECK_SANITIZED ? (big_stacks() ? 5000 : 20000)                           \
                                         : 100000))

static long read_max_map_count(void) {
    long v = 65530;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = 65530;
        fclose(f);
    }
    return v;
}

static long count_maps(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    long n = 0;
    int c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

static uint64_t total_blocks(void) {
    herd_worker_stats st[64];
    int n = herd_stats(st, 64);
    CHECK(n >= 1 && n <= 64);
    uint64_t b = 0;
    for (int i = 0; i < n; i++)
        b += st[i].blocks;
    return b;
}

static void check_limits(const char *when) {
    long maps = count_maps(), max = read_max_map_count();
    long guards = herd__stack_guards_in_use();
    STEP("%s: %ld memory areas (limit %ld), %ld guard pages", when, maps, max, guards);
    CHECK(maps < max);
    /* Each guard splits a stack into two areas: the budget must keep the
     * guards well under the limit (stack.c keeps them to a quarter of it,
     * plus the stacks that are running). */
    CHECK(guards <= max / 2);
}

/* ------------------------------------------------------ readFF on one word */

static uint64_t word;
static _Atomic long arrived, released;

static void reader(void *p) {
    (void)p;
    atomic_fetch_add(&arrived, 1);
    uint64_t v = 0;
    CHECK_OK(herd_feb_readFF(&word, &v));
    CHECK_EQ(v, 4242);
    atomic_fetch_add(&released, 1);
}

static void feb_root(void *p) {
    (void)p;
    CHECK_OK(herd_feb_empty(&word));
    uint64_t blocks0 = total_blocks();
    for (int i = 0; i < NBLOCKED; i++)
        CHECK_OK(herd_spawn(reader, NULL, 0));
    /* Once every reader has arrived, each one is suspended or about to be
     * (and holds its stack either way): none can pass before the writeF. */
    while (atomic_load(&arrived) < NBLOCKED)
        CHECK_OK(herd_yield());
    CHECK_EQ(atomic_load(&released), 0);
    check_limits("all readers blocked");
    CHECK_OK(herd_feb_writeF(&word, 4242));
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&released), NBLOCKED);
    /* Each reader found the word empty, so each suspended (at least) once. */
    CHECK(total_blocks() - blocks0 >= (uint64_t)NBLOCKED);
}

/* ------------------------------------------------------- barrier of N+1 */

static herd_barrier bar;
static _Atomic long passed, serial;

static void bar_task(void *p) {
    (void)p;
    int rc = herd_barrier_wait(&bar);
    CHECK(rc == 0 || rc == 1);
    if (rc == 1)
        atomic_fetch_add(&serial, 1);
    atomic_fetch_add(&passed, 1);
}

static void barrier_root(void *p) {
    (void)p;
    CHECK_OK(herd_barrier_init(&bar, NBLOCKED + 1));
    for (int i = 0; i < NBLOCKED; i++)
        CHECK_OK(herd_spawn(bar_task, NULL, 0));
    /* When we pass, all N others have arrived: they were all blocked at once
     * (or we were, and one of them is the last arrival). */
    int rc = herd_barrier_wait(&bar);
    CHECK(rc == 0 || rc == 1);
    if (rc == 1)
        atomic_fetch_add(&serial, 1);
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&passed), NBLOCKED);
    CHECK_EQ(atomic_load(&serial), 1);
    herd_barrier_destroy(&bar);
}

int main(void) {
    CHECK_OK(herd_start(NULL));
    STEP("%d tasks blocked on one full/empty word", NBLOCKED);
    CHECK_OK(herd_run(feb_root, NULL, 0));
    check_limits("after release");
    STEP("%d tasks blocked in a barrier of %d", NBLOCKED, NBLOCKED + 1);
    CHECK_OK(herd_run(barrier_root, NULL, 0));
    /* Again, with the stacks the first rounds left in the caches. */
    STEP("both again");
    atomic_store(&arrived, 0);
    atomic_store(&released, 0);
    atomic_store(&passed, 0);
    atomic_store(&serial, 0);
    CHECK_OK(herd_run(feb_root, NULL, 0));
    CHECK_OK(herd_run(barrier_root, NULL, 0));
    CHECK_OK(herd_stop());
    STEP("ok");
    return 0;
}
