/* Task reductions (docs/design/openmp.md, "Task reductions"): taskgroup
 * task_reduction, task in_reduction, taskloop reduction, and parallel
 * reduction(task, ...).
 *
 * GCC describes one construct's reductions in an array of words on the
 * encountering task's stack, and keeps the combining to itself:
 *   d[0] cnt        the reduction items
 *   d[1] size       bytes of one thread's private copies (all items)
 *   d[2] align      on input; on output the base of the copies
 *   d[3] allocator  (-1: malloc)
 *   d[4] next       another array of the same construct, or 0
 *   d[5], d[6]      the runtime's: here d[5] is the registration's thread
 *                   count on its first array (0 on the others), d[6] the
 *                   end of the array's copies
 *   then cnt entries {address of the original item, its offset in a
 *   thread's copies, a word for the runtime (unused here)}.
 * The runtime allocates nthreads zeroed copies of `size` bytes; thread i's
 * are at d[2] + i * d[1]. Tasks reach theirs by omp_get_thread_num() (the
 * taskloop body, the members) or through GOMP_task_reduction_remap (in_
 * reduction tasks); GCC's code initialises a copy on first use (a flag in
 * the copy) and, after the construct's tasks are done, combines
 * omp_get_num_threads() copies into the originals.
 *
 * So a thread number must be one running task's at a time, and below the
 * team's size. In the outermost team it is: a task reports the worker that
 * runs it, tasks are tied, and only the team's workers run its tasks
 * (herd__serve_hold). In other teams (nested, or of one thread inside a
 * worker) a task reports its creator's number and may run on any worker, so
 * a task that sees a registration runs at once there, on its creator's
 * stack (task.c, run_at_once).
 *
 * What a task sees (herd__omp_red_of) is the innermost registration when
 * it was created; registrations chain through the last array's d[4] to the
 * enclosing one. A registration belongs to a taskgroup (omp_taskgroup.red;
 * it ends with it) or to a team (reduction(task, ...) on parallel); a
 * deferred task carries what its creator saw (task header, dependence
 * node), a task run at once sees what its creator sees. */
#include "omp/omp.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The arrays of one registration, from its first: stop at the next
 * registration's first array (d[5] != 0) or the end. */
static uintptr_t *next_array(const uintptr_t *d) {
    uintptr_t *n = (uintptr_t *)d[4];
    return n && !n[5] ? n : NULL;
}

uintptr_t *herd__omp_red_walk(const omp_task *t) {
    for (;;) {
        for (const omp_taskgroup *g = t->tg; g; g = g->prev)
            if (g->red)
                return g->red;
        if (t->frame_mode == OMP_FRAME_HERD)
            return t->red;
        t = t->parent;
    }
}

/* The registration of t's innermost taskgroup. */
static void own(omp_task *t, uintptr_t *data) {
    t->tg->red = data;
    /* ORDER: relaxed; a count read by herd__omp_red_of, whose readers that
     * must see it are ordered after this by their tasks' creation (omp.h). */
    atomic_fetch_add_explicit(&herd__omp_g.red_live, 1, memory_order_relaxed);
}

void herd__omp_red_register(uintptr_t *data, uintptr_t *outer, const uintptr_t *orig,
                            int nthreads) {
    uintptr_t *d = data;
    for (;;) {
        if (orig) {
            /* Worksharing: the copies of the member that set it up. */
            d[2] = orig[2];
            d[6] = orig[6];
            orig = (const uintptr_t *)orig[4];
        } else {
            size_t align = d[2] < sizeof(void *) ? sizeof(void *) : (size_t)d[2];
            size_t bytes = (size_t)d[1] * (size_t)nthreads;
            void *p = NULL;
            if (posix_memalign(&p, align, bytes ? bytes : 1))
                herd__omp_fatal("out of memory for the private copies of task reductions "
                                "(%zu bytes)",
                                bytes);
            memset(p, 0, bytes);
            d[2] = (uintptr_t)p;
            d[6] = d[2] + bytes;
        }
        d[5] = 0;
        if (!d[4])
            break;
        d = (uintptr_t *)d[4];
    }
    d[4] = (uintptr_t)outer;
    data[5] = (uintptr_t)nthreads; /* marks the registration's first array */
}

void herd__omp_red_free(uintptr_t *data) {
    for (uintptr_t *d = data; d; d = next_array(d)) {
        free((void *)d[2]);
        d[2] = 0;
    }
}

OMP_API void GOMP_taskgroup_reduction_register(uintptr_t *data) {
    omp_task *t = herd__omp_task();
    if (!t->tg)
        herd__omp_fatal("GOMP_taskgroup_reduction_register outside a taskgroup");
    herd__omp_red_register(data, herd__omp_red_of(t), NULL, t->team ? t->team->nthreads : 1);
    own(t, data);
}

OMP_API void GOMP_taskgroup_reduction_unregister(uintptr_t *data) {
    herd__omp_red_free(data);
}

