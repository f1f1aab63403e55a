/* What libomp exports beyond the __kmpc_* entry points: the predefined
 * allocator and memory space handles (variables in LLVM's omp.h, enum
 * values in GCC's: the same numbers), the interop and tool-control
 * routines (no devices, no tool here), the allocate directive's entry
 * points, and the kmp_* extensions programs call. The omp_* routines
 * themselves are the layer's, aliased under LLVM's version where they are
 * defined (OMP_LLVM_ALIAS). */
#include "omp/kmp/kmp.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------- allocator handles */

KMP_API const uintptr_t omp_null_allocator = 0;
KMP_API const uintptr_t omp_default_mem_alloc = 1;
KMP_API const uintptr_t omp_large_cap_mem_alloc = 2;
KMP_API const uintptr_t omp_const_mem_alloc = 3;
KMP_API const uintptr_t omp_high_bw_mem_alloc = 4;
KMP_API const uintptr_t omp_low_lat_mem_alloc = 5;
KMP_API const uintptr_t omp_cgroup_mem_alloc = 6;
KMP_API const uintptr_t omp_pteam_mem_alloc = 7;
KMP_API const uintptr_t omp_thread_mem_alloc = 8;
KMP_API const uintptr_t omp_default_mem_space = 0;
KMP_API const uintptr_t omp_large_cap_mem_space = 1;
KMP_API const uintptr_t omp_const_mem_space = 2;
KMP_API const uintptr_t omp_high_bw_mem_space = 3;
KMP_API const uintptr_t omp_low_lat_mem_space = 4;

void *omp_alloc(size_t size, uintptr_t allocator);
void *omp_aligned_alloc(size_t align, size_t size, uintptr_t allocator);
void *omp_calloc(size_t n, size_t size, uintptr_t allocator);
void *omp_realloc(void *ptr, size_t size, uintptr_t allocator, uintptr_t free_allocator);
void omp_free(void *ptr, uintptr_t allocator);

/* The allocate directive and clause. */
KMP_API void *__kmpc_alloc(int gtid, size_t size, uintptr_t allocator) {
    (void)gtid;
    return omp_alloc(size, allocator);
}
KMP_API void *__kmpc_aligned_alloc(int gtid, size_t align, size_t size, uintptr_t allocator) {
    (void)gtid;
    return omp_aligned_alloc(align, size, allocator);
}
KMP_API void *__kmpc_calloc(int gtid, size_t n, size_t size, uintptr_t allocator) {
    (void)gtid;
    return omp_calloc(n, size, allocator);
}
KMP_API void *__kmpc_realloc(int gtid, void *ptr, size_t size, uintptr_t allocator,
                             uintptr_t free_allocator) {
    (void)gtid;
    return omp_realloc(ptr, size, allocator, free_allocator);
}
KMP_API void __kmpc_free(int gtid, void *ptr, uintptr_t allocator) {
    (void)gtid;
    omp_free(ptr, allocator);
}

/* uses_allocators(...) with traits: the allocator a target region (on the
 * host here) makes and destroys, and def-allocator-var. */
uintptr_t omp_init_allocator(uintptr_t memspace, int ntraits, const void *traits);
void omp_destroy_allocator(uintptr_t allocator);
void omp_set_default_allocator(uintptr_t allocator);
uintptr_t omp_get_default_allocator(void);

KMP_API uintptr_t __kmpc_init_allocator(int gtid, uintptr_t memspace, int ntraits,
                                        const void *traits) {
    (void)gtid;
    return omp_init_allocator(memspace, ntraits, traits);
}
KMP_API void __kmpc_destroy_allocator(int gtid, uintptr_t allocator) {
    (void)gtid;
    omp_destroy_allocator(allocator);
}
KMP_API void __kmpc_set_default_allocator(int gtid, uintptr_t allocator) {
    (void)gtid;
    omp_set_default_allocator(allocator);
}
KMP_API uintptr_t __kmpc_get_default_allocator(int gtid) {
    (void)gtid;
    return omp_get_default_allocator();
}

