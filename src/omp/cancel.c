/* Cancellation (docs/design/openmp.md, "Cancellation").
 *
 * With cancel-var false (OMP_CANCELLATION unset or false, the default) a
 * cancel construct and a cancellation point do nothing, as the
 * specification says. With it true:
 * - cancel parallel marks the member's team cancelled; a member that meets
 *   a cancellation point, a barrier (every team barrier is then
 *   herd__omp_cancel_barrier, which a cancel ends) or the end of a
 *   worksharing construct goes to the region's end;
 * - cancel for / sections marks the team's current worksharing construct
 *   cancelled (a team flag: GCC runs static loops without calling the
 *   runtime; a barrier's completion resets it, as every member has left
 *   the construct then); the members' cancellation points answer true, a
 *   cancelled sections construct hands out no more sections, and its end
 *   waits for the members as usual;
 * - cancel taskgroup marks the encountering task's current taskgroup
 *   cancelled (omp_task.tg_cur: its innermost open taskgroup, else the one
 *   its creator was in when it created it; a worksharing construct's
 *   reduction taskgroup is passed by for the one outside it, as libgomp
 *   does); the task goes to its end. A task of that taskgroup that has not
 *   started is discarded: one created after the cancel is not created
 *   (task.c, task_general; a taskloop creates no more), one queued before
 *   is not run when taken (task_entry, depend.c's task_body); detached
 *   tasks run all the same (they complete with their event). Tasks that
 *   have started run to their end or to a cancellation point taskgroup,
 *   which answers true.
 *   tg_cur is kept only when cancel-var is true, so that the common task
 *   path stays as it is: GOMP_task's fast path tests tg_cur == NULL. */
#include "omp/omp.h"

enum { CANCEL_PARALLEL = 1, CANCEL_LOOP = 2, CANCEL_SECTIONS = 4, CANCEL_TASKGROUP = 8 };

/* The taskgroup a cancel taskgroup of tg's tasks cancels. */
static omp_taskgroup *cancel_target(omp_taskgroup *tg) {
    return tg->workshare && tg->outer ? tg->outer : tg;
}

bool herd__omp_tg_cancelled(const omp_taskgroup *tg) {
    /* ORDER: acquire; pairs with the release store in GOMP_cancel: what the
     * canceller wrote before it (the result it found) is visible to the
     * tasks that see the cancel. */
    return tg && atomic_load_explicit(&cancel_target((omp_taskgroup *)tg)->cancelled,
                                      memory_order_acquire);
}

bool herd__omp_task_discarded(void) {
    return herd__omp_tg_cancelled(herd__omp_task()->tg_cur);
}

static int team_cancelled(const omp_team *team) {
    /* ORDER: acquire; pairs with the release store in GOMP_cancel: the
     * canceller's writes before it are visible to whoever leaves. */
    return team && atomic_load_explicit(&((omp_team *)team)->cancelled, memory_order_acquire);
}

bool herd__omp_cancel_barrier(omp_task *t) {
    omp_team *team = t->team;
    if (!team || team->nthreads == 1) {
        if (team) /* ORDER: relaxed; this member alone uses it */
            atomic_store_explicit(&team->ws_cancelled, 0, memory_order_relaxed);
        return team_cancelled(team);
    }
    /* ORDER: acquire; pairs with the last arriver's release store of the
     * next generation: the members' writes before the barrier are visible. */
    long gen = atomic_load_explicit(&team->cbar_gen, memory_order_acquire);
    if (team_cancelled(team))
        return true;
    /* ORDER: acq_rel; the arrivals form a release sequence that the last
     * one reads, then publishes with the generation. */
    if (atomic_fetch_add_explicit(&team->cbar_count, 1, memory_order_acq_rel) + 1 ==
        team->nthreads) {
        atomic_store_explicit(&team->cbar_count, 0, memory_order_relaxed);
        /* every member has left the worksharing construct, if any */
        atomic_store_explicit(&team->ws_cancelled, 0, memory_order_relaxed);
        /* ORDER: release; pairs with the acquire loads of the generation. */
        atomic_store_explicit(&team->cbar_gen, gen + 1, memory_order_release);
        return team_cancelled(team);
    }
    OMP_SAVE();
    /* ORDER: acquire, as above. A cancelled region's members leave at once;
     * its barrier is not used again (they all go to the region's end). */
    while (atomic_load_explicit(&team->cbar_gen, memory_order_acquire) == gen) {
        if (team_cancelled(team)) {
            OMP_RESTORE();
            return true;
        }
        herd__omp_relax();
    }
    OMP_RESTORE();
    return team_cancelled(team);
}

OMP_API bool GOMP_cancellation_point(int which) {
    if (!herd__omp_g.cancellation)
        return false;
    omp_task *t = herd__omp_task();
    switch (which) {
    case CANCEL_LOOP:
    case CANCEL_SECTIONS:
        /* ORDER: acquire; pairs with the release store in GOMP_cancel. */
        if (t->team && atomic_load_explicit(&t->team->ws_cancelled, memory_order_acquire))
            return true;
        return team_cancelled(t->team);
    case CANCEL_TASKGROUP:
        /* a cancelled region's tasks end too, as libgomp's do */
        return herd__omp_tg_cancelled(t->tg_cur) || team_cancelled(t->team);
    default:
        return team_cancelled(t->team);
    }
}

OMP_API bool GOMP_cancel(int which, bool do_cancel) {
    if (!herd__omp_g.cancellation)
        return false;
    if (!do_cancel) /* an if clause that is false: a cancellation point */
        return GOMP_cancellation_point(which);
    omp_task *t = herd__omp_task();
    switch (which) {
    case CANCEL_PARALLEL:
        if (t->team) /* ORDER: release; pairs with the acquire loads above */
            atomic_store_explicit(&t->team->cancelled, 1, memory_order_release);
        return true; /* outside a region: a team of one, which goes to its end */
    case CANCEL_LOOP:
    case CANCEL_SECTIONS:
        if (t->team) /* ORDER: release; pairs with GOMP_cancellation_point */
            atomic_store_explicit(&t->team->ws_cancelled, 1, memory_order_release);
        return true;
    case CANCEL_TASKGROUP:
        if (t->tg_cur) /* ORDER: release; pairs with herd__omp_tg_cancelled */
            atomic_store_explicit(&cancel_target(t->tg_cur)->cancelled, 1, memory_order_release);
        return true; /* in no taskgroup: the task alone, which goes to its end */
    default:
        herd__omp_fatal("cancel of construct kind %d, unknown to herd", which);
    }
}