/* The entry of the registration chain from red for the original item at
 * address p: its array in *arr. */
static const uintptr_t *find_item(uintptr_t *red, uintptr_t p, uintptr_t **arr) {
    for (uintptr_t *d = red; d; d = (uintptr_t *)d[4])
        for (uintptr_t j = 0; j < d[0]; j++)
            if (d[7 + 3 * j] == p) {
                *arr = d;
                return &d[7 + 3 * j];
            }
    return NULL;
}

/* The array whose copies hold address p (an item already remapped by an
 * enclosing task), or NULL. */
static uintptr_t *find_copy(uintptr_t *red, uintptr_t p) {
    for (uintptr_t *d = red; d; d = (uintptr_t *)d[4])
        if (p >= d[2] && p < d[6])
            return d;
    return NULL;
}

/* ptrs[0..cnt): the addresses of the task's in_reduction items (originals,
 * or copies an enclosing task was given); each becomes the address of the
 * running thread's copy. For i < cntorig, ptrs[cnt + i] gets the original's
 * address. */
OMP_API void GOMP_task_reduction_remap(size_t cnt, size_t cntorig, void **ptrs) {
    omp_task *t = herd__omp_task();
    uintptr_t slot = (uintptr_t)t->thread_num, *red = herd__omp_red_of(t);
    for (size_t i = 0; i < cnt; i++) {
        uintptr_t p = (uintptr_t)ptrs[i], *d = NULL, off, orig = 0;
        const uintptr_t *e = find_item(red, p, &d);
        if (e) {
            off = e[1];
            orig = p;
        } else if ((d = find_copy(red, p))) {
            off = (p - d[2]) % d[1];
            for (uintptr_t j = 0; j < d[0] && !orig; j++)
                if (d[7 + 3 * j + 1] == off)
                    orig = d[7 + 3 * j];
        }
        if (!d || (i < cntorig && !orig))
            herd__omp_fatal("in_reduction on %p: no enclosing taskgroup task_reduction or "
                            "reduction(task, ...) has this item",
                            ptrs[i]);
        if (d[2] + (slot + 1) * d[1] > d[6])
            herd__omp_fatal("in_reduction: thread %d has no private copy (%zu threads)",
                            t->thread_num, (size_t)((d[6] - d[2]) / d[1]));
        ptrs[i] = (void *)(d[2] + slot * d[1] + off);
        if (i < cntorig)
            ptrs[cnt + i] = (void *)orig;
    }
}

/* Worksharing constructs with reduction(task, ...) (loops, sections): the
 * first member to get here allocates the copies and publishes its arrays
 * in the construct's record; the others register theirs on the same
 * copies. Each member's tasks of the construct go into a taskgroup of its
 * own, so the construct's barrier waits for them (herd__omp_wait_tasks).
 * GCC's code then has member 0 combine the copies, and every member calls
 * GOMP_workshare_task_reduction_unregister. */
void herd__omp_ws_red_start(omp_task *t, uintptr_t *data) {
    omp_ws *ws = t->ws;
    int n = t->team ? t->team->nthreads : 1; /* no team: an orphaned construct */
    uintptr_t *outer = herd__omp_red_of(t);
    GOMP_taskgroup_start();
    t->tg->workshare = 1; /* a cancel taskgroup in it cancels the one outside (cancel.c) */
    if (herd__omp_ws_extra(&ws->red_state)) {
        herd__omp_red_register(data, outer, NULL, n);
        ws->red = data;
        herd__omp_ws_extra_ready(&ws->red_state);
    } else {
        herd__omp_red_register(data, outer, ws->red, n);
    }
    own(t, data);
}

/* scope with reduction(task, ...): treated as a worksharing construct that
 * nobody waits at (GCC's code has the barrier), so that one member
 * allocates the copies; the members leave the record at once: the last to
 * leave comes after everyone has registered. */
OMP_API void GOMP_scope_start(uintptr_t *reductions) {
    omp_task *t = herd__omp_task();
    if (!reductions)
        return;
    if (!t->team) { /* outside any region: a team of one */
        uintptr_t *outer = herd__omp_red_of(t);
        GOMP_taskgroup_start();
        herd__omp_red_register(reductions, outer, NULL, 1);
        own(t, reductions);
        return;
    }
    if (herd__omp_ws_begin(t))
        herd__omp_ws_publish(t);
    herd__omp_ws_red_start(t, reductions);
    herd__omp_ws_leave(t);
}

OMP_API void GOMP_workshare_task_reduction_unregister(bool cancelled) {
    OMP_SAVE();
    omp_task *t = omp__saved;
    uintptr_t *data = t->tg->red; /* the construct's taskgroup's */
    GOMP_taskgroup_end();         /* waits for the construct's tasks */
    if (t->thread_num == 0)       /* it combined: the copies are no longer needed */
        herd__omp_red_free(data);
    if (!cancelled)
        GOMP_barrier();
    OMP_RESTORE();
}
