/* The pool's errors, on 2 ranks: malformed and mismatched settings, a
 * mismatched task class, an oversized task, an unknown class, a full queue,
 * in-place misuse. Every collective error must reach every rank. */
#include "../common/check.h"
#include "herd/pool.h"

#include <stdlib.h>

static void nop(herd_pool *p, void *arg, size_t size) {}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    herd_pool *p;

    STEP("malformed HERD_POOL_LOCK on rank 0 only: every rank fails");
    if (rank == 0)
        setenv("HERD_POOL_LOCK", "mcs", 1);
    CHECK_RC(herd_pool_create(MPI_COMM_WORLD, NULL, &p), HERD_EINVAL);
    CHECK(p == NULL);
    unsetenv("HERD_POOL_LOCK");

    STEP("misspelt variable");
    setenv("HERD_POOL_STEEL", "half", 1);
    CHECK_RC(herd_pool_create(MPI_COMM_WORLD, NULL, &p), HERD_EINVAL);
    unsetenv("HERD_POOL_STEEL");

    STEP("HERD_POOL_QUEUE out of range, and not a number");
    setenv("HERD_POOL_QUEUE", "8", 1);
    CHECK_RC(herd_pool_create(MPI_COMM_WORLD, NULL, &p), HERD_EINVAL);
    setenv("HERD_POOL_QUEUE", "1k", 1);
    CHECK_RC(herd_pool_create(MPI_COMM_WORLD, NULL, &p), HERD_EINVAL);
    unsetenv("HERD_POOL_QUEUE");

    STEP("a config field out of range");
    herd_pool_config cfg;
    herd_pool_config_init(&cfg);
    cfg.lock = (herd_pool_lock)9;
    CHECK_RC(herd_pool_create(MPI_COMM_WORLD, &cfg, &p), HERD_EINVAL);

    if (size > 1) {
        STEP("settings that differ between ranks");
        if (rank == 1)
            setenv("HERD_POOL_STEAL", "one", 1);
        CHECK_RC(herd_pool_create(MPI_COMM_WORLD, NULL, &p), HERD_EINVAL);
        unsetenv("HERD_POOL_STEAL");
    }

    STEP("a task class registered differently");
    herd_pool_config_init(&cfg);
    cfg.queue_capacity = 16;
    cfg.arg_max = 32;
    CHECK_OK(herd_pool_create(MPI_COMM_WORLD, &cfg, &p));
    int a, b;
    CHECK_OK(herd_pool_register(p, "alpha", nop, &a));
    CHECK_EQ(a, 0);
    if (size > 1)
        CHECK_RC(herd_pool_register(p, rank == 1 ? "gamma" : "beta", nop, &b), HERD_EINVAL);
    CHECK_RC(herd_pool_register(p, "", nop, &b), HERD_EINVAL);
    CHECK_OK(herd_pool_register(p, "beta", nop, &b));
    CHECK_EQ(b, 1);

    STEP("oversized task, unknown class");
    char big[33] = {0};
    CHECK_RC(herd_pool_add(p, a, big, 33), HERD_EINVAL);
    CHECK_OK(herd_pool_add(p, a, big, 32));
    CHECK_RC(herd_pool_add(p, 7, big, 1), HERD_EINVAL);
    CHECK_RC(herd_pool_add(p, -1, big, 1), HERD_EINVAL);

    STEP("in-place misuse");
    CHECK_RC(herd_pool_task_commit(p), HERD_ESTATE);
    CHECK(herd_pool_task_alloc(p, a, 8) != NULL);
    CHECK(herd_pool_task_alloc(p, a, 8) == NULL);
    CHECK_EQ(herd_pool_last_error(p), HERD_ESTATE);
    CHECK_OK(herd_pool_task_commit(p));

    STEP("a full queue (16 tasks)");
    for (int i = 2; i < 16; i++)
        CHECK_OK(herd_pool_add(p, b, NULL, 0));
    CHECK_RC(herd_pool_add(p, b, NULL, 0), HERD_ENOMEM);
    /* A rank in herd_pool_process steals from the others' queues, which
     * frees room in them: every rank checks its full queue first. */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(herd_pool_process(p));
    herd_pool_stats all;
    CHECK_OK(herd_pool_stats_get(p, NULL, &all));
    CHECK_EQ(all.tasks_executed, 16 * size);
    CHECK_OK(herd_pool_destroy(p));
    MPI_Finalize();
    return 0;
}
