/* bench/uts.c -- Unbalanced Tree Search on herd, and its sequential twin.
 *
 *   bench_uts --tree T1|T3|T1L|... [--workers W] [--reps R] [--seq]
 *             [--count worker|return] [--stack BYTES]
 *
 * Every node is a task: it works out how many children it has, and spawns
 * one task per child whose argument block is the child node itself (24
 * bytes: well inside the 40 bytes that stay inline in a queue slot). The
 * tree generator lives in uts_tree.h; --seq walks the same tree by plain
 * recursion with the same per-node code.
 *
 * Counting. Two ways to get the node count back are implemented, because
 * the choice shapes what the benchmark measures:
 *   worker  (default) each task adds to a counter block owned by the worker
 *           running it, found with herd_worker_id() and padded to a cache
 *           line so that workers never write the same line. A task never
 *           calls herd_wait(): it returns as soon as its children are
 *           queued, and the runtime's implicit wait at task end does the
 *           rest, so no task frame stays on a stack while its children
 *           run. The blocks are summed after herd_run() returns.
 *   return  each task gets a pointer to a slot in its parent's frame, calls
 *           herd_wait() and adds up its children's slots: the classic
 *           fork-join reduction. It needs a 32-byte argument block, an
 *           explicit wait in every inner node, and keeps every inner
 *           node's frame alive while its subtree runs.
 * `worker` does strictly less work per node and does not deepen the stack
 * with the tree (T3 is 1,572 levels deep), which is why it is the default;
 * `return` stays available to measure the cost of the explicit wait.
 *
 * The last line on stdout is one JSON object (see tools/bench_table.py). */
#include "common.h"
#include "uts_tree.h"

#include <herd/herd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "bench_uts --tree NAME [--workers W] [--reps R] [--seq] [--count worker|return]"
    " [--stack BYTES]";

/* The tree being searched; set before herd_run() and only read by tasks. */
static const uts_tree *tree;

/* ------------------------------------------------------- per-worker counts */

/* One worker's counters. Only tasks running on that worker write it, and a
 * task cannot change worker between reading herd_worker_id() and its last
 * increment because it never blocks in between, so plain (non-atomic)
 * increments are enough. herd_run() returning orders all of them before
 * the main thread's reads. */
typedef struct worker_slot {
    uts_count c;
    uint64_t spawn_fallbacks; /* children run inline because herd_spawn failed */
} __attribute__((aligned(64))) worker_slot;

static worker_slot *slots;
static int nslots;

static void visit_worker(void *arg) {
    const uts_node *n = arg;
    int nc = uts_num_children(tree, n);
    worker_slot *s = &slots[herd_worker_id()];
    s->c.nodes++;
    if (n->height > s->c.max_depth)
        s->c.max_depth = n->height;
    if (nc == 0) {
        s->c.leaves++;
        return;
    }
    for (int i = 0; i < nc; i++) {
        uts_node child;
        uts_child(n, i, &child);
        if (herd_spawn(visit_worker, &child, sizeof child) != HERD_OK) {
            /* Queue full: the count must stay exact, so search the child
             * here instead. Re-read the slot: the call may not block, but
             * keeping the worker's identity out of this frame is cheap. */
            slots[herd_worker_id()].spawn_fallbacks++;
            visit_worker(&child);
        }
    }
    /* No herd_wait(): returning implies it, and without our frame. */
}

/* ------------------------------------------------------ counts via returns */

typedef struct return_arg {
    uts_node node;
    uts_count *out; /* slot in the parent's frame; valid until our return */
} return_arg;

_Static_assert(sizeof(return_arg) <= 40, "argument block must stay inline in a queue slot");
_Static_assert(sizeof(uts_node) <= 40, "argument block must stay inline in a queue slot");

static uint64_t return_fallbacks; /* only ever touched if herd_spawn fails */

static void visit_return(void *arg) {
    const return_arg *a = arg;
    const uts_node *n = &a->node;
    int nc = uts_num_children(tree, n);
    uts_count total = {1, nc == 0, n->height};
    if (nc > 0) {
        /* A binomial inner node has m <= 8 children, a geometric one about
         * b0; the few with more, and a binomial root, use the heap. */
        uts_count small[16];
        uts_count *sub = nc <= 16 ? small : malloc((size_t)nc * sizeof *sub);
        if (!sub) {
            perror("malloc");
            exit(1);
        }
        for (int i = 0; i < nc; i++) {
            return_arg c = {.out = &sub[i]};
            uts_child(n, i, &c.node);
            if (herd_spawn(visit_return, &c, sizeof c) != HERD_OK) {
                __atomic_fetch_add(&return_fallbacks, 1, __ATOMIC_RELAXED);
                visit_return(&c);
            }
        }
        herd_wait();
        for (int i = 0; i < nc; i++) {
            total.nodes += sub[i].nodes;
            total.leaves += sub[i].leaves;
            if (sub[i].max_depth > total.max_depth)
                total.max_depth = sub[i].max_depth;
        }
        if (sub != small)
            free(sub);
    }
    *a->out = total;
}

/* ------------------------------------------------------------------ driver */

enum count_mode { COUNT_WORKER = 1, COUNT_RETURN };

/* Run one timed search; returns its seconds and fills *c, or -1 on a
 * runtime error (message already printed). */
