/* Worksharing loops: every schedule (static with and without chunk,
 * dynamic, guided, runtime, auto, nonmonotonic), unsigned long long loops,
 * ordered, doacross (ordered(n) with depend), nowait, collapse, reductions,
 * sections, combined parallel for. */
#include "check_omp.h"

#include <omp.h>
#include <string.h>

#define N 1000
static int hits[N];

static void check_all_once(void) {
    for (int i = 0; i < N; i++)
        CHECK_EQ(hits[i], 1);
    memset(hits, 0, sizeof hits);
}

#define LOOP_TEST(clause)                                                                          \
    do {                                                                                           \
        _Pragma("omp parallel") {                                                                  \
            _Pragma(clause) for (int i = 0; i < N; i++) {                                          \
                _Pragma("omp atomic") hits[i]++;                                                   \
            }                                                                                      \
        }                                                                                          \
        check_all_once();                                                                          \
    } while (0)

static void test_schedules(void) {
    LOOP_TEST("omp for schedule(static)");
    LOOP_TEST("omp for schedule(static, 7)");
    LOOP_TEST("omp for schedule(dynamic)");
    LOOP_TEST("omp for schedule(dynamic, 13)");
    LOOP_TEST("omp for schedule(guided)");
    LOOP_TEST("omp for schedule(guided, 5)");
    LOOP_TEST("omp for schedule(auto)");
    LOOP_TEST("omp for schedule(monotonic: dynamic, 3)");
    LOOP_TEST("omp for schedule(nonmonotonic: dynamic, 3)");
    LOOP_TEST("omp for schedule(nonmonotonic: guided)");
    omp_set_schedule(omp_sched_dynamic, 4);
    LOOP_TEST("omp for schedule(runtime)");
    omp_set_schedule(omp_sched_guided, 2);
    LOOP_TEST("omp for schedule(runtime)");
    omp_set_schedule(omp_sched_static, 0);
    LOOP_TEST("omp for schedule(runtime)");
    /* Combined constructs (GOMP_parallel_loop_*). */
#pragma omp parallel for schedule(dynamic, 2)
    for (int i = 0; i < N; i++) {
#pragma omp atomic
        hits[i]++;
    }
    check_all_once();
#pragma omp parallel for schedule(guided)
    for (int i = 0; i < N; i++) {
#pragma omp atomic
        hits[i]++;
    }
    check_all_once();
#pragma omp parallel for schedule(runtime)
    for (int i = 0; i < N; i++) {
#pragma omp atomic
        hits[i]++;
    }
    check_all_once();
#pragma omp parallel for
    for (int i = N - 1; i >= 0; i -= 1) {
#pragma omp atomic
        hits[i]++;
    }
    check_all_once();
}

static void test_strides_ull(void) {
    long sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(dynamic, 3)
    for (long i = 1000; i > -1000; i -= 7)
        sum += i;
    long want = 0;
    for (long i = 1000; i > -1000; i -= 7)
        want += i;
    CHECK_EQ(sum, want);
    unsigned long long usum = 0, uwant = 0;
    unsigned long long base = 1ull << 62;
#pragma omp parallel for reduction(+ : usum) schedule(guided, 2)
    for (unsigned long long u = base; u < base + 3000; u += 3)
        usum += u - base;
    for (unsigned long long u = base; u < base + 3000; u += 3)
        uwant += u - base;
    CHECK(usum == uwant);
    usum = 0;
#pragma omp parallel for reduction(+ : usum) schedule(static, 5)
    for (unsigned long long u = base + 3000; u > base; u -= 3)
        usum += u - base;
    uwant = 0;
    for (unsigned long long u = base + 3000; u > base; u -= 3)
        uwant += u - base;
    CHECK(usum == uwant);
}

static void test_ordered(void) {
    int seq[N], pos = 0;
#pragma omp parallel for ordered schedule(dynamic, 3)
    for (int i = 0; i < N; i++) {
#pragma omp ordered
        seq[pos++] = i;
    }
    CHECK_EQ(pos, N);
    for (int i = 0; i < N; i++)
        CHECK_EQ(seq[i], i);
    pos = 0;
#pragma omp parallel for ordered schedule(static, 2)
    for (int i = 0; i < N; i++) {
        if (i % 3 == 0) { /* some iterations skip their ordered region */
#pragma omp ordered
            seq[pos++] = i;
        }
    }
    CHECK_EQ(pos, (N + 2) / 3);
    for (int i = 0; i < pos; i++)
        CHECK_EQ(seq[i], 3 * i);
    pos = 0;
#pragma omp parallel
    {
#pragma omp for ordered schedule(guided)
        for (int i = 0; i < N; i++) {
#pragma omp ordered
            seq[pos++] = i;
        }
    }
    for (int i = 0; i < N; i++)
        CHECK_EQ(seq[i], i);
}

