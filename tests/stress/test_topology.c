/* A synthetic machine: HERD_TOPOLOGY="pack:4 l3:1 core:8 pu:1" (32 PUs) with
 * 32 workers on whatever this machine has (the workers are not pinned on a
 * synthetic topology). Real workloads must give the right results: fib in
 * both spawn shapes, a mutex-guarded count, a barrier across the workers,
 * and concurrent herd_run callers.
 *
 * The topology string holds spaces, which a `herd-test-env` line cannot
 * carry, so the test sets HERD_TOPOLOGY itself: through the environment for
 * one start, through herd_config for another. The variants below vary the
 * idle policy and the shepherd level. */
// herd-test-env: HERD_IDLE=sleep
// herd-test-env: HERD_IDLE=spin HERD_SHEPHERD=core
// herd-test-env: HERD_IDLE=adaptive HERD_SHEPHERD=package HERD_BIND=scatter
// herd-test-timeout: 300
#include "../common/check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define TOPOLOGY "pack:4 l3:1 core:8 pu:1"
#define NPUS 32
#define FIB_N CHECK_SIZE(30, 22)

static uint64_t fib_iter(int n) {
    uint64_t a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        uint64_t t = a + b;
        a = b;
        b = t;
    }
    return a;
}

typedef struct fib_arg {
    int n;
    uint64_t *out;
} fib_arg;

static void fib_both(void *p) {
    fib_arg *a = p;
    if (a->n < 2) {
        *a->out = (uint64_t)a->n;
        return;
    }
    uint64_t x = 0, y = 0;
    fib_arg l = {a->n - 1, &x}, r = {a->n - 2, &y};
    CHECK_OK(herd_spawn(fib_both, &l, sizeof l));
    CHECK_OK(herd_spawn(fib_both, &r, sizeof r));
    CHECK_OK(herd_wait());
    *a->out = x + y;
}

static void fib_one(void *p) {
    fib_arg *a = p;
    if (a->n < 2) {
        *a->out = (uint64_t)a->n;
        return;
    }
    uint64_t x = 0, y = 0;
    fib_arg l = {a->n - 1, &x}, r = {a->n - 2, &y};
    CHECK_OK(herd_spawn(fib_one, &l, sizeof l));
    fib_one(&r);
    CHECK_OK(herd_wait());
    *a->out = x + y;
}

/* Mutex count and a barrier across more tasks than workers. */
#define SYNC_TASKS CHECK_SIZE(3000, 500)
#define SYNC_PHASES 10
static herd_mutex m;
static long guarded;
static herd_barrier bar;
static _Atomic long arrived[SYNC_PHASES], serial[SYNC_PHASES];
static _Atomic int worker_used[NPUS];

static void sync_task(void *p) {
    (void)p;
    for (int ph = 0; ph < SYNC_PHASES; ph++) {
        int w = herd_worker_id();
        CHECK(w >= 0 && w < NPUS);
        atomic_store(&worker_used[w], 1);
        CHECK_OK(herd_mutex_lock(&m));
        guarded++;
        CHECK_OK(herd_mutex_unlock(&m));
        atomic_fetch_add(&arrived[ph], 1);
        int rc = herd_barrier_wait(&bar);
        CHECK_EQ(atomic_load(&arrived[ph]), SYNC_TASKS);
        if (rc == 1)
            atomic_fetch_add(&serial[ph], 1);
    }
}

static void sync_root(void *p) {
    (void)p;
    herd_mutex_init(&m);
    guarded = 0;
    for (int ph = 0; ph < SYNC_PHASES; ph++) {
        atomic_store(&arrived[ph], 0);
        atomic_store(&serial[ph], 0);
    }
    CHECK_OK(herd_barrier_init(&bar, SYNC_TASKS));
    for (int i = 0; i < SYNC_TASKS; i++)
        CHECK_OK(herd_spawn(sync_task, NULL, 0));
    CHECK_OK(herd_wait());
    CHECK_EQ(guarded, (long)SYNC_TASKS * SYNC_PHASES);
    for (int ph = 0; ph < SYNC_PHASES; ph++)
        CHECK_EQ(atomic_load(&serial[ph]), 1);
    herd_barrier_destroy(&bar);
}

static void *run_thread(void *p) {
    int t = (int)(intptr_t)p;
    for (int r = 0; r < 10; r++) {
        int n = 10 + (t + r) % 10;
        uint64_t out = 0;
        fib_arg a = {n, &out};
        CHECK_OK(herd_run(r % 2 ? fib_one : fib_both, &a, sizeof a));
        CHECK_EQ_U64(out, fib_iter(n));
    }
    return NULL;
}

static void workload(void) {
    CHECK_EQ(herd_num_workers(), NPUS);
    uint64_t out = 0;
    fib_arg a = {FIB_N, &out};
    CHECK_OK(herd_run(fib_both, &a, sizeof a));
    CHECK_EQ_U64(out, fib_iter(FIB_N));
    out = 0;
    CHECK_OK(herd_run(fib_one, &a, sizeof a));
    CHECK_EQ_U64(out, fib_iter(FIB_N));

    memset(worker_used, 0, sizeof worker_used);
    CHECK_OK(herd_run(sync_root, NULL, 0));
    int used = 0;
    for (int i = 0; i < NPUS; i++)
        used += atomic_load(&worker_used[i]);
    STEP("%d of %d workers ran barrier tasks", used, NPUS);
    CHECK(used >= 1);

    pthread_t th[8];
    for (int t = 0; t < 8; t++)
        CHECK(pthread_create(&th[t], NULL, run_thread, (void *)(intptr_t)t) == 0);
    for (int t = 0; t < 8; t++)
        CHECK(pthread_join(th[t], NULL) == 0);

    herd_worker_stats st[NPUS];
    CHECK_EQ(herd_stats(st, NPUS), NPUS);
    uint64_t executed = 0;
    for (int i = 0; i < NPUS; i++)
        executed += st[i].executed;
    /* At least the tasks of fib_both(n) (2 * fib(n+1) - 1) and the sync tasks. */
    CHECK(executed >= 2 * fib_iter(FIB_N + 1) - 1 + SYNC_TASKS);
}

int main(void) {
    STEP("HERD_TOPOLOGY=\"%s\" HERD_WORKERS=%d from the environment", TOPOLOGY, NPUS);
    CHECK(setenv("HERD_TOPOLOGY", TOPOLOGY, 1) == 0);
    CHECK(setenv("HERD_WORKERS", "32", 1) == 0);
    CHECK_OK(herd_start(NULL));
    workload();
    CHECK_OK(herd_stop());

    STEP("the same topology, workers left to default (one per synthetic PU)");
    CHECK(unsetenv("HERD_WORKERS") == 0);
    CHECK_OK(herd_start(NULL));
    CHECK_EQ(herd_num_workers(), NPUS);
    CHECK_OK(herd_stop());

    STEP("the same through herd_config");
    CHECK(unsetenv("HERD_TOPOLOGY") == 0);
    herd_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.topology = TOPOLOGY;
    cfg.workers = NPUS;
    CHECK_OK(herd_start(&cfg));
    workload();
    CHECK_OK(herd_stop());
    STEP("ok");
    return 0;
}