static double search_once(const uts_node *root, int seq, enum count_mode mode, uts_count *c) {
    memset(c, 0, sizeof *c);
    if (seq) {
        double t0 = bench_now();
        uts_search_seq(tree, root, c);
        return bench_now() - t0;
    }
    int rc;
    double t0, t1;
    if (mode == COUNT_WORKER) {
        memset(slots, 0, (size_t)nslots * sizeof *slots);
        t0 = bench_now();
        rc = herd_run(visit_worker, root, sizeof *root);
        t1 = bench_now();
        for (int w = 0; w < nslots; w++) {
            c->nodes += slots[w].c.nodes;
            c->leaves += slots[w].c.leaves;
            if (slots[w].c.max_depth > c->max_depth)
                c->max_depth = slots[w].c.max_depth;
            if (slots[w].spawn_fallbacks)
                fprintf(stderr, "note: worker %d ran %llu children inline (queue full)\n", w,
                        (unsigned long long)slots[w].spawn_fallbacks);
        }
    } else {
        return_arg a = {.node = *root, .out = c};
        return_fallbacks = 0;
        t0 = bench_now();
        rc = herd_run(visit_return, &a, sizeof a);
        t1 = bench_now();
        if (return_fallbacks)
            fprintf(stderr, "note: %llu children ran inline (queue full)\n",
                    (unsigned long long)return_fallbacks);
    }
    if (rc != HERD_OK) {
        fprintf(stderr, "herd_run: %s\n", herd_strerror(rc));
        return -1;
    }
    return t1 - t0;
}

int main(int argc, char **argv) {
    const char *name = NULL;
    int workers = 0, reps = 1, seq = 0;
    long stack = 0;
    enum count_mode mode = COUNT_WORKER;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tree"))
            name = bench_str_arg(argc, argv, &i, usage);
        else if (!strcmp(argv[i], "--workers"))
            workers = (int)bench_int_arg(argc, argv, &i, 0, 4096, usage);
        else if (!strcmp(argv[i], "--reps"))
            reps = (int)bench_int_arg(argc, argv, &i, 1, 100000, usage);
        else if (!strcmp(argv[i], "--stack"))
            stack = bench_int_arg(argc, argv, &i, 0, 1L << 30, usage);
        else if (!strcmp(argv[i], "--seq"))
            seq = 1;
        else if (!strcmp(argv[i], "--count")) {
            const char *m = bench_str_arg(argc, argv, &i, usage);
            if (!strcmp(m, "worker"))
                mode = COUNT_WORKER;
            else if (!strcmp(m, "return"))
                mode = COUNT_RETURN;
            else
                bench_usage_error(usage, "--count takes worker or return", m);
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            bench_help(usage);
        else
            bench_usage_error(usage, "unknown option", argv[i]);
    }
    if (!name)
        bench_usage_error(usage, "--tree is required", NULL);
    tree = uts_tree_find(name);
    if (!tree) {
        fprintf(stderr, "error: unknown tree %s; known: %s\n", name, uts_tree_names());
        return 2;
    }

    if (!seq) {
        herd_config cfg = {.workers = workers, .stack_size = (size_t)stack};
        int rc = herd_start(&cfg);
        if (rc != HERD_OK) {
            fprintf(stderr, "herd_start: %s\n", herd_strerror(rc));
            printf("{\"kernel\":\"uts\",\"params\":{\"tree\":\"%s\"},\"workers\":%d,"
                   "\"verified\":false,\"error\":\"herd_start: %s\"}\n",
                   tree->name, workers, herd_strerror(rc));
            return 1;
        }
        workers = herd_num_workers();
        nslots = workers;
        slots = aligned_alloc(64, (size_t)nslots * sizeof *slots);
        if (!slots) {
            perror("aligned_alloc");
            return 1;
        }
    } else {
        workers = 0;
    }

    uts_node root;
    uts_root(tree, &root);
    double *times = malloc((size_t)reps * sizeof *times);
    if (!times) {
        perror("malloc");
        return 1;
    }
    int verified = 1, done = 0;
    uts_count c = {0};
    for (int r = 0; r < reps; r++) {
        times[r] = search_once(&root, seq, mode, &c);
        if (times[r] < 0) {
            verified = 0;
            break;
        }
        done++;
        if (!uts_count_ok(tree, &c)) {
            fprintf(stderr,
                    "UTS %s rep %d: got %llu nodes, %llu leaves, depth %lld; "
                    "published %llu nodes, %llu leaves, depth %d\n",
                    tree->name, r, (unsigned long long)c.nodes, (unsigned long long)c.leaves,
                    (long long)c.max_depth, (unsigned long long)tree->nodes,
                    (unsigned long long)tree->leaves, tree->max_depth);
            verified = 0;
        }
        fprintf(stderr, "uts %s %s w=%d rep %d: %.6f s, %llu nodes\n", tree->name,
                seq ? "seq" : (mode == COUNT_WORKER ? "worker" : "return"), workers, r, times[r],
                (unsigned long long)c.nodes);
    }
    if (!seq)
        herd_stop();

    double med = done ? bench_median(times, done) : 0.0;
    printf("{\"kernel\":\"uts\",\"params\":{\"tree\":\"%s\"", tree->name);
    if (!seq)
        printf(",\"count\":\"%s\"", mode == COUNT_WORKER ? "worker" : "return");
    printf("},\"workers\":%d,\"seconds\":%.9f,\"nodes\":%llu,\"leaves\":%llu,\"max_depth\":%lld,"
           "\"mnodes_per_s\":%.3f,\"verified\":%s,\"reps\":%d,",
           workers, med, (unsigned long long)c.nodes, (unsigned long long)c.leaves,
           (long long)c.max_depth, med > 0 ? (double)c.nodes / med / 1e6 : 0.0,
           verified ? "true" : "false", reps);
    bench_print_times(stdout, times, done);
    printf("}\n");
    free(times);
    free(slots);
    return verified ? 0 : 1;
}
