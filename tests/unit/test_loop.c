/* Parallel loops: every flavour runs every iteration exactly once, for
 * empty, tiny, odd and large ranges and several grains; reductions give the
 * sequential answer (integer sums and a non-commutative-free struct of
 * min/max/count); loops nest and run beside the caller's own children;
 * misuse gives the documented codes. */
// herd-test-matrix: unit
// herd-test-env: HERD_WORKERS=1
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=4 HERD_IDLE=sleep
#include "../common/check.h"

#include <stdatomic.h>
#include <string.h>

#define N 200003 /* odd, not a power of two */
/* The largest range a case uses: N, or less in the scheduler matrix
 * (CHECK_SCALE, tests/CMakeLists.txt), where fifo's breadth-first order
 * keeps a stack per split task suspended at once. Still odd. */
#define RANGE ((int64_t)CHECK_SCALED(N) | 1)
static _Atomic unsigned char hits[N];

static void mark(int64_t b, int64_t e, void *arg) {
    int64_t base = *(int64_t *)arg;
    for (int64_t i = b; i < e; i++)
        atomic_fetch_add_explicit(&hits[i - base], 1, memory_order_relaxed);
}

static void check_each_once(int64_t n) {
    for (int64_t i = 0; i < n; i++)
        CHECK_EQ(atomic_load(&hits[i]), 1);
    for (int64_t i = n; i < N; i++)
        CHECK_EQ(atomic_load(&hits[i]), 0);
    memset((void *)hits, 0, sizeof hits);
}

static const herd_loop_kind kinds[] = {HERD_LOOP_EACH, HERD_LOOP_SPLIT, HERD_LOOP_CHUNKS,
                                       HERD_LOOP_SHEPHERDS};
static const char *const kind_names[] = {"each", "split", "chunks", "shepherds"};

static void sum_body(int64_t b, int64_t e, void *arg, void *partial) {
    (void)arg;
    for (int64_t i = b; i < e; i++)
        *(int64_t *)partial += i * i;
}

static void sum_combine(void *into, const void *from, void *arg) {
    (void)arg;
    *(int64_t *)into += *(const int64_t *)from;
}

typedef struct stats {
    int64_t min, max, count;
} stats;

static void stats_body(int64_t b, int64_t e, void *arg, void *partial) {
    const int64_t *v = arg;
    stats *s = partial;
    for (int64_t i = b; i < e; i++) {
        if (v[i] < s->min)
            s->min = v[i];
        if (v[i] > s->max)
            s->max = v[i];
        s->count++;
    }
}

static void stats_combine(void *into, const void *from, void *arg) {
    (void)arg;
    stats *a = into;
    const stats *b = from;
    if (b->min < a->min)
        a->min = b->min;
    if (b->max > a->max)
        a->max = b->max;
    a->count += b->count;
}

static _Atomic long side_children;
static void side_child(void *p) {
    (void)p;
    atomic_fetch_add(&side_children, 1);
}

static void inner_row(int64_t b, int64_t e, void *arg) {
    /* A loop inside a loop body: the body runs in a task, so it may loop. */
    for (int64_t r = b; r < e; r++) {
        int64_t base = 0;
        CHECK_OK(herd_loop(r * 100, r * 100 + 100, 7, HERD_LOOP_SPLIT, mark, &base));
    }
    (void)arg;
}

