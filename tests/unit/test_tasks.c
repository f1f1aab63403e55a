/* Tasks (src/core/task.c, src/core/runtime.c): spawn/wait results, argument
 * copies, the implicit wait at task return, groups, futures, yield, worker
 * ids, statistics, many herd_run calls (in sequence and from several
 * threads at once), and start/stop/start.
 *
 * Every case checks a result that a wrong runtime gets wrong (a value, a
 * count, a byte pattern); none depends on timing. */
// herd-test-matrix: unit
// herd-test-env: HERD_WORKERS=1
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=4 HERD_IDLE=sleep
// herd-test-env: HERD_WORKERS=8 HERD_IDLE=spin
// herd-test-env: HERD_WORKERS=3 HERD_STACK=64K
// herd-test-env: HERD_WORKERS=2 HERD_TRACE=unit_tasks_trace.json
// herd-test-timeout: 120
#include "../common/check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------ fibonacci */

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
    uint64_t *out; /* the parent's local: valid because the parent waits */
} fib_arg;

/* Shape 1: spawn both children, then wait. */
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

/* Shape 2: spawn one child, compute the other half as a plain call. */
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

/* In the scheduler matrix (CHECK_SCALE) fifo keeps most parents
 * suspended at once, each with a stack (and under TSan a fiber of ~2 MB):
 * smaller trees there. */
#define FIB_MAX (check_scale() > 1 ? CHECK_SIZE(18, 14) : 24)

static void case_fib(void) {
    for (int n = 0; n <= FIB_MAX; n += (n < 5 ? 1 : 6)) {
        uint64_t r1 = ~0ull, r2 = ~0ull;
        fib_arg a1 = {n, &r1}, a2 = {n, &r2};
        CHECK_OK(herd_run(fib_both, &a1, sizeof a1));
        CHECK_OK(herd_run(fib_one, &a2, sizeof a2));
        CHECK_EQ_U64(r1, fib_iter(n));
        CHECK_EQ_U64(r2, fib_iter(n));
    }
}

/* ------------------------------------------------ wait with no children */

static _Atomic int small_done;

static void small_child(void *p) {
    (void)p;
    atomic_fetch_add(&small_done, 1);
}

static void wait_nothing_root(void *p) {
    (void)p;
    CHECK_OK(herd_wait());
    CHECK_OK(herd_wait());
    CHECK_OK(herd_spawn(small_child, NULL, 0));
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&small_done), 1);
    CHECK_OK(herd_wait()); /* nothing new since the last wait */
    CHECK_EQ(atomic_load(&small_done), 1);
}

static void case_wait_nothing(void) {
    atomic_store(&small_done, 0);
    CHECK_OK(herd_run(wait_nothing_root, NULL, 0));
    CHECK_EQ(atomic_load(&small_done), 1);
}

/* ------------------------------------------ many children from one task */

#define MANY 100000
static _Atomic unsigned char many_seen[MANY];
static _Atomic long many_count;

static void many_child(void *p) {
    uint32_t i;
    memcpy(&i, p, sizeof i);
    CHECK(i < MANY);
    atomic_fetch_add(&many_seen[i], 1);
    atomic_fetch_add(&many_count, 1);
}

static void many_root(void *p) {
    (void)p;
    for (uint32_t i = 0; i < MANY; i++)
        CHECK_OK(herd_spawn(many_child, &i, sizeof i));
    CHECK_OK(herd_wait());
    /* After the wait every child has finished: nothing may still be running. */
    CHECK_EQ(atomic_load(&many_count), MANY);
}

static void case_many_children(void) {
    atomic_store(&many_count, 0);
    CHECK_OK(herd_run(many_root, NULL, 0));
    CHECK_EQ(atomic_load(&many_count), MANY);
    for (int i = 0; i < MANY; i++)
        CHECK_EQ(atomic_load(&many_seen[i]), 1);
}

/* ------------------------------------------------- argument copy semantics */

#define ARG_ROUNDS 500
static _Atomic long arg_checked;

static unsigned char arg_byte(uint32_t round, size_t size, size_t k) {
    return (unsigned char)(round * 31u + k * 7u + size * 13u + 1u);
}

