/* Termination with work that arrives late.
 * 1. A task on rank 0 sleeps while every other rank is idle and votes (many
 *    rounds), then creates 64 children that create 8 grandchildren each:
 *    all 1 + 64 + 512 must run, after termination was held off.
 * 2. Bouncing producer-consumer (paper 001 §2.5.3): each producer queues the
 *    next producer first (deepest, so it is the one stolen) then n
 *    consumers; the producer moves between ranks. Counts are checked. */
#include "../common/check.h"
#include "herd/pool.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

static int SLEEPER, CHILD, GRANDCHILD, PRODUCER, CONSUMER;
static uint64_t ran[5];

static void spin_us(int us) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void sleeper(herd_pool *p, void *arg, size_t size) {
    ran[0]++;
    usleep(300 * 1000);
    for (int i = 0; i < 64; i++)
        CHECK_OK(herd_pool_add(p, CHILD, &i, sizeof i));
}
static void child(herd_pool *p, void *arg, size_t size) {
    ran[1]++;
    spin_us(50);
    for (int i = 0; i < 8; i++)
        CHECK_OK(herd_pool_add(p, GRANDCHILD, NULL, 0));
}
static void grandchild(herd_pool *p, void *arg, size_t size) {
    ran[2]++;
    spin_us(20);
}

typedef struct bpc {
    int depth, n;
} bpc;
static void producer(herd_pool *p, void *arg, size_t size) {
    bpc b;
    memcpy(&b, arg, sizeof b);
    ran[3]++;
    if (b.depth > 1) {
        bpc next = {b.depth - 1, b.n};
        CHECK_OK(herd_pool_add(p, PRODUCER, &next, sizeof next));
    }
    for (int i = 0; i < b.n; i++)
        CHECK_OK(herd_pool_add(p, CONSUMER, NULL, 0));
}
static void consumer(herd_pool *p, void *arg, size_t size) {
    ran[4]++;
    spin_us(100);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    herd_pool *p;
    CHECK_OK(herd_pool_create(MPI_COMM_WORLD, NULL, &p));
    CHECK_OK(herd_pool_register(p, "sleeper", sleeper, &SLEEPER));
    CHECK_OK(herd_pool_register(p, "child", child, &CHILD));
    CHECK_OK(herd_pool_register(p, "grandchild", grandchild, &GRANDCHILD));
    CHECK_OK(herd_pool_register(p, "producer", producer, &PRODUCER));
    CHECK_OK(herd_pool_register(p, "consumer", consumer, &CONSUMER));
    int rank = herd_pool_rank(p);

    if (rank == 0)
        CHECK_OK(herd_pool_add(p, SLEEPER, NULL, 0));
    CHECK_OK(herd_pool_process(p));
    herd_pool_stats mine;
    CHECK_OK(herd_pool_stats_get(p, &mine, NULL));
    uint64_t tot[5];
    MPI_Allreduce(ran, tot, 5, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        STEP("late: %llu %llu %llu tasks, %llu voting rounds on rank 0", (unsigned long long)tot[0],
             (unsigned long long)tot[1], (unsigned long long)tot[2],
             (unsigned long long)mine.vote_rounds);
    CHECK_EQ(tot[0], 1);
    CHECK_EQ(tot[1], 64);
    CHECK_EQ(tot[2], 512);

    const bpc seed = {64, 16};
    if (rank == 0)
        CHECK_OK(herd_pool_add(p, PRODUCER, &seed, sizeof seed));
    CHECK_OK(herd_pool_process(p));
    MPI_Allreduce(ran, tot, 5, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    herd_pool_stats all;
    CHECK_OK(herd_pool_stats_get(p, &mine, &all));
    if (rank == 0)
        STEP("bpc: %llu producers, %llu consumers, %llu steals", (unsigned long long)tot[3],
             (unsigned long long)tot[4], (unsigned long long)all.steals);
    CHECK_EQ(tot[3], seed.depth);
    CHECK_EQ(tot[4], (uint64_t)seed.depth * (uint64_t)seed.n);
    CHECK_EQ(all.tasks_executed, seed.depth * (1 + seed.n));
    CHECK_OK(herd_pool_destroy(p));
    MPI_Finalize();
    return 0;
}
