/* Topology model: synthetic machines, XML round trip, the real machine,
 * domains, distances, placement and error messages. */
#include "topo/topo.h"

#include "herd/herd.h"

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
        long a_ = (long)(a), b_ = (long)(b);                                                       \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: %s == %ld, expected %s == %ld\n", __FILE__, __LINE__, #a, a_,  \
                    #b, b_);                                                                       \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static char err[512];

/* Load spec or abort the whole test: every later check would be noise. */
static void load(herd__topo *t, const char *spec) {
    err[0] = '\0';
    int rc = herd__topo_load(t, spec, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "herd__topo_load(\"%s\") = %d: %s\n", spec ? spec : "(null)", rc, err);
        exit(1);
    }
}

/* Every level nests in the one above: PUs sharing a domain at level l share
 * their domain at l-1; domains are numbered 0.. in PU order. */
static void check_nesting(const herd__topo *t) {
    for (int l = HERD__LVL_MACHINE; l <= HERD__LVL_PU; l++) {
        int max = -1;
        for (int p = 0; p < t->npus; p++) {
            CHECK(t->domain[l][p] <= max + 1);
            if (t->domain[l][p] > max)
                max = t->domain[l][p];
            if (l > HERD__LVL_MACHINE && p > 0 && t->domain[l][p] == t->domain[l][p - 1])
                CHECK_EQ(t->domain[l - 1][p], t->domain[l - 1][p - 1]);
        }
        CHECK_EQ(t->ndomains[l], max + 1);
    }
    CHECK_EQ(t->ndomains[HERD__LVL_PU], t->npus);
}

static void test_pack4_l3_core8(void) {
    herd__topo t;
    load(&t, "pack:4 l3:1 core:8 pu:1");
    CHECK_EQ(t.npus, 32);
    CHECK_EQ(t.synthetic, 1);
    CHECK(strstr(t.source, "synthetic: pack:4 l3:1 core:8 pu:1") != NULL);
    CHECK_EQ(t.ndomains[HERD__LVL_MACHINE], 1);
    CHECK_EQ(t.ndomains[HERD__LVL_PACKAGE], 4);
    CHECK_EQ(t.ndomains[HERD__LVL_NUMA], 4); /* one NUMA node, split per package */
    CHECK_EQ(t.ndomains[HERD__LVL_L3], 4);
    CHECK_EQ(t.ndomains[HERD__LVL_L2], 4); /* no L2: repeats L3 */
    CHECK_EQ(t.ndomains[HERD__LVL_CORE], 32);
    CHECK_EQ(t.ndomains[HERD__LVL_PU], 32);
    check_nesting(&t);
    for (int p = 0; p < 32; p++) {
        CHECK_EQ(t.domain[HERD__LVL_PACKAGE][p], p / 8);
        CHECK_EQ(t.domain[HERD__LVL_L3][p], p / 8);
        CHECK_EQ(t.domain[HERD__LVL_L2][p], p / 8);
        CHECK_EQ(t.domain[HERD__LVL_CORE][p], p);
        CHECK_EQ(t.os_index[p], p);
    }
    CHECK_EQ(herd__topo_distance(&t, 5, 5), 0);
    CHECK_EQ(herd__topo_distance(&t, 0, 7), 2);  /* same package */
    CHECK_EQ(herd__topo_distance(&t, 0, 8), 3);  /* other package */
    CHECK_EQ(herd__topo_distance(&t, 31, 0), 3); /* symmetric */
    CHECK(herd__topo_distance(&t, 0, 1) < herd__topo_distance(&t, 0, 9));
    CHECK_EQ(herd__topo_distance(&t, 0, 32), -1);
    herd__topo_free(&t);
}

