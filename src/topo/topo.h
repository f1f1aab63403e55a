/* Topology model: the machine as a tree of domains (machine, package, NUMA
 * node, L3, L2, core, PU), built once from hwloc -- the real machine, an hwloc
 * synthetic description, or an hwloc XML file (HERD_TOPOLOGY) -- and the
 * placement of workers on its PUs (HERD_BIND). Schedulers and mappers read
 * only this model, never hwloc directly. */
#ifndef HERD_TOPO_H
#define HERD_TOPO_H

#include <stddef.h>
#include <stdio.h>

/* Levels of the domain tree, outermost first. Starts at 1: zeroed memory is
 * not a valid level. */
typedef enum herd__level {
    HERD__LVL_MACHINE = 1,
    HERD__LVL_PACKAGE,
    HERD__LVL_NUMA,
    HERD__LVL_L3,
    HERD__LVL_L2,
    HERD__LVL_CORE,
    HERD__LVL_PU,
} herd__level;
#define HERD__NLEVELS 7 /* number of herd__level values */

typedef enum herd__bind {
    HERD__BIND_NONE = 1,      /* leave threads to the OS scheduler */
    HERD__BIND_COMPACT,       /* worker i on the i-th PU in tree order */
    HERD__BIND_SCATTER,       /* spread round robin over packages, then cores */
    HERD__BIND_NUMA_PRIORITY, /* worker 0 on the best PU, the others nearest to it (paper 002) */
    /* Mapped policies (paper 003, src/place/): each worker chooses its PU
     * itself when it starts, under the machine-wide registry's lock. */
    HERD__BIND_STATIC, /* worker i on PU i, recorded in the registry */
    HERD__BIND_BLL,    /* fewest herd workers pinned machine-wide */
    HERD__BIND_XLL,    /* least user-time growth since the last look, plus pinned (Algorithm 1) */
} herd__bind;
#define HERD__BIND_MAPPED(b) ((b) >= HERD__BIND_STATIC && (b) <= HERD__BIND_XLL)

typedef struct herd__topo {
    int npus;         /* PUs in the model (the process cpuset for a real machine) */
    int synthetic;    /* 1 when HERD_TOPOLOGY gave the machine: threads are never pinned */
    char source[256]; /* "this machine", "synthetic: <desc>" or "xml: <path>" */
    int *os_index;    /* [npus] OS index of each PU in tree order (for binding) */
    /* domain[l][pu]: index of the domain at level l (1..HERD__NLEVELS) that
     * holds the PU, numbered 0.. in tree order; a level the machine lacks
     * repeats its parent's domains. ndomains[l] counts them. */
    int *domain[HERD__NLEVELS + 1];
    int ndomains[HERD__NLEVELS + 1];
    void *hw; /* hwloc_topology_t, owned */
} herd__topo;

/* The most PUs a modelled machine (a synthetic description or an XML file)
 * may have: herd's bound on workers (HERD__WORKERS_MAX, core/config.h),
 * since one worker per PU is the default. A larger model is refused by
 * herd__topo_load before hwloc builds it (a synthetic description of 10^9
 * PUs would take minutes and gigabytes). */
#define HERD__TOPO_MODEL_PUS_MAX 4096

/* Build the model. spec NULL or "" = the real machine; otherwise an hwloc
 * synthetic description ("pack:4 core:8 pu:1") or the path of an XML file
 * (a spec naming an existing file, or ending in ".xml"). Returns 0, or
 * HERD_EINVAL / HERD_ENOMEM with a sentence in err. */
int herd__topo_load(herd__topo *t, const char *spec, char *err, size_t errlen);
void herd__topo_free(herd__topo *t);

/* Distance between two PUs: 0 same PU, otherwise the number of levels from
 * the PU level up to their deepest common domain, counting only levels that
 * split them (so on a 4x8 synthetic machine: same core 1, same package 2 ..). */
int herd__topo_distance(const herd__topo *t, int pu_a, int pu_b);

/* Parse a level name: pu, core, l2, l3, numa, package, machine. 0 if unknown. */
herd__level herd__topo_level_parse(const char *name);
const char *herd__topo_level_name(herd__level l);
/* The HERD_BIND form of a policy ("compact", "xll", ...); "?" for none. */
const char *herd__bind_name(herd__bind b);

/* PU (tree-order index) for each of nworkers workers under policy bind.
 * More workers than PUs wrap around. Returns 0 or HERD_EINVAL with err. */
