/* The mapping policies (src/place/mapper.c) on scripted /proc/stat inputs:
 * static, BLL and XLL choose what paper 003 says, step by step (Algorithm 1
 * steps 5, 6 and 9 are checked against hand-computed values); a preview
 * leaves the record alone; HERD_WORKERS=auto counts the free PUs by its
 * rule; the /proc/stat parser; and a whole herd_start/herd_stop under xll:
 * the workers choose, the schedulers see their choices, the PUs come back.
 * Loads come from the test reader (place/testing.h); the registry is a
 * private file. */
// herd-test-timeout: 60
#include "../common/check.h"
#include "core/runtime.h"
#include "place/mapper.h"
#include "place/testing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPU 4
static const int os4[NPU] = {0, 1, 2, 3};
static char dir[64], path[128];
static int serial;

/* Scripted loads: script[call] for the call-th read; the last one repeats. */
static int64_t script[8][NPU];
static int nscript, calls;

static int scripted(void *ctx, int64_t *user, int n, char *err, size_t errlen) {
    const int64_t *row = script[calls < nscript ? calls : nscript - 1];
    calls++;
    for (int i = 0; i < n; i++)
        user[i] = i < NPU ? row[i] : -1;
    return 0;
}

static void set_loads(int64_t a, int64_t b, int64_t c, int64_t d) {
    script[0][0] = a, script[0][1] = b, script[0][2] = c, script[0][3] = d;
    nscript = 1;
    calls = 0;
}

static herd__reg *fresh(void) {
    herd__reg *r;
    char err[512];
    snprintf(path, sizeof path, "%s/reg%d", dir, serial++);
    CHECK_OK(herd__reg_open(&r, path, err, sizeof err));
    return r;
}

static int choose(herd__reg *r, herd__map_policy p, int worker) {
    char err[512];
    int pu = -1;
    int rc = herd__map_choose(r, p, NPU, os4, worker, NULL, NULL, &pu, err, sizeof err);
    if (rc)
        fprintf(stderr, "choose: %s\n", err);
    CHECK_OK(rc);
    return pu;
}

/* Hold PU os for a live process that is not us (our parent). */
static void hold_for_parent(herd__reg *r, int os) {
    char err[512];
    uint64_t start;
    CHECK_OK(herd__reg_proc_start(getppid(), &start));
    herd__reg_rec *rec = herd__reg_lock(r, err, sizeof err);
    CHECK(rec != NULL);
    for (int i = HERD__REG_MAXHOLD - 1;; i--)
        if (rec->holder[i].pid == 0) {
            rec->holder[i] = (herd__reg_holder){.pid = getppid(), .pu = os, .start = start};
            rec->pu[os].pinned++;
            break;
        }
    CHECK_OK(herd__reg_unlock(r, 1, err, sizeof err));
}

static void test_static(void) {
    STEP("static: worker i on PU i modulo the PUs");
    herd__reg *r = fresh();
    hold_for_parent(r, 0); /* static ignores the others */
    for (int w = 0; w < 6; w++)
        CHECK_EQ(choose(r, HERD__MAP_STATIC, w), w % NPU);
    herd__reg_close(r);
}

static void test_bll(void) {
    STEP("bll: fewest pinned machine-wide, ties to the first");
    herd__reg *r = fresh();
    char err[512];
    for (int k = 0; k < 5; k++)
        CHECK_EQ(choose(r, HERD__MAP_BLL, k), k % NPU); /* round robin when alone */
    CHECK_OK(herd__map_release(r, err, sizeof err));
    hold_for_parent(r, 0);
    hold_for_parent(r, 2);
    hold_for_parent(r, 2);
    CHECK_EQ(choose(r, HERD__MAP_BLL, 0), 1);
    CHECK_EQ(choose(r, HERD__MAP_BLL, 1), 3);
    CHECK_EQ(choose(r, HERD__MAP_BLL, 2), 0); /* counts now 1 1 2 1 */
    CHECK_EQ(choose(r, HERD__MAP_BLL, 3), 1); /* 2 1 2 1 */
    /* BLL is blind to load: the busiest PU is as good as an idle one. */
    herd__reg_close(r);
}

static void expect_loads(herd__reg *r, int64_t a, int64_t b, int64_t c, int64_t d) {
    char err[512];
    herd__reg_rec *rec = herd__reg_lock(r, err, sizeof err);
    CHECK(rec != NULL);
    CHECK_EQ(rec->pu[0].load, a);
    CHECK_EQ(rec->pu[1].load, b);
    CHECK_EQ(rec->pu[2].load, c);
    CHECK_EQ(rec->pu[3].load, d);
    CHECK_OK(herd__reg_unlock(r, 0, err, sizeof err));
}