static void test_pack2_numa2_core2_pu2(void) {
    herd__topo t;
    load(&t, "pack:2 numa:2 core:2 pu:2");
    CHECK_EQ(t.npus, 16);
    CHECK_EQ(t.ndomains[HERD__LVL_PACKAGE], 2);
    CHECK_EQ(t.ndomains[HERD__LVL_NUMA], 4);
    CHECK_EQ(t.ndomains[HERD__LVL_L3], 4);
    CHECK_EQ(t.ndomains[HERD__LVL_L2], 4);
    CHECK_EQ(t.ndomains[HERD__LVL_CORE], 8);
    CHECK_EQ(t.ndomains[HERD__LVL_PU], 16);
    check_nesting(&t);
    for (int p = 0; p < 16; p++) {
        CHECK_EQ(t.domain[HERD__LVL_PACKAGE][p], p / 8);
        CHECK_EQ(t.domain[HERD__LVL_NUMA][p], p / 4);
        CHECK_EQ(t.domain[HERD__LVL_CORE][p], p / 2);
    }
    CHECK_EQ(herd__topo_distance(&t, 0, 1), 1); /* same core */
    CHECK_EQ(herd__topo_distance(&t, 0, 2), 2); /* same NUMA node */
    CHECK_EQ(herd__topo_distance(&t, 0, 4), 3); /* same package */
    CHECK_EQ(herd__topo_distance(&t, 0, 8), 4); /* other package */
    herd__topo_free(&t);
}

static void check_placement(const herd__topo *t, herd__bind bind, int n, const int *want) {
    int got[64];
    CHECK_EQ(herd__topo_place(t, bind, n, got, err, sizeof err), 0);
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) {
            fprintf(stderr, "bind %d worker %d: PU %d, expected %d\n", (int)bind, i, got[i],
                    want[i]);
            failures++;
        }
}

static void test_placement(void) {
    herd__topo t;
    load(&t, "pack:2 core:2 pu:2");
    /* PUs in tree order: p0c0 = 0,1; p0c1 = 2,3; p1c0 = 4,5; p1c1 = 6,7. */
    static const int compact[10] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1};
    static const int scatter[10] = {0, 4, 2, 6, 1, 5, 3, 7, 0, 4};
    check_placement(&t, HERD__BIND_COMPACT, 10, compact);
    check_placement(&t, HERD__BIND_NONE, 10, compact);
    check_placement(&t, HERD__BIND_SCATTER, 10, scatter);
    int one;
    CHECK_EQ(herd__topo_place(&t, HERD__BIND_COMPACT, 0, &one, err, sizeof err), HERD_EINVAL);
    CHECK_EQ(herd__topo_place(&t, (herd__bind)0, 1, &one, err, sizeof err), HERD_EINVAL);
    CHECK_EQ(herd__topo_bind_self(&t, 3, err, sizeof err), 0); /* synthetic: no-op */
    herd__topo_free(&t);

    load(&t, "pack:4 l3:1 core:8 pu:1");
    int got[64];
    CHECK_EQ(herd__topo_place(&t, HERD__BIND_SCATTER, 40, got, err, sizeof err), 0);
    for (int i = 0; i < 32; i++) {
        CHECK_EQ(got[i], (i % 4) * 8 + i / 4); /* package i%4, core i/4 of it */
        CHECK_EQ(t.domain[HERD__LVL_PACKAGE][got[i]], i % 4);
    }
    for (int i = 32; i < 40; i++)
        CHECK_EQ(got[i], got[i - 32]);
    herd__topo_free(&t);

    load(&t, "pack:2 numa:2 core:2 pu:2");
    static const int scatter16[8] = {0, 8, 2, 10, 4, 12, 6, 14};
    check_placement(&t, HERD__BIND_SCATTER, 8, scatter16);
    herd__topo_free(&t);
}

static void test_errors(void) {
    herd__topo t;
    const char *bad = "pack:2 bogus:3";
    err[0] = '\0';
    CHECK_EQ(herd__topo_load(&t, bad, err, sizeof err), HERD_EINVAL);
    CHECK(strstr(err, bad) != NULL);
    CHECK(strstr(err, "synthetic") != NULL);
    CHECK(strstr(err, "XML") != NULL);
    CHECK(t.hw == NULL && t.os_index == NULL && t.npus == 0);

    const char *missing = "/nonexistent/herd-topology.xml";
    err[0] = '\0';
    CHECK_EQ(herd__topo_load(&t, missing, err, sizeof err), HERD_EINVAL);
    CHECK(strstr(err, missing) != NULL);

    char garbage[] = "/tmp/herd-test-garbage-XXXXXX.xml";
    int fd = mkstemps(garbage, 4);
    CHECK(fd >= 0);
    CHECK(write(fd, "<not-a-topology>\n", 17) == 17);
    close(fd);
    err[0] = '\0';
    CHECK_EQ(herd__topo_load(&t, garbage, err, sizeof err), HERD_EINVAL);
    CHECK(strstr(err, garbage) != NULL);
    unlink(garbage);

    /* A NULL err must be accepted: the caller may not want the sentence. */
    CHECK_EQ(herd__topo_load(&t, bad, NULL, 0), HERD_EINVAL);

    CHECK_EQ(herd__topo_level_parse("l3"), HERD__LVL_L3);
    CHECK_EQ(herd__topo_level_parse("package"), HERD__LVL_PACKAGE);
    CHECK_EQ(herd__topo_level_parse("PU"), HERD__LVL_PU);
    CHECK_EQ(herd__topo_level_parse("socket"), 0);
    CHECK_EQ(herd__topo_level_parse(NULL), 0);
    CHECK(strcmp(herd__topo_level_name(HERD__LVL_NUMA), "numa") == 0);
    for (int l = HERD__LVL_MACHINE; l <= HERD__LVL_PU; l++)
        CHECK_EQ(herd__topo_level_parse(herd__topo_level_name((herd__level)l)), l);
}

