/* Synchronisation through the LLVM ABI: barrier, single, master/masked,
 * critical, ordered, the reduction protocol, copyprivate, flush,
 * cancellation, Intel's barrier with a master block, scope and the error
 * directive, each the layer's mechanism (team.c, ws.c, lock.c, error.c,
 * cancel.c) under LLVM's names and conventions. */
#include "omp/kmp/kmp.h"

#include <stdio.h>
#include <string.h>

KMP_API void __kmpc_barrier(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    GOMP_barrier();
}

/* The barrier at the end of a region or construct that may be cancelled:
 * 1 when it was (the member then goes to the region's end). */
KMP_API kmp_int32 __kmpc_cancel_barrier(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    return GOMP_barrier_cancel();
}

KMP_API void __kmpc_flush(ident_t *loc) {
    (void)loc;
    /* ORDER: seq_cst fence; the flush construct: it pairs with the flush
     * (or any synchronising operation) of the thread that reads or wrote
     * the same data, as GCC's __sync_synchronize serves GCC's flush. */
    atomic_thread_fence(memory_order_seq_cst);
}

/* The Intel compilers' barrier with a master block inside (their
 * reduction protocol): every member arrives, then member 0 alone returns 1
 * and runs the block while the others wait on, until its
 * __kmpc_end_barrier_master lets them go (they return 0): libomp's split
 * barrier. Two of the layer's barriers make it: the first gathers the
 * team, the second, which member 0 reaches only at the block's end, holds
 * the others; it orders the block's writes before their reads. */
KMP_API kmp_int32 __kmpc_barrier_master(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    GOMP_barrier();
    if (herd__omp_task()->thread_num == 0)
        return 1;
    GOMP_barrier();
    return 0;
}
/* Member 0 only, after its block. */
KMP_API void __kmpc_end_barrier_master(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    GOMP_barrier();
}
/* A barrier, then member 0 runs a block nobody waits for (no end call). */
KMP_API kmp_int32 __kmpc_barrier_master_nowait(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    GOMP_barrier();
    return herd__omp_task()->thread_num == 0;
}

/* The scope construct (OpenMP 5.1; clang 16 and later call these around
 * it): its private and reduction clauses and its barrier are the
 * compiler's code, so the runtime has nothing to do, as in libomp (which
 * only tells a tool, and herd has no tool interface). */
KMP_API void __kmpc_scope(ident_t *loc, kmp_int32 gtid, void *reserved) {
    (void)loc, (void)gtid, (void)reserved;
}
KMP_API void __kmpc_end_scope(ident_t *loc, kmp_int32 gtid, void *reserved) {
    (void)loc, (void)gtid, (void)reserved;
}

/* The error directive at(execution) (clang 15 and later): severity 1
 * (warning) prints and goes on, 2 (fatal) prints and ends the program
 * (error.c, as GOMP_error). libomp's lines, word for word (its message
 * catalogue's numbers, LLVM 14's), with the construct's place as
 * file:line:column from loc's ";file;routine;line;column;;". */
KMP_API void __kmpc_error(ident_t *loc, int severity, const char *message) {
    char where[256] = "unknown";
    const char *p = loc ? loc->psource : NULL;
    if (p && *p == ';') {
        const char *f = p + 1, *r = strchr(f, ';');
        const char *l = r ? strchr(r + 1, ';') : NULL, *c = l ? strchr(l + 1, ';') : NULL;
        const char *e = c ? strchr(c + 1, ';') : NULL;
        if (e)
            snprintf(where, sizeof where, "%.*s:%.*s:%.*s", (int)(r - f), f, (int)(c - l - 1),
                     l + 1, (int)(e - c - 1), c + 1);
    }
    int fatal = severity == 2;
    char head[320];
    snprintf(head, sizeof head, "OMP: %s: %s: Encountered user-directed %s",
             fatal ? "Error #282" : "Warning #283", where, fatal ? "error" : "warning");
    herd__omp_error_report(head, message, (size_t)-1, ".\n", fatal);
}

KMP_API kmp_int32 __kmpc_master(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    return herd__omp_task()->thread_num == 0;
}
KMP_API void __kmpc_end_master(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
}
KMP_API kmp_int32 __kmpc_masked(ident_t *loc, kmp_int32 gtid, kmp_int32 filter) {
    (void)loc, (void)gtid;
    return herd__omp_task()->thread_num == filter;
}
KMP_API void __kmpc_end_masked(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
}

KMP_API kmp_int32 __kmpc_single(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    return GOMP_single_start();
}
KMP_API void __kmpc_end_single(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
}

KMP_API void __kmpc_ordered(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    GOMP_ordered_start();
}
KMP_API void __kmpc_end_ordered(ident_t *loc, kmp_int32 gtid) {
    (void)loc, (void)gtid;
    GOMP_ordered_end();
}

/* ------------------------------------------------------------- critical */

/* The compiler's zeroed 32-byte name: its first word is the layer's lock
 * word (lock.c), which needs no initialisation. */
static _Atomic uint32_t *word_of(kmp_critical_name *crit) {
    _Static_assert(sizeof(kmp_critical_name) >= sizeof(_Atomic uint32_t), "a lock word fits");
    return (_Atomic uint32_t *)(void *)crit;
}

