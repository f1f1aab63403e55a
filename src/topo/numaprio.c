/* Core priorities and the numa-priority placement (paper 002, section IV).
 *
 * The paper ranks the cores of a NUMA machine before any thread starts, puts
 * the master thread on the best one and every further thread as close to the
 * master as possible. A core's priority has three terms:
 *
 *   P0  the "first priority level": cores of the socket whose NUMA node has
 *       the most cores rank highest, dropping with fewer cores per node, and
 *       all equal when every node has the same number. Here P0 is the number
 *       of PUs in the PU's NUMA domain: it has exactly those properties, and
 *       it is on the scale of the hop-0 term of V1, which it reinforces.
 *   V1  sum_i alpha_i * N_i, N_i = the PUs at i hops (the PU itself excluded).
 *   V2  sum_i alpha_i * sum_j P_ij, P_ij = P0 + V1 of the j-th PU at i hops:
 *       the "old priority" of Figure 4, line 25 (so V2 rewards being close to
 *       PUs that are themselves well placed).
 *
 * Hops. The paper counts NUMA hops. When hwloc has a NUMA latency matrix that
 * covers the node of every PU (Linux reports the firmware's SLIT as
 * "NUMALatency"; an XML file may carry one), the distinct values that occur
 * between two PUs of the model, ranked, are the hop classes: class 0 is the
 * smallest (normally the local node), class 1 the next, and so on. Without
 * such a matrix (one-node machines, synthetic descriptions) the classes are
 * the ranked values of herd__topo_distance(): same core, same cache, same
 * node, same package, other package. Classes past HERD__PRIO_MAXHOPS share the
 * last one, which keeps the arithmetic below in range (real SLIT tables have
 * far fewer distinct values).
 *
 * Weights. alpha_i = 2^(H-1-i) for H classes: integers, so priorities are
 * exact and the same on every run; strictly decreasing as the paper requires
 * (alpha_H, past the last class, is 0); and halving per hop mirrors the usual
 * SLIT ratio, where a remote node costs about twice the local one (10 vs 20),
 * so a PU one hop farther counts half. Rejected: 1/(i+1) (doubles: printed
 * and compared with rounding), and npus^(H-1-i), which would compare the N_i
 * lexicographically but overflows 64 bits on large machines.
 *
 * Range. P0 <= n and V1 < 2^(H-1) * n, so P0 + V1 <= 2^(H-1) * n + n, and
 * V2 < 2^(H-1) * n * (P0 + V1) < 2^62 for n <= 2^16 PUs and H <= 16; larger
 * machines are refused with a message rather than overflowing.
 *
 * Placement. Worker 0 plays the paper's master: it goes on the PU of highest
 * priority. Every further worker goes on the free PU nearest to worker 0's
 * (smallest hop class), ties to the higher priority, then to the lower PU
 * index. The paper breaks ties at random; lowest index keeps `herd topo`, the
 * tests and repeated runs identical. The thread that called herd_start() is
 * never pinned: it is the user's, and it only waits in herd_run(). More
 * workers than PUs wrap around, as in every policy.
 *
 * Rejected: refining "nearest" inside a hop class by herd__topo_distance (on
 * a SLIT machine all PUs of one node share a class and a priority, so the
 * lowest index already keeps the SMT siblings and the caches together), and
 * "nearest to the workers placed so far" instead of to worker 0's PU (the
 * paper measures every placement from the master's core, and one fixed
 * reference keeps the order a plain sort). */
#include "topo/topo.h"

#include "herd/herd.h"

#include <hwloc.h>

#include <stdlib.h>
#include <string.h>

#define PRIO_MAX_PUS 65536 /* see "Range" above */

static int cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* Sort vals[0..n), drop duplicates, fill pr->hop_value and pr->nhops. */
static void rank_values(herd__prio *pr, long long *vals, int n) {
    qsort(vals, (size_t)n, sizeof *vals, cmp_ll);
    pr->nhops = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && vals[i] == vals[i - 1])
            continue;
        if (pr->nhops == HERD__PRIO_MAXHOPS)
            break; /* farther values join the last class (class_of) */
        pr->hop_value[pr->nhops++] = vals[i];
    }
}