/* Export a synthetic machine with hwloc, then load the file through herd. */
static void test_xml_round_trip(void) {
    const char *desc = "pack:2 numa:2 core:2 pu:2";
    hwloc_topology_t hw;
    CHECK_EQ(hwloc_topology_init(&hw), 0);
    CHECK_EQ(hwloc_topology_set_synthetic(hw, desc), 0);
    CHECK_EQ(hwloc_topology_load(hw), 0);
    char path[] = "/tmp/herd-test-topo-XXXXXX.xml";
    int fd = mkstemps(path, 4);
    CHECK(fd >= 0);
    close(fd);
    CHECK_EQ(hwloc_topology_export_xml(hw, path, 0), 0);
    hwloc_topology_destroy(hw);

    herd__topo a, b;
    load(&a, desc);
    load(&b, path);
    CHECK_EQ(b.synthetic, 1);
    CHECK(strncmp(b.source, "xml: ", 5) == 0);
    CHECK_EQ(b.npus, a.npus);
    for (int l = HERD__LVL_MACHINE; l <= HERD__LVL_PU; l++) {
        CHECK_EQ(b.ndomains[l], a.ndomains[l]);
        for (int p = 0; p < a.npus; p++)
            CHECK_EQ(b.domain[l][p], a.domain[l][p]);
    }
    herd__topo_free(&b);

    /* An existing file is XML even without the .xml suffix. */
    char plain[] = "/tmp/herd-test-topo-XXXXXX";
    fd = mkstemp(plain);
    CHECK(fd >= 0);
    close(fd);
    CHECK_EQ(rename(path, plain), 0);
    load(&b, plain);
    CHECK_EQ(b.npus, a.npus);
    herd__topo_free(&b);
    unlink(plain);
    herd__topo_free(&a);
}

static void test_real_machine(void) {
    herd__topo t;
    load(&t, NULL);
    CHECK(t.npus >= 1);
    CHECK_EQ(t.synthetic, 0);
    CHECK(strcmp(t.source, "this machine") == 0);
    check_nesting(&t);
    CHECK_EQ(t.ndomains[HERD__LVL_MACHINE], 1);
    CHECK_EQ(herd__topo_distance(&t, 0, 0), 0);
    if (t.npus > 1)
        CHECK(herd__topo_distance(&t, 0, t.npus - 1) >= 1);
    CHECK_EQ(herd__topo_bind_self(&t, t.npus - 1, err, sizeof err), 0);
    CHECK_EQ(herd__topo_bind_self(&t, t.npus, err, sizeof err), HERD_EINVAL);

    int *pu = malloc(sizeof *pu * (size_t)t.npus);
    CHECK_EQ(herd__topo_place(&t, HERD__BIND_SCATTER, t.npus, pu, err, sizeof err), 0);
    FILE *out = tmpfile();
    herd__topo_print(&t, out, HERD__LVL_CORE, t.npus, pu, HERD__BIND_SCATTER);
    CHECK(ftell(out) > 0);
    fclose(out);
    free(pu);
    herd__topo_free(&t);

    load(&t, "");
    CHECK(t.npus >= 1);
    herd__topo_free(&t);
}

int main(void) {
    test_pack4_l3_core8();
    test_pack2_numa2_core2_pu2();
    test_placement();
    test_errors();
    test_xml_round_trip();
    test_real_machine();
    if (failures != 0) {
        fprintf(stderr, "test_topo: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_topo: ok\n");
    return 0;
}
