/* Topology model built from hwloc.
 *
 * The rest of herd never calls hwloc: it reads the flat arrays filled here.
 * herd__topo_load() asks hwloc for the machine (the real one restricted to the
 * process's CPU binding, a synthetic description, or an XML file) and turns its
 * tree into seven fixed levels, machine > package > NUMA > L3 > L2 > core > PU.
 *
 * Why fixed levels and not hwloc's tree: schedulers and mappers want to ask
 * "which L3 holds this PU" in O(1), and a level missing from a machine must
 * still answer. A domain at level l is the intersection of the PU's hwloc
 * object at l with the PU's domain at l-1, so the levels always nest even when
 * hwloc orders them differently (a NUMA node spanning two packages becomes two
 * NUMA domains; a missing L3 yields the NUMA domains again). Rejected: keeping
 * hwloc depths (they vary per machine, so every reader would need a lookup),
 * and a pointer tree (readers want arrays indexed by PU).
 *
 * docs/design/topology.md defines distance and the placement policies. */
#include "topo/topo.h"

#include "herd/herd.h"

#include <hwloc.h>

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define ACCEPTED_FORMS                                                                             \
    "accepted: an hwloc synthetic description, outermost level first and ending with pu (e.g. "    \
    "\"pack:2 core:4 pu:2\", \"pack:4 l3:1 core:8 pu:1\"), or the path of an hwloc XML file (an "  \
    "existing file or a name ending in .xml)"

static const char *const level_names[HERD__NLEVELS + 1] = {
    [HERD__LVL_MACHINE] = "machine", [HERD__LVL_PACKAGE] = "package", [HERD__LVL_NUMA] = "numa",
    [HERD__LVL_L3] = "l3",           [HERD__LVL_L2] = "l2",           [HERD__LVL_CORE] = "core",
    [HERD__LVL_PU] = "pu",
};

/* The hwloc type of each level, used to report how many objects hwloc saw. */
static const hwloc_obj_type_t level_types[HERD__NLEVELS + 1] = {
    [HERD__LVL_MACHINE] = HWLOC_OBJ_MACHINE, [HERD__LVL_PACKAGE] = HWLOC_OBJ_PACKAGE,
    [HERD__LVL_NUMA] = HWLOC_OBJ_NUMANODE,   [HERD__LVL_L3] = HWLOC_OBJ_L3CACHE,
    [HERD__LVL_L2] = HWLOC_OBJ_L2CACHE,      [HERD__LVL_CORE] = HWLOC_OBJ_CORE,
    [HERD__LVL_PU] = HWLOC_OBJ_PU,
};