static void test_xll(void) {
    STEP("xll: Algorithm 1 on scripted loads");
    herd__reg *r = fresh();
    /* First look: no history, so change = pinned = 0 everywhere: PU 0. */
    set_loads(100, 200, 300, 400);
    CHECK_EQ(choose(r, HERD__MAP_XLL, 0), 0);
    expect_loads(r, 110, 210, 310, 410); /* step 6: CurrentLoad + 10 */
    /* Growth 50, 0, 80, 0: change (step 5) = 150-110+1, 210-210+0,
     * 390-310+0, 410-410+0 = 41, 0, 80, 0; a tie, strict < (step 9): PU 1. */
    set_loads(150, 210, 390, 410);
    CHECK_EQ(choose(r, HERD__MAP_XLL, 1), 1);
    expect_loads(r, 160, 220, 400, 420);
    /* Nothing grew (the source went back, as it can between two scripted
     * rows): change = 150-160+1, 210-220+1, 390-400+0, 410-420+0
     * = -9, -9, -10, -10: PU 2. */
    set_loads(150, 210, 390, 410);
    CHECK_EQ(choose(r, HERD__MAP_XLL, 2), 2);
    /* Same loads, now equal to the stored ones minus 10: change = -10 +
     * pinned = -9, -9, -9, -10: PU 3. */
    CHECK_EQ(choose(r, HERD__MAP_XLL, 3), 3);
    /* PU 1 grew by 30: -9, 21, -9, -9. A PU whose worker is idle beats a
     * PU that is busy, whatever their pinned counts: first minimum, PU 0. */
    set_loads(150, 240, 390, 410);
    CHECK_EQ(choose(r, HERD__MAP_XLL, 4), 0);
    /* Same loads: -10 + pinned = -8, -9, -9, -9: PU 1 (its growth is
     * behind us: only growth since the last look counts). */
    CHECK_EQ(choose(r, HERD__MAP_XLL, 5), 1);
    /* A preview simulates but writes nothing back. */
    expect_loads(r, 160, 250, 400, 420);
    int pus[3];
    char err[512];
    set_loads(1000, 1000, 1000, 1000);
    CHECK_OK(herd__map_preview(r, HERD__MAP_XLL, NPU, os4, 3, pus, err, sizeof err));
    expect_loads(r, 160, 250, 400, 420);
    herd__reg_rec *rec = herd__reg_lock(r, err, sizeof err);
    CHECK(rec != NULL);
    CHECK_EQ(rec->pu[0].pinned + rec->pu[1].pinned + rec->pu[2].pinned + rec->pu[3].pinned, 6);
    CHECK_OK(herd__reg_unlock(r, 0, err, sizeof err));
    /* A PU missing from the source is an error naming it. */
    static const int far[2] = {0, 7};
    int pu;
    CHECK_RC(herd__map_choose(r, HERD__MAP_XLL, 2, far, 0, NULL, NULL, &pu, err, sizeof err),
             HERD_EINVAL);
    CHECK(strstr(err, "no line for cpu7") != NULL);
    herd__reg_close(r);
}

static void test_auto(void) {
    STEP("HERD_WORKERS=auto: unpinned PUs busy at most half the window");
    herd__reg *r = fresh();
    hold_for_parent(r, 0);
    /* Over ~100 ms (10 ticks at USER_HZ 100): PU 1 grew 100 (busy), PU 2
     * 0, PU 3 1; PU 0 is idle but pinned. Free: 2 and 3. */
    int64_t a[NPU] = {0, 0, 0, 0}, b[NPU] = {0, 100, 0, 1};
    memcpy(script[0], a, sizeof a);
    memcpy(script[1], b, sizeof b);
    nscript = 2;
    calls = 0;
    int n = 0;
    char err[512];
    CHECK_OK(herd__map_auto_workers(r, NPU, os4, &n, err, sizeof err));
    CHECK_EQ(calls, 2);
    CHECK_EQ(n, 2);
    /* Every PU busy: at least one worker. */
    int64_t c[NPU] = {1000, 1000, 1000, 1000};
    memcpy(script[1], c, sizeof c);
    calls = 0;
    CHECK_OK(herd__map_auto_workers(r, NPU, os4, &n, err, sizeof err));
    CHECK_EQ(n, 1);
    herd__reg_close(r);
}

