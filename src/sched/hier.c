/* `hier`: hierarchical work stealing over nested groups (paper 004 §2.2,
 * Figure 2). The groups are the topology's domains: the workers on the
 * same PU, core, L2, L3, NUMA node, package, machine (levels that do not
 * split the workers any further are skipped). An idle worker first visits
 * the other members of its innermost group, then the rest of each enclosing
 * group in turn. Within a group the visit starts at the member that sits
 * where the thief sits in its own subgroup, one subgroup on (Figure 2's
 * `(MyID + GroupSize[Level-1]) % GroupSize[Level]`), and wraps around: so
 * thieves of different subgroups start at different victims and the
 * accesses to a group's queues spread evenly. */
#include "sched/victims.h"

#include <stdlib.h>
#include <string.h>

/* The workers that share worker i's domain at level l, ascending; returns
 * their number and sets *pos to i's place among them. */
static int group_of(const herd__rt *rt, int l, int i, int *members, int *pos) {
    const int *dom = rt->topo.domain[l];
    int mine = dom[rt->pu_of_worker[i]], m = 0;
    for (int v = 0; v < rt->nworkers; v++) {
        if (dom[rt->pu_of_worker[v]] != mine)
            continue;
        if (v == i)
            *pos = m;
        members[m++] = v;
    }
    return m;
}

/* Append worker i's visiting order; members and visited are scratch of
 * nworkers entries. Groups are taken smallest first: the levels of the
 * tree nest (PU in core in L3 in package), but a NUMA node may hold
 * several packages or sit inside one, so level order alone is not size
 * order. Equal sizes are the same group (nested sets). */
static void visit_order(herd__rt *rt, int i, int *members, char *visited) {
    herd__worker *w = &rt->workers[i];
    int size[HERD__NLEVELS + 1], pos = 0;
    for (int l = HERD__LVL_MACHINE; l <= HERD__LVL_PU; l++)
        size[l] = group_of(rt, l, i, members, &pos);
    memset(visited, 0, (size_t)rt->nworkers);
    visited[i] = 1;
    int prev = 0;
    for (;;) {
        int next = 0; /* the innermost level of the smallest size above prev */
        for (int l = HERD__LVL_PU; l >= HERD__LVL_MACHINE; l--)
            if (size[l] > prev && (!next || size[l] < size[next]))
                next = l;
        if (!next)
            break;
        int m = group_of(rt, next, i, members, &pos);
        int start = prev ? (pos + prev) % m : pos;
        for (int k = 0; k < m; k++) {
            int v = members[(start + k) % m];
            if (!visited[v]) {
                visited[v] = 1;
                herd__victims_add(w, v);
            }
        }
        herd__victims_close(w);
        prev = m;
    }
}

static int hier_init(herd__rt *rt) {
    int n = rt->nworkers;
    int *members = malloc((size_t)n * sizeof(int));
    char *visited = malloc((size_t)n);
    int rc = members && visited ? 0 : HERD_ENOMEM;
    for (int i = 0; i < n && rc == 0; i++) {
        rc = herd__victims_alloc(&rt->workers[i], n - 1);
        if (rc == 0)
            visit_order(rt, i, members, visited);
    }
    free(members);
    free(visited);
    return rc;
}

static int hier_steal(herd__worker *w, herd__work *out) { return herd__steal_in_order(w, 0, out); }

const herd__sched_ops herd__sched_hier = {
    .name = "hier",
    .flags = HERD__SCHED_DEQUE | HERD__SCHED_STEALS,
    .init = hier_init,
    .fini = herd__sched_no_fini,
    .steal = hier_steal,
    .describe_victims = herd__victims_describe,
};
