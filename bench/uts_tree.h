/* bench/uts_tree.h -- the Unbalanced Tree Search (UTS) trees.
 *
 * UTS (Olivier, Huan, Liu, Prins, Dinan, Sadayappan, Tseng: "UTS: An
 * Unbalanced Tree Search Benchmark", LCPC 2006) describes a tree that is
 * never stored: each node is a 20-byte SHA-1 digest, and everything about
 * the node -- how many children it has, and their digests -- follows from
 * those 20 bytes. The rules, written from the specification:
 *
 *   root      = SHA1(16 zero bytes || seed as 4 bytes big-endian)
 *   child i   = SHA1(parent's 20 bytes || i as 4 bytes big-endian), i = 0..n-1
 *   rand(s)   = bytes 16..19 of s read big-endian, top bit cleared (31 bits)
 *   u(s)      = rand(s) / 2^31, uniform on [0, 1)
 *
 * and the number of children n of a node at height h (the root has h = 0):
 *
 *   BIN (binomial): the root has floor(b0) children; every other node has m
 *       children with probability q (u < q) and none otherwise.
 *   GEO (geometric): n = floor(log(1 - u) / log(1 - p)) with p = 1/(1 + b),
 *       a geometric variable of mean b, where b = b0 at the root and below it
 *       follows the shape function: LINEAR b0*(1 - h/d), EXPDEC
 *       b0*h^(-log b0/log d), CYCLIC b0^sin(2 pi h/d) (0 past 5d), FIXED b0
 *       while h < d and 0 from h = d on.
 *   HYBRID: GEO while h < f*d, BIN below.
 *   Any node but a BIN root has at most 100 children.
 *
 * The arithmetic is done in double exactly as the reference does it (no
 * -ffast-math: log(0) = -inf must give 0 children at a FIXED tree's leaves),
 * so the node counts match the published ones bit for bit.
 *
 * The per-node functions are inline so that the sequential twin and the
 * herd version pay for exactly the same node work. */
#ifndef HERD_BENCH_UTS_TREE_H
#define HERD_BENCH_UTS_TREE_H

/* SHA1_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP, but
 * EVP costs ~115 ns per 24-byte digest here against ~62 ns for these (and
 * the one-shot SHA1() ~440 ns, since it fetches the algorithm on each call);
 * the hash is most of the work per node, so the benchmark would measure
 * OpenSSL's dispatch rather than the runtime. */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>

#include <math.h>
#include <stdint.h>

#define UTS_MAX_CHILDREN 100 /* cap on every node but a binomial root */

/* Tree kinds and geometric shapes; values start at 1 so zeroed memory is
 * recognisably invalid. */
enum uts_kind { UTS_BIN = 1, UTS_GEO, UTS_HYBRID };
enum uts_shape { UTS_LINEAR = 1, UTS_EXPDEC, UTS_CYCLIC, UTS_FIXED };

/** One of the published sample trees, with its published statistics. */
typedef struct uts_tree {
    const char *name; /* T1, T3, T1L, ... */
    enum uts_kind kind;
    enum uts_shape shape; /* GEO and HYBRID only */
    double b0;            /* root branching factor */
    int depth;            /* d: GEO depth parameter (gen_mx) */
    double q;             /* BIN: probability that a node has children */
    int m;                /* BIN: number of children of an inner node */
    double shift;         /* HYBRID: GEO above height shift*d */
    int seed;             /* root seed */
    uint64_t nodes;       /* published tree size */
    uint64_t leaves;      /* published number of leaves */
    int max_depth;        /* published height of the deepest node */
} uts_tree;

/** A node: its digest and its height. 24 bytes, so a task's argument block
 *  carrying one stays inline in a queue slot. */
typedef struct uts_node {
    uint8_t state[SHA_DIGEST_LENGTH];
    int32_t height;
} uts_node;

/** What a search counts. */
typedef struct uts_count {
    uint64_t nodes;
    uint64_t leaves;
    int64_t max_depth;
} uts_count;

/** The sample tree called `name` (T1, T2, T3, T4, T5, T1L, T2L, T3L), or NULL. */
const uts_tree *uts_tree_find(const char *name);

/** Space-separated names of the known trees, for usage messages. */
const char *uts_tree_names(void);

/** The root node of tree t. */
void uts_root(const uts_tree *t, uts_node *root);

/** Count the subtree under n (n included) into *c by plain recursion:
 *  the sequential twin of the herd search. */
void uts_search_seq(const uts_tree *t, const uts_node *n, uts_count *c);

/** 1 if c matches t's published size, leaves and depth. */
int uts_count_ok(const uts_tree *t, const uts_count *c);

/** Child i of parent: SHA1(parent state || i big-endian), one level down. */
static inline void uts_child(const uts_node *parent, int i, uts_node *child) {
    const uint8_t be[4] = {(uint8_t)(i >> 24), (uint8_t)(i >> 16), (uint8_t)(i >> 8),
                           (uint8_t)i};
    SHA_CTX ctx;
    SHA1_Init(&ctx);
    SHA1_Update(&ctx, parent->state, sizeof parent->state);
    SHA1_Update(&ctx, be, sizeof be);
    SHA1_Final(child->state, &ctx);
    child->height = parent->height + 1;
}

/** The node's uniform draw on [0, 1): its last four bytes, 31 bits of them. */
static inline double uts_uniform(const uts_node *n) {
    const uint8_t *s = n->state;
    uint32_t r = ((uint32_t)s[16] << 24) | ((uint32_t)s[17] << 16) | ((uint32_t)s[18] << 8) |
                 (uint32_t)s[19];
    return (double)(r & 0x7fffffffu) / 2147483648.0;
}

static inline int uts_children_bin(const uts_tree *t, const uts_node *n) {
    return uts_uniform(n) < t->q ? t->m : 0;
}

static inline int uts_children_geo(const uts_tree *t, const uts_node *n) {
    double b = t->b0;
    int h = n->height;
    if (h > 0) {
        switch (t->shape) {
        case UTS_EXPDEC:
            b = t->b0 * pow((double)h, -log(t->b0) / log((double)t->depth));
            break;
        case UTS_CYCLIC:
            b = h > 5 * t->depth ? 0.0
                                 : pow(t->b0, sin(2.0 * 3.141592653589793 * (double)h /
                                                  (double)t->depth));
            break;
        case UTS_FIXED:
            b = h < t->depth ? t->b0 : 0.0;
            break;
        case UTS_LINEAR:
        default:
            b = t->b0 * (1.0 - (double)h / (double)t->depth);
            break;
        }
    }
    /* Inverse CDF of the geometric distribution with mean b. */
    double p = 1.0 / (1.0 + b);
    return (int)floor(log(1.0 - uts_uniform(n)) / log(1.0 - p));
}

/** Number of children of node n of tree t. */
static inline int uts_num_children(const uts_tree *t, const uts_node *n) {
    int c;
    switch (t->kind) {
    case UTS_BIN:
        /* A binomial root has exactly floor(b0) children and is the one
         * node allowed more than UTS_MAX_CHILDREN. */
        if (n->height == 0)
            return (int)floor(t->b0);
        c = uts_children_bin(t, n);
        break;
    case UTS_GEO:
        c = uts_children_geo(t, n);
        break;
    case UTS_HYBRID:
    default:
        c = (double)n->height < t->shift * (double)t->depth ? uts_children_geo(t, n)
                                                             : uts_children_bin(t, n);
        break;
    }
    return c > UTS_MAX_CHILDREN ? UTS_MAX_CHILDREN : c;
}

#endif /* HERD_BENCH_UTS_TREE_H */
