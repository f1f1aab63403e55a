/* Why a task waits, for the watchdog's dump of blocked tasks
 * (core/watchdog.c): the kinds of wait, and the constructs a task is inside
 * while it may block. Shared with the layers above core (core/seam_omp.h). */
#ifndef HERD_CORE_WAIT_H
#define HERD_CORE_WAIT_H

/* What a suspended task waits for (core/watchdog.c prints it: the watchdog's
 * dump of blocked tasks). NONE: running, or suspended only to be resumed at
 * once (herd_yield, a work-first continuation). */
enum herd__wait_kind {
    HERD__WAIT_NONE = 0,
    HERD__WAIT_MUTEX,
    HERD__WAIT_COND,
    HERD__WAIT_BARRIER,
    HERD__WAIT_FEB, /* a full/empty word */
    HERD__WAIT_FUTURE,
    HERD__WAIT_GROUP,
    HERD__WAIT_CHILDREN, /* herd_wait, or a task's end: its own children */
    HERD__WAIT_OMP_BARRIER,
    HERD__WAIT_OMP_TASKWAIT,
    HERD__WAIT_OMP_TASKGROUP,
    HERD__WAIT_OMP_LOCK,
    HERD__WAIT_OMP_CRITICAL,
    HERD__WAIT_OMP_DEPEND, /* an undeferred task's or a taskwait's dependences */
    HERD__WAIT_OMP_REGION, /* the end of a parallel region: its members */
    HERD__WAIT_FORK,       /* herd__fork_join: the tasks of a fork */
    HERD__WAIT_NKINDS
};

/* A construct a task is inside while it may block (the OpenMP layer's
 * barrier, taskwait...): lives on the task's stack, linked innermost first
 * from its ULT's `ctx` (core/watchdog.h: herd__wait_enter/leave). Owner only. */
typedef struct herd__wait_ctx {
    int kind;
    const void *obj;
    void *ra; /* where the construct was entered from */
    struct herd__wait_ctx *prev;
} herd__wait_ctx;

/* Enter / leave a construct in which the calling task may block (c lives
 * on its stack until leave). Outside a task both do nothing. Cost: a call
 * and a few stores, no atomic operation (core/watchdog.c). */
void herd__wait_enter(herd__wait_ctx *c, int kind, const void *obj, void *ra);
void herd__wait_leave(herd__wait_ctx *c);

#endif