int herd__topo_place(const herd__topo *t, herd__bind bind, int nworkers, int *pu_of_worker,
                     char *err, size_t errlen);

/* Pin the calling thread to PU pu (tree order). No-op returning 0 for a
 * synthetic topology. Returns 0 or HERD_ESYS with err. */
int herd__topo_bind_self(const herd__topo *t, int pu, char *err, size_t errlen);

/* Put the pages of [addr, addr + len) on the NUMA node of PU pu, moving the
 * ones already touched (the kernel's "preferred" policy: when that node is
 * full, pages go elsewhere rather than fail). Whole pages are moved, so the
 * range should own its pages. Returns 1 when there is nothing to do (a
 * synthetic or XML machine), 0 once done, or HERD_ESYS with err when the
 * kernel refuses (no NUMA support, a seccomp filter). */
int herd__topo_membind_near(const herd__topo *t, void *addr, size_t len, int pu, char *err,
                            size_t errlen);

/* The hwloc NUMA node object (hwloc_obj_t) of PU pu, or NULL. For topo/ only. */
void *herd__topo_numa_obj(const herd__topo *t, int pu);

/* ------------------------------------------ core priorities (numaprio.c) */

/* Core priorities of paper 002 section IV (HERD_BIND=numa-priority), one per
 * PU: prio = P0 + V1 + V2, where
 *   P0 = the number of PUs in the PU's NUMA domain (bigger nodes first;
 *        equal for all when all nodes are equal),
 *   V1 = sum over hop classes i of alpha_i * N_i (N_i: PUs at i hops),
 *   V2 = sum over i of alpha_i * sum of (P0 + V1) of the PUs at i hops,
 * with alpha_i = 2^(H-1-i) for the H hop classes. Hops are classes of
 * hwloc's NUMA latency matrix when the topology has one covering every PU,
 * otherwise of herd__topo_distance(). docs/design/topology.md, section 7. */
#define HERD__PRIO_MAXHOPS 16 /* farther distinct distances share the last class */

typedef struct herd__prio {
    int npus;
    int numa_matrix;     /* 1: hops from hwloc's NUMA matrix; 0: from herd__topo_distance */
    char hops_from[160]; /* where the hops come from, in words (for `herd topo`) */
    int nhops;           /* H: classes 0..H-1, nearest first */
    long long hop_value[HERD__PRIO_MAXHOPS]; /* the (smallest) distance of each class */
    long long alpha[HERD__PRIO_MAXHOPS];     /* alpha_i = 2^(H-1-i) */
    long long *p0, *v1, *v2, *prio;          /* [npus] */
    /* Hop lookup. Matrix: class of row_hop[row[a] * nrows + row[b]].
     * Tree: dist_hop[herd__topo_distance(a, b)]. */
    int *row;
    int nrows;
    signed char *row_hop;
    signed char dist_hop[HERD__NLEVELS + 1];
} herd__prio;

/* Fill pr for machine t. Returns 0, or HERD_ENOMEM / HERD_EINVAL with err;
 * on error pr holds nothing to free. */
int herd__prio_compute(const herd__topo *t, herd__prio *pr, char *err, size_t errlen);
void herd__prio_free(herd__prio *pr);
/* Hop class (0 = nearest) of PU b seen from PU a; -1 when a == b. */
int herd__prio_hop(const herd__prio *pr, const herd__topo *t, int a, int b);
/* The PU of the highest priority; ties go to the lowest PU index. */
int herd__prio_master(const herd__prio *pr);
/* The priority table for `herd topo`: the hop source, classes, weights, one
 * line per PU with P0, V1, V2 and the priority, and the master's PU. */
void herd__prio_print(const herd__topo *t, FILE *out);
/* numa-priority placement (herd__topo_place's HERD__BIND_NUMA_PRIORITY). */
int herd__topo_place_numa_priority(const herd__topo *t, int nworkers, int *pu_of_worker, char *err,
                                   size_t errlen);

/* Human-readable description: the tree summary (counts per level), then, when
 * nworkers > 0, one line per worker: PU, OS index, shepherd (domain at
 * shepherd_level). */
void herd__topo_print(const herd__topo *t, FILE *out, herd__level shepherd_level, int nworkers,
                      const int *pu_of_worker, herd__bind bind);

/* For topo/'s own files: write a sentence into err (when the caller gave
 * room) and return code, so that error paths read `return
 * herd__topo_fail(...)`. */
int herd__topo_fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