/* One child function per size, so that the child knows what it must see. */
#define ARG_CHILD(SZ)                                                                              \
    static void arg_child_##SZ(void *p) {                                                          \
        const unsigned char *b = p;                                                                \
        uint32_t round = 0;                                                                        \
        if ((SZ) >= 4)                                                                             \
            memcpy(&round, b, 4);                                                                  \
        for (size_t k = ((SZ) >= 4 ? 4 : 0); k + 1 <= (size_t)(SZ); k++)                           \
            CHECK_EQ(b[k], arg_byte((SZ) >= 4 ? round : 0, (SZ), k));                              \
        atomic_fetch_add(&arg_checked, 1);                                                         \
    }
ARG_CHILD(0)
ARG_CHILD(1)
ARG_CHILD(40)
ARG_CHILD(41)
ARG_CHILD(256)

static void spawn_pattern(herd_fn fn, size_t size, uint32_t round) {
    unsigned char buf[HERD_ARG_MAX + 8];
    memset(buf, 0, sizeof buf);
    for (size_t k = 0; k < size; k++)
        buf[k] = arg_byte(size >= 4 ? round : 0, size, k);
    if (size >= 4)
        memcpy(buf, &round, 4);
    CHECK_OK(herd_spawn(fn, size ? buf : NULL, size));
    /* The copy was taken at spawn: trash the caller's buffer at once. */
    memset(buf, 0xEE, sizeof buf);
    __asm__ volatile("" ::"r"(buf) : "memory");
}

static void arg_root(void *p) {
    /* The root's own copy (256 bytes from herd_run). */
    const unsigned char *b = p;
    for (size_t k = 0; k < HERD_ARG_MAX; k++)
        CHECK_EQ(b[k], (unsigned char)(k ^ 0x5A));
    for (uint32_t round = 0; round < ARG_ROUNDS; round++) {
        spawn_pattern(arg_child_0, 0, round);
        spawn_pattern(arg_child_1, 1, round);
        spawn_pattern(arg_child_40, 40, round);
        spawn_pattern(arg_child_41, 41, round);
        spawn_pattern(arg_child_256, 256, round);
        if (round % 97 == 0)
            CHECK_OK(herd_wait());
    }
    unsigned char big[HERD_ARG_MAX + 1];
    memset(big, 1, sizeof big);
    CHECK_RC(herd_spawn(arg_child_0, big, HERD_ARG_MAX + 1), HERD_EINVAL);
    CHECK_RC(herd_spawn(NULL, big, 8), HERD_EINVAL);
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&arg_checked), 5 * ARG_ROUNDS);
}

static void case_args(void) {
    atomic_store(&arg_checked, 0);
    unsigned char buf[HERD_ARG_MAX + 1];
    for (size_t k = 0; k < sizeof buf; k++)
        buf[k] = (unsigned char)(k ^ 0x5A);
    CHECK_RC(herd_run(arg_root, buf, HERD_ARG_MAX + 1), HERD_EINVAL);
    CHECK_RC(herd_run(NULL, buf, 8), HERD_EINVAL);
    CHECK_OK(herd_run(arg_root, buf, HERD_ARG_MAX));
    CHECK_EQ(atomic_load(&arg_checked), 5 * ARG_ROUNDS);
}

/* ------------------------------------------------ implicit wait at return */

#define IW_FANOUT 8
#define IW_DEPTH CHECK_SIZE(4, 3) /* 8 + 64 + 512 + 4096 descendants */
static _Atomic long iw_done;

typedef struct iw_arg {
    int depth;
    int yields;
} iw_arg;

/* Returns without herd_wait: the runtime must still wait for the subtree. */
static void iw_node(void *p) {
    iw_arg a = *(iw_arg *)p;
    if (a.depth > 0) {
        for (int i = 0; i < IW_FANOUT; i++) {
            iw_arg c = {a.depth - 1, i % 3};
            CHECK_OK(herd_spawn(iw_node, &c, sizeof c));
        }
    }
    for (int i = 0; i < a.yields; i++)
        CHECK_OK(herd_yield()); /* keep leaves in flight while parents return */
    atomic_fetch_add(&iw_done, 1);
}

static long iw_expected(void) {
    long n = 0, level = 1;
    for (int d = 0; d <= IW_DEPTH; d++) {
        n += level;
        level *= IW_FANOUT;
    }
    return n; /* the node spawned by the root and all its descendants */
}

/* The root spawns the subtree and waits: its wait must cover the subtree's
 * grandchildren, which the child never waited for explicitly. */
