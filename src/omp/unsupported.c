/* Constructs herd does not run, and the host fallback of target regions.
 *
 * An unsupported entry point stops the program at its first use with a
 * message naming the construct and the caller (dladdr, else the address):
 * never a silent wrong result. The stubs at the end cover every other
 * GOMP_ and omp_ symbol of the system libgomp, so any gcc-built binary loads;
 * it fails only if it reaches one. */
#include "omp/omp.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void herd__omp_unsupported(const char *what, void *caller) {
    Dl_info info;
    char where[512];
    if (caller && dladdr(caller, &info) && info.dli_fname) {
        if (info.dli_sname)
            snprintf(where, sizeof where, "%s (%s+%#lx)", info.dli_fname, info.dli_sname,
                     (unsigned long)((char *)caller - (char *)info.dli_saddr));
        else
            snprintf(where, sizeof where, "%s+%#lx (addr2line -f -e %s %#lx names it)",
                     info.dli_fname, (unsigned long)((char *)caller - (char *)info.dli_fbase),
                     info.dli_fname, (unsigned long)((char *)caller - (char *)info.dli_fbase));
    } else {
        snprintf(where, sizeof where, "%p", caller);
    }
    fprintf(stderr, "herd-omp: %s is not supported by herd's OpenMP library; called from %s. "
                    "Run the program with the system libgomp instead.\n", what, where);
    abort();
}

/* ------------------------------------------------------------ cancellation */

/* With cancel-var false (OMP_CANCELLATION unset or false, the default) a
 * cancel construct and a cancellation point do nothing, as the
 * specification says: no region is ever cancelled. With it true, herd would
 * have to cancel, which it does not implement: the first one stops. */
OMP_API bool GOMP_cancel(int which, bool do_cancel) {
    (void)which, (void)do_cancel;
    if (herd__omp_g.cancellation)
        herd__omp_unsupported("cancel (with OMP_CANCELLATION=true)", __builtin_return_address(0));
    return false;
}

OMP_API bool GOMP_cancellation_point(int which) {
    (void)which;
    if (herd__omp_g.cancellation)
        herd__omp_unsupported("cancellation point (with OMP_CANCELLATION=true)",
                              __builtin_return_address(0));
    return false;
}

/* ------------------------------------------------- target: host fallback */

/* The target's thread_limit among GCC's target arguments (a NULL-ended list
 * of words: device bits 0-6, a "value follows" bit 7, the id in bits 8-15,
 * else the value from bit 16); 0: none for every device. */
static long target_thread_limit(void **args) {
    while (args && *args) {
        intptr_t id = (intptr_t)*args++;
        intptr_t val = id & (1 << 7) ? (intptr_t)*args++ : id >> 16;
        if ((id & 0x7f) == 0 && (id & 0xff00) == (2 << 8))
            return val;
    }
    return 0;
}

/* A target region on the host runs as the initial task of a device of its
 * own, as libgomp's host fallback runs it: outside any team (level 0, no
 * ancestors), with the initial ICVs; thread_limit (> 0) is its
 * thread-limit-var (omp_get_thread_limit, and the cap of its teams), kept
 * where host teams keep theirs. On a worker it runs as a herd task of its
 * own (herd__call_task), and ends when its tasks have: they point at its
 * record. */
typedef struct host_arg {
    void (*fn)(void *);
    void **hostaddrs;
    omp_task *dev;
} host_arg;

static void host_entry(void *p) {
    host_arg *a = p;
    herd__omp_cur = a->dev;
    a->fn(a->hostaddrs);
    if (herd__self())
        herd__omp_wait_tasks(a->dev);
    herd__omp_deps_free(a->dev);
}

static void run_on_host(void (*fn)(void *), void **hostaddrs, long thread_limit) {
    OMP_SAVE();
    omp_task dev;
    memset(&dev, 0, sizeof dev);
    dev.icv = herd__omp_g.icv;
    dev.frame_mode = OMP_FRAME_HERD; /* the frame herd__call_task opens */
    dev.ch_lo = dev.ch_hi = -1;
    if (thread_limit > 0 && thread_limit < herd__omp_g.thread_limit)
        dev.league_limit = (int)thread_limit;
    host_arg a = {fn, hostaddrs, &dev};
    if (herd__self())
        herd__call_task(host_entry, &a);
    else
        host_entry(&a);
    OMP_RESTORE();
}

OMP_API void GOMP_target_ext(int device, void (*fn)(void *), size_t mapnum, void **hostaddrs,
                             size_t *sizes, unsigned short *kinds, unsigned flags, void **depend,
                             void **args) {
    (void)device, (void)mapnum, (void)sizes, (void)kinds;
    if (flags & 1u) { /* nowait: a deferred task in libgomp; run it here */
    }
    if (depend)
        herd__omp_unsupported("target with depend", __builtin_return_address(0));
    run_on_host(fn, hostaddrs, target_thread_limit(args));
}
OMP_API void GOMP_target(int device, void (*fn)(void *), const void *unused, size_t mapnum,
                         void **hostaddrs, size_t *sizes, unsigned char *kinds) {
    (void)device, (void)unused, (void)mapnum, (void)sizes, (void)kinds;
    run_on_host(fn, hostaddrs, 0);
}
/* Data mapping on the host is the identity. */
OMP_API void GOMP_target_data(void) {}
OMP_API void GOMP_target_data_ext(void) {}
OMP_API void GOMP_target_end_data(void) {}
OMP_API void GOMP_target_update(void) {}
OMP_API void GOMP_target_update_ext(void) {}
OMP_API void GOMP_target_enter_exit_data(void) {}
OMP_API void GOMP_offload_register(void) {}
OMP_API void GOMP_offload_unregister(void) {}
OMP_API void GOMP_offload_register_ver(void) {}
OMP_API void GOMP_offload_unregister_ver(void) {}

#define UNSUPPORTED(sym, what)                                                                     \
    OMP_API void sym(void) { herd__omp_unsupported(what, __builtin_return_address(0)); }
#include "omp/unsupported.def"
