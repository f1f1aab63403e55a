/* Core priorities and the numa-priority placement (paper 002 section IV,
 * src/topo/numaprio.c): hand-computed priorities on small machines, with
 * hops from herd's tree distance and from an hwloc NUMA latency matrix;
 * master on the best PU; the nearest PUs first; wrap-around; determinism.
 *
 * Machines with different node sizes, or with a distance matrix, cannot be
 * written as synthetic descriptions: the test builds them with hwloc (a
 * synthetic machine restricted to some of its PUs, plus a matrix) and exports
 * them to temporary XML files, which herd loads like any HERD_TOPOLOGY. */
#include "topo/topo.h"

#include "herd/herd.h"

#include "../common/topo_xml.h"

#include <hwloc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a,    \
                    a_, #b, b_);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static char err[512];

static void load(herd__topo *t, const char *spec) {
    err[0] = '\0';
    if (herd__topo_load(t, spec, err, sizeof err) != 0) {
        fprintf(stderr, "herd__topo_load(\"%s\"): %s\n", spec, err);
        exit(1);
    }
}

static void compute(const herd__topo *t, herd__prio *pr) {
    err[0] = '\0';
    if (herd__prio_compute(t, pr, err, sizeof err) != 0) {
        fprintf(stderr, "herd__prio_compute(%s): %s\n", t->source, err);
        exit(1);
    }
}

static void check_order(const herd__topo *t, int n, const int *want) {
    int got[64];
    CHECK_EQ(herd__topo_place(t, HERD__BIND_NUMA_PRIORITY, n, got, err, sizeof err), 0);
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) {
            fprintf(stderr, "%s: worker %d on PU %d, expected %d\n", t->source, i, got[i], want[i]);
            failures++;
        }
}

static void check_terms(const herd__prio *pr, int pu, long long p0, long long v1, long long v2) {
    CHECK_EQ(pr->p0[pu], p0);
    CHECK_EQ(pr->v1[pu], v1);
    CHECK_EQ(pr->v2[pu], v2);
    CHECK_EQ(pr->prio[pu], p0 + v1 + v2);
}

/* Two packages of four cores, one node each; no matrix, so the hops are tree
 * distances: same package 2 (class 0), other package 3 (class 1); H = 2,
 * alpha = 2, 1. Every PU: P0 = 4; N0 = 3, N1 = 4, so V1 = 2*3 + 1*4 = 10;
 * P0 + V1 = 14 everywhere, so V2 = 2*3*14 + 1*4*14 = 140; priority 154. */
static void test_two_packages(void) {
    herd__topo t;
    herd__prio pr;
    load(&t, "pack:2 numa:1 core:4 pu:1");
    compute(&t, &pr);
    CHECK_EQ(pr.numa_matrix, 0);
    CHECK(strstr(pr.hops_from, "tree distance") != NULL);
    CHECK_EQ(pr.nhops, 2);
    CHECK_EQ(pr.hop_value[0], 2);
    CHECK_EQ(pr.hop_value[1], 3);
    CHECK_EQ(pr.alpha[0], 2);
    CHECK_EQ(pr.alpha[1], 1);
    for (int p = 0; p < 8; p++)
        check_terms(&pr, p, 4, 10, 140);
    CHECK_EQ(herd__prio_master(&pr), 0); /* all equal: the lowest index */
    CHECK_EQ(herd__prio_hop(&pr, &t, 0, 0), -1);
    CHECK_EQ(herd__prio_hop(&pr, &t, 0, 3), 0);
    CHECK_EQ(herd__prio_hop(&pr, &t, 0, 4), 1);
    herd__prio_free(&pr);

    /* The first four workers share worker 0's package; then wrap-around. */
    static const int want[12] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3};
    check_order(&t, 12, want);
    int got[4];
    CHECK_EQ(herd__topo_place(&t, HERD__BIND_NUMA_PRIORITY, 4, got, err, sizeof err), 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(t.domain[HERD__LVL_PACKAGE][got[i]], t.domain[HERD__LVL_PACKAGE][got[0]]);
    herd__topo_free(&t);
}

/* Four packages of eight: P0 = 8, N0 = 7, N1 = 24, V1 = 2*7 + 24 = 38,
 * P0 + V1 = 46, V2 = 2*7*46 + 24*46 = 1748, priority 1794 everywhere. */
