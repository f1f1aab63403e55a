/* Recycled big stacks give their deep pages back (src/ult/stack.c,
 * herd__stack_trim; docs/design/stacks.md): with 8 MiB stacks (the OpenMP
 * layer's default), N tasks each touch 4 MiB of their stack, then block at
 * once (so each holds a stack of its own, with 4 MiB resident), then are
 * released and end. Their stacks go back to the caches, which would keep
 * N * 4 MiB resident; trimmed, each keeps at most HERD__STACK_KEEP.
 *
 * The check compares the resident set while all are blocked with the one
 * after they ended: it must drop by at least N * 3 MiB (relative, so the
 * sanitizers' shadow memory, which stays, does not matter). And a stack is
 * reused: the second round maps fewer stacks than it runs tasks (none with
 * one worker).
 *
 * A round of tasks that stay shallow comes first: their stacks are recycled
 * without a single madvise: the probe of herd__stack_trim finds nothing
 * below the kept top. It has SHALLOW_N tasks: stacks that overflow a
 * worker's cache (16, core/ult.c) into the pool are trimmed regardless.
 *
 * Mutations: without the herd__stack_trim call in herd__ult_put (core/ult.c)
 * the resident set does not drop and the test fails; with the probe taken
 * out (a trim at every recycling) the shallow round counts SHALLOW_N trims. */
// herd-test-env: HERD_STACK=8M HERD_WORKERS=1
// herd-test-env: HERD_STACK=8M HERD_WORKERS=2
// herd-test-timeout: 120
#include "../common/check.h"

#include "ult/stack.h"

#include <stdatomic.h>
#include <string.h>

#define N 32
#define SHALLOW_N 8
#define TOUCH ((size_t)4 << 20)

static uint64_t word;
static _Atomic int blocked_count;
static int deep; /* blocker touches TOUCH bytes of its stack first */

static long resident_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    CHECK(f != NULL);
    long size = 0, res = 0;
    CHECK(fscanf(f, "%ld %ld", &size, &res) == 2);
    fclose(f);
    return res * sysconf(_SC_PAGESIZE);
}

__attribute__((noinline)) static void touch_deep(void) {
    volatile unsigned char big[TOUCH];
    memset((void *)big, 1, sizeof big);
    __asm__ volatile("" ::"r"(big) : "memory");
}

static void blocker(void *p) {
    (void)p;
    if (deep)
        touch_deep();
    atomic_fetch_add(&blocked_count, 1);
    uint64_t v;
    CHECK_OK(herd_feb_readFF(&word, &v));
}

static uint64_t total_stacks(void) {
    herd_worker_stats st[64];
    int n = herd_stats(st, 64);
    CHECK(n >= 1);
    uint64_t s = 0;
    for (int i = 0; i < n; i++)
        s += st[i].stacks_allocated;
    return s;
}

static long rss_blocked, rss_after;

static void round_root(void *p) {
    (void)p;
    atomic_store(&blocked_count, 0);
    CHECK_OK(herd_feb_empty(&word));
    int n = deep ? N : SHALLOW_N;
    for (int i = 0; i < n; i++)
        CHECK_OK(herd_spawn(blocker, NULL, 0));
    while (atomic_load(&blocked_count) < n)
        CHECK_OK(herd_yield());
    for (int i = 0; i < 20; i++) /* let the last ones reach the wait */
        CHECK_OK(herd_yield());
    rss_blocked = resident_bytes();
    CHECK_OK(herd_feb_writeF(&word, 1));
    CHECK_OK(herd_wait());
}

int main(void) {
    CHECK_OK(herd_start(NULL));
    long trims = herd__stack_trims();
    herd_run(round_root, NULL, 0);
    STEP("shallow round: %ld trims", herd__stack_trims() - trims);
    CHECK_EQ(herd__stack_trims(), trims);
    deep = 1;
    herd_run(round_root, NULL, 0);
    rss_after = resident_bytes();
    uint64_t stacks = total_stacks();
    STEP("round 1: resident %ld MiB while %d tasks blocked, %ld MiB after; %llu stacks mapped",
         rss_blocked >> 20, N, rss_after >> 20, (unsigned long long)stacks);
    CHECK(rss_blocked - rss_after >= (long)N * (3L << 20));
    CHECK(herd__stack_trims() > trims);
    herd_run(round_root, NULL, 0);
    rss_after = resident_bytes();
    STEP("round 2: resident %ld MiB while blocked, %ld MiB after; %llu stacks mapped",
         rss_blocked >> 20, rss_after >> 20, (unsigned long long)total_stacks());
    CHECK(rss_blocked - rss_after >= (long)N * (3L << 20));
    /* The second round reused stacks of the first: with one worker all of
     * them; with more, stacks cached on one worker while another maps. */
    if (herd_num_workers() == 1)
        CHECK_EQ(total_stacks(), stacks);
    else
        CHECK(total_stacks() - stacks < N);
    CHECK_OK(herd_stop());
    STEP("ok");
    return 0;
}
