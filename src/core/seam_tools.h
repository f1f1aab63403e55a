/* What the herd command (src/tools/) may use of core, and nothing else:
 * the settings (core/config.h), and for `herd topo` what herd_start would
 * build (topology, placement, shepherds, scheduler) without starting any
 * worker, read through a plan. The runtime itself stays opaque. */
#ifndef HERD_CORE_SEAM_TOOLS_H
#define HERD_CORE_SEAM_TOOLS_H

#include "core/config.h"
#include "sched/sched.h" /* herd__shepherd */
#include "topo/topo.h"

#include <stddef.h>

struct herd__rt;
struct herd__reg;

/* A built, unstarted runtime as `herd topo` shows it; valid until
 * herd__plan_free. */
typedef struct herd__plan {
    const herd__settings *set;
    const herd__topo *topo;
    int nworkers;
    const int *pu_of_worker;
    herd__level shepherd_level;
    int nshepherds;
    const herd__shepherd *shepherds;
    const char *sched;     /* the scheduler's name ("auto" resolved) */
    struct herd__reg *reg; /* the machine-wide registry the placement used, or NULL */
} herd__plan;

/* Build it from the environment (core/runtime.c, herd__rt_build): 0 and
 * *out, or an HERD_* error after printing what is wrong (then *out is
 * NULL). */
int herd__plan_build(struct herd__rt **out, herd__plan *plan);
/* One line describing worker's victim order (the scheduler's). */
void herd__plan_victims(const struct herd__rt *rt, int worker, char *buf, size_t len);
void herd__plan_free(struct herd__rt *rt);

#endif
