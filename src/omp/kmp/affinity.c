/* libomp's affinity mask routines (kmp_affinity_mask_t in LLVM's omp.h,
 * and flang's omp_lib binds them): a program makes a mask of OS processor
 * numbers and binds the calling thread to it. A mask is a cpu_set_t that
 * herd allocates (herd's places and workers use the same type).
 *
 * As in libomp: a processor the process could not run on at start-up is not
 * settable (-2), a number outside 0 .. kmp_get_affinity_max_proc() - 1 is
 * invalid (-1); kmp_set_affinity binds the calling kernel thread and answers
 * 0 or the error number of the system call. The thread then is bound to no
 * place of OMP_PLACES: the next placed region binds it again (bind.c). */
#include "omp/kmp/kmp.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

typedef void *kmp_affinity_mask_t;

KMP_API int kmp_get_affinity_max_proc(void) {
    long n = sysconf(_SC_NPROCESSORS_CONF);
    return n < 1 ? 1 : n > CPU_SETSIZE ? CPU_SETSIZE : (int)n;
}

KMP_API void kmp_create_affinity_mask(kmp_affinity_mask_t *mask) {
    cpu_set_t *set = malloc(sizeof *set);
    if (!set)
        herd__omp_fatal("out of memory in kmp_create_affinity_mask");
    CPU_ZERO(set);
    *mask = set;
}

KMP_API void kmp_destroy_affinity_mask(kmp_affinity_mask_t *mask) {
    free(*mask);
    *mask = NULL;
}

/* 0: proc may be in a mask; -1: no such number; -2: not the process's */
static int check_proc(int proc, const kmp_affinity_mask_t *mask) {
    if (!mask || !*mask || proc < 0 || proc >= kmp_get_affinity_max_proc())
        return -1;
    return CPU_ISSET(proc, herd__omp_start_mask()) ? 0 : -2;
}

KMP_API int kmp_set_affinity_mask_proc(int proc, kmp_affinity_mask_t *mask) {
    int rc = check_proc(proc, mask);
    if (!rc)
        CPU_SET(proc, (cpu_set_t *)*mask);
    return rc;
}

KMP_API int kmp_unset_affinity_mask_proc(int proc, kmp_affinity_mask_t *mask) {
    int rc = check_proc(proc, mask);
    if (!rc)
        CPU_CLR(proc, (cpu_set_t *)*mask);
    return rc;
}

/* 1: in the mask, 0: not (or not the process's), -1: no such number */
KMP_API int kmp_get_affinity_mask_proc(int proc, kmp_affinity_mask_t *mask) {
    int rc = check_proc(proc, mask);
    if (rc)
        return rc == -2 ? 0 : rc;
    return CPU_ISSET(proc, (const cpu_set_t *)*mask) != 0;
}

/* libomp's kmpc_* forms (what the Intel compilers call for the above). */
KMP_ALIAS(kmpc_set_affinity_mask_proc, kmp_set_affinity_mask_proc);
KMP_ALIAS(kmpc_unset_affinity_mask_proc, kmp_unset_affinity_mask_proc);
KMP_ALIAS(kmpc_get_affinity_mask_proc, kmp_get_affinity_mask_proc);

KMP_API int kmp_set_affinity(kmp_affinity_mask_t *mask) {
    if (!mask || !*mask)
        return -1;
    int e = pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), *mask);
    if (!e)
        herd__omp_unbind_place();
    return e;
}

KMP_API int kmp_get_affinity(kmp_affinity_mask_t *mask) {
    if (!mask || !*mask)
        return -1;
    return pthread_getaffinity_np(pthread_self(), sizeof(cpu_set_t), *mask);
}

/* The calling thread back on every CPU the process could run on when the
 * library loaded (TBB calls it, found by dlsym, before it binds its own
 * threads; libomp's fork handler does, in the child). A thread that never
 * entered OpenMP is left alone, as libomp leaves one it does not know: 0.
 * Else 0 or the error number of the system call, as kmp_set_affinity. */
KMP_API int kmp_set_thread_affinity_mask_initial(void) {
    if (!herd__kmp_known())
        return 0;
    int e = pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), herd__omp_start_mask());
    if (!e)
        herd__omp_unbind_place();
    return e;
}
