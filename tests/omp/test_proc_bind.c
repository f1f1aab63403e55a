/* The proc_bind policies place a team's members on the places of
 * OMP_PLACES as OpenMP 5.1 (2.6.2) says, and bind each member's thread to
 * its place's CPUs. The program runs itself again with OMP_PLACES set to
 * seven places alternating between the first two CPUs the process may run
 * on, {a},{b},{a},...: with more places than CPUs, a member's place number
 * (omp_get_place_num) tells which of two places with the same CPUs it got.
 * For teams of 1 to 9 (more threads than places too) under master, primary
 * (not under libomp 14: below), close and spread, in turn (so the threads move between regions), it
 * checks: every member's thread may run on exactly its place's CPUs; master, primary: every member
 * at the primary thread's place; close: member i at the i-th place after the primary's (T <= P), or
 *     floor(T/P) or ceil(T/P) members on each place (T > P);
 *   spread: the members' partitions (omp_get_partition_place_nums) split
 *     the list into runs of floor(P/T) or ceil(P/T) consecutive places,
 *     member i + 1's run after member i's, each member at its run's first
 *     place, the primary in its run (T <= P); each member's partition its
 *     own place, floor(T/P) or ceil(T/P) members on each (T > P);
 *   close, master and primary keep the whole list as every member's partition;
 *   a nested close team inside a spread member stays in its partition;
 * and, with OMP_PROC_BIND=false, that the clause binds nobody. The
 * implementation-defined part (which runs are the longer ones) is not
 * checked. Before the first region the initial thread is at the first
 * place (the specification's OMP_PROC_BIND says so). */
#include "check_omp.h"

#include <omp.h>
#include <sched.h>
#include <string.h>

#define P 7
#define MAXT 16

static cpu_set_t place_cpus[P];

typedef struct member {
    int place, part_lo, part_n, bound_right;
} member;

static void record(member *m, const cpu_set_t *expect_unbound) {
    cpu_set_t mine;
    CHECK_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
    if (expect_unbound) { /* places and partitions unspecified */
        m->bound_right = CPU_EQUAL(&mine, expect_unbound);
        return;
    }
    m->place = omp_get_place_num();
    m->part_n = omp_get_partition_num_places();
    if (m->part_n < 1 || m->part_n > P)
        fprintf(stderr, "member %d at place %d: partition of %d\n", omp_get_thread_num(), m->place,
                m->part_n);
    int nums[P + 1];
    CHECK(m->part_n >= 1 && m->part_n <= P);
    omp_get_partition_place_nums(nums);
    m->part_lo = nums[0];
    for (int k = 1; k < m->part_n; k++) /* consecutive, wrapping in the list */
        CHECK_EQ(nums[k], (nums[0] + k) % P);
    m->bound_right = m->place >= 0 && m->place < P && CPU_EQUAL(&mine, &place_cpus[m->place]);
}

static void check_counts(const member *m, int t) {
    int count[P] = {0};
    for (int i = 0; i < t; i++)
        count[m[i].place]++;
    for (int k = 0; k < P; k++)
        CHECK(count[k] == t / P || count[k] == (t + P - 1) / P);
}

static void check_team(const char *policy, const member *m, int t) {
    int p = m[0].place;
    for (int i = 0; i < t; i++) {
        if (!m[i].bound_right)
            fprintf(stderr, "%s, %d threads: member %d at place %d\n", policy, t, i, m[i].place);
        CHECK(m[i].bound_right);
    }
    if (strcmp(policy, "spread")) /* master, primary, close: the parent's partition */
        for (int i = 0; i < t; i++)
            CHECK_EQ(m[i].part_n, P);
    if (!strcmp(policy, "master") || !strcmp(policy, "primary")) {
        for (int i = 0; i < t; i++)
            CHECK_EQ(m[i].place, p);
    } else if (!strcmp(policy, "close")) {
        if (t <= P)
            for (int i = 0; i < t; i++)
                CHECK_EQ(m[i].place, (p + i) % P);
        else
            check_counts(m, t);
    } else if (t <= P) { /* spread */
        int covered = 0;
        for (int i = 0; i < t; i++) {
            CHECK(m[i].part_n == P / t || m[i].part_n == (P + t - 1) / t);
            covered += m[i].part_n;
            if (i > 0) {
                CHECK_EQ(m[i].place, m[i].part_lo);
                CHECK_EQ(m[i].part_lo, (m[i - 1].part_lo + m[i - 1].part_n) % P);
            }
        }
        CHECK_EQ(covered, P);
        CHECK((p - m[0].part_lo + P) % P < m[0].part_n);
    } else {
        for (int i = 0; i < t; i++) {
            CHECK_EQ(m[i].part_n, 1);
            CHECK_EQ(m[i].part_lo, m[i].place);
        }
        check_counts(m, t);
    }
}

/* A team of t under policy (primary, close, spread): each member's record
 * in m[its thread number]. */