static void iw_root_waits(void *p) {
    (void)p;
    iw_arg a = {IW_DEPTH, 1};
    CHECK_OK(herd_spawn(iw_node, &a, sizeof a));
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&iw_done), iw_expected());
}

/* The root itself returns without waiting: herd_run must still cover all. */
static void iw_root_returns(void *p) {
    (void)p;
    iw_arg a = {IW_DEPTH, 2};
    CHECK_OK(herd_spawn(iw_node, &a, sizeof a));
}

static void case_implicit_wait(void) {
    atomic_store(&iw_done, 0);
    CHECK_OK(herd_run(iw_root_waits, NULL, 0));
    CHECK_EQ(atomic_load(&iw_done), iw_expected());
    for (int r = 0; r < 5; r++) {
        atomic_store(&iw_done, 0);
        CHECK_OK(herd_run(iw_root_returns, NULL, 0));
        CHECK_EQ(atomic_load(&iw_done), iw_expected());
    }
}

/* ------------------------------------------------------------------ groups */

#define GR_CHILDREN 20
#define GR_GRANDCHILDREN 10
#define GR_PER_SPAWNER 5
static _Atomic long gr_done, gr_spawned;

static void gr_member(void *p) {
    (void)p;
    CHECK_OK(herd_yield());
    atomic_fetch_add(&gr_done, 1);
}

/* A member that spawns more members: the group must count them too. */
static void gr_member_spawner(void *p) {
    herd_group *g = *(herd_group **)p;
    for (int i = 0; i < 3; i++) {
        CHECK_OK(herd_group_spawn(g, gr_member, &g, sizeof g));
        atomic_fetch_add(&gr_spawned, 1);
    }
    atomic_fetch_add(&gr_done, 1);
}

static void gr_spawn_some(herd_group *g) {
    for (int i = 0; i < GR_PER_SPAWNER; i++) {
        herd_fn fn = i == 0 ? gr_member_spawner : gr_member;
        CHECK_OK(herd_group_spawn(g, fn, &g, sizeof g));
        atomic_fetch_add(&gr_spawned, 1);
    }
}

static void gr_grandchild(void *p) {
    gr_spawn_some(*(herd_group **)p);
}

static void gr_child(void *p) {
    herd_group *g = *(herd_group **)p;
    gr_spawn_some(g);
    for (int i = 0; i < GR_GRANDCHILDREN; i++)
        CHECK_OK(herd_spawn(gr_grandchild, &g, sizeof g));
}

static long gr_expected(void) {
    /* Spawners: the root, its children, their grandchildren. Each spawns
     * GR_PER_SPAWNER members, one of which spawns 3 more. */
    long spawners = 1 + GR_CHILDREN + GR_CHILDREN * GR_GRANDCHILDREN;
    return spawners * (GR_PER_SPAWNER + 3);
}

static void gr_root(void *p) {
    (void)p;
    herd_group g;
    herd_group_init(&g);
    herd_group *gp = &g;
    CHECK_OK(herd_group_wait(&g)); /* empty group: returns at once */
    gr_spawn_some(gp);
    for (int i = 0; i < GR_CHILDREN; i++)
        CHECK_OK(herd_spawn(gr_child, &gp, sizeof gp));
    /* After our wait every group_spawn call has happened (they are in our
     * descendants); the group wait then covers every member. */
    CHECK_OK(herd_wait());
    CHECK_OK(herd_group_wait(&g));
    CHECK_EQ(atomic_load(&gr_spawned), gr_expected());
    CHECK_EQ(atomic_load(&gr_done), gr_expected());
    /* The group is reusable. */
    gr_spawn_some(gp);
    CHECK_OK(herd_group_wait(&g));
    CHECK_EQ(atomic_load(&gr_done), gr_expected() + GR_PER_SPAWNER + 3);
}

/* A second waiter gets HERD_EBUSY. Safe to construct only with one worker:
 * there the first waiter has certainly registered before the root resumes. */
static uint64_t busy_word;
static _Atomic int busy_member_started, busy_waiter_started, busy_waiter_done;

static void busy_member(void *p) {
    (void)p;
    atomic_store(&busy_member_started, 1);
    uint64_t v;
    CHECK_OK(herd_feb_readFF(&busy_word, &v));
    CHECK_EQ(v, 99);
}

