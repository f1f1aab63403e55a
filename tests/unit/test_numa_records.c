/* HERD_BIND=numa-priority at run time (paper 002 section IV): worker 0 on the
 * PU of highest priority, the placement herd__topo_place() computes, every
 * worker record on a page of its own, and each record on the NUMA node of
 * its worker's PU, as the kernel reports it (move_pages(2), through
 * hwloc_get_area_memlocation()). On a machine with one NUMA node the last
 * check can only see node 0; the test says how many nodes it saw. Then the
 * same on a synthetic machine given through herd_config (placed, never
 * pinned, records left alone). */
// herd-test-env: HERD_BIND=numa-priority
// herd-test-env: HERD_BIND=numa-priority HERD_WORKERS=3 HERD_IDLE=sleep
#include "../common/check.h"

#include "core/runtime.h"

#include <hwloc.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define MAXW 4096
static _Atomic int ran[MAXW];

static void fib(void *p) {
    int n = *(int *)p;
    int w = herd_worker_id();
    CHECK(w >= 0 && w < MAXW);
    atomic_store_explicit(&ran[w], 1, memory_order_relaxed);
    if (n < 2)
        return;
    int a = n - 1, b = n - 2;
    CHECK_OK(herd_spawn(fib, &a, sizeof a));
    CHECK_OK(herd_spawn(fib, &b, sizeof b));
    CHECK_OK(herd_wait());
}

static void run_fib(void) {
    for (int i = 0; i < MAXW; i++)
        atomic_store(&ran[i], 0);
    int n = CHECK_SIZE(22, 16);
    CHECK_OK(herd_run(fib, &n, sizeof n));
}

/* The placement herd_start used is the one herd__topo_place computes, and
 * worker 0 sits on the PU of highest priority. */
static void check_placement(const herd__rt *rt) {
    CHECK(rt->set.bind == HERD__BIND_NUMA_PRIORITY);
    char err[256];
    herd__prio pr;
    CHECK_OK(herd__prio_compute(&rt->topo, &pr, err, sizeof err));
    CHECK_EQ(rt->pu_of_worker[0], herd__prio_master(&pr));
    herd__prio_free(&pr);
    int *want = malloc(sizeof *want * (size_t)rt->nworkers);
    CHECK(want != NULL);
    CHECK_OK(
        herd__topo_place(&rt->topo, HERD__BIND_NUMA_PRIORITY, rt->nworkers, want, err, sizeof err));
    for (int i = 0; i < rt->nworkers; i++) {
        CHECK_EQ(rt->pu_of_worker[i], want[i]);
        CHECK_EQ(rt->workers[i].pu, want[i]);
        /* A page of its own: nothing else shares the page that is moved. */
        CHECK_EQ((uintptr_t)&rt->workers[i] % 4096, 0);
    }
    CHECK_EQ(sizeof(herd__worker) % 4096, 0);
    free(want);
}

/* Is [addr, addr + len) on the NUMA node of PU pu? 1 yes, 0 no, -1 when the
 * kernel will not say (move_pages refused, e.g. by a seccomp filter). */
static int on_node_of(const herd__topo *t, const void *addr, size_t len, int pu) {
    hwloc_obj_t node = herd__topo_numa_obj(t, pu);
    CHECK(node != NULL);
    hwloc_nodeset_t where = hwloc_bitmap_alloc();
    CHECK(where != NULL);
    int rc = hwloc_get_area_memlocation((hwloc_topology_t)t->hw, addr, len, where,
                                        HWLOC_MEMBIND_BYNODESET);
    int ok = rc != 0 ? -1 : hwloc_bitmap_isequal(where, node->nodeset);
    if (rc != 0)
        printf("-- the kernel does not report page locations here: %s\n", strerror(errno));
    hwloc_bitmap_free(where);
    return ok;
}

static void test_real_machine(void) {
    STEP("real machine, HERD_BIND from the environment");
    CHECK_OK(herd_start(NULL));
    herd__rt *rt = herd__rt_global;
    CHECK(rt != NULL && !rt->topo.synthetic);
    check_placement(rt);
    run_fib();
    /* A worker that ran a task has passed the move in worker_main(). */
    int checked = 0;
    for (int i = 0; i < rt->nworkers && i < MAXW; i++) {
        if (!atomic_load(&ran[i]))
            continue;
        int ok = on_node_of(&rt->topo, &rt->workers[i], sizeof rt->workers[i], rt->workers[i].pu);
        if (ok < 0)
            break;
        CHECK_EQ(ok, 1);
        checked++;
    }
    STEP("%d of %d worker records checked; %d NUMA node(s) here", checked, rt->nworkers,
         hwloc_get_nbobjs_by_type((hwloc_topology_t)rt->topo.hw, HWLOC_OBJ_NUMANODE));
    CHECK_OK(herd_stop());
}

/* herd__topo_membind_near itself, which worker_main calls only when there
 * are several nodes: on this machine it must succeed (or be refused with a
 * sentence) and leave the page on the PU's node. */
static void test_membind_call(void) {
    STEP("herd__topo_membind_near on a page");
    herd__topo t;
    char err[256];
    CHECK_OK(herd__topo_load(&t, NULL, err, sizeof err));
    unsigned char *page = aligned_alloc(4096, 4096);
    CHECK(page != NULL);
    memset(page, 1, 4096);
    int pu = t.npus - 1;
    int rc = herd__topo_membind_near(&t, page, 4096, pu, err, sizeof err);
    if (rc == HERD_ESYS) {
        STEP("the kernel refuses mbind here: %s", err);
    } else {
        CHECK_EQ(rc, 0);
        CHECK(on_node_of(&t, page, 4096, pu) != 0);
        CHECK_EQ(page[4095], 1); /* moved, not lost */
    }
    free(page);
    herd__topo_free(&t);

    CHECK_OK(herd__topo_load(&t, "pack:2 numa:1 core:1 pu:1", err, sizeof err));
    unsigned char word = 0;
    CHECK_EQ(herd__topo_membind_near(&t, &word, 1, 1, err, sizeof err), 1); /* synthetic */
    herd__topo_free(&t);
}

static void test_synthetic(void) {
    STEP("synthetic machine through herd_config");
    herd_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.topology = "pack:2 numa:1 core:4 pu:1";
    cfg.bind = "numa-priority";
    cfg.workers = 6;
    CHECK_OK(herd_start(&cfg));
    herd__rt *rt = herd__rt_global;
    CHECK(rt != NULL && rt->topo.synthetic);
    check_placement(rt);
    for (int i = 0; i < 6; i++) /* worker 0's package first, then the other */
        CHECK_EQ(rt->pu_of_worker[i], i);
    run_fib();
    CHECK_OK(herd_stop());
}

int main(void) {
    test_real_machine();
    test_membind_call();
    test_synthetic();
    STEP("ok");
    return 0;
}