int herd__topo_fail(char *err, size_t errlen, int code, const char *fmt, ...) {
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

herd__level herd__topo_level_parse(const char *name) {
    if (name == NULL)
        return 0;
    for (int l = HERD__LVL_MACHINE; l <= HERD__LVL_PU; l++)
        if (strcasecmp(name, level_names[l]) == 0)
            return (herd__level)l;
    return 0;
}

const char *herd__topo_level_name(herd__level l) {
    if (l < HERD__LVL_MACHINE || l > HERD__LVL_PU)
        return "?";
    return level_names[l];
}

const char *herd__bind_name(herd__bind b) {
    switch (b) {
    case HERD__BIND_NONE:
        return "none";
    case HERD__BIND_COMPACT:
        return "compact";
    case HERD__BIND_SCATTER:
        return "scatter";
    case HERD__BIND_NUMA_PRIORITY:
        return "numa-priority";
    case HERD__BIND_STATIC:
        return "static";
    case HERD__BIND_BLL:
        return "bll";
    case HERD__BIND_XLL:
        return "xll";
    }
    return "?";
}

/* ------------------------------------------------------------- loading */

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int is_xml_spec(const char *spec) {
    struct stat st;
    return ends_with(spec, ".xml") || (stat(spec, &st) == 0 && S_ISREG(st.st_mode));
}

static int use_real_machine(herd__topo *t, hwloc_topology_t hw, char *err, size_t errlen) {
    /* hwloc already drops PUs outside the process's cgroup (the "allowed"
     * set). RESTRICT_TO_CPUBINDING also drops PUs outside the affinity mask,
     * so `taskset -c 0-3 prog` gets four workers, as HERD_WORKERS documents. */
    unsigned long flags =
        HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM | HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING;
    if (hwloc_topology_set_flags(hw, flags) != 0)
        return herd__topo_fail(err, errlen, HERD_ESYS, "hwloc refused the topology flags: %s",
                               strerror(errno));
    snprintf(t->source, sizeof t->source, "this machine");
    return 0;
}

static int use_xml(herd__topo *t, hwloc_topology_t hw, const char *spec, char *err, size_t errlen) {
    struct stat st;
    if (stat(spec, &st) != 0)
        return herd__topo_fail(err, errlen, HERD_EINVAL,
                               "topology \"%s\": no such XML file (%s); %s", spec, strerror(errno),
                               ACCEPTED_FORMS);
    if (hwloc_topology_set_xml(hw, spec) != 0)
        return herd__topo_fail(
            err, errlen, HERD_EINVAL,
            "topology \"%s\": the file could not be read as an hwloc XML topology; %s", spec,
            ACCEPTED_FORMS);
    t->synthetic = 1;
    snprintf(t->source, sizeof t->source, "xml: %s", spec);
    return 0;
}

/* The PUs a synthetic description asks for: the product of its arities
 * ("pack:2 core:4 pu:2" -> 16), saturated above the bound. A level is
 * "type:N" or "N", possibly followed by "(attributes)"; a word of another
 * form counts 1 and is left for hwloc to judge. */
static long long synthetic_pus(const char *spec) {
    long long pus = 1;
    for (const char *p = spec; *p;) {
        p += strspn(p, " \t");
        size_t n = strcspn(p, " \t(");
        const char *colon = memchr(p, ':', n);
        const char *num = colon ? colon + 1 : p;
        size_t digits = strspn(num, "0123456789");
        if (digits > 0 && num + digits == p + n) {
            long long a = digits > 12 ? (long long)1 << 40 : strtoll(num, NULL, 10);
            pus = a > 0 && pus > ((long long)1 << 40) / a ? (long long)1 << 40 : pus * a;
        }
        p += n;
        if (*p == '(') { /* attributes: skip to the closing parenthesis */
            const char *close = strchr(p, ')');
            p = close ? close + 1 : p + strlen(p);
        }
    }
    return pus;
}

static int model_too_large(const char *spec, long long pus, char *err, size_t errlen) {
    return herd__topo_fail(err, errlen, HERD_EINVAL,
                           "topology \"%s\" has %s%lld PUs; a modelled machine may have at most %d "
                           "(herd's bound on workers, one per PU)",
                           spec, pus >= (long long)1 << 40 ? "more than " : "", pus,
                           HERD__TOPO_MODEL_PUS_MAX);
}

static int use_synthetic(herd__topo *t, hwloc_topology_t hw, const char *spec, char *err,
                         size_t errlen) {
    long long pus = synthetic_pus(spec);
    if (pus > HERD__TOPO_MODEL_PUS_MAX)
        return model_too_large(spec, pus, err, errlen);
    if (hwloc_topology_set_synthetic(hw, spec) != 0)
        return herd__topo_fail(
            err, errlen, HERD_EINVAL,
            "topology \"%s\" is neither a valid hwloc synthetic description nor an "
            "existing file; %s",
            spec, ACCEPTED_FORMS);
    t->synthetic = 1;
    snprintf(t->source, sizeof t->source, "synthetic: %s", spec);
    return 0;
}

static int choose_source(herd__topo *t, hwloc_topology_t hw, const char *spec, char *err,
                         size_t errlen) {
    if (spec == NULL || spec[0] == '\0')
        return use_real_machine(t, hw, err, errlen);
    if (is_xml_spec(spec))
        return use_xml(t, hw, spec, err, errlen);
    return use_synthetic(t, hw, spec, err, errlen);
}

/* The NUMA node of a PU. hwloc 2 attaches NUMA nodes beside the tree rather
 * than in it, so look for the first node (in logical order) whose cpuset holds
 * the PU; a PU near several nodes (DDR + HBM) takes the first, normally DDR. */
static hwloc_obj_t numa_of(hwloc_topology_t hw, hwloc_obj_t pu) {
    int n = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_NUMANODE);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t node = hwloc_get_obj_by_type(hw, HWLOC_OBJ_NUMANODE, (unsigned)i);
        if (node->cpuset != NULL && hwloc_bitmap_isset(node->cpuset, pu->os_index))
            return node;
    }
    return NULL;
}

void *herd__topo_numa_obj(const herd__topo *t, int pu) {
    if (t->hw == NULL || pu < 0 || pu >= t->npus)
        return NULL;
    hwloc_topology_t hw = t->hw;
    return numa_of(hw, hwloc_get_obj_by_type(hw, HWLOC_OBJ_PU, (unsigned)pu));
}