static void busy_waiter(void *p) {
    herd_group *g = *(herd_group **)p;
    atomic_store(&busy_waiter_started, 1);
    CHECK_OK(herd_group_wait(g));
    atomic_store(&busy_waiter_done, 1);
}

static void busy_root(void *p) {
    (void)p;
    herd_group g;
    herd_group_init(&g);
    herd_group *gp = &g;
    CHECK_OK(herd_feb_empty(&busy_word));
    CHECK_OK(herd_group_spawn(&g, busy_member, NULL, 0));
    while (!atomic_load(&busy_member_started))
        CHECK_OK(herd_yield());
    CHECK_OK(herd_spawn(busy_waiter, &gp, sizeof gp));
    while (!atomic_load(&busy_waiter_started))
        CHECK_OK(herd_yield());
    CHECK_RC(herd_group_wait(&g), HERD_EBUSY);
    CHECK_EQ(atomic_load(&busy_waiter_done), 0);
    CHECK_OK(herd_feb_writeF(&busy_word, 99));
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&busy_waiter_done), 1);
}

/* herd_wait() does not wait for group tasks the caller queued (they are not
 * its children): a member that needs something the caller does only after
 * its herd_wait() must not deadlock it. */
static uint64_t gw_word;
static _Atomic int gw_member_done;

static void gw_member(void *p) {
    (void)p;
    uint64_t v;
    CHECK_OK(herd_feb_readFF(&gw_word, &v));
    CHECK_EQ(v, 7);
    atomic_store(&gw_member_done, 1);
}

static void gw_root(void *p) {
    (void)p;
    herd_group g;
    herd_group_init(&g);
    CHECK_OK(herd_feb_empty(&gw_word));
    CHECK_OK(herd_group_spawn(&g, gw_member, NULL, 0));
    CHECK_OK(herd_spawn(small_child, NULL, 0));
    CHECK_OK(herd_wait());
    CHECK_OK(herd_feb_writeF(&gw_word, 7));
    CHECK_OK(herd_group_wait(&g));
    CHECK_EQ(atomic_load(&gw_member_done), 1);
}

static void case_groups(void) {
    atomic_store(&gr_done, 0);
    atomic_store(&gr_spawned, 0);
    CHECK_OK(herd_run(gr_root, NULL, 0));
    if (herd_num_workers() == 1) {
        STEP("groups: second waiter gets HERD_EBUSY");
        CHECK_OK(herd_run(busy_root, NULL, 0));
    }
    STEP("groups: herd_wait does not wait for the caller's group tasks");
    CHECK_OK(herd_run(gw_root, NULL, 0));
}

/* ----------------------------------------------------------------- futures */

#define NFUT CHECK_SIZE(2000, 300)

static uint64_t fut_square(void *p) {
    uint64_t i;
    memcpy(&i, p, sizeof i);
    if (i % 5 == 0)
        CHECK_OK(herd_yield());
    return i * i + 7;
}

static uint64_t fut_fib(void *p) {
    int n = *(int *)p;
    if (n < 2)
        return (uint64_t)n;
    herd_future a, b;
    int n1 = n - 1, n2 = n - 2;
    CHECK_OK(herd_future_spawn(&a, fut_fib, &n1, sizeof n1));
    CHECK_OK(herd_future_spawn(&b, fut_fib, &n2, sizeof n2));
    uint64_t x = 0, y = 0;
    CHECK_OK(herd_future_get(&b, &y));
    CHECK_OK(herd_future_get(&a, &x));
    return x + y;
}

static void fut_root(void *p) {
    (void)p;
    herd_future *f = malloc(NFUT * sizeof *f);
    CHECK(f != NULL);
    for (uint64_t i = 0; i < NFUT; i++)
        CHECK_OK(herd_future_spawn(&f[i], fut_square, &i, sizeof i));
    /* Read in an order unrelated to the spawn order, each twice. */
    for (uint64_t k = 0; k < NFUT; k++) {
        uint64_t i = (k * 7919) % NFUT, v1 = 0, v2 = 1;
        CHECK_OK(herd_future_get(&f[i], &v1));
        CHECK_OK(herd_future_get(&f[i], &v2));
        CHECK_EQ_U64(v1, i * i + 7);
        CHECK_EQ_U64(v2, i * i + 7);
    }
    CHECK_OK(herd_wait());
    free(f);

    herd_future ff;
    int n = CHECK_SIZE(20, 12);
    CHECK_OK(herd_future_spawn(&ff, fut_fib, &n, sizeof n));
    uint64_t v = 0;
    CHECK_OK(herd_future_get(&ff, &v));
    CHECK_EQ_U64(v, fib_iter(n));
    unsigned char big[HERD_ARG_MAX + 1] = {0};
    CHECK_RC(herd_future_spawn(&ff, fut_square, big, sizeof big), HERD_EINVAL);
    CHECK_OK(herd_future_get(&ff, &v)); /* the failed spawn left ff as it was */
    CHECK_EQ_U64(v, fib_iter(n));
}

