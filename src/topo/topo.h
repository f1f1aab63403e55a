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
    HERD__BIND_NONE = 1, /* leave threads to the OS scheduler */
    HERD__BIND_COMPACT,  /* worker i on the i-th PU in tree order */
    HERD__BIND_SCATTER,  /* spread round robin over packages, then cores */
} herd__bind;

typedef struct herd__topo {
    int npus;      /* PUs in the model (the process cpuset for a real machine) */
    int synthetic; /* 1 when HERD_TOPOLOGY gave the machine: threads are never pinned */
    char source[256]; /* "this machine", "synthetic: <desc>" or "xml: <path>" */
    int *os_index; /* [npus] OS index of each PU in tree order (for binding) */
    /* domain[l][pu]: index of the domain at level l (1..HERD__NLEVELS) that
     * holds the PU, numbered 0.. in tree order; a level the machine lacks
     * repeats its parent's domains. ndomains[l] counts them. */
    int *domain[HERD__NLEVELS + 1];
    int ndomains[HERD__NLEVELS + 1];
    void *hw; /* hwloc_topology_t, owned */
} herd__topo;

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

/* PU (tree-order index) for each of nworkers workers under policy bind.
 * More workers than PUs wrap around. Returns 0 or HERD_EINVAL with err. */
int herd__topo_place(const herd__topo *t, herd__bind bind, int nworkers, int *pu_of_worker,
                     char *err, size_t errlen);

/* Pin the calling thread to PU pu (tree order). No-op returning 0 for a
 * synthetic topology. Returns 0 or HERD_ESYS with err. */
int herd__topo_bind_self(const herd__topo *t, int pu, char *err, size_t errlen);

/* Human-readable description: the tree summary (counts per level), then, when
 * nworkers > 0, one line per worker: PU, OS index, shepherd (domain at
 * shepherd_level). */
void herd__topo_print(const herd__topo *t, FILE *out, herd__level shepherd_level,
                      int nworkers, const int *pu_of_worker, herd__bind bind);

#endif
