/* An MPI program using the pool as a user writes it: when herd_start
 * (--hybrid) or herd_pool_create fails, print herd's error, finalize and
 * exit with status 1. The start-up tests (mpi.startup.*) run it with bad
 * settings and check that the job ends with status 1, no signal, and the
 * message naming the setting. */
#include "herd/pool.h"

#include <stdio.h>
#include <string.h>

static void nop(herd_pool *p, void *arg, size_t size) {
    (void)p, (void)arg, (void)size;
}

int main(int argc, char **argv) {
    int level = 0, rank = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &level);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int hybrid = argc > 1 && strcmp(argv[1], "--hybrid") == 0;
    int rc = hybrid ? herd_start(NULL) : HERD_OK;
    if (rc != HERD_OK) {
        fprintf(stderr, "startup: rank %d: herd_start: %s (%d)\n", rank, herd_strerror(rc), rc);
        MPI_Finalize();
        return 1;
    }
    herd_pool *p = NULL;
    rc = herd_pool_create(MPI_COMM_WORLD, NULL, &p);
    if (rc != HERD_OK) {
        fprintf(stderr, "startup: rank %d: herd_pool_create: %s (%d)\n", rank, herd_strerror(rc),
                rc);
        if (hybrid)
            herd_stop();
        MPI_Finalize();
        return 1;
    }
    int id;
    rc = herd_pool_register(p, "nop", nop, &id);
    if (rc == HERD_OK && rank == 0)
        rc = herd_pool_add(p, id, NULL, 0);
    if (rc == HERD_OK)
        rc = herd_pool_process(p);
    herd_pool_destroy(p);
    if (hybrid)
        herd_stop();
    MPI_Finalize();
    if (rc != HERD_OK)
        return 1;
    if (rank == 0)
        printf("startup: ok\n");
    return 0;
}
