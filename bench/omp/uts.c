/* bench/omp/uts.c -- Unbalanced Tree Search with OpenMP tasks, and its twin.
 *
 *   omp_uts [--input small|medium|large] [--tree T1|T3|T1L|...] [--taskwait]
 *           [--seq] [--reps R]
 *
 * Each child of a node is a task that gets the child node (24 bytes) by
 * value; there is no cut-off (the BOTS shape: very fine-grained tasks).
 * Counts go to a per-thread block, a cache line of its own, indexed by
 * omp_get_thread_num() -- read and used with no task scheduling point in
 * between -- and summed at the end; a node never waits for its children,
 * but with --taskwait, where each node with children waits for them at its
 * end (a taskwait after its loop): the shape that OpenMP runtimes whose
 * tasks complete after their children run anyway, so the two side by side
 * show what the waits cost (issue 15). Not a variant of the suite's: the
 * harness runs the kernel as the BOTS shape only. The trees and their
 * published sizes are bench/uts_tree.c's: inputs small T1 (4,130,071
 * nodes), medium T3 (4,112,897, binomial: the hard one to balance), large
 * T1L (102,181,082). Verification: node count, leaves and depth equal the
 * published ones. */
#include "omp_bench.h"
#include "uts_tree.h"

#include <omp.h>
#include <stdio.h>
#include <string.h>

static const char usage[] = "omp_uts [--input small|medium|large] [--tree NAME] [--taskwait] "
                            "[--seq] [--reps R]";
static const char *const variants[] = {"tasks", NULL};
static const char *const tree_of[3] = {"T1", "T3", "T1L"};

typedef struct counter {
    uts_count c;
} __attribute__((aligned(OMP_BENCH_LINE))) counter;

static counter *counts;
static const uts_tree *tree;
static int wait_children; /* --taskwait; set before the region */

static void visit(uts_node n) {
    counter *me = &counts[omp_get_thread_num()];
    int nc = uts_num_children(tree, &n);
    me->c.nodes++;
    if (n.height > me->c.max_depth)
        me->c.max_depth = n.height;
    if (nc == 0) {
        me->c.leaves++;
        return;
    }
    for (int i = 0; i < nc; i++) {
        uts_node child;
        uts_child(&n, i, &child);
#pragma omp task firstprivate(child)
        visit(child);
    }
    if (wait_children) {
#pragma omp taskwait
    }
}

int main(int argc, char **argv) {
    /* --tree is ours; the rest are the common options. */
    const char *name = NULL;
    int kept = 0;
    char **rest = omp_bench_alloc((size_t)(argc + 1) * sizeof *rest);
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--tree") && i + 1 < argc)
            name = argv[++i];
        else if (!strcmp(argv[i], "--taskwait"))
            wait_children = 1;
        else
            rest[kept++] = argv[i];
    }
    rest[kept] = NULL;
    char inputs[160];
    snprintf(inputs, sizeof inputs, "{\"tasks\":{\"tree\":[\"%s\",\"%s\",\"%s\"]}}", tree_of[0],
             tree_of[1], tree_of[2]);
    omp_opts o = {.kernel = "uts", .inputs = inputs};
    omp_bench_parse(kept, rest, &o, usage, variants);
    if (!name)
        name = tree_of[o.input_index];
    tree = uts_tree_find(name);
    if (!tree) {
        char what[160];
        snprintf(what, sizeof what, "unknown --tree (known: %s)", uts_tree_names());
        bench_usage_error(usage, what, name);
    }
    int nthreads = o.seq ? 1 : omp_get_max_threads();
    counts = omp_bench_alloc_lines((size_t)nthreads * sizeof *counts);
    double times[o.reps];
    int verified = 1;
    uts_count total = {0};
    for (int r = 0; r < o.reps; r++) {
        memset(counts, 0, (size_t)nthreads * sizeof *counts);
        uts_node root;
        uts_root(tree, &root);
        double t0 = bench_now();
        if (o.seq) {
            uts_search_seq(tree, &root, &counts[0].c);
        } else {
#pragma omp parallel
#pragma omp single
            visit(root);
        }
        times[r] = bench_now() - t0;
        total = (uts_count){0};
        for (int t = 0; t < nthreads; t++) {
            total.nodes += counts[t].c.nodes;
            total.leaves += counts[t].c.leaves;
            if (counts[t].c.max_depth > total.max_depth)
                total.max_depth = counts[t].c.max_depth;
        }
        if (!uts_count_ok(tree, &total)) {
            fprintf(stderr,
                    "uts %s: %llu nodes, %llu leaves, depth %lld; published %llu, %llu, %d\n",
                    tree->name, (unsigned long long)total.nodes, (unsigned long long)total.leaves,
                    (long long)total.max_depth, (unsigned long long)tree->nodes,
                    (unsigned long long)tree->leaves, tree->max_depth);
            verified = 0;
        }
    }
    char fig[160];
    snprintf(fig, sizeof fig,
             "\"tree\":\"%s\",\"taskwait\":%s,\"nodes\":%llu,\"leaves\":%llu,\"max_depth\":%lld",
             tree->name, wait_children ? "true" : "false", (unsigned long long)total.nodes,
             (unsigned long long)total.leaves, (long long)total.max_depth);
    omp_bench_result(&o, times, o.reps, verified, fig);
    free(counts);
    free(rest);
    return verified ? 0 : 1;
}