/* The runtime's half of omp_pause_resource (libomptarget's routine calls
 * it for the host): libomp's levels, 1 soft and 2 hard (device.c's pause:
 * refused while a region runs), 0 resume (herd starts again at the next
 * region by itself: done), 3 a tool's stop (herd has no tool: refused).
 * 0 done, non-zero refused. */
int omp_pause_resource_all(int kind);
KMP_API int __kmpc_pause_resource(int level) {
    if (level == 0)
        return 0;
    return level == 1 || level == 2 ? omp_pause_resource_all(level) != 0 : 1;
}

/* ------------------------------------------------------ interop, tools */

/* No interop object exists without a device: every query answers "no
 * such property" (omp_irc_no_value, -1... as the specification lists). */
enum { OMP_IRC_NO_VALUE = 1, OMP_IRC_OUT_OF_RANGE = -2 };
KMP_API int omp_get_num_interop_properties(const void *interop) {
    (void)interop;
    return 0;
}
KMP_API intptr_t omp_get_interop_int(const void *interop, int prop, int *rc) {
    (void)interop, (void)prop;
    if (rc)
        *rc = OMP_IRC_OUT_OF_RANGE;
    return 0;
}
KMP_API void *omp_get_interop_ptr(const void *interop, int prop, int *rc) {
    (void)interop, (void)prop;
    if (rc)
        *rc = OMP_IRC_OUT_OF_RANGE;
    return NULL;
}
KMP_API const char *omp_get_interop_str(const void *interop, int prop, int *rc) {
    (void)interop, (void)prop;
    if (rc)
        *rc = OMP_IRC_OUT_OF_RANGE;
    return NULL;
}
KMP_API const char *omp_get_interop_name(const void *interop, int prop) {
    (void)interop, (void)prop;
    return NULL;
}
KMP_API const char *omp_get_interop_type_desc(const void *interop, int prop) {
    (void)interop, (void)prop;
    return NULL;
}
KMP_API const char *omp_get_interop_rc_desc(const void *interop, int rc) {
    (void)interop, (void)rc;
    return NULL;
}
/* No tool is attached: omp_control_tool_notool. */
KMP_API int omp_control_tool(int command, int modifier, void *arg) {
    (void)command, (void)modifier, (void)arg;
    return -2;
}

/* ------------------------------------------------------------- ompc_* */

/* LLVM's omp.h renames four affinity routines to ompc_* (#define), and
 * libomp keeps ompc_ forms of a few others: the same routines. */
void omp_set_affinity_format(const char *format);
size_t omp_get_affinity_format(char *buffer, size_t size);
void omp_display_affinity(const char *format);
size_t omp_capture_affinity(char *buffer, size_t size, const char *format);
int omp_get_ancestor_thread_num(int level);
int omp_get_team_size(int level);
void omp_set_dynamic(int d);
void omp_set_max_active_levels(int n);
void omp_set_nested(int n);
void omp_set_num_threads(int n);
void omp_set_schedule(int kind, int chunk);

KMP_API void ompc_set_affinity_format(const char *format) {
    herd__kmp_seen();
    omp_set_affinity_format(format);
}
KMP_API size_t ompc_get_affinity_format(char *buffer, size_t size) {
    return omp_get_affinity_format(buffer, size);
}
KMP_API void ompc_display_affinity(const char *format) {
    herd__kmp_seen();
    omp_display_affinity(format);
}
KMP_API size_t ompc_capture_affinity(char *buffer, size_t size, const char *format) {
    herd__kmp_seen();
    return omp_capture_affinity(buffer, size, format);
}
KMP_API int ompc_get_ancestor_thread_num(int level) {
    return omp_get_ancestor_thread_num(level);
}
KMP_API int ompc_get_team_size(int level) {
    return omp_get_team_size(level);
}
KMP_API void ompc_set_dynamic(int d) {
    omp_set_dynamic(d);
}
KMP_API void ompc_set_max_active_levels(int n) {
    omp_set_max_active_levels(n);
}
KMP_API void ompc_set_nested(int n) {
    omp_set_nested(n);
}
KMP_API void ompc_set_num_threads(int n) {
    omp_set_num_threads(n);
}
KMP_API void ompc_set_schedule(int kind, int chunk) {
    omp_set_schedule(kind, chunk);
}