/* The hwloc object holding pu at level l, or NULL when the machine lacks it. */
static hwloc_obj_t level_obj(hwloc_topology_t hw, herd__level l, hwloc_obj_t pu) {
    switch (l) {
    case HERD__LVL_MACHINE:
        return hwloc_get_root_obj(hw);
    case HERD__LVL_NUMA:
        return numa_of(hw, pu);
    case HERD__LVL_PU:
        return pu;
    default:
        return hwloc_get_ancestor_obj_by_type(hw, level_types[l], pu);
    }
}

/* Number the domains of level l. A domain is (parent domain, hwloc object):
 * PUs come in tree order, so the PUs of one domain are consecutive and a new
 * domain starts exactly where that pair changes from the previous PU. */
static void number_level(herd__topo *t, hwloc_topology_t hw, herd__level l) {
    hwloc_obj_t prev_obj = NULL;
    int prev_parent = -1, next = 0;
    for (int p = 0; p < t->npus; p++) {
        hwloc_obj_t pu = hwloc_get_obj_by_type(hw, HWLOC_OBJ_PU, (unsigned)p);
        hwloc_obj_t obj = level_obj(hw, l, pu);
        int parent = l == HERD__LVL_MACHINE ? 0 : t->domain[l - 1][p];
        if (p == 0 || obj != prev_obj || parent != prev_parent)
            next++;
        t->domain[l][p] = next - 1;
        prev_obj = obj;
        prev_parent = parent;
    }
    t->ndomains[l] = next;
}

static int build_model(herd__topo *t, hwloc_topology_t hw, char *err, size_t errlen) {
    int n = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PU);
    if (n <= 0)
        return herd__topo_fail(err, errlen, HERD_EINVAL, "topology (%s) has no processing unit",
                               t->source);
    if (t->synthetic && n > HERD__TOPO_MODEL_PUS_MAX) /* an XML file, or a form not counted */
        return model_too_large(t->source, n, err, errlen);
    t->npus = n;
    t->os_index = calloc((size_t)n, sizeof *t->os_index);
    for (int l = HERD__LVL_MACHINE; l <= HERD__LVL_PU; l++)
        t->domain[l] = calloc((size_t)n, sizeof *t->domain[l]);
    int ok = t->os_index != NULL;
    for (int l = HERD__LVL_MACHINE; l <= HERD__LVL_PU; l++)
        ok = ok && t->domain[l] != NULL;
    if (!ok) /* the caller's herd__topo_free() releases what was allocated */
        return herd__topo_fail(err, errlen, HERD_ENOMEM, "no memory for a topology of %d PUs", n);
    for (int p = 0; p < n; p++)
        t->os_index[p] = (int)hwloc_get_obj_by_type(hw, HWLOC_OBJ_PU, (unsigned)p)->os_index;
    for (int l = HERD__LVL_MACHINE; l <= HERD__LVL_PU; l++)
        number_level(t, hw, (herd__level)l);
    return 0;
}

int herd__topo_load(herd__topo *t, const char *spec, char *err, size_t errlen) {
    memset(t, 0, sizeof *t);
    hwloc_topology_t hw;
    if (hwloc_topology_init(&hw) != 0)
        return herd__topo_fail(err, errlen, HERD_ENOMEM, "hwloc could not allocate a topology");
    t->hw = hw;
    int rc = choose_source(t, hw, spec, err, errlen);
    if (rc == 0 && hwloc_topology_load(hw) != 0) {
        rc = t->synthetic ? HERD_EINVAL : HERD_ESYS;
        herd__topo_fail(err, errlen, rc, "hwloc could not load the topology (%s): %s; %s",
                        t->source, strerror(errno), ACCEPTED_FORMS);
    }
    if (rc == 0)
        rc = build_model(t, hw, err, errlen);
    if (rc != 0)
        herd__topo_free(t);
    return rc;
}

