/* Task synchronisation: mutex, condition variable, barrier. Each suspends
 * only the calling task (herd__block), never the worker.
 *
 * Pattern (park with unlock): the object's spinlock is taken by the task that
 * decides to wait, and released by the `arm` action that runs on the worker's
 * next stack after the task's context is saved. A waker takes the same lock,
 * so it either sees the waiter on the list (and can resume it at once, on any
 * worker) or runs before the waiter decided to wait. */
#include "core/runtime.h"

#include <stdlib.h>

static void list_push(herd__ult **head, herd__ult **tail, herd__ult *u) {
    u->next = NULL;
    if (*tail)
        (*tail)->next = u;
    else
        *head = u;
    *tail = u;
}

static herd__ult *list_pop(herd__ult **head, herd__ult **tail) {
    herd__ult *u = *head;
    if (u) {
        *head = u->next;
        if (!*head)
            *tail = NULL;
    }
    return u;
}

/* The public structs keep their fields as opaque storage; these views give
 * them types. */
typedef struct mutex_view {
    herd__spin lock;
    int held;
    herd__ult *head, *tail;
} mutex_view;
_Static_assert(sizeof(mutex_view) <= sizeof(herd_mutex), "herd_mutex storage");

typedef struct cond_view {
    herd__spin lock;
    herd__ult *head, *tail;
} cond_view;
_Static_assert(sizeof(cond_view) <= sizeof(herd_cond), "herd_cond storage");

static int in_task(void) {
    herd__worker *w = herd__self();
    return w && w->hot.frame;
}

/* ------------------------------------------------------------------ mutex */

HERD_API void herd_mutex_init(herd_mutex *m) {
    mutex_view *v = (mutex_view *)(void *)m;
    atomic_init(&v->lock.v, 0);
    v->held = 0;
    v->head = v->tail = NULL;
}

static void arm_mutex(herd__worker *w, herd__ult *u, void *p) {
    (void)w;
    mutex_view *v = p;
    list_push(&v->head, &v->tail, u);
    herd__spin_unlock(&v->lock);
}

HERD_API int herd_mutex_lock(herd_mutex *m) {
    if (!in_task())
        return HERD_ENOTASK;
    mutex_view *v = (mutex_view *)(void *)m;
    herd__spin_lock(&v->lock);
    if (!v->held) {
        v->held = 1;
        herd__spin_unlock(&v->lock);
        return 0;
    }
    /* The unlocker hands the mutex over with `held` still 1 (no barging), so
     * when we resume we own it. The lock is released by arm_mutex. */
    herd__block(arm_mutex, v);
    return 0;
}

HERD_API int herd_mutex_trylock(herd_mutex *m) {
    if (!in_task())
        return HERD_ENOTASK;
    mutex_view *v = (mutex_view *)(void *)m;
    herd__spin_lock(&v->lock);
    int got = !v->held;
    v->held = 1;
    herd__spin_unlock(&v->lock);
    return got ? 0 : HERD_EBUSY;
}

/* Also called by arm_cond(), between tasks (no frame is current there). */
static int mutex_unlock(herd_mutex *m) {
    mutex_view *v = (mutex_view *)(void *)m;
    herd__spin_lock(&v->lock);
    if (!v->held) {
        herd__spin_unlock(&v->lock);
        return HERD_EINVAL;
    }
    herd__ult *next = list_pop(&v->head, &v->tail);
    if (!next)
        v->held = 0;
    herd__spin_unlock(&v->lock);
    if (next)
        herd__ult_ready(next);
    return 0;
}

HERD_API int herd_mutex_unlock(herd_mutex *m) {
    if (!in_task())
        return HERD_ENOTASK; /* it may wake a task: that needs a worker */
    return mutex_unlock(m);
}

/* ------------------------------------------------------------- condition */

HERD_API void herd_cond_init(herd_cond *c) {
    cond_view *v = (cond_view *)(void *)c;
    atomic_init(&v->lock.v, 0);
    v->head = v->tail = NULL;
}

typedef struct cond_arm {
    cond_view *c;
    herd_mutex *m;
} cond_arm;

static void arm_cond(herd__worker *w, herd__ult *u, void *p) {
    (void)w;
    /* Copy the argument first: it lives on u's stack, and once the lock is
     * released a signal may resume u, which then returns. */
    cond_arm *a = p;
    cond_view *c = a->c;
    herd_mutex *m = a->m;
    list_push(&c->head, &c->tail, u);
    herd__spin_unlock(&c->lock);
    /* Release the mutex only now: a signal sent after the waiter's unlock
     * finds it on the list. */
    mutex_unlock(m);
}