/* -------------------------------------------------------- kmp_* extensions */

size_t herd__omp_stack_size(void);

/* Stacks are sized once, at start-up (OMP_STACKSIZE, KMP_STACKSIZE): a
 * later change cannot reach threads and stacks that exist; herd says so
 * rather than ignore it. */
KMP_API void kmp_set_stacksize_s(size_t size) {
    if (size != herd__omp_stack_size())
        herd__omp_fatal("kmp_set_stacksize(%zu): herd sizes task stacks at start-up; set "
                        "OMP_STACKSIZE instead",
                        size);
}
KMP_API void kmp_set_stacksize(int size) {
    kmp_set_stacksize_s((size_t)size);
}
KMP_API size_t kmp_get_stacksize_s(void) {
    return herd__omp_stack_size();
}
KMP_API int kmp_get_stacksize(void) {
    return (int)herd__omp_stack_size();
}
/* blocktime: how long an idle thread spins; herd's idle policy is
 * adaptive (docs/guide/openmp.md), so the value is kept and reported only. */
/* -1: not set, then libomp's answer for the wait policy: INT_MAX under
 * OMP_WAIT_POLICY=active, 0 under passive, 200 (ms) otherwise. */
static _Atomic int blocktime = -1;
/* ORDER: relaxed; a value kept for the query, nothing hangs on it. */
KMP_API void kmp_set_blocktime(int ms) {
    atomic_store_explicit(&blocktime, ms, memory_order_relaxed);
}
KMP_API int kmp_get_blocktime(void) {
    /* ORDER: relaxed, as above. */
    int b = atomic_load_explicit(&blocktime, memory_order_relaxed);
    if (b >= 0)
        return b;
    const char *p = getenv("OMP_WAIT_POLICY"); /* checked at start-up (icv.c) */
    if (p && !strcasecmp(p, "active"))
        return INT_MAX;
    if (p && !strcasecmp(p, "passive"))
        return 0;
    return 200;
}
KMP_API void kmp_set_library_serial(void) {}
KMP_API void kmp_set_library_turnaround(void) {}
KMP_API void kmp_set_library_throughput(void) {}
KMP_API void kmp_set_library(int mode) {
    (void)mode;
}
/* libomp's library_throughput (its enum: none 0, serial 1, turnaround 2,
 * throughput 3), its default mode; the modes change nothing in herd. */
KMP_API int kmp_get_library(void) {
    return 3;
}
/* target-offload-var (OMP_TARGET_OFFLOAD, herd__omp_offload_kind): read
 * each time (kmp_set_defaults may set it). */
static _Atomic(const char *) target_offload_set;

KMP_API int __kmpc_get_target_offload(void) {
    /* ORDER: acquire; pairs with kmp_set_defaults' release: the string's
     * bytes are seen with the pointer */
    const char *v = atomic_load_explicit(&target_offload_set, memory_order_acquire);
    if (!v)
        v = getenv("OMP_TARGET_OFFLOAD");
    int k = herd__omp_offload_kind(v);
    if (k < 0) /* the environment's: checked at start-up (icv.c) */
        herd__omp_fatal("OMP_TARGET_OFFLOAD=%s: not understood; accepted: " OMP_OFFLOAD_FORMS, v);
    return k;
}

/* libomp's "NAME=value" settings string: herd takes OMP_TARGET_OFFLOAD
 * (the one libomp reads again later); any other name is refused. A value
 * not understood is libomp's: a warning, and default (this is a call of
 * libomp's own extension, not a setting herd reads at start-up). */
