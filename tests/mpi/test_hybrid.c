/* Hybrid mode (docs/design/pool.md H1-H7): each rank's tasks run on 2 herd
 * workers, one comm thread per rank makes the MPI calls.
 * 1. Exactly once: a random tree of tasks (half created in place, half by
 *    herd_pool_add, from both workers at once) whose count and checksum a
 *    sequential twin recomputes; every 16th task also spawns 2 herd tasks
 *    and waits for them (the shared-memory tasks inside a pool task).
 * 2. Late work: a task on rank 0 sleeps while every other worker and rank is
 *    idle (rank 0's queue is empty but a task runs: H6 must hold its vote),
 *    then creates 64 children with 8 grandchildren each.
 * 3. Statistics: HERD_STATS (the core runtime's file, one per rank) and
 *    HERD_POOL_STATS (the pool's JSON) do not clash.
 * --single: MPI_THREAD_SINGLE must be refused with HERD_EINVAL, as must a
 *    hybrid pool without herd_start(). */
#include "../common/check.h"
#include "herd/pool.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct node {
    uint64_t id;
    int32_t depth;
} node;

static int NODE, SLEEPER, CHILD, GRANDCHILD;
static const int max_depth = 10;
static atomic_ullong count, sum, herd_children, late[3];

static int fanout(const node *n) {
    return n->depth >= max_depth ? 0 : (int)(check_mix64(n->id) % 6); /* mean 2.5 */
}

static void herd_child(void *arg) {
    atomic_fetch_add(&herd_children, *(int *)arg);
}

static void visit(herd_pool *p, void *arg, size_t size) {
    CHECK_EQ(size, sizeof(node));
    node n;
    memcpy(&n, arg, sizeof n);
    atomic_fetch_add(&count, 1);
    atomic_fetch_add(&sum, check_mix64(n.id ^ 0x5bd1e995u));
    if (check_mix64(n.id) % 16 == 3) {
        for (int one = 1, i = 0; i < 2; i++)
            CHECK_OK(herd_spawn(herd_child, &one, sizeof one));
        CHECK_OK(herd_wait());
    }
    int f = fanout(&n);
    for (int i = 0; i < f; i++) {
        node c = {n.id * 8 + (uint64_t)i + 1, n.depth + 1};
        if (i & 1) {
            node *slot = herd_pool_task_alloc(p, NODE, sizeof c);
            CHECK(slot != NULL);
            *slot = c;
            CHECK_OK(herd_pool_task_commit(p));
        } else {
            CHECK_OK(herd_pool_add(p, NODE, &c, sizeof c));
        }
    }
}

static void twin(const node *n, uint64_t *c, uint64_t *s, uint64_t *h) {
    ++*c;
    *s += check_mix64(n->id ^ 0x5bd1e995u);
    *h += check_mix64(n->id) % 16 == 3 ? 2 : 0;
    int f = fanout(n);
    for (int i = 0; i < f; i++) {
        node ch = {n->id * 8 + (uint64_t)i + 1, n->depth + 1};
        twin(&ch, c, s, h);
    }
}

static void sleeper(herd_pool *p, void *arg, size_t size) {
    atomic_fetch_add(&late[0], 1);
    usleep(200 * 1000);
    for (int i = 0; i < 64; i++)
        CHECK_OK(herd_pool_add(p, CHILD, &i, sizeof i));
}
static void child(herd_pool *p, void *arg, size_t size) {
    atomic_fetch_add(&late[1], 1);
    for (int i = 0; i < 8; i++)
        CHECK_OK(herd_pool_add(p, GRANDCHILD, NULL, 0));
}
static void grandchild(herd_pool *p, void *arg, size_t size) {
    atomic_fetch_add(&late[2], 1);
}

static int file_has(const char *path, const char *what) {
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n > 0 && strstr(buf, what) != NULL;
}

