/* Every task executed exactly once, on any number of ranks, under every
 * lock x split scheme (--all-schemes), in two phases per pool: a random
 * tree of tasks (half created in place, half by herd_pool_add) whose count
 * and checksum a sequential twin recomputes on every rank.
 *
 * POOL_TEST_KILL_RANK=r: rank r kills itself (SIGKILL) after 50 tasks; the
 * job must then end with an error, never hang (tests/mpi/expect_abort.sh). */
#include "../common/check.h"
#include "herd/pool.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

typedef struct node {
    uint64_t id;
    int32_t depth;
} node;

static int NODE;
static int max_depth = 9;
static uint64_t count, sum;
static long kill_after = -1;

static int fanout(const node *n) {
    return n->depth >= max_depth ? 0 : (int)(check_mix64(n->id) % 6); /* mean 2.5 */
}

static void visit(herd_pool *p, void *arg, size_t size) {
    CHECK_EQ(size, sizeof(node));
    node n;
    memcpy(&n, arg, sizeof n);
    count++;
    sum += check_mix64(n.id ^ 0x5bd1e995u);
    if (kill_after >= 0 && (long)count == kill_after)
        raise(SIGKILL);
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

static void twin(const node *n, uint64_t *c, uint64_t *s) {
    ++*c;
    *s += check_mix64(n->id ^ 0x5bd1e995u);
    int f = fanout(n);
    for (int i = 0; i < f; i++) {
        node ch = {n->id * 8 + (uint64_t)i + 1, n->depth + 1};
        twin(&ch, c, s);
    }
}

static void run(herd_pool_lock lock, herd_pool_split split) {
    herd_pool_config cfg;
    herd_pool_config_init(&cfg);
    cfg.lock = lock;
    cfg.split = split;
    herd_pool *p;
    CHECK_OK(herd_pool_create(MPI_COMM_WORLD, &cfg, &p));
    CHECK_OK(herd_pool_register(p, "node", visit, &NODE));
    int rank = herd_pool_rank(p), size = herd_pool_size(p);
    for (int phase = 0; phase < 2; phase++) {
        /* Phase 0: one root on rank 0. Phase 1: a root on every rank. */
        uint64_t want_c = 0, want_s = 0;
        int roots = phase == 0 ? 1 : size;
        for (int r = 0; r < roots; r++) {
            node root = {(uint64_t)(1000003 * (r + 1) + phase), 0};
            twin(&root, &want_c, &want_s);
            if (r == rank)
                CHECK_OK(herd_pool_add(p, NODE, &root, sizeof root));
        }
        count = sum = 0;
        CHECK_OK(herd_pool_process(p));
        uint64_t got[2] = {count, sum}, tot[2];
        MPI_Allreduce(got, tot, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        herd_pool_stats mine, all;
        CHECK_OK(herd_pool_stats_get(p, &mine, &all));
        if (rank == 0)
            STEP("lock %s steal %s phase %d: %llu tasks (want %llu), %llu steals, %llu failed, "
                 "%llu aborted, %llu rounds",
                 herd_pool_lock_name(lock), herd_pool_split_name(split), phase,
                 (unsigned long long)tot[0], (unsigned long long)want_c,
                 (unsigned long long)all.steals, (unsigned long long)all.steals_failed,
                 (unsigned long long)all.steals_aborted, (unsigned long long)mine.vote_rounds);
        CHECK_EQ(tot[0], want_c);
        CHECK_EQ_U64(tot[1], want_s);
        CHECK_EQ(mine.tasks_executed, count);
        CHECK_EQ(all.tasks_executed, want_c);
        CHECK_EQ(all.tasks_added, want_c);
        CHECK(all.tasks_stolen >= all.steals);
        if (size == 1)
            CHECK_EQ(all.steals, 0);
    }
    CHECK_OK(herd_pool_destroy(p));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const char *k = getenv("POOL_TEST_KILL_RANK");
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (k && atoi(k) == rank)
        kill_after = 50;
    if (k)
        max_depth = 14; /* long enough that the others are still busy */
    if (argc > 1 && strcmp(argv[1], "--all-schemes") == 0) {
        for (int l = HERD_POOL_LOCK_TICKET; l <= HERD_POOL_LOCK_ABORTING; l++)
            for (int s = HERD_POOL_SPLIT_ONE; s <= HERD_POOL_SPLIT_HALF; s++)
                run((herd_pool_lock)l, (herd_pool_split)s);
    } else {
        run(HERD_POOL_LOCK_DEFAULT, HERD_POOL_SPLIT_DEFAULT);
    }
    MPI_Finalize();
    return 0;
}
