/* Detachable tasks (task detach(event), omp_fulfill_event): docs/design/
 * openmp.md, "Detach".
 *
 * A detached task completes when its body (with its children) has ended
 * and its event has been fulfilled, in either order; until then it is not
 * complete for taskwait, taskgroups, barriers and its dependent tasks. Here
 * the task itself waits for the event after its body, so herd's own
 * completion (and the dependence node's) simply comes later: on a worker it
 * yields the worker to other tasks between looks (omp_fulfill_event may come
 * from any thread, a worker or not, and herd's ULT-aware waits need the
 * waker to be a herd task), outside herd it sleeps on a futex.
 *
 * The event record is shared by the task and the fulfiller: two
 * references, the last to drop frees it. */
#include "omp/omp.h"

#include <limits.h>
#include <stdlib.h>

struct omp_event {
    _Atomic uint32_t fulfilled;
    _Atomic int refs;
};

omp_event *herd__omp_event_new(void) {
    omp_event *e = malloc(sizeof *e);
    if (!e)
        herd__omp_fatal("out of memory for a task's detach event");
    atomic_init(&e->fulfilled, 0);
    atomic_init(&e->refs, 2);
    return e;
}

static void drop(omp_event *e) {
    /* ORDER: acq_rel; the last one to drop sees the other's accesses done. */
    if (atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1)
        free(e);
}

void herd__omp_event_wait(omp_event *e) {
    /* ORDER: acquire; pairs with the release exchange in omp_fulfill_event:
     * what the fulfiller did before is visible to whoever waits for this
     * task's completion. */
    if (herd__self()) {
        while (!atomic_load_explicit(&e->fulfilled, memory_order_acquire))
            herd__omp_relax();
    } else {
        herd__omp_guest_sleeps(1);
        while (!atomic_load_explicit(&e->fulfilled, memory_order_acquire))
            herd__futex_wait(&e->fulfilled, 0);
        herd__omp_guest_sleeps(0);
    }
    drop(e);
}

/* omp_event_handle_t is an integer as wide as a pointer (GCC's omp.h). */
OMP_API void omp_fulfill_event(uintptr_t event) {
    omp_event *e = (omp_event *)event;
    if (!e)
        herd__omp_fatal("omp_fulfill_event: not an event of a detached task (0)");
    /* ORDER: release; pairs with the acquire loads in herd__omp_event_wait. */
    if (atomic_exchange_explicit(&e->fulfilled, 1, memory_order_release))
        herd__omp_fatal("omp_fulfill_event: the event %p was already fulfilled", (void *)e);
    herd__futex_wake(&e->fulfilled, INT_MAX);
    drop(e);
}

/* The same routines under the LLVM ABI's version (kmp/, omp.h). */
OMP_LLVM_ALIAS(omp_fulfill_event, "OMP_5.0.1");