static int refused(void) {
    herd_pool_config cfg;
    herd_pool_config_init(&cfg);
    cfg.hybrid = 1;
    herd_pool *p = NULL;
    int rc = herd_pool_create(MPI_COMM_WORLD, &cfg, &p);
    CHECK(p == NULL);
    return rc;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--single") == 0) {
        MPI_Init(&argc, &argv);
        int level;
        MPI_Query_thread(&level);
        herd_config hc = {.workers = 2, .bind = "none"};
        CHECK_OK(herd_start(&hc));
        if (level == MPI_THREAD_SINGLE)
            CHECK_EQ(refused(), HERD_EINVAL);
        STEP("MPI thread level %d: hybrid pool refused", level);
        CHECK_OK(herd_stop());
        MPI_Finalize();
        return 0;
    }
    int level;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &level);
    CHECK(level >= MPI_THREAD_FUNNELED);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK_EQ(refused(), HERD_EINVAL); /* herd not started yet */

    /* Per-rank core statistics file, one pool JSON: they must not clash. */
    char core_path[256], pool_path[256];
    snprintf(core_path, sizeof core_path, "/tmp/herd-hybrid-%d-core-%d.json", (int)getppid(), rank);
    snprintf(pool_path, sizeof pool_path, "/tmp/herd-hybrid-%d-pool.json", (int)getppid());
    setenv("HERD_STATS", core_path, 1);
    setenv("HERD_POOL_STATS", pool_path, 1);

    herd_config hc = {.workers = 2, .bind = "none"};
    CHECK_OK(herd_start(&hc));
    herd_pool_config cfg;
    herd_pool_config_init(&cfg);
    cfg.hybrid = 1;
    herd_pool *p;
    CHECK_OK(herd_pool_create(MPI_COMM_WORLD, &cfg, &p));
    CHECK_OK(herd_pool_register(p, "node", visit, &NODE));
    CHECK_OK(herd_pool_register(p, "sleeper", sleeper, &SLEEPER));
    CHECK_OK(herd_pool_register(p, "child", child, &CHILD));
    CHECK_OK(herd_pool_register(p, "grandchild", grandchild, &GRANDCHILD));
    int size = herd_pool_size(p);

    for (int phase = 0; phase < 2; phase++) {
        uint64_t want_c = 0, want_s = 0, want_h = 0;
        int roots = phase == 0 ? 1 : size;
        for (int r = 0; r < roots; r++) {
            node root = {(uint64_t)(1000003 * (r + 1) + phase), 0};
            twin(&root, &want_c, &want_s, &want_h);
            if (r == rank)
                CHECK_OK(herd_pool_add(p, NODE, &root, sizeof root));
        }
        atomic_store(&count, 0);
        atomic_store(&sum, 0);
        atomic_store(&herd_children, 0);
        CHECK_OK(herd_pool_process(p));
        uint64_t got[3] = {count, sum, herd_children}, tot[3];
        MPI_Allreduce(got, tot, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        herd_pool_stats mine, all;
        CHECK_OK(herd_pool_stats_get(p, &mine, &all));
        if (rank == 0)
            STEP("hybrid phase %d: %llu tasks (want %llu), %llu herd tasks, %llu steals, "
                 "%llu releases, %llu reacquires, %llu rounds, efficiency %.2f",
                 phase, (unsigned long long)tot[0], (unsigned long long)want_c,
                 (unsigned long long)tot[2], (unsigned long long)all.steals,
                 (unsigned long long)all.releases, (unsigned long long)all.reacquires,
                 (unsigned long long)mine.vote_rounds,
                 all.time_total > 0 ? all.time_active / all.time_total : 0.0);
        CHECK_EQ(tot[0], want_c);
        CHECK_EQ_U64(tot[1], want_s);
        CHECK_EQ(tot[2], want_h);
        CHECK_EQ(mine.tasks_executed, got[0]);
        CHECK_EQ(all.tasks_executed, want_c);
        CHECK_EQ(all.tasks_added, want_c);
        CHECK(all.time_active <= all.time_total);
    }

    if (rank == 0)
        CHECK_OK(herd_pool_add(p, SLEEPER, NULL, 0));
    CHECK_OK(herd_pool_process(p));
    uint64_t got[3] = {late[0], late[1], late[2]}, tot[3];
    MPI_Allreduce(got, tot, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    herd_pool_stats mine;
    CHECK_OK(herd_pool_stats_get(p, &mine, NULL));
    if (rank == 0)
        STEP("late: %llu %llu %llu tasks, %llu voting rounds on rank 0", (unsigned long long)tot[0],
             (unsigned long long)tot[1], (unsigned long long)tot[2],
             (unsigned long long)mine.vote_rounds);
    CHECK_EQ(tot[0], 1);
    CHECK_EQ(tot[1], 64);
    CHECK_EQ(tot[2], 512);

    CHECK_OK(herd_pool_destroy(p));
    CHECK_OK(herd_stop());
    if (rank == 0) {
        CHECK_EQ(file_has(pool_path, "\"kind\": \"herd-pool\""), 1);
        unlink(pool_path);
    }
    CHECK_EQ(file_has(core_path, "herd-pool"), 0); /* the core's own JSON, not overwritten */
    unlink(core_path);
    MPI_Finalize();
    return 0;
}