void herd__topo_free(herd__topo *t) {
    free(t->os_index);
    for (int l = 0; l <= HERD__NLEVELS; l++)
        free(t->domain[l]);
    if (t->hw != NULL)
        hwloc_topology_destroy((hwloc_topology_t)t->hw);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------ distance */

/* A level counts when it splits the two PUs and is a real level of the
 * machine: it has more domains than the level above it. This skips levels
 * that merely repeat their parent (no L2 on the model: L2 = L3) so that
 * distances do not depend on which cache levels hwloc happens to report.
 * The PU level always counts: two PUs are never closer than 1. */
int herd__topo_distance(const herd__topo *t, int pu_a, int pu_b) {
    if (pu_a < 0 || pu_b < 0 || pu_a >= t->npus || pu_b >= t->npus)
        return -1;
    if (pu_a == pu_b)
        return 0;
    int d = 1;
    for (int l = HERD__LVL_CORE; l > HERD__LVL_MACHINE; l--) {
        if (t->domain[l][pu_a] == t->domain[l][pu_b])
            break;
        if (t->ndomains[l] != t->ndomains[l - 1])
            d++;
    }
    return d;
}

/* ----------------------------------------------------------- placement */

typedef struct scatter_key {
    int pu;
    int pu_rank;   /* rank of the PU inside its core */
    int core_rank; /* rank of the core inside its package */
    int package;
} scatter_key;

static int scatter_cmp(const void *a, const void *b) {
    const scatter_key *x = a, *y = b;
    if (x->pu_rank != y->pu_rank)
        return x->pu_rank < y->pu_rank ? -1 : 1;
    if (x->core_rank != y->core_rank)
        return x->core_rank < y->core_rank ? -1 : 1;
    if (x->package != y->package)
        return x->package < y->package ? -1 : 1;
    return 0;
}

/* Scatter order: the first PU of the first core of each package in turn, then
 * the first PU of the second core of each package, ...; the second PUs of the
 * cores only once every core has one worker. Sorting by (PU rank in core, core
 * rank in package, package) gives exactly that, uneven packages included. */
static int place_scatter(const herd__topo *t, int nworkers, int *pu_of_worker, char *err,
                         size_t errlen) {
    scatter_key *k = malloc((size_t)t->npus * sizeof *k);
    if (k == NULL)
        return herd__topo_fail(err, errlen, HERD_ENOMEM, "no memory to place %d workers", nworkers);
    const int *pkg = t->domain[HERD__LVL_PACKAGE], *core = t->domain[HERD__LVL_CORE];
    int first_core = 0, first_pu = 0;
    for (int p = 0; p < t->npus; p++) {
        if (p == 0 || pkg[p] != pkg[p - 1])
            first_core = core[p];
        if (p == 0 || core[p] != core[p - 1])
            first_pu = p;
        k[p] = (scatter_key){p, p - first_pu, core[p] - first_core, pkg[p]};
    }
    qsort(k, (size_t)t->npus, sizeof *k, scatter_cmp);
    for (int i = 0; i < nworkers; i++)
        pu_of_worker[i] = k[i % t->npus].pu;
    free(k);
    return 0;
}

int herd__topo_place(const herd__topo *t, herd__bind bind, int nworkers, int *pu_of_worker,
                     char *err, size_t errlen) {
    if (nworkers < 1 || pu_of_worker == NULL)
        return herd__topo_fail(err, errlen, HERD_EINVAL,
                               "cannot place %d workers: need at least one", nworkers);
    switch (bind) {
    case HERD__BIND_NONE: /* the model still needs a PU per worker for shepherds */
    case HERD__BIND_COMPACT:
        for (int i = 0; i < nworkers; i++)
            pu_of_worker[i] = i % t->npus;
        return 0;
    case HERD__BIND_SCATTER:
        return place_scatter(t, nworkers, pu_of_worker, err, errlen);
    case HERD__BIND_NUMA_PRIORITY: /* src/topo/numaprio.c */
        return herd__topo_place_numa_priority(t, nworkers, pu_of_worker, err, errlen);
    case HERD__BIND_STATIC:
    case HERD__BIND_BLL:
    case HERD__BIND_XLL:
        /* Chosen by each worker as it starts (src/place/mapper.c), not here. */
        return herd__topo_fail(err, errlen, HERD_EINVAL,
                               "binding policy %s is chosen by the workers themselves (src/place/)",
                               herd__bind_name(bind));
    }
    return herd__topo_fail(
        err, errlen, HERD_EINVAL,
        "unknown binding policy %d; accepted: none, compact, scatter, numa-priority", (int)bind);
}

int herd__topo_bind_self(const herd__topo *t, int pu, char *err, size_t errlen) {
    if (t->synthetic)
        return 0;
    if (pu < 0 || pu >= t->npus)
        return herd__topo_fail(err, errlen, HERD_EINVAL,
                               "cannot pin to PU %d: the machine has PUs 0..%d", pu, t->npus - 1);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set == NULL)
        return herd__topo_fail(err, errlen, HERD_ENOMEM, "no memory for a cpuset");
    hwloc_bitmap_only(set, (unsigned)t->os_index[pu]);
    int rc = hwloc_set_cpubind((hwloc_topology_t)t->hw, set, HWLOC_CPUBIND_THREAD);
    int saved = errno;
    hwloc_bitmap_free(set);
    if (rc != 0)
        return herd__topo_fail(err, errlen, HERD_ESYS,
                               "cannot pin thread to PU %d (OS index %d): %s", pu, t->os_index[pu],
                               strerror(saved));
    return 0;
}