static void test_nowait_collapse_reduction(void) {
    static int a[N], b[N];
    memset(a, 0, sizeof a);
    long s = 0;
    int mx = -1;
    double prod = 1.0;
#pragma omp parallel reduction(+ : s) reduction(max : mx) reduction(* : prod)
    {
        /* Many nowait constructs in a row: more than the ring of records. */
        for (int r = 0; r < 20; r++) {
#pragma omp for nowait schedule(dynamic, 16)
            for (int i = 0; i < N; i++) {
#pragma omp atomic
                a[i] += i + r; /* members may be in different rounds: commutative */
            }
        }
#pragma omp barrier
#pragma omp for schedule(static)
        for (int i = 0; i < N; i++) {
            b[i] = a[i] * 2;
            s += b[i];
            if (b[i] > mx)
                mx = b[i];
        }
#pragma omp for
        for (int i = 0; i < 20; i++)
            prod *= 1.5;
    }
    long want = 0;
    for (int i = 0; i < N; i++)
        want += 2 * (20 * i + 190);
    CHECK_EQ(s, want);
    CHECK_EQ(mx, 2 * (20 * (N - 1) + 190));
    double wp = 1.0;
    for (int i = 0; i < 20; i++)
        wp *= 1.5;
    CHECK(prod == wp);
    static int grid[40][30];
    memset(grid, 0, sizeof grid);
#pragma omp parallel for collapse(2) schedule(dynamic, 7)
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < 30; j++)
            grid[i][j] += i * 100 + j;
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < 30; j++)
            CHECK_EQ(grid[i][j], i * 100 + j);
}

static void test_sections(void) {
    int done[5] = {0};
#pragma omp parallel
    {
#pragma omp sections
        {
#pragma omp section
            done[0]++;
#pragma omp section
    done[1]++;
#pragma omp section
    done[2]++;
}
#pragma omp sections nowait
{
#pragma omp section
    done[3]++;
#pragma omp section
    done[4]++;
}
}
#pragma omp parallel sections
{
#pragma omp section
    done[0]++;
#pragma omp section
    done[1]++;
}
CHECK_EQ(done[0], 2);
CHECK_EQ(done[1], 2);
CHECK_EQ(done[2], 1);
CHECK_EQ(done[3], 1);
CHECK_EQ(done[4], 1);
}

/* Doacross loops (ordered(n) with depend(sink)/depend(source)): a chain in
 * one loop and a wavefront over two, under each schedule and for an
 * unsigned long long loop; the values are only right if every sink waited
 * for its source (plain reads and writes: the ordering is the only
 * synchronisation). The chain records its completion order too. */
enum { DX_N = 2000, DX_W = 40 };
static long dx_a[DX_N];
static unsigned long dx_order[DX_N];
static long dx_b[DX_W][DX_W], dx_seq[DX_W][DX_W];

static void dx_chain_check_values(void) {
    for (int i = 1; i < DX_N; i++)
        if (dx_a[i] != i)
            CHECK_EQ(dx_a[i], i);
}

static void dx_chain_check(void) {
    dx_chain_check_values();
    for (int i = 1; i < DX_N - 1; i++)
        if (dx_order[i] >= dx_order[i + 1])
            CHECK(dx_order[i] < dx_order[i + 1]);
}

/* The chain's loop under one schedule clause (pragmas built by _Pragma, so
 * that each schedule's entry point is the one GCC calls). */
#define DX_PRAGMA(x) _Pragma(#x)
#define DX_CHAIN(...)                                                                              \
    DX_PRAGMA(omp for ordered(1) schedule(__VA_ARGS__))                                            \
    for (int i = 1; i < DX_N; i++) {                                                               \
        DX_PRAGMA(omp ordered depend(sink : i - 1))                                                \
        dx_a[i] = dx_a[i - 1] + 1;                                                                 \
        dx_order[i] = tick++;                                                                      \
        DX_PRAGMA(omp ordered depend(source))                                                      \
    }

