/* The scheduler table: every scheduler exports one herd__sched_ops. */
#include "sched/victims.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const herd__sched_ops herd__sched_ws, herd__sched_ws_nearest, herd__sched_numa,
    herd__sched_numa_random, herd__sched_hier, herd__sched_mts, herd__sched_central,
    herd__sched_lifo, herd__sched_fifo;

/* The one list of herd's schedulers: HERD_SCHED's names (with "auto"),
 * `herd --help`, the refusal messages below and the test matrix's check
 * (unit.sched) all come from it. */
static const herd__sched_ops *const schedulers[] = {
    &herd__sched_ws,          &herd__sched_ws_nearest, &herd__sched_numa,
    &herd__sched_numa_random, &herd__sched_hier,       &herd__sched_mts,
    &herd__sched_central,     &herd__sched_lifo,       &herd__sched_fifo,
};
#define NSCHED (sizeof schedulers / sizeof schedulers[0])

int herd__sched_names(const char **out, int max, unsigned need_flags) {
    int n = 0;
    if (!need_flags && n < max)
        out[n++] = "auto";
    for (size_t i = 0; i < NSCHED && n < max; i++)
        if ((schedulers[i]->flags & need_flags) == need_flags)
            out[n++] = schedulers[i]->name;
    return n;
}

void herd__sched_names_joined(char *buf, size_t len, unsigned need_flags) {
    const char *names[HERD__SCHED_MAX];
    int n = herd__sched_names(names, HERD__SCHED_MAX, need_flags);
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && o < len; i++) {
        int w = snprintf(buf + o, len - o, "%s%s", i ? ", " : "", names[i]);
        if (w < 0)
            break;
        o += (size_t)w;
    }
}

/* `auto`: ws when all the workers sit in one domain of the shepherd level
 * (one L3 by default): there is no locality between them for a smarter
 * victim order to keep, and ws's random victims spread the thieves best.
 * Otherwise hier, which keeps ws's spawn path and steals within the
 * innermost shared domain before crossing to the next (paper 004).
 * This rule comes from the design, not from measurements on a multi-socket
 * machine (none was available); docs/reference/environment.md, HERD_SCHED, says so. */
static const char *auto_choice(const herd__rt *rt) {
    const int *dom = rt->topo.domain[rt->set.shepherd];
    for (int i = 1; i < rt->nworkers; i++)
        if (dom[rt->pu_of_worker[i]] != dom[rt->pu_of_worker[0]])
            return "hier";
    return "ws";
}

const herd__sched_ops *herd__sched_find(const char *name, const herd__rt *rt) {
    if (!name || !*name || strcmp(name, "auto") == 0)
        name = rt ? auto_choice(rt) : "ws";
    for (size_t i = 0; i < NSCHED; i++)
        if (strcmp(schedulers[i]->name, name) == 0)
            return schedulers[i];
    return NULL;
}

static void free_records(herd__rt *rt) {
    herd__sched_worker *sw = rt->sched_workers;
    if (!sw)
        return;
    for (int i = 0; i < rt->nworkers; i++) {
        free(sw[i].order);
        free(sw[i].class_end);
        rt->workers[i].sched_self = NULL;
    }
    free(sw);
    rt->sched_workers = NULL;
}

int herd__sched_start(herd__rt *rt) {
    size_t bytes = (size_t)rt->nworkers * sizeof(herd__sched_worker);
    herd__sched_worker *sw = aligned_alloc(64, bytes ? bytes : sizeof *sw);
    if (!sw)
        return HERD_ENOMEM;
    memset(sw, 0, bytes);
    rt->sched_workers = sw;
    for (int i = 0; i < rt->nworkers; i++)
        rt->workers[i].sched_self = &sw[i];
    if (rt->sched->init(rt) != 0) {
        free_records(rt);
        return HERD_ENOMEM;
    }
    rt->sched_ready = 1;
    return 0;
}

void herd__sched_stop(herd__rt *rt) {
    if (rt->sched_ready)
        rt->sched->fini(rt);
    rt->sched_ready = 0;
    free_records(rt);
}

int herd__sched_check(const herd__sched_ops *s, const herd__settings *set) {
    char names[256];
    if (set->spawn == HERD__SPAWN_WORK_FIRST && !(s->flags & HERD__SCHED_WORK_FIRST)) {
        herd__sched_names_joined(names, sizeof names, HERD__SCHED_WORK_FIRST);
        fprintf(stderr,
                "herd: HERD_SPAWN=work-first: not with HERD_SCHED=%s, whose tasks go through "
                "shared queues; work-first needs a scheduler that steals from every worker: "
                "%s\n",
                s->name, names);
        return HERD_EINVAL;
    }
    if (set->steal != HERD__TAKE_DEFAULT && !(s->flags & HERD__SCHED_STEALS)) {
        herd__sched_names_joined(names, sizeof names, HERD__SCHED_STEALS);
        fprintf(stderr,
                "herd: HERD_STEAL: not with HERD_SCHED=%s, which does not steal; HERD_STEAL "
                "applies to: %s\n",
                s->name, names);
        return HERD_EINVAL;
    }
    if (set->spawn == HERD__SPAWN_WORK_FIRST &&
        (set->steal == HERD__TAKE_HALF || set->steal == HERD__TAKE_CHUNK)) {
        fprintf(stderr, "herd: HERD_STEAL: with HERD_SPAWN=work-first a steal takes one "
                        "parent continuation (a suspended task); accepted: one\n");
        return HERD_EINVAL;
    }
    return 0;
}
