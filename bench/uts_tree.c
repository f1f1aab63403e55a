/* bench/uts_tree.c -- the sample trees and the sequential search. */
#include "uts_tree.h"

#include <string.h>

/* The sample trees of the UTS distribution (its sample_trees.sh), with the
 * size, height and leaf count published there. Parameters a tree kind does
 * not use are left zero. */
static const uts_tree trees[] = {
    /* name   kind        shape        b0      d   q         m  f    seed */
    {"T1", UTS_GEO, UTS_FIXED, 4, 10, 0, 0, 0, 19, 4130071, 3305118, 10},
    {"T2", UTS_GEO, UTS_CYCLIC, 6, 16, 0, 0, 0, 502, 4117769, 2342762, 81},
    {"T3", UTS_BIN, 0, 2000, 0, 0.124875, 8, 0, 42, 4112897, 3599034, 1572},
    {"T4", UTS_HYBRID, UTS_LINEAR, 6, 16, 0.234375, 4, 0.5, 1, 4132453, 3108986, 134},
    {"T5", UTS_GEO, UTS_LINEAR, 4, 20, 0, 0, 0, 34, 4147582, 2181318, 20},
    {"T1L", UTS_GEO, UTS_FIXED, 4, 13, 0, 0, 0, 29, 102181082, 81746377, 13},
    {"T2L", UTS_GEO, UTS_CYCLIC, 7, 23, 0, 0, 0, 220, 96793510, 53791152, 67},
    {"T3L", UTS_BIN, 0, 2000, 0, 0.200014, 5, 0, 7, 111345631, 89076904, 17844},
};

const uts_tree *uts_tree_find(const char *name) {
    for (size_t k = 0; k < sizeof trees / sizeof trees[0]; k++)
        if (strcmp(trees[k].name, name) == 0)
            return &trees[k];
    return NULL;
}

const char *uts_tree_names(void) { return "T1 T2 T3 T4 T5 T1L T2L T3L"; }

void uts_root(const uts_tree *t, uts_node *root) {
    uint8_t seed[20] = {0};
    seed[16] = (uint8_t)(t->seed >> 24);
    seed[17] = (uint8_t)(t->seed >> 16);
    seed[18] = (uint8_t)(t->seed >> 8);
    seed[19] = (uint8_t)t->seed;
    SHA_CTX ctx;
    SHA1_Init(&ctx);
    SHA1_Update(&ctx, seed, sizeof seed);
    SHA1_Final(root->state, &ctx);
    root->height = 0;
}

void uts_search_seq(const uts_tree *t, const uts_node *n, uts_count *c) {
    int nc = uts_num_children(t, n);
    c->nodes++;
    if (n->height > c->max_depth)
        c->max_depth = n->height;
    if (nc == 0) {
        c->leaves++;
        return;
    }
    for (int i = 0; i < nc; i++) {
        uts_node child;
        uts_child(n, i, &child);
        uts_search_seq(t, &child, c);
    }
}

int uts_count_ok(const uts_tree *t, const uts_count *c) {
    return c->nodes == t->nodes && c->leaves == t->leaves && c->max_depth == t->max_depth;
}