static void root(void *p) {
    (void)p;
    int64_t base = 0;
    const int64_t sizes[] = {0, 1, 2, 3, 17, 1000, RANGE};
    static const int64_t grains[] = {1, 3, 64, 100000};
    for (size_t k = 0; k < 3; k++) {
        STEP("%s: every iteration exactly once", kind_names[k]);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t g = 0; g < sizeof grains / sizeof grains[0]; g++) {
                CHECK_OK(herd_loop(0, sizes[s], grains[g], kinds[k], mark, &base));
                check_each_once(sizes[s]);
            }
        /* A range that does not start at 0. */
        base = 1000;
        CHECK_OK(herd_loop(1000, 1000 + 5000, 13, kinds[k], mark, &base));
        check_each_once(5000);
        base = 0;

        STEP("%s: sum of squares and min/max/count reductions", kind_names[k]);
        int64_t zero = 0, sum = -1;
        CHECK_OK(herd_loop_reduce(0, RANGE, 97, kinds[k], sum_body, sum_combine, NULL, &zero, &sum,
                                  sizeof sum));
        int64_t expect = 0;
        for (int64_t i = 0; i < RANGE; i++)
            expect += i * i;
        CHECK_EQ(sum, expect);
        CHECK_OK(herd_loop_reduce(5, 5, 97, kinds[k], sum_body, sum_combine, NULL, &zero, &sum,
                                  sizeof sum));
        CHECK_EQ(sum, 0); /* an empty range gives the identity */

        int64_t *v = malloc(RANGE * sizeof *v);
        CHECK(v != NULL);
        uint64_t x = 12345;
        for (int64_t i = 0; i < RANGE; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            v[i] = (int64_t)(x >> 20) - (1ll << 42);
        }
        stats id = {INT64_MAX, INT64_MIN, 0}, got;
        CHECK_OK(herd_loop_reduce(0, RANGE, 1000, kinds[k], stats_body, stats_combine, v, &id, &got,
                                  sizeof got));
        stats want = id;
        stats_body(0, RANGE, v, &want);
        CHECK_EQ(got.min, want.min);
        CHECK_EQ(got.max, want.max);
        CHECK_EQ(got.count, RANGE);
        free(v);
    }

    STEP("nested loops, beside the caller's own children");
    atomic_store(&side_children, 0);
    for (int i = 0; i < 50; i++)
        CHECK_OK(herd_spawn(side_child, NULL, 0));
    CHECK_OK(herd_loop(0, 2000, 5, HERD_LOOP_CHUNKS, inner_row, NULL));
    check_each_once(200000);
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&side_children), 50);

    STEP("misuse");
    CHECK_RC(herd_loop(0, 10, 0, HERD_LOOP_SPLIT, mark, &base), HERD_EINVAL);
    CHECK_RC(herd_loop(0, 10, 1, (herd_loop_kind)99, mark, &base), HERD_EINVAL);
    CHECK_RC(herd_loop(0, 10, 1, HERD_LOOP_SPLIT, NULL, &base), HERD_EINVAL);
    int64_t zero = 0, sum;
    CHECK_RC(
        herd_loop_reduce(0, 10, 1, HERD_LOOP_SPLIT, sum_body, NULL, NULL, &zero, &sum, sizeof sum),
        HERD_EINVAL);
    CHECK_RC(herd_loop_reduce(0, 10, 1, HERD_LOOP_SPLIT, sum_body, sum_combine, NULL, &zero, &sum,
                              HERD_ARG_MAX + 1),
             HERD_EINVAL);
    check_each_once(0);
}

/* HERD_LOOP_SHEPHERDS with a grain as large as the range: nothing splits
 * further, so every iteration runs on a worker of the shepherd its piece
 * was placed on: the first half of the range on shepherd 0, the second on
 * shepherd 1, and within each, one piece per worker. */
#define PLACED 1000
static int shepherd_of_worker[64];
static int ran_on_shepherd[PLACED];

static void where(int64_t b, int64_t e, void *arg) {
    (void)arg;
    int s = shepherd_of_worker[herd_worker_id()];
    for (int64_t i = b; i < e; i++)
        ran_on_shepherd[i] = s;
}

static void placed_root(void *arg) {
    (void)arg;
    CHECK_OK(herd_loop(0, PLACED, PLACED, HERD_LOOP_SHEPHERDS, where, NULL));
}

static void test_placement(void) {
    STEP("shepherds: each half of the range runs on its own shepherd");
    herd_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.workers = 6;
    cfg.topology = "pack:2 core:3 pu:1";
    cfg.shepherd = "package";
    cfg.stats = "0";
    CHECK_OK(herd_start(&cfg));
    herd_worker_stats st[6];
    CHECK_EQ(herd_stats(st, 6), 6);
    for (int w = 0; w < 6; w++)
        shepherd_of_worker[w] = st[w].shepherd;
    for (int round = 0; round < 20; round++) {
        memset(ran_on_shepherd, -1, sizeof ran_on_shepherd);
        CHECK_OK(herd_run(placed_root, NULL, 0));
        for (int i = 0; i < PLACED; i++)
            CHECK_EQ(ran_on_shepherd[i], i < PLACED / 2 ? 0 : 1);
    }
    CHECK_OK(herd_stop());
}

int main(void) {
    int64_t base = 0;
    CHECK_RC(herd_loop(0, 10, 1, HERD_LOOP_SPLIT, mark, &base), HERD_ENOTASK);
    CHECK_OK(herd_start(NULL));
    CHECK_OK(herd_run(root, NULL, 0));
    CHECK_OK(herd_stop());
    test_placement(); /* its own machine: the config fields win over HERD_* */
    STEP("ok");
    return 0;
}
