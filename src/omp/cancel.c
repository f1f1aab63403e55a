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
 * - cancel taskgroup stops the program (not implemented: a task does not
 *   know the taskgroup it was created in). */
#include "omp/omp.h"

enum { CANCEL_PARALLEL = 1, CANCEL_LOOP = 2, CANCEL_SECTIONS = 4, CANCEL_TASKGROUP = 8 };

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
    case CANCEL_PARALLEL:
        return team_cancelled(t->team);
    default:
        return false; /* taskgroup: never cancelled (GOMP_cancel stops first) */
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
    default:
        herd__omp_unsupported("cancel taskgroup (with OMP_CANCELLATION=true)",
                              __builtin_return_address(0));
    }
}