KMP_API void __kmpc_critical(ident_t *loc, kmp_int32 gtid, kmp_critical_name *crit) {
    (void)loc, (void)gtid;
    herd__omp_word_lock(word_of(crit));
}
/* A hint (contended, speculative, ...) changes nothing in herd's lock. */
KMP_API void __kmpc_critical_with_hint(ident_t *loc, kmp_int32 gtid, kmp_critical_name *crit,
                                       uint32_t hint) {
    (void)hint;
    __kmpc_critical(loc, gtid, crit);
}
KMP_API void __kmpc_end_critical(ident_t *loc, kmp_int32 gtid, kmp_critical_name *crit) {
    (void)loc, (void)gtid;
    herd__omp_word_unlock(word_of(crit));
}

/* ------------------------------------------------------------ reductions */

/* The ABI lets the runtime choose how members combine their copies: 1 the
 * member combines into the originals itself, then calls the end (the
 * critical method, under the construct's lock), 2 with atomics (where the
 * compiler generated them: KMP_IDENT_ATOMIC_REDUCE in loc's flags), 0
 * nothing (a tree method combined it). herd answers 2 for teams of more
 * than two that can, else 1: with 16 members arriving together the lock's
 * hand-overs cost 5 us per construct on the 16-core device (EPCC
 * REDUCTION: 9.9 us against 4.9 for libomp), and for two a lock word is as
 * cheap as the atomics. The choice depends on loc and the team only, so
 * the end of a blocking reduction makes it again. */
#define KMP_IDENT_ATOMIC_REDUCE 0x10

static kmp_int32 reduce_method(const ident_t *loc) {
    const omp_team *team = herd__omp_task()->team;
    return loc && (loc->flags & KMP_IDENT_ATOMIC_REDUCE) && team && team->nthreads > 2 ? 2 : 1;
}

KMP_API kmp_int32 __kmpc_reduce_nowait(ident_t *loc, kmp_int32 gtid, kmp_int32 num_vars,
                                       size_t reduce_size, void *reduce_data,
                                       void (*reduce_func)(void *lhs, void *rhs),
                                       kmp_critical_name *lck) {
    (void)num_vars, (void)reduce_size, (void)reduce_data, (void)reduce_func;
    kmp_int32 method = reduce_method(loc);
    if (method == 1)
        __kmpc_critical(loc, gtid, lck);
    return method;
}
/* Called after the critical method only. */
KMP_API void __kmpc_end_reduce_nowait(ident_t *loc, kmp_int32 gtid, kmp_critical_name *lck) {
    __kmpc_end_critical(loc, gtid, lck);
}
KMP_API kmp_int32 __kmpc_reduce(ident_t *loc, kmp_int32 gtid, kmp_int32 num_vars,
                                size_t reduce_size, void *reduce_data,
                                void (*reduce_func)(void *lhs, void *rhs), kmp_critical_name *lck) {
    return __kmpc_reduce_nowait(loc, gtid, num_vars, reduce_size, reduce_data, reduce_func, lck);
}
/* The blocking form, after either method: the construct's barrier follows
 * the combination. */
KMP_API void __kmpc_end_reduce(ident_t *loc, kmp_int32 gtid, kmp_critical_name *lck) {
    if (reduce_method(loc) == 1)
        __kmpc_end_critical(loc, gtid, lck);
    GOMP_barrier();
}

/* ------------------------------------------------------------ copyprivate */

/* single copyprivate: the executor (didit) publishes its data's address;
 * after a barrier the others copy from it; a second barrier keeps it alive
 * until they have. The barriers order the store and the reads. */
KMP_API void __kmpc_copyprivate(ident_t *loc, kmp_int32 gtid, size_t cpy_size, void *cpy_data,
                                void (*cpy_func)(void *dst, void *src), kmp_int32 didit) {
    (void)loc, (void)gtid, (void)cpy_size;
    omp_task *t = herd__omp_task();
    omp_team *team = t->team;
    if (!team || team->nthreads == 1)
        return;
    if (didit)
        team->copy = cpy_data;
    GOMP_barrier();
    if (!didit)
        cpy_func(cpy_data, team->copy);
    GOMP_barrier();
}

/* ---------------------------------------------------------- cancellation */

/* LLVM's kinds (parallel 1, loop 2, sections 3, taskgroup 4) as GCC's
 * bits (1, 2, 4, 8). */
static int which_of(kmp_int32 kind) {
    switch (kind) {
    case 1:
        return 1;
    case 2:
        return 2;
    case 3:
        return 4;
    case 4:
        return 8;
    default:
        herd__omp_fatal("cancel of construct kind %d, unknown to herd", kind);
    }
}

KMP_API kmp_int32 __kmpc_cancel(ident_t *loc, kmp_int32 gtid, kmp_int32 kind) {
    (void)loc, (void)gtid;
    return GOMP_cancel(which_of(kind), true);
}
KMP_API kmp_int32 __kmpc_cancellationpoint(ident_t *loc, kmp_int32 gtid, kmp_int32 kind) {
    (void)loc, (void)gtid;
    return GOMP_cancellation_point(which_of(kind));
}