static void case_futures(void) {
    CHECK_OK(herd_run(fut_root, NULL, 0));
}

/* ------------------------------------------------------------------- yield */

#define PINGS CHECK_SIZE(5000, 500)
static _Atomic long pp_counter;

/* Task `parity` may increment only when the counter has its parity; both
 * need the other to progress, so this ends only if yield lets the other run. */
static void pp_task(void *p) {
    long parity = *(long *)p;
    for (long done = 0; done < PINGS; done++) {
        while (atomic_load(&pp_counter) % 2 != parity)
            CHECK_OK(herd_yield());
        int id = herd_worker_id();
        CHECK(id >= 0 && id < herd_num_workers());
        atomic_fetch_add(&pp_counter, 1);
    }
}

static void pp_root(void *p) {
    (void)p;
    long even = 0, odd = 1;
    CHECK_OK(herd_spawn(pp_task, &even, sizeof even));
    CHECK_OK(herd_spawn(pp_task, &odd, sizeof odd));
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&pp_counter), 2 * PINGS);
}

static void case_yield(void) {
    atomic_store(&pp_counter, 0);
    CHECK_OK(herd_run(pp_root, NULL, 0));
    CHECK_EQ(atomic_load(&pp_counter), 2 * PINGS);
}

/* ---------------------------------------------------- worker ids and stats */

#define STATS_CHILDREN CHECK_SIZE(5000, 500)
static _Atomic int ids_seen[64];

static void id_child(void *p) {
    (void)p;
    int id = herd_worker_id();
    CHECK(id >= 0 && id < herd_num_workers());
    if (id < 64)
        atomic_store(&ids_seen[id], 1);
    CHECK_OK(herd_yield()); /* may move: the id must still be in range */
    id = herd_worker_id();
    CHECK(id >= 0 && id < herd_num_workers());
}

static void stats_root(void *p) {
    (void)p;
    for (int i = 0; i < STATS_CHILDREN; i++)
        CHECK_OK(herd_spawn(id_child, NULL, 0));
    CHECK_OK(herd_wait());
    /* herd_stats is callable from a task too. */
    herd_worker_stats one[1];
    CHECK_EQ(herd_stats(one, 1), herd_num_workers());
}

static void stats_sum(herd_worker_stats *sum) {
    int n = herd_num_workers();
    herd_worker_stats *st = calloc((size_t)n, sizeof *st);
    CHECK(st != NULL);
    CHECK_EQ(herd_stats(st, n), n);
    memset(sum, 0, sizeof *sum);
    for (int i = 0; i < n; i++) {
        CHECK(st[i].inlined <= st[i].executed);
        CHECK(st[i].steals <= st[i].steal_attempts);
        CHECK(st[i].steals <= st[i].stolen_tasks);
        sum->spawned += st[i].spawned;
        sum->executed += st[i].executed;
        sum->inlined += st[i].inlined;
        sum->steals += st[i].steals;
        sum->stolen_tasks += st[i].stolen_tasks;
        sum->blocks += st[i].blocks;
    }
    free(st);
}