static void test_four_packages(void) {
    herd__topo t;
    herd__prio pr;
    load(&t, "pack:4 numa:1 core:8 pu:1");
    compute(&t, &pr);
    for (int p = 0; p < 32; p++)
        check_terms(&pr, p, 8, 38, 1748);
    herd__prio_free(&pr);
    int got[40];
    CHECK_EQ(herd__topo_place(&t, HERD__BIND_NUMA_PRIORITY, 40, got, err, sizeof err), 0);
    for (int i = 0; i < 32; i++)
        CHECK_EQ(got[i], i);
    for (int i = 32; i < 40; i++)
        CHECK_EQ(got[i], got[i - 32]);
    herd__topo_free(&t);
}

/* Two hardware threads per core: tree distances 1 (same core), 2 (same node),
 * 3 (same package), 4 (other package): H = 4, alpha = 8, 4, 2, 1. PU 0 sees
 * 1, 2, 4 and 8 PUs at those hops: V1 = 8 + 8 + 8 + 8 = 32, P0 = 4, P0 + V1 =
 * 36 everywhere, V2 = 36 * 32 = 1152. The sibling comes first, then the node. */
static void test_smt(void) {
    herd__topo t;
    herd__prio pr;
    load(&t, "pack:2 numa:2 core:2 pu:2");
    compute(&t, &pr);
    CHECK_EQ(pr.nhops, 4);
    CHECK_EQ(pr.alpha[0], 8);
    CHECK_EQ(pr.alpha[3], 1);
    for (int p = 0; p < 16; p++)
        check_terms(&pr, p, 4, 32, 1152);
    herd__prio_free(&pr);
    static const int want[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    check_order(&t, 16, want);
    herd__topo_free(&t);
}

/* Package 0 keeps 2 of its 4 cores (PUs 0-1), package 1 has 4 (PUs 2-5); no
 * matrix. Package 0: P0 = 2, N0 = 1, N1 = 4: V1 = 6, P0 + V1 = 8; package 1:
 * P0 = 4, N0 = 3, N1 = 2: V1 = 8, P0 + V1 = 12. V2 = 2*1*8 + 4*12 = 64 and
 * 2*3*12 + 2*8 = 88: priorities 72 and 100. The bigger node wins. */
static void test_uneven_tree(void) {
    char path[64];
    topo_xml_make(path, sizeof path, "pack:2 numa:1 core:4 pu:1", 2, 0, NULL);
    herd__topo t;
    herd__prio pr;
    load(&t, path);
    CHECK_EQ(t.npus, 6);
    compute(&t, &pr);
    CHECK_EQ(pr.numa_matrix, 0);
    for (int p = 0; p < 2; p++)
        check_terms(&pr, p, 2, 6, 64);
    for (int p = 2; p < 6; p++)
        check_terms(&pr, p, 4, 8, 88);
    CHECK_EQ(herd__prio_master(&pr), 2);
    herd__prio_free(&pr);
    static const int want[8] = {2, 3, 4, 5, 0, 1, 2, 3};
    check_order(&t, 8, want);
    herd__topo_free(&t);
    unlink(path);
}

/* Three nodes of 2, 4 and 4 PUs (PUs 0-1, 2-5, 6-9). */
#define THREE "pack:3 numa:1 core:4 pu:1"

/* A line 0 - 1 - 2 of latencies 10 (local), 16 (next), 22 (two hops): H = 3,
 * alpha = 4, 2, 1.
 *   node 0: P0 2, V1 = 4*1 + 2*4 + 1*4 = 16, P0 + V1 = 18
 *   node 1: P0 4, V1 = 4*3 + 2*6       = 24, P0 + V1 = 28
 *   node 2: P0 4, V1 = 4*3 + 2*4 + 1*2 = 22, P0 + V1 = 26
 *   V2(0) = 4*(1*18) + 2*(4*28) + 1*(4*26)   = 400 -> 418
 *   V2(1) = 4*(3*28) + 2*(2*18 + 4*26)       = 616 -> 644
 *   V2(2) = 4*(3*26) + 2*(4*28) + 1*(2*18)   = 572 -> 598
 * The middle node is best; from it, both others are one hop away, and node 2
 * (598) goes before node 0 (418). */
static void test_matrix_line(void) {
    static const hwloc_uint64_t line[9] = {10, 16, 22, 16, 10, 16, 22, 16, 10};
    char path[64];
    topo_xml_make(path, sizeof path, THREE, 2, 3, line);
    herd__topo t;
    herd__prio pr;
    load(&t, path);
    compute(&t, &pr);
    CHECK_EQ(pr.numa_matrix, 1);
    CHECK(strstr(pr.hops_from, "NUMALatency") != NULL);
    CHECK_EQ(pr.nhops, 3);
    CHECK_EQ(pr.hop_value[0], 10);
    CHECK_EQ(pr.hop_value[1], 16);
    CHECK_EQ(pr.hop_value[2], 22);
    CHECK_EQ(pr.alpha[0], 4);
    CHECK_EQ(pr.alpha[2], 1);
    for (int p = 0; p < 10; p++) {
        if (p < 2)
            check_terms(&pr, p, 2, 16, 400);
        else if (p < 6)
            check_terms(&pr, p, 4, 24, 616);
        else
            check_terms(&pr, p, 4, 22, 572);
    }
    CHECK_EQ(herd__prio_master(&pr), 2);
    CHECK_EQ(herd__prio_hop(&pr, &t, 2, 0), 1);
    CHECK_EQ(herd__prio_hop(&pr, &t, 0, 9), 2);
    herd__prio_free(&pr);
    static const int want[13] = {2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4};
    check_order(&t, 13, want);

    /* Deterministic: the same numbers and the same placement every time. */
    herd__prio a, b;
    compute(&t, &a);
    compute(&t, &b);
    for (int p = 0; p < 10; p++)
        CHECK_EQ(a.prio[p], b.prio[p]);
    herd__prio_free(&a);
    herd__prio_free(&b);
    check_order(&t, 13, want);
    herd__topo_free(&t);
    unlink(path);
}

/* The matrix, not the tree, decides: node 0 (2 PUs) is close to both others
 * (16), nodes 1 and 2 are far apart (22).
 *   node 0: P0 2, V1 = 4*1 + 2*8       = 20, P0 + V1 = 22
 *   node 1: P0 4, V1 = 4*3 + 2*2 + 1*4 = 20, P0 + V1 = 24 (node 2 alike)
 *   V2(0) = 4*(1*22) + 2*(8*24)             = 472 -> 494
 *   V2(1) = 4*(3*24) + 2*(2*22) + 1*(4*24)  = 472 -> 496
 * Master on PU 2 (node 1, lowest index); node 0 is one hop from it and node 2
 * two, so node 0 comes next. In the tree (no matrix) nodes 0 and 2 are both
 * "other package", and node 2's higher priority puts it first. */
static void test_matrix_decides(void) {
    static const hwloc_uint64_t vee[9] = {10, 16, 16, 16, 10, 22, 16, 22, 10};
    char path[64];
    topo_xml_make(path, sizeof path, THREE, 2, 3, vee);
    herd__topo t;
    herd__prio pr;
    load(&t, path);
    compute(&t, &pr);
    check_terms(&pr, 0, 2, 20, 472);
    check_terms(&pr, 2, 4, 20, 472);
    check_terms(&pr, 9, 4, 20, 472);
    herd__prio_free(&pr);
    static const int want[10] = {2, 3, 4, 5, 0, 1, 6, 7, 8, 9};
    check_order(&t, 10, want);
    herd__topo_free(&t);
    unlink(path);

    /* Same machine without the matrix: tree distances 2 and 3, alpha 2, 1.
     *   node 0: P0 2, V1 = 2*1 + 8 = 10; nodes 1, 2: P0 4, V1 = 2*3 + 6 = 12
     *   V2(0) = 2*(1*12) + 8*16 = 152 -> 164; V2(1) = 2*(3*16) + 2*12 + 4*16
     *   = 184 -> 200. */
    topo_xml_make(path, sizeof path, THREE, 2, 0, NULL);
    load(&t, path);
    compute(&t, &pr);
    CHECK_EQ(pr.numa_matrix, 0);
    check_terms(&pr, 0, 2, 10, 152);
    check_terms(&pr, 2, 4, 12, 184);
    check_terms(&pr, 6, 4, 12, 184);
    herd__prio_free(&pr);
    static const int tree[10] = {2, 3, 4, 5, 6, 7, 8, 9, 0, 1};
    check_order(&t, 10, tree);
    herd__topo_free(&t);
    unlink(path);
}

/* Seven one-PU nodes whose 21 pairs all have distinct latencies: the classes
 * stop at HERD__PRIO_MAXHOPS and the farthest values share the last one. */
static void test_many_classes(void) {
    hwloc_uint64_t m[49];
    int next = 11;
    for (int i = 0; i < 7; i++) {
        m[i * 7 + i] = 10;
        for (int j = i + 1; j < 7; j++)
            m[i * 7 + j] = m[j * 7 + i] = (hwloc_uint64_t)next++;
    }
    char path[64];
    topo_xml_make(path, sizeof path, "pack:7 numa:1 core:1 pu:1", 0, 7, m);
    herd__topo t;
    herd__prio pr;
    load(&t, path);
    compute(&t, &pr);
    CHECK_EQ(pr.numa_matrix, 1);
    CHECK_EQ(pr.nhops, HERD__PRIO_MAXHOPS); /* 21 values; the local 10 never occurs */
    CHECK_EQ(pr.hop_value[0], 11);
    CHECK_EQ(pr.hop_value[HERD__PRIO_MAXHOPS - 1], 26);
    CHECK_EQ(pr.alpha[0], 1LL << (HERD__PRIO_MAXHOPS - 1));
    CHECK_EQ(herd__prio_hop(&pr, &t, 0, 1), 0);  /* 11 */
    CHECK_EQ(herd__prio_hop(&pr, &t, 3, 4), 15); /* 26 */
    CHECK_EQ(herd__prio_hop(&pr, &t, 3, 6), 15); /* 28: merged into the last class */
    CHECK_EQ(herd__prio_hop(&pr, &t, 5, 6), 15); /* 31: merged */
    for (int p = 0; p < 7; p++)
        CHECK(pr.prio[p] > 0);
    herd__prio_free(&pr);
    herd__topo_free(&t);
    unlink(path);
}

static void test_single_pu_and_print(void) {
    herd__topo t;
    herd__prio pr;
    load(&t, "pack:1 core:1 pu:1");
    compute(&t, &pr);
    CHECK_EQ(pr.nhops, 1);
    check_terms(&pr, 0, 1, 0, 0);
    herd__prio_free(&pr);
    static const int want[3] = {0, 0, 0};
    check_order(&t, 3, want);
    herd__topo_free(&t);

    char path[64];
    static const hwloc_uint64_t line[9] = {10, 16, 22, 16, 10, 16, 22, 16, 10};
    topo_xml_make(path, sizeof path, THREE, 2, 3, line);
    load(&t, path);
    int pu[10];
    CHECK_EQ(herd__topo_place(&t, HERD__BIND_NUMA_PRIORITY, 10, pu, err, sizeof err), 0);
    FILE *out = tmpfile();
    herd__topo_print(&t, out, HERD__LVL_NUMA, 10, pu, HERD__BIND_NUMA_PRIORITY);
    char text[8192];
    rewind(out);
    size_t n = fread(text, 1, sizeof text - 1, out);
    text[n] = '\0';
    fclose(out);
    CHECK(strstr(text, "binding: numa-priority") != NULL);
    CHECK(strstr(text, "NUMALatency") != NULL);
    CHECK(strstr(text, "hop 0 = distance 10, hop 1 = distance 16, hop 2 = distance 22") != NULL);
    CHECK(strstr(text, "H = 3: 4 2 1") != NULL);
    CHECK(strstr(text, "     2      4     1        4         24            616            644\n") !=
          NULL);
    CHECK(strstr(text, "master: worker 0 on PU 2") != NULL);
    herd__topo_free(&t);
    unlink(path);
}

static void test_real_machine(void) {
    herd__topo t;
    herd__prio pr;
    load(&t, NULL);
    compute(&t, &pr);
    int master = herd__prio_master(&pr);
    for (int p = 0; p < t.npus; p++)
        CHECK(pr.prio[p] <= pr.prio[master]);
    herd__prio_free(&pr);
    int *pu = malloc(sizeof *pu * (size_t)t.npus);
    CHECK_EQ(herd__topo_place(&t, HERD__BIND_NUMA_PRIORITY, t.npus, pu, err, sizeof err), 0);
    CHECK_EQ(pu[0], master);
    /* Every PU once. */
    for (int i = 0; i < t.npus; i++)
        for (int j = i + 1; j < t.npus; j++)
            CHECK(pu[i] != pu[j]);
    free(pu);
    herd__topo_free(&t);
}

int main(void) {
    test_two_packages();
    test_four_packages();
    test_smt();
    test_uneven_tree();
    test_matrix_line();
    test_matrix_decides();
    test_many_classes();
    test_single_pu_and_print();
    test_real_machine();
    if (failures != 0) {
        fprintf(stderr, "test_numa_priority: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_numa_priority: ok\n");
    return 0;
}
