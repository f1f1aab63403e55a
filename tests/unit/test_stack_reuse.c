/* Stacks are lazy and recycled (paper 004; src/core/ult.c, src/ult/stack.c):
 * - lazy: 10^6 tasks that never block run on a bounded number of stacks
 *   (a queued task is a deque slot; it gets a stack only if it has to run
 *   on one of its own), so the stacks mapped stay far below the tasks run;
 * - recycled: rounds of BLOCKED tasks suspended at once each need BLOCKED
 *   stacks; the first round maps them, and later rounds reuse them from the
 *   workers' caches and the shared pool instead of mapping new ones.
 * Counted through herd_stats()'s stacks_allocated (stacks mapped, not taken
 * from a cache); exact counts of tasks, never timing. The mutation that
 * unmaps every stack when its task ends fails the second part. */
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=2 HERD_SCHED=central
// herd-test-env: HERD_WORKERS=4 HERD_SPAWN=work-first
// herd-test-timeout: 120
#include "../common/check.h"

#include <stdatomic.h>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define LEAVES 20000 /* work-first on 4 workers under TSan: 10^6 takes minutes */
#else
#define LEAVES 1000000
#endif
#define BATCH 1000
#define LAZY_PER_WORKER 64 /* stacks mapped for LEAVES non-blocking tasks, at most */
#define BLOCKED 256        /* below the shared pool's 1024 free stacks */
#define ROUNDS 10

static _Atomic long leaves_run, arrived;
static herd_mutex gate;

static uint64_t stacks_allocated(void) {
    herd_worker_stats st[256];
    int n = herd_stats(st, 256);
    CHECK(n > 0 && n <= 256);
    uint64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += st[i].stacks_allocated;
    return sum;
}

static void leaf(void *arg) {
    (void)arg;
    atomic_fetch_add_explicit(&leaves_run, 1, memory_order_relaxed);
}

static void many_leaves(void *arg) {
    (void)arg;
    for (int b = 0; b < LEAVES / BATCH; b++) {
        for (int i = 0; i < BATCH; i++)
            CHECK_OK(herd_spawn(leaf, NULL, 0));
        CHECK_OK(herd_wait());
    }
}

static void blocker(void *arg) {
    (void)arg;
    /* ORDER: relaxed; the count only tells the root when to open the gate,
     * the mutex orders the rest. */
    atomic_fetch_add_explicit(&arrived, 1, memory_order_relaxed);
    CHECK_OK(herd_mutex_lock(&gate)); /* suspends until the root unlocks */
    CHECK_OK(herd_mutex_unlock(&gate));
}

/* BLOCKED tasks suspended on the gate at once, then released. */
static void blocked_round(void *arg) {
    (void)arg;
    atomic_store_explicit(&arrived, 0, memory_order_relaxed);
    CHECK_OK(herd_mutex_lock(&gate));
    for (int i = 0; i < BLOCKED; i++)
        CHECK_OK(herd_spawn(blocker, NULL, 0));
    while (atomic_load_explicit(&arrived, memory_order_relaxed) < BLOCKED)
        CHECK_OK(herd_yield());
    CHECK_OK(herd_mutex_unlock(&gate));
    CHECK_OK(herd_wait());
}

int main(void) {
    CHECK_OK(herd_start(NULL));
    herd_mutex_init(&gate);

    uint64_t before = stacks_allocated();
    CHECK_OK(herd_run(many_leaves, NULL, 0));
    uint64_t lazy = stacks_allocated() - before;
    CHECK_EQ(atomic_load(&leaves_run), LEAVES);
    STEP("%d non-blocking tasks mapped %llu stacks", LEAVES, (unsigned long long)lazy);
    CHECK(lazy <= (uint64_t)LAZY_PER_WORKER * (uint64_t)herd_num_workers());

    before = stacks_allocated();
    CHECK_OK(herd_run(blocked_round, NULL, 0));
    uint64_t first = stacks_allocated() - before;
    before = stacks_allocated();
    for (int r = 1; r < ROUNDS; r++)
        CHECK_OK(herd_run(blocked_round, NULL, 0));
    uint64_t later = stacks_allocated() - before;
    STEP("%d tasks blocked at once: the first round mapped %llu stacks, the next %d rounds %llu",
         BLOCKED, (unsigned long long)first, ROUNDS - 1, (unsigned long long)later);
    /* Each suspended task holds a stack of its own (some of the first
     * round's may come from the first part's cache). */
    CHECK(stacks_allocated() >= BLOCKED);
    CHECK(later <= first / 4); /* reused: without recycling, about (ROUNDS - 1) * first */

    CHECK_OK(herd_stop());
    return 0;
}