HERD_API int herd_cond_wait(herd_cond *c, herd_mutex *m) {
    if (!in_task())
        return HERD_ENOTASK;
    mutex_view *mv = (mutex_view *)(void *)m;
    herd__spin_lock(&mv->lock);
    int held = mv->held;
    herd__spin_unlock(&mv->lock);
    if (!held)
        return HERD_EINVAL;
    cond_view *v = (cond_view *)(void *)c;
    cond_arm a = {v, m};
    herd__spin_lock(&v->lock);
    herd__block(arm_cond, &a);
    return herd_mutex_lock(m);
}

HERD_API int herd_cond_signal(herd_cond *c) {
    if (!in_task())
        return HERD_ENOTASK;
    cond_view *v = (cond_view *)(void *)c;
    herd__spin_lock(&v->lock);
    herd__ult *u = list_pop(&v->head, &v->tail);
    herd__spin_unlock(&v->lock);
    if (u)
        herd__ult_ready(u);
    return 0;
}

HERD_API int herd_cond_broadcast(herd_cond *c) {
    if (!in_task())
        return HERD_ENOTASK;
    cond_view *v = (cond_view *)(void *)c;
    herd__spin_lock(&v->lock);
    herd__ult *u = v->head;
    v->head = v->tail = NULL;
    herd__spin_unlock(&v->lock);
    while (u) {
        herd__ult *next = u->next;
        herd__ult_ready(u);
        u = next;
    }
    return 0;
}

/* ---------------------------------------------------------------- barrier
 * Paper 004 §2.3: arrivals register in an array at the index of their
 * arrival; the last arrival collects every slot and makes the tasks ready.
 * No list is shared by all arrivals, so arrivals do not contend on a lock. */

HERD_API int herd_barrier_init(herd_barrier *b, int64_t count) {
    if (count < 1)
        return HERD_EINVAL;
    b->herd__count = count;
    __atomic_store_n(&b->herd__arrived, 0, __ATOMIC_RELAXED);
    b->herd__phase = 0;
    b->herd__slots = NULL;
    if (count > 1) {
        b->herd__slots = calloc((size_t)count - 1, sizeof(void *));
        if (!b->herd__slots)
            return HERD_ENOMEM;
    }
    return 0;
}

HERD_API void herd_barrier_destroy(herd_barrier *b) {
    free(b->herd__slots);
    b->herd__slots = NULL;
}

static void arm_barrier(herd__worker *w, herd__ult *u, void *p) {
    (void)w;
    /* ORDER: release; pairs with the acquire load in herd_barrier_wait() by
     * the last arrival, which then owns u. */
    __atomic_store_n((herd__ult **)p, u, __ATOMIC_RELEASE);
}

HERD_API int herd_barrier_wait(herd_barrier *b) {
    if (!in_task())
        return HERD_ENOTASK;
    /* ORDER: acq_rel; the arrivals' RMWs form one release sequence, so the
     * last arrival sees every earlier arrival's writes. */
    int64_t idx = __atomic_fetch_add(&b->herd__arrived, 1, __ATOMIC_ACQ_REL);
    if (idx < b->herd__count - 1) {
        herd__block(arm_barrier, &b->herd__slots[idx]);
        return 0;
    }
    /* Last arrival: collect every registered task (each may still be on its
     * way to registering: its arm runs after its switch), reopen the barrier,
     * then wake them. Woken tasks may arrive at the next phase at once; the
     * slots are empty by then. */
    herd__ult *woken = NULL;
    for (int64_t i = 0; i < b->herd__count - 1; i++) {
        herd__ult *u;
        /* ORDER: acquire; pairs with the release store in arm_barrier(). */
        while (!(u = __atomic_load_n((herd__ult **)&b->herd__slots[i], __ATOMIC_ACQUIRE)))
            herd__cpu_relax();
        b->herd__slots[i] = NULL;
        u->next = woken;
        woken = u;
    }
    b->herd__phase++;
    /* ORDER: release; pairs with the next phase's acq_rel fetch_add. */
    __atomic_store_n(&b->herd__arrived, 0, __ATOMIC_RELEASE);
    while (woken) {
        herd__ult *next = woken->next;
        herd__ult_ready(woken);
        woken = next;
    }
    return 1;
}