/* The class of distance v: the last class whose value is <= v. */
static int class_of(const herd__prio *pr, long long v) {
    int c = 0;
    while (c + 1 < pr->nhops && pr->hop_value[c + 1] <= v)
        c++;
    return c;
}

/* ------------------------------------------------------------- hops */

/* Hops from hwloc's NUMA latency matrix. Returns 1 when used, 0 when the
 * topology has no matrix covering every PU's node (pr->hops_from says why),
 * or HERD_ENOMEM. */
static int hops_from_matrix(const herd__topo *t, herd__prio *pr, char *err, size_t errlen) {
    hwloc_topology_t hw = t->hw;
    struct hwloc_distances_s *d = NULL;
    unsigned nr = 1;
    if (hw == NULL ||
        hwloc_distances_get_by_type(hw, HWLOC_OBJ_NUMANODE, &nr, &d,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 ||
        nr == 0 || d == NULL) {
        snprintf(pr->hops_from, sizeof pr->hops_from,
                 "herd's tree distance (the topology has no NUMA latency matrix)");
        return 0;
    }
    int rc = 1;
    int nrows = (int)d->nbobjs;
    pr->row = malloc((size_t)t->npus * sizeof *pr->row);
    pr->row_hop = malloc((size_t)nrows * (size_t)nrows);
    int *count = calloc((size_t)nrows, sizeof *count);
    long long *vals = malloc((size_t)nrows * (size_t)nrows * sizeof *vals);
    if (pr->row == NULL || pr->row_hop == NULL || count == NULL || vals == NULL) {
        rc = herd__topo_fail(err, errlen, HERD_ENOMEM, "no memory for a %d-node distance matrix",
                             nrows);
        goto out;
    }
    for (int p = 0; p < t->npus && rc == 1; p++) {
        hwloc_obj_t node = herd__topo_numa_obj(t, p);
        pr->row[p] = node != NULL ? hwloc_distances_obj_index(d, node) : -1;
        if (pr->row[p] < 0) {
            snprintf(pr->hops_from, sizeof pr->hops_from,
                     "herd's tree distance (the NUMA latency matrix lacks the node of PU %d)", p);
            rc = 0;
        } else {
            count[pr->row[p]]++;
        }
    }
    if (rc != 1)
        goto out;
    /* The values that occur between two distinct PUs: d[r][s] for two
     * populated nodes, d[r][r] only when node r holds two PUs or more. */
    int n = 0;
    for (int r = 0; r < nrows; r++)
        for (int s = 0; s < nrows; s++)
            if (count[r] > 0 && count[s] > 0 && (r != s || count[r] > 1))
                vals[n++] = (long long)d->values[r * nrows + s];
    if (n == 0) /* a single PU: no pair at all */
        vals[n++] = (long long)d->values[0];
    rank_values(pr, vals, n);
    for (int r = 0; r < nrows; r++)
        for (int s = 0; s < nrows; s++)
            pr->row_hop[r * nrows + s] =
                (signed char)class_of(pr, (long long)d->values[r * nrows + s]);
    pr->nrows = nrows;
    pr->numa_matrix = 1;
    const char *name = hwloc_distances_get_name(hw, d);
    snprintf(pr->hops_from, sizeof pr->hops_from, "hwloc's NUMA latency matrix \"%s\" (%s)",
             name != NULL ? name : "unnamed",
             d->kind & HWLOC_DISTANCES_KIND_FROM_OS ? "from the OS" : "given by the user");
out:
    free(count);
    free(vals);
    if (rc != 1) {
        free(pr->row);
        free(pr->row_hop);
        pr->row = NULL;
        pr->row_hop = NULL;
    }
    hwloc_distances_release(hw, d);
    return rc;
}

/* Hops from herd__topo_distance(): its values (1..HERD__NLEVELS) that occur
 * between two distinct PUs, ranked. */
static void hops_from_tree(const herd__topo *t, herd__prio *pr) {
    int seen[HERD__NLEVELS + 1] = {0};
    for (int a = 0; a < t->npus; a++)
        for (int b = a + 1; b < t->npus; b++)
            seen[herd__topo_distance(t, a, b)] = 1;
    long long vals[HERD__NLEVELS + 1];
    int n = 0;
    for (int v = 1; v <= HERD__NLEVELS; v++)
        if (seen[v])
            vals[n++] = v;
    if (n == 0) /* a single PU */
        vals[n++] = 1;
    rank_values(pr, vals, n);
    for (int v = 0; v <= HERD__NLEVELS; v++)
        pr->dist_hop[v] = (signed char)class_of(pr, v);
}

int herd__prio_hop(const herd__prio *pr, const herd__topo *t, int a, int b) {
    if (a == b)
        return -1;
    if (pr->numa_matrix)
        return pr->row_hop[pr->row[a] * pr->nrows + pr->row[b]];
    return pr->dist_hop[herd__topo_distance(t, a, b)];
}

/* ------------------------------------------------------- priorities */

static void free_arrays(herd__prio *pr) {
    free(pr->p0);
    free(pr->v1);
    free(pr->v2);
    free(pr->prio);
    free(pr->row);
    free(pr->row_hop);
}

void herd__prio_free(herd__prio *pr) {
    free_arrays(pr);
    memset(pr, 0, sizeof *pr);
}

/* P0: the PUs of each PU's NUMA domain. */
static void first_level(const herd__topo *t, herd__prio *pr) {
    const int *numa = t->domain[HERD__LVL_NUMA];
    /* Domains are numbered in PU order, so each one is a run of PUs. */
    for (int p = 0; p < t->npus;) {
        int q = p;
        while (q < t->npus && numa[q] == numa[p])
            q++;
        for (int i = p; i < q; i++)
            pr->p0[i] = q - p;
        p = q;
    }
}

/* V1 and V2 (Figure 4): two passes over every pair, the second reading the
 * P0 + V1 of the first. */
static void hop_terms(const herd__topo *t, herd__prio *pr) {
    for (int p = 0; p < t->npus; p++) {
        long long v1 = 0;
        for (int q = 0; q < t->npus; q++)
            if (q != p)
                v1 += pr->alpha[herd__prio_hop(pr, t, p, q)];
        pr->v1[p] = v1;
    }
    for (int p = 0; p < t->npus; p++) {
        long long v2 = 0;
        for (int q = 0; q < t->npus; q++)
            if (q != p)
                v2 += pr->alpha[herd__prio_hop(pr, t, p, q)] * (pr->p0[q] + pr->v1[q]);
        pr->v2[p] = v2;
        pr->prio[p] = pr->p0[p] + pr->v1[p] + v2;
    }
}

int herd__prio_compute(const herd__topo *t, herd__prio *pr, char *err, size_t errlen) {
    memset(pr, 0, sizeof *pr);
    if (t->npus < 1 || t->npus > PRIO_MAX_PUS)
        return herd__topo_fail(err, errlen, HERD_EINVAL,
                               "numa-priority ranks 1 to %d PUs; this machine has %d", PRIO_MAX_PUS,
                               t->npus);
    size_t n = (size_t)t->npus;
    pr->npus = t->npus;
    pr->p0 = calloc(n, sizeof *pr->p0);
    pr->v1 = calloc(n, sizeof *pr->v1);
    pr->v2 = calloc(n, sizeof *pr->v2);
    pr->prio = calloc(n, sizeof *pr->prio);
    if (pr->p0 == NULL || pr->v1 == NULL || pr->v2 == NULL || pr->prio == NULL) {
        herd__prio_free(pr);
        return herd__topo_fail(err, errlen, HERD_ENOMEM, "no memory to rank %d PUs", t->npus);
    }
    int rc = hops_from_matrix(t, pr, err, errlen);
    if (rc < 0) {
        herd__prio_free(pr);
        return rc;
    }
    if (rc == 0)
        hops_from_tree(t, pr);
    for (int i = 0; i < pr->nhops; i++)
        pr->alpha[i] = 1LL << (pr->nhops - 1 - i);
    first_level(t, pr);
    hop_terms(t, pr);
    return 0;
}

int herd__prio_master(const herd__prio *pr) {
    int best = 0;
    for (int p = 1; p < pr->npus; p++)
        if (pr->prio[p] > pr->prio[best])
            best = p;
    return best;
}

/* -------------------------------------------------------- placement */

typedef struct near_key {
    int hop; /* from the master's PU; -1 for the master itself */
    long long prio;
    int pu;
} near_key;

static int near_cmp(const void *a, const void *b) {
    const near_key *x = a, *y = b;
    if (x->hop != y->hop)
        return x->hop < y->hop ? -1 : 1;
    if (x->prio != y->prio)
        return x->prio > y->prio ? -1 : 1; /* higher priority first */
    return x->pu < y->pu ? -1 : x->pu > y->pu;
}

int herd__topo_place_numa_priority(const herd__topo *t, int nworkers, int *pu_of_worker, char *err,
                                   size_t errlen) {
    herd__prio pr;
    int rc = herd__prio_compute(t, &pr, err, errlen);
    if (rc != 0)
        return rc;
    near_key *k = malloc((size_t)t->npus * sizeof *k);
    if (k == NULL) {
        herd__prio_free(&pr);
        return herd__topo_fail(err, errlen, HERD_ENOMEM, "no memory to place %d workers", nworkers);
    }
    int master = herd__prio_master(&pr);
    for (int p = 0; p < t->npus; p++)
        k[p] = (near_key){herd__prio_hop(&pr, t, master, p), pr.prio[p], p};
    qsort(k, (size_t)t->npus, sizeof *k, near_cmp);
    for (int i = 0; i < nworkers; i++)
        pu_of_worker[i] = k[i % t->npus].pu;
    free(k);
    herd__prio_free(&pr);
    return 0;
}

/* --------------------------------------------------------- printing */

void herd__prio_print(const herd__topo *t, FILE *out) {
    herd__prio pr;
    char err[256];
    if (herd__prio_compute(t, &pr, err, sizeof err) != 0) {
        fprintf(out, "priorities: not computed: %s\n", err);
        return;
    }
    fprintf(out, "priorities (numa-priority, paper 002 section IV): P0 + V1 + V2\n");
    fprintf(out, "  hops from: %s\n  hop classes:", pr.hops_from);
    for (int i = 0; i < pr.nhops; i++)
        fprintf(out, "%s hop %d = distance %s%lld", i > 0 ? "," : "", i,
                i == HERD__PRIO_MAXHOPS - 1 ? ">=" : "", pr.hop_value[i]);
    fprintf(out, "\n  weights: alpha_i = 2^(H-1-i), H = %d:", pr.nhops);
    for (int i = 0; i < pr.nhops; i++)
        fprintf(out, " %lld", pr.alpha[i]);
    fprintf(out, "\n  P0 = PUs of the PU's NUMA node; V1 = sum of alpha_i * (PUs at i hops);\n"
                 "  V2 = sum of alpha_i * (P0 + V1 of each PU at i hops)\n");
    fprintf(out, "%6s %6s %5s %8s %10s %14s %14s\n", "pu", "os", "numa", "P0", "V1", "V2",
            "priority");
    for (int p = 0; p < t->npus; p++)
        fprintf(out, "%6d %6d %5d %8lld %10lld %14lld %14lld\n", p, t->os_index[p],
                t->domain[HERD__LVL_NUMA][p], pr.p0[p], pr.v1[p], pr.v2[p], pr.prio[p]);
    fprintf(out, "master: worker 0 on PU %d (highest priority; ties go to the lowest PU)\n",
            herd__prio_master(&pr));
    herd__prio_free(&pr);
}
