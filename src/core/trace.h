/* Timeline tracing (HERD_TRACE): what each worker did and when, written at
 * herd_stop() as Chrome trace-event JSON. Design: docs/design/trace.md.
 *
 * Each worker owns one event buffer, and only that worker's kernel thread
 * writes it: every hook takes the worker the caller runs on (herd__self()),
 * never a worker the task ran on earlier. No lock, no atomic. herd_stop()
 * reads the buffers after joining the workers; the join orders every event
 * before the read.
 *
 * Every hook below is one predictable branch on `w->trace` when tracing is
 * off; the work is out of line. */
#ifndef HERD_CORE_TRACE_H
#define HERD_CORE_TRACE_H

#include "core/runtime.h"

#include <stdint.h>

/* The most events one worker keeps; later ones are counted as dropped.
 * 2^20 events are 32 MiB of buffer and roughly 130 MB of JSON per worker:
 * a trace of a few workers stays a file that a viewer running in a browser
 * (Perfetto's UI) can load. */
#define HERD__TRACE_CAP ((size_t)1 << 20)
/* The cap the next herd_start() uses, at most HERD__TRACE_CAP: tests lower
 * it to see events dropped. */
extern size_t herd__trace_cap;

/* What a task span is, and how it ended (stored in an event's `how`). */
enum herd__trace_span {
    HERD__TRACE_RUN = 1, /* started by the loop from a queued task (herd__run_root) */
    HERD__TRACE_RESUME,  /* the loop resumed a suspended task */
};
enum herd__trace_end {
    HERD__TRACE_FINISHED = 1,
    HERD__TRACE_SUSPENDED,
};

typedef struct herd__trace_buf herd__trace_buf;

/* herd_start(): give every worker a buffer when rt->set.trace_path is set.
 * Returns 0 or HERD_ENOMEM. */
int herd__trace_open(herd__rt *rt);
/* herd_stop(), after the workers are joined: write the file. Returns 0, or
 * HERD_ESYS after printing "herd: HERD_TRACE=<path>: cannot write: ...". */
int herd__trace_write(herd__rt *rt);
/* Free the buffers (any time no worker runs). */
void herd__trace_free(herd__rt *rt);

void herd__trace_task_begin_slow(herd__worker *w, herd_fn fn, int span, int task_kind);
void herd__trace_resume_slow(herd__worker *w, const herd__ult *u);
void herd__trace_task_end_slow(herd__worker *w, int how);
void herd__trace_steal_slow(herd__worker *w, const herd__work *got);
void herd__trace_idle_slow(herd__worker *w, uint64_t since_ns, uint64_t until_ns);

/* The loop starts running a queued task: fn, of herd__task_kind task_kind.
 * Context: w's own thread, as for every hook. */
static inline void herd__trace_run(herd__worker *w, herd_fn fn, int task_kind) {
    if (__builtin_expect(w->trace != NULL, 0))
        herd__trace_task_begin_slow(w, fn, HERD__TRACE_RUN, task_kind);
}

/* The loop resumes the suspended task u. */
static inline void herd__trace_resume(herd__worker *w, const herd__ult *u) {
    if (__builtin_expect(w->trace != NULL, 0))
        herd__trace_resume_slow(w, u);
}

/* The task the loop started or resumed on w finished or suspended (how:
 * HERD__TRACE_FINISHED or _SUSPENDED). */
static inline void herd__trace_task_end(herd__worker *w, int how) {
    if (__builtin_expect(w->trace != NULL, 0))
        herd__trace_task_end_slow(w, how);
}

/* w's scheduler stole `got` (got->victim, got->ntasks). */
static inline void herd__trace_steal(herd__worker *w, const herd__work *got) {
    if (__builtin_expect(w->trace != NULL, 0))
        herd__trace_steal_slow(w, got);
}

/* w found no work from since_ns to until_ns (CLOCK_MONOTONIC, herd__now_ns). */
static inline void herd__trace_idle(herd__worker *w, uint64_t since_ns, uint64_t until_ns) {
    if (__builtin_expect(w->trace != NULL, 0))
        herd__trace_idle_slow(w, since_ns, until_ns);
}

#endif