static void case_ids_and_stats(void) {
    int n = herd_num_workers();
    CHECK(n >= 1);
    const char *env = getenv("HERD_WORKERS");
    if (env)
        CHECK_EQ(n, atoi(env));
    CHECK_EQ(herd_worker_id(), -1); /* the main thread is not a worker */

    herd_worker_stats before, after;
    stats_sum(&before);
    CHECK_OK(herd_run(stats_root, NULL, 0));
    stats_sum(&after);
    uint64_t tasks = STATS_CHILDREN + 1; /* + the root */
    CHECK(after.executed - before.executed >= tasks);
    CHECK_EQ(after.executed - before.executed, tasks);
    CHECK_EQ(after.spawned - before.spawned, STATS_CHILDREN);
    /* Every queued item came from a spawn (a new task, or under work-first
     * the parent's continuation, which also counts as a block) or from a
     * suspension (wait, yield, sync object); a steal moves it once. A task
     * that suspends often can be stolen often, so steals may exceed the
     * tasks executed (the yield ping-pong case does, on 32 workers). */
    CHECK(after.stolen_tasks <= after.spawned + after.blocks);

    /* max smaller than the number of workers: the count is still returned,
     * and nothing past out[max-1] is written. */
    herd_worker_stats two[2];
    memset(two, 0xAB, sizeof two);
    CHECK_EQ(herd_stats(two, 1), n);
    unsigned char *tail = (unsigned char *)&two[1];
    for (size_t k = 0; k < sizeof two[1]; k++)
        CHECK_EQ(tail[k], 0xAB);
    CHECK_EQ(herd_stats(NULL, 0), n);
}

/* --------------------------------------------------- many herd_run calls */

#define RUN_THREADS 6
#define RUNS_PER_THREAD 40

static void *run_thread(void *p) {
    long t = (long)(intptr_t)p;
    for (int r = 0; r < RUNS_PER_THREAD; r++) {
        int n = (int)((t * 7 + r) % 16);
        uint64_t out = ~0ull;
        fib_arg a = {n, &out};
        CHECK_OK(herd_run(r % 2 ? fib_both : fib_one, &a, sizeof a));
        CHECK_EQ_U64(out, fib_iter(n));
        CHECK_EQ(herd_worker_id(), -1);
    }
    return NULL;
}

static void case_many_runs(void) {
    for (int r = 0; r < 200; r++) {
        uint64_t out = ~0ull;
        fib_arg a = {r % 12, &out};
        CHECK_OK(herd_run(fib_both, &a, sizeof a));
        CHECK_EQ_U64(out, fib_iter(r % 12));
    }
    pthread_t th[RUN_THREADS];
    for (long t = 0; t < RUN_THREADS; t++)
        CHECK(pthread_create(&th[t], NULL, run_thread, (void *)(intptr_t)t) == 0);
    for (int t = 0; t < RUN_THREADS; t++)
        CHECK(pthread_join(th[t], NULL) == 0);
}

/* ------------------------------------------------------- start/stop/start */

static void case_restart(void) {
    int n = herd_num_workers();
    CHECK_OK(herd_stop());
    CHECK_EQ(herd_num_workers(), 0);
    CHECK_RC(herd_stats(NULL, 0), HERD_ESTATE);
    uint64_t out = 0;
    fib_arg a = {10, &out};
    CHECK_RC(herd_run(fib_both, &a, sizeof a), HERD_ESTATE);
    for (int round = 0; round < 3; round++) {
        CHECK_OK(herd_start(NULL));
        CHECK_EQ(herd_num_workers(), n);
        out = 0;
        a.n = 15 + round;
        CHECK_OK(herd_run(fib_one, &a, sizeof a));
        CHECK_EQ_U64(out, fib_iter(15 + round));
        /* Counters restart with the runtime. */
        herd_worker_stats s;
        stats_sum(&s);
        CHECK(s.executed >= 1);
        CHECK_OK(herd_stop());
    }
    CHECK_OK(herd_start(NULL));
}

int main(void) {
    CHECK_EQ(herd_num_workers(), 0);
    CHECK_EQ(herd_worker_id(), -1);
    CHECK_OK(herd_start(NULL));
    STEP("fib, both shapes");
    case_fib();
    STEP("wait with no children");
    case_wait_nothing();
    STEP("100000 children, one wait");
    case_many_children();
    STEP("argument copies");
    case_args();
    STEP("implicit wait at task return");
    case_implicit_wait();
    STEP("futures");
    case_futures();
    STEP("yield ping-pong");
    case_yield();
    STEP("worker ids and stats");
    case_ids_and_stats();
    STEP("many herd_run calls, sequential and concurrent");
    case_many_runs();
    STEP("start/stop/start");
    case_restart();
    STEP("groups");
    case_groups();
    CHECK_OK(herd_stop());
    STEP("ok");
    return 0;
}