static void team(const char *policy, int t, member *m, const cpu_set_t *unbound) {
    if (!strcmp(policy, "master")) {
#pragma omp parallel num_threads(t) proc_bind(master)
        {
            CHECK_EQ(omp_get_num_threads(), t);
            record(&m[omp_get_thread_num()], unbound);
        }
    } else if (!strcmp(policy, "primary")) {
#pragma omp parallel num_threads(t) proc_bind(primary)
        {
            CHECK_EQ(omp_get_num_threads(), t);
            record(&m[omp_get_thread_num()], unbound);
        }
    } else if (!strcmp(policy, "close")) {
#pragma omp parallel num_threads(t) proc_bind(close)
        {
            CHECK_EQ(omp_get_num_threads(), t);
            record(&m[omp_get_thread_num()], unbound);
        }
    } else {
#pragma omp parallel num_threads(t) proc_bind(spread)
        {
            CHECK_EQ(omp_get_num_threads(), t);
            record(&m[omp_get_thread_num()], unbound);
        }
    }
}

static void placed(void) {
    CHECK_EQ(omp_get_num_places(), P);
    for (int k = 0; k < P; k++) {
        int ids[CPU_SETSIZE], n = omp_get_place_num_procs(k);
        omp_get_place_proc_ids(k, ids);
        CPU_ZERO(&place_cpus[k]);
        for (int j = 0; j < n; j++)
            CPU_SET(ids[j], &place_cpus[k]);
    }
    /* Before the first region the initial thread is bound to the first
     * place (OpenMP 5.1, 6.4: bind-var not false, a place list): serial
     * code that first-touches data runs where the primary thread stays. */
    cpu_set_t mine;
    CHECK_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
    CHECK(CPU_EQUAL(&mine, &place_cpus[0]));
    CHECK_EQ(omp_get_place_num(), 0);
    member m[MAXT];
    /* clang 14 passes primary as 5, which libomp 14 takes for its own
     * proc_bind_intel and places nobody by (herd: primary) */
    static const char *const policies[] = {"master", "primary", "close", "spread"};
    for (int t = 1; t <= 9; t++)
        for (int k = 0; k < 4; k++) {
            if (k == 1 && omp_test_on_llvm_libomp())
                continue;
            team(policies[k], t, m, NULL);
            check_team(policies[k], m, t);
        }
    /* Nested: close teams of 3 inside each member of a spread team of 2. */
    omp_set_max_active_levels(2);
    int bad = 0;
#pragma omp parallel num_threads(2) proc_bind(spread) reduction(+ : bad)
    {
        member outer, in[3];
        record(&outer, NULL);
#pragma omp parallel num_threads(3) proc_bind(close)
        record(&in[omp_get_thread_num()], NULL);
        for (int i = 0; i < 3; i++) {
            int off = (outer.place - outer.part_lo + P) % P;
            bad += !in[i].bound_right || in[i].part_lo != outer.part_lo ||
                   in[i].part_n != outer.part_n ||
                   in[i].place != (outer.part_lo + (off + i) % outer.part_n) % P;
        }
    }
    CHECK_EQ(bad, 0);
}

/* OMP_PROC_BIND=false: a clause binds no member. */
static void unplaced(void) {
    cpu_set_t all;
    CHECK_EQ(sched_getaffinity(0, sizeof all, &all), 0);
    member m[MAXT];
    team("spread", 4, m, &all);
    for (int i = 0; i < 4; i++)
        CHECK(m[i].bound_right);
}

static void run_child(const char *places, const char *bind, const char *what) {
    char pl[300], pb[64];
    snprintf(pl, sizeof pl, "OMP_PLACES=%s", places);
    snprintf(pb, sizeof pb, "OMP_PROC_BIND=%s", bind ? bind : "");
    const char *env[] = {pl, bind ? pb : "OMP_PROC_BIND", NULL};
    if (!omp_test_rerun(env, what, NULL, NULL)) {
        fprintf(stderr, "OMP_PLACES=%s OMP_PROC_BIND=%s: the child's checks failed\n", places,
                bind ? bind : "(unset)");
        _exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "placed")) {
        placed();
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "unplaced")) {
        unplaced();
        return 0;
    }
    cpu_set_t allowed;
    CHECK_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    int a = -1, b = -1;
    for (int c = 0; c < CPU_SETSIZE && b < 0; c++)
        if (CPU_ISSET(c, &allowed))
            *(a < 0 ? &a : &b) = c;
    CHECK(a >= 0);
    if (b < 0)
        b = a;
    char places[256];
    int len = 0;
    for (int k = 0; k < P; k++)
        len += snprintf(places + len, sizeof places - (size_t)len, "%s{%d}", k ? "," : "",
                        k % 2 ? b : a);
    run_child(places, NULL, "placed");
    run_child(places, "false", "unplaced");
    puts("proc_bind: ok");
    return 0;
}