static void test_doacross(void) {
    _Atomic unsigned long tick;
    for (int sched = 0; sched < 4; sched++) {
        memset(dx_a, 0, sizeof dx_a);
        tick = 0;
#pragma omp parallel
        {
            switch (sched) {
            case 0:
                DX_CHAIN(static, 1)
                break;
            case 1:
                DX_CHAIN(dynamic, 3)
                break;
            case 2:
                DX_CHAIN(guided)
                break;
            default:
                DX_CHAIN(runtime)
            }
        }
        dx_chain_check();
    }

    /* A wavefront: (i, j) needs (i-1, j) and (i, j-1); the sequential
     * order gives the expected values (binomial sums mod 2^63). */
    memset(dx_b, 0, sizeof dx_b);
    memset(dx_seq, 0, sizeof dx_seq);
    for (int i = 1; i < DX_W; i++)
        for (int j = 1; j < DX_W; j++)
            dx_seq[i][j] = (dx_seq[i - 1][j] + dx_seq[i][j - 1] + 1) & 0x3fffffffffffffffL;
#pragma omp parallel for ordered(2) schedule(dynamic)
    for (int i = 1; i < DX_W; i++)
        for (int j = 1; j < DX_W; j++) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
            dx_b[i][j] = (dx_b[i - 1][j] + dx_b[i][j - 1] + 1) & 0x3fffffffffffffffL;
#pragma omp ordered depend(source)
        }
    for (int i = 0; i < DX_W; i++)
        for (int j = 0; j < DX_W; j++)
            if (dx_b[i][j] != dx_seq[i][j])
                CHECK_EQ(dx_b[i][j], dx_seq[i][j]);

    /* An unsigned long long loop beyond LONG_MAX: the ull entry points. */
    memset(dx_a, 0, sizeof dx_a);
    const unsigned long long big = 1ULL << 63;
#pragma omp parallel for ordered(1) schedule(static, 2)
    for (unsigned long long u = big + 1; u < big + DX_N; u++) {
#pragma omp ordered depend(sink : u - 1)
        dx_a[u - big] = dx_a[u - big - 1] + 1;
#pragma omp ordered depend(source)
    }
    dx_chain_check_values();
}

/* The worksharing memory GCC asks for (lastprivate(conditional:), scan):
 * results as a sequential run gives them. Not in clang builds, which get
 * both wrong whatever the runtime (check_omp.h). */
#if !defined(OMP_TEST_NO_SCAN) && !defined(OMP_TEST_NO_LASTPRIVATE_CONDITIONAL)
static void test_conditional_and_scan(void) {
    enum { LEN = 3000 };
    static int a[LEN], incl[LEN], excl[LEN];
    for (int i = 0; i < LEN; i++)
        a[i] = (i * 7) % 13 - 6;
    int last = -1, lastv = 0;
    long s = 0, e = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp for lastprivate(conditional : last, lastv) schedule(dynamic, 7)
        for (int i = 0; i < LEN; i++)
            if (a[i] == 5 && i % 2) {
                last = i;
                lastv = a[i] * i;
            }
#pragma omp for reduction(inscan, + : s)
        for (int i = 0; i < LEN; i++) {
            s += a[i];
#pragma omp scan inclusive(s)
            incl[i] = (int)s;
        }
#pragma omp for reduction(inscan, + : e)
        for (int i = 0; i < LEN; i++) {
            excl[i] = (int)e;
#pragma omp scan exclusive(e)
            e += a[i];
        }
    }
    int want_last = -1;
    long run = 0;
    for (int i = 0; i < LEN; i++) {
        if (a[i] == 5 && i % 2)
            want_last = i;
        CHECK_EQ(excl[i], run);
        run += a[i];
        CHECK_EQ(incl[i], run);
    }
    CHECK_EQ(last, want_last);
    CHECK_EQ(lastv, 5 * want_last);
    CHECK_EQ(s, run);
    CHECK_EQ(e, run);
}
#endif

int main(void) {
    for (int rep = 0; rep < 3; rep++) {
        test_schedules();
        test_strides_ull();
        test_ordered();
        test_nowait_collapse_reduction();
        test_sections();
        test_doacross();
#if !defined(OMP_TEST_NO_SCAN) && !defined(OMP_TEST_NO_LASTPRIVATE_CONDITIONAL)
        test_conditional_and_scan();
#endif
    }
    printf("omp loops: ok\n");
    return 0;
}
