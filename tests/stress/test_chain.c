/* A 100,000-deep chain: task i spawns task i+1 and waits for it, so every
 * task but the last is waiting at once. The waits run the child as a plain
 * call until the stack runs low, then suspend (task.c, SPILL_BYTES), so the
 * chain spreads over many stacks, each holding a run of waiting frames.
 *
 * Three shapes: spawn + herd_wait (the value comes back through the parent's
 * local); futures (herd_future_get instead of the wait); and a chain of
 * tasks that return at once (implicit wait) and record their depth in a
 * table. Each checks the depth reached, that every level ran once, and the
 * value summed back up the chain. */
// herd-test-matrix: stress
// herd-test-env: HERD_WORKERS=1
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=4 HERD_IDLE=sleep HERD_STACK=64K
// herd-test-env: HERD_WORKERS=3 HERD_STACK=16K
// herd-test-timeout: 300
#include "../common/check.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* The future chain suspends every level at once (a get does not run the
 * child itself), so under TSan the depth stays at a thousand fibers. */
#define DEPTH ((int)CHECK_SCALED(CHECK_TSAN ? 1000 : CHECK_SANITIZED ? 20000 : 100000))

static _Atomic int max_depth;
static _Atomic unsigned char *visited;

static void note(int i) {
    CHECK(i >= 0 && i < DEPTH);
    CHECK_EQ(atomic_fetch_add(&visited[i], 1), 0);
    int m = atomic_load(&max_depth);
    while (i > m && !atomic_compare_exchange_weak(&max_depth, &m, i))
        ;
}

static void reset(void) {
    atomic_store(&max_depth, -1);
    for (int i = 0; i < DEPTH; i++)
        atomic_store(&visited[i], 0);
}

static void check_all_visited(void) {
    CHECK_EQ(atomic_load(&max_depth), DEPTH - 1);
    for (int i = 0; i < DEPTH; i++)
        CHECK_EQ(atomic_load(&visited[i]), 1);
}

/* The value of the chain below level i: sum of (k * 3 + 1) for k >= i. */
static uint64_t expected_from(int i) {
    uint64_t v = 0;
    for (int k = i; k < DEPTH; k++)
        v += (uint64_t)k * 3 + 1;
    return v;
}

/* ---------------------------------------------------- spawn + herd_wait */

typedef struct link_arg {
    int i;
    uint64_t *out;
} link_arg;

static void link_task(void *p) {
    link_arg a = *(link_arg *)p;
    note(a.i);
    uint64_t below = 0;
    if (a.i + 1 < DEPTH) {
        link_arg c = {a.i + 1, &below};
        CHECK_OK(herd_spawn(link_task, &c, sizeof c));
        if (a.i % 1000 == 0)
            CHECK_OK(herd_yield()); /* suspend now and then with a child queued */
        CHECK_OK(herd_wait());
        CHECK_EQ(atomic_load(&visited[a.i + 1]), 1);
    }
    *a.out = below + (uint64_t)a.i * 3 + 1;
}

/* --------------------------------------------------------------- futures */

static uint64_t future_link(void *p) {
    int i = *(int *)p;
    note(i);
    uint64_t below = 0;
    if (i + 1 < DEPTH) {
        herd_future f;
        int next = i + 1;
        CHECK_OK(herd_future_spawn(&f, future_link, &next, sizeof next));
        CHECK_OK(herd_future_get(&f, &below));
    }
    return below + (uint64_t)i * 3 + 1;
}

static void future_root(void *p) {
    uint64_t *out = *(uint64_t **)p;
    herd_future f;
    int first = 0;
    CHECK_OK(herd_future_spawn(&f, future_link, &first, sizeof first));
    CHECK_OK(herd_future_get(&f, out));
}

/* ------------------------------------------- implicit waits, no results */

static uint64_t *implicit_values;

static void implicit_link(void *p) {
    int i = *(int *)p;
    note(i);
    implicit_values[i] = (uint64_t)i * 3 + 1;
    if (i + 1 < DEPTH) {
        int next = i + 1;
        CHECK_OK(herd_spawn(implicit_link, &next, sizeof next));
    }
    /* Return at once: the runtime waits for the rest of the chain. */
}

int main(void) {
    visited = calloc(DEPTH, 1);
    implicit_values = calloc(DEPTH, sizeof *implicit_values);
    CHECK(visited != NULL && implicit_values != NULL);
    CHECK_OK(herd_start(NULL));
    uint64_t want = expected_from(0);

    STEP("spawn + wait chain, depth %d", DEPTH);
    reset();
    uint64_t out = 0;
    link_arg a = {0, &out};
    CHECK_OK(herd_run(link_task, &a, sizeof a));
    check_all_visited();
    CHECK_EQ_U64(out, want);

    STEP("future chain, depth %d", DEPTH);
    reset();
    out = 0;
    uint64_t *outp = &out;
    CHECK_OK(herd_run(future_root, &outp, sizeof outp));
    check_all_visited();
    CHECK_EQ_U64(out, want);

    STEP("implicit-wait chain, depth %d", DEPTH);
    reset();
    int first = 0;
    CHECK_OK(herd_run(implicit_link, &first, sizeof first));
    check_all_visited();
    uint64_t sum = 0;
    for (int i = 0; i < DEPTH; i++)
        sum += implicit_values[i];
    CHECK_EQ_U64(sum, want);

    herd_worker_stats st[64];
    int n = herd_stats(st, 64);
    CHECK(n >= 1);
    uint64_t stacks = 0, blocks = 0;
    for (int i = 0; i < n && i < 64; i++) {
        stacks += st[i].stacks_allocated;
        blocks += st[i].blocks;
    }
    STEP("%llu stacks mapped, %llu suspensions", (unsigned long long)stacks,
         (unsigned long long)blocks);
    CHECK_OK(herd_stop());
    free(visited);
    free(implicit_values);
    STEP("ok");
    return 0;
}