KMP_API void kmp_set_defaults(const char *str) {
    static const char key[] = "OMP_TARGET_OFFLOAD=";
    if (str && !strncmp(str, key, sizeof key - 1)) {
        const char *v = str + sizeof key - 1;
        if (herd__omp_offload_kind(v) < 0) {
            fprintf(
                stderr,
                "herd-omp: kmp_set_defaults(\"%s\"): not understood; accepted: " OMP_OFFLOAD_FORMS
                "; default taken\n",
                str);
            v = "default";
        }
        char *copy = strdup(v);
        if (!copy)
            herd__omp_fatal("out of memory in kmp_set_defaults");
        /* ORDER: release; pairs with __kmpc_get_target_offload's acquire.
         * An earlier value's copy is kept: a reader may hold it. */
        atomic_store_explicit(&target_offload_set, copy, memory_order_release);
        return;
    }
    /* libomp's own settings (KMP_*, and OMP_* read again) have no meaning
     * once herd has started: said once, then ignored. */
    static _Atomic int said;
    if (!atomic_exchange_explicit(&said, 1, memory_order_relaxed)) /* ORDER: relaxed; once */
        fprintf(stderr,
                "herd-omp: kmp_set_defaults(\"%s\") ignored: herd reads its settings "
                "from the environment at start-up (OMP_TARGET_OFFLOAD=... excepted)\n",
                str ? str : "(null)");
}
KMP_API void kmp_set_disp_num_buffers(int n) {
    (void)n;
}
KMP_API void kmp_set_warnings_on(void) {}
KMP_API void kmp_set_warnings_off(void) {}
KMP_API void *kmp_malloc(size_t size) {
    return malloc(size);
}
KMP_API void *kmp_calloc(size_t n, size_t size) {
    return calloc(n, size);
}
KMP_API void *kmp_realloc(void *p, size_t size) {
    return realloc(p, size);
}
/* An alignment that is not a power of two gets NULL and EINVAL, as from
 * libomp, checked here rather than left to posix_memalign (whose refusal an
 * ASan runtime turns into an abort: LLVM's api/kmp_aligned_malloc.c asks
 * for 127 on purpose). */
KMP_API void *kmp_aligned_malloc(size_t size, size_t align) {
    if (align == 0 || (align & (align - 1)) != 0) {
        errno = EINVAL;
        return NULL;
    }
    void *p = NULL;
    return posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size) ? NULL : p;
}
KMP_API void kmp_free(void *p) {
    free(p);
}
/* libomp's kmpc_* forms of the above (kmp_ftn_entry.h's names, which the
 * Intel compilers lower a call of the kmp_* routine to). */
KMP_ALIAS(kmpc_set_stacksize, kmp_set_stacksize);
KMP_ALIAS(kmpc_set_stacksize_s, kmp_set_stacksize_s);
KMP_ALIAS(kmpc_set_blocktime, kmp_set_blocktime);
KMP_ALIAS(kmpc_set_library, kmp_set_library);
KMP_ALIAS(kmpc_set_defaults, kmp_set_defaults);
KMP_ALIAS(kmpc_set_disp_num_buffers, kmp_set_disp_num_buffers);
KMP_ALIAS(kmpc_malloc, kmp_malloc);
KMP_ALIAS(kmpc_calloc, kmp_calloc);
KMP_ALIAS(kmpc_realloc, kmp_realloc);
KMP_ALIAS(kmpc_aligned_malloc, kmp_aligned_malloc);
KMP_ALIAS(kmpc_free, kmp_free);

KMP_API int kmp_get_cancellation_status(int kind) {
    omp_task *t = herd__omp_task();
    if (!t->team)
        return 0;
    /* ORDER: relaxed; a query, as omp_get_cancellation's */
    if (kind == 1) /* parallel */
        return atomic_load_explicit(&t->team->cancelled, memory_order_relaxed);
    return atomic_load_explicit(&t->team->ws_cancelled, memory_order_relaxed);
}