/* Paper 002 section IV keeps each thread's runtime data on its own node.
 * HWLOC_MEMBIND_BIND without STRICT is Linux's MPOL_PREFERRED, and MIGRATE
 * (MPOL_MF_MOVE) moves the pages already touched. */
int herd__topo_membind_near(const herd__topo *t, void *addr, size_t len, int pu, char *err,
                            size_t errlen) {
    hwloc_topology_t hw = t->hw;
    if (t->synthetic || hw == NULL)
        return 1;
    hwloc_obj_t node = herd__topo_numa_obj(t, pu);
    if (node == NULL)
        return herd__topo_fail(err, errlen, HERD_EINVAL, "PU %d has no NUMA node", pu);
    if (hwloc_set_area_membind(hw, addr, len, node->nodeset, HWLOC_MEMBIND_BIND,
                               HWLOC_MEMBIND_MIGRATE | HWLOC_MEMBIND_BYNODESET) != 0)
        return herd__topo_fail(err, errlen, HERD_ESYS, "cannot move %zu bytes to NUMA node %u: %s",
                               len, node->os_index, strerror(errno));
    return 0;
}

/* ------------------------------------------------------------ printing */

static void print_levels(const herd__topo *t, FILE *out) {
    hwloc_topology_t hw = t->hw;
    fprintf(out, "levels (domains in herd's model, outermost first):\n");
    for (int l = HERD__LVL_MACHINE; l <= HERD__LVL_PU; l++) {
        int nobj = hw != NULL ? hwloc_get_nbobjs_by_type(hw, level_types[l]) : -1;
        fprintf(out, "  %-8s %6d", level_names[l], t->ndomains[l]);
        if (nobj == 0)
            fprintf(out, "  (not in the machine: repeats %s)", level_names[l - 1]);
        else if (l > HERD__LVL_MACHINE && t->ndomains[l] == t->ndomains[l - 1])
            fprintf(out, "  (same domains as %s)", level_names[l - 1]);
        if (nobj > 0 && nobj != t->ndomains[l])
            fprintf(out, "  (hwloc reports %d)", nobj);
        fputc('\n', out);
    }
}

static void print_binding(const herd__topo *t, FILE *out, herd__bind bind) {
    const char *effect = "each worker pinned to its PU";
    if (HERD__BIND_MAPPED(bind))
        effect = t->synthetic ? "chosen machine-wide; modelled machine: threads are never pinned"
                              : "each worker chooses and pins its PU as it starts; the placement "
                                "below is what workers starting now would choose";
    else if (t->synthetic)
        effect = "modelled machine: threads are never pinned";
    else if (bind == HERD__BIND_NONE)
        effect = "threads float; the PUs below only order shepherds and victims";
    fprintf(out, "binding: %s (%s)\n", herd__bind_name(bind), effect);
}

static void print_workers(const herd__topo *t, FILE *out, herd__level shep, int nworkers,
                          const int *pu_of_worker) {
    fprintf(out, "workers: %d on %d PUs", nworkers, t->npus);
    if (nworkers > t->npus)
        fprintf(out, " (oversubscribed: placement wraps around)");
    fprintf(out, "\n%6s %6s %6s %9s %8s %5s\n", "worker", "pu", "os", "shepherd", "package",
            "numa");
    for (int w = 0; w < nworkers; w++) {
        int p = pu_of_worker[w];
        fprintf(out, "%6d %6d %6d %9d %8d %5d\n", w, p, t->os_index[p], t->domain[shep][p],
                t->domain[HERD__LVL_PACKAGE][p], t->domain[HERD__LVL_NUMA][p]);
    }
}

void herd__topo_print(const herd__topo *t, FILE *out, herd__level shepherd_level, int nworkers,
                      const int *pu_of_worker, herd__bind bind) {
    fprintf(out, "topology: %s\n", t->source);
    fprintf(out, "PUs: %d\n", t->npus);
    print_levels(t, out);
    if (shepherd_level >= HERD__LVL_MACHINE && shepherd_level <= HERD__LVL_PU)
        fprintf(out, "shepherds: %d (one per %s domain)\n", t->ndomains[shepherd_level],
                level_names[shepherd_level]);
    else
        shepherd_level = HERD__LVL_MACHINE;
    print_binding(t, out, bind);
    if (bind == HERD__BIND_NUMA_PRIORITY)
        herd__prio_print(t, out);
    if (nworkers > 0 && pu_of_worker != NULL)
        print_workers(t, out, shepherd_level, nworkers, pu_of_worker);
}