static void test_parse(void) {
    STEP("/proc/stat parser");
    int64_t u[6];
    const char *text = "cpu  90 1 2 3 4 5 6 0 0 0\n"
                       "cpu0 10 1 2 3 4 5 6 0 0 0\n"
                       "cpu3 40 1 2 3 4 5 6 0 0 0\n"
                       "cpu9 99 0\n"
                       "intr 1 2 3\nctxt 5\n";
    CHECK_EQ(herd__map_parse_stat(text, u, 6), 2);
    CHECK_EQ(u[0], 10);
    CHECK_EQ(u[1], -1);
    CHECK_EQ(u[3], 40);
    CHECK_EQ(u[5], -1);
    /* The real file parses, and has this machine's CPU 0. */
    herd__map_testing_reader(NULL, NULL);
    char err[512];
    int64_t real[HERD__REG_MAXPU];
    CHECK_OK(herd__map_read_loads(real, HERD__REG_MAXPU, err, sizeof err));
    CHECK(real[0] >= 0);
    herd__map_testing_reader(scripted, NULL);
}

static void count_task(void *arg) {
    (void)arg;
}

static void test_runtime(void) {
    STEP("herd_start under xll: workers choose, schedulers follow, stop returns the PUs");
    snprintf(path, sizeof path, "%s/reg%d", dir, serial++);
    setenv("HERD_REGISTRY", path, 1);
    setenv("HERD_BIND", "xll", 1);
    setenv("HERD_WORKERS", "3", 1);
    setenv("HERD_TOPOLOGY", "pack:2 core:2 pu:1", 1);
    /* A baseline look, then PU 0 busy: its user time grows 50 ticks between
     * any two looks, the others stay idle. (Algorithm 1 compares with the
     * last look by anyone, so a PU is avoided only while it keeps growing.) */
    herd__reg *r;
    char err[512];
    CHECK_OK(herd__reg_open(&r, path, err, sizeof err));
    int64_t rows[4][NPU] = {{0, 0, 0, 0}, {500, 10, 10, 10}, {550, 10, 10, 10}, {600, 10, 10, 10}};
    memcpy(script, rows, sizeof rows);
    nscript = 4;
    calls = 0;
    int pu;
    CHECK_OK(herd__map_choose(r, HERD__MAP_XLL, NPU, os4, 0, NULL, NULL, &pu, err, sizeof err));
    CHECK_OK(herd__map_release(r, err, sizeof err));
    CHECK_OK(herd_start(NULL));
    int seen[NPU] = {0};
    for (int w = 0; w < 3; w++) {
        int p = herd__rt_global->pu_of_worker[w];
        CHECK(p >= 1 && p < NPU); /* never the busy PU */
        CHECK_EQ(herd__rt_global->workers[w].pu, p);
        seen[p]++;
    }
    CHECK(seen[1] == 1 && seen[2] == 1 && seen[3] == 1);
    CHECK_EQ(herd__rt_global->nshepherds, 2); /* PU 1 and PUs 2,3: two packages */
    CHECK_OK(herd_run(count_task, NULL, 0));
    herd__reg_rec *rec = herd__reg_lock(r, err, sizeof err);
    CHECK(rec != NULL);
    CHECK_EQ(rec->pu[1].pinned + rec->pu[2].pinned + rec->pu[3].pinned, 3);
    CHECK_OK(herd__reg_unlock(r, 0, err, sizeof err));
    CHECK_OK(herd_stop());
    rec = herd__reg_lock(r, err, sizeof err);
    CHECK(rec != NULL);
    CHECK_EQ(rec->pu[1].pinned + rec->pu[2].pinned + rec->pu[3].pinned, 0);
    CHECK_OK(herd__reg_unlock(r, 0, err, sizeof err));

    STEP("a worker that cannot choose fails herd_start and holds nothing");
    setenv("HERD_WORKERS", "2", 1);
    setenv("HERD_TOPOLOGY", "pack:1 core:8 pu:1", 1); /* cpu4..7 not in the source */
    set_loads(0, 0, 0, 0);
    CHECK_RC(herd_start(NULL), HERD_ESYS);
    CHECK(herd__rt_global == NULL);
    rec = herd__reg_lock(r, err, sizeof err);
    CHECK(rec != NULL);
    for (int i = 0; i < HERD__REG_MAXHOLD; i++)
        CHECK_EQ(rec->holder[i].pid, 0);
    CHECK_OK(herd__reg_unlock(r, 0, err, sizeof err));
    herd__reg_close(r);

    STEP("a modelled machine needs a registry of its own");
    unsetenv("HERD_REGISTRY");
    CHECK_RC(herd_start(NULL), HERD_EINVAL);
    unsetenv("HERD_BIND");
    unsetenv("HERD_WORKERS");
    unsetenv("HERD_TOPOLOGY");
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/herd-mapper-test-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    herd__map_testing_reader(scripted, NULL);
    test_static();
    test_bll();
    test_xll();
    test_auto();
    test_parse();
    test_runtime();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    printf("mapper: all checks passed\n");
    return 0;
}
