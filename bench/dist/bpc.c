/* bench/dist/bpc.c -- Bouncing Producer-Consumer on the MPI task pool
 * (paper 001 §2.5.3): each producer queues the next producer first (at the
 * tail of the public part: the task thieves take) and then n consumers of
 * `work` microseconds each, down to depth d. Counts are verified.
 * usage: mpirun -np N bench_pool_bpc [--n 64] [--depth 64] [--work-us 100] */
#include "pool_bench.h"

#include <mpi.h>
#include <string.h>

typedef struct bpc_arg {
    int32_t depth;
} bpc_arg;

static int PRODUCER, CONSUMER, n_consumers = 64, depth = 64;
static double work_us = 100;
static uint64_t produced, consumed;

static void producer(herd_pool *p, void *arg, size_t size) {
    bpc_arg a;
    memcpy(&a, arg, sizeof a);
    produced++;
    if (a.depth > 1) {
        bpc_arg next = {a.depth - 1};
        herd_pool_add(p, PRODUCER, &next, sizeof next);
    }
    for (int i = 0; i < n_consumers; i++)
        herd_pool_add(p, CONSUMER, NULL, 0);
}

static void consumer(herd_pool *p, void *arg, size_t size) {
    consumed++;
    pool_bench_spin_us(work_us);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc) n_consumers = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--depth") && i + 1 < argc) depth = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--work-us") && i + 1 < argc) work_us = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_pool_bpc [--n N] [--depth D] [--work-us US]\n");
            return 2;
        }
    }
    if (n_consumers < 0 || depth < 1 || work_us < 0) {
        fprintf(stderr, "bench_pool_bpc: --n >= 0, --depth >= 1, --work-us >= 0\n");
        return 2;
    }
    herd_pool *p = pool_bench_create();
    herd_pool_register(p, "bpc-producer", producer, &PRODUCER);
    herd_pool_register(p, "bpc-consumer", consumer, &CONSUMER);
    if (herd_pool_rank(p) == 0) {
        bpc_arg a = {depth};
        herd_pool_add(p, PRODUCER, &a, sizeof a);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    herd_pool_process(p);
    double secs = MPI_Wtime() - t0;
    uint64_t mine[2] = {produced, consumed}, tot[2];
    MPI_Allreduce(mine, tot, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    int ok = tot[0] == (uint64_t)depth && tot[1] == (uint64_t)depth * (uint64_t)n_consumers;
    char fields[128];
    snprintf(fields, sizeof fields, "kernel=bpc n=%d depth=%d work_us=%g producers=%llu "
             "consumers=%llu", n_consumers, depth, work_us, (unsigned long long)tot[0],
             (unsigned long long)tot[1]);
    pool_bench_report(p, fields, secs, ok);
    herd_pool_destroy(p);
    MPI_Finalize();
    return ok ? 0 : 1;
}
