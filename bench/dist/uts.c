/* bench/dist/uts.c -- Unbalanced Tree Search on the MPI task pool (paper
 * 001 §2.5.2): one task per node, children created in place. The node,
 * leaf and depth counts are checked against the published ones.
 * usage: mpirun -np N bench_pool_uts [--tree T1|T3|T1L|...]
 * Hybrid mode: HERD_POOL_HYBRID=1 HERD_WORKERS=W (W herd workers per rank). */
#include "pool_bench.h"
#include "uts_tree.h"

#include <mpi.h>
#include <string.h>

static const uts_tree *tree;
static int NODE;
/* One count per thread that runs tasks: [0] the flat mode's, [1 + w] herd
 * worker w's in hybrid mode (HERD_POOL_HYBRID=1); padded apart. */
enum { MAXW = 256 };
static struct {
    uts_count c;
    char pad[64 - sizeof(uts_count) % 64];
} counts[MAXW + 1];

static void visit(herd_pool *p, void *arg, size_t size) {
    const uts_node *n = arg;
    int w = herd_worker_id() + 1;
    uts_count *mine = &counts[w > 0 && w <= MAXW ? w : 0].c;
    mine->nodes++;
    if (n->height > mine->max_depth) mine->max_depth = n->height;
    int c = uts_num_children(tree, n);
    if (c == 0) mine->leaves++;
    for (int i = 0; i < c; i++) {
        /* In-place creation: the child's digest is computed into its slot. */
        uts_node *slot = herd_pool_task_alloc(p, NODE, sizeof *slot);
        if (!slot) MPI_Abort(MPI_COMM_WORLD, 1);
        uts_child(n, i, slot);
        herd_pool_task_commit(p);
    }
}

int main(int argc, char **argv) {
    pool_bench_init(&argc, &argv);
    const char *name = "T3";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tree") && i + 1 < argc)
            name = argv[++i];
        else {
            fprintf(stderr, "usage: bench_pool_uts [--tree NAME] (trees: %s)\n", uts_tree_names());
            return 2;
        }
    }
    tree = uts_tree_find(name);
    if (!tree) {
        fprintf(stderr, "bench_pool_uts: unknown tree %s (trees: %s)\n", name, uts_tree_names());
        return 2;
    }
    herd_pool *p = pool_bench_create();
    herd_pool_register(p, "uts-node", visit, &NODE);
    if (herd_pool_rank(p) == 0) {
        uts_node root;
        uts_root(tree, &root);
        herd_pool_add(p, NODE, &root, sizeof root);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    herd_pool_process(p);
    double secs = MPI_Wtime() - t0;
    uts_count tot = {0, 0, 0}, mine = {0, 0, 0};
    for (int i = 0; i <= MAXW; i++) {
        mine.nodes += counts[i].c.nodes;
        mine.leaves += counts[i].c.leaves;
        if (counts[i].c.max_depth > mine.max_depth) mine.max_depth = counts[i].c.max_depth;
    }
    MPI_Allreduce(&mine.nodes, &tot.nodes, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mine.leaves, &tot.leaves, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mine.max_depth, &tot.max_depth, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    int ok = uts_count_ok(tree, &tot);
    char fields[128];
    snprintf(fields, sizeof fields, "kernel=uts tree=%s nodes=%llu leaves=%llu depth=%lld",
             tree->name, (unsigned long long)tot.nodes, (unsigned long long)tot.leaves,
             (long long)tot.max_depth);
    pool_bench_report(p, fields, secs, ok);
    herd_pool_destroy(p);
    pool_bench_finish();
    return ok ? 0 : 1;
}
