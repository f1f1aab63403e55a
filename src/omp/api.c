/* The omp_* query, setting and timing API, and its Fortran bindings
 * (gfortran passes every argument by reference and appends `_`). */
#include "omp/omp.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const omp_team *team_at(const omp_task *t, int level) {
    const omp_team *team = t->team;
    while (team && team->level > level)
        team = team->parent->team;
    return team && team->level == level ? team : NULL;
}

OMP_API int omp_get_thread_num(void) {
    return herd__omp_task()->thread_num;
}
OMP_API int omp_get_num_threads(void) {
    const omp_team *t = herd__omp_task()->team;
    return t ? t->nthreads : 1;
}
/* nthreads-var: the size of the next team (OMP_THREAD_LIMIT and dyn-var may give fewer). */
OMP_API int omp_get_max_threads(void) {
    return herd__omp_task()->icv->nthreads;
}
OMP_API int omp_get_num_procs(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
OMP_API int omp_in_parallel(void) {
    const omp_team *t = herd__omp_task()->team;
    return t && t->active_level > 0;
}
OMP_API void omp_set_num_threads(int n) {
    herd__omp_icv_change(herd__omp_task())->nthreads = n > 0 ? n : 1;
}
OMP_API void omp_set_dynamic(int d) {
    herd__omp_icv_change(herd__omp_task())->dynamic = d != 0;
}
OMP_API int omp_get_dynamic(void) {
    return herd__omp_task()->icv->dynamic;
}
OMP_API void omp_set_nested(int n) {
    herd__omp_icv_change(herd__omp_task())->max_active = n ? 64 : 1;
}
OMP_API int omp_get_nested(void) {
    return herd__omp_task()->icv->max_active > 1;
}
OMP_API void omp_set_max_active_levels(int n) {
    if (n >= 0)
        herd__omp_icv_change(herd__omp_task())->max_active = n;
}
OMP_API int omp_get_max_active_levels(void) {
    return herd__omp_task()->icv->max_active;
}
OMP_API int omp_get_supported_active_levels(void) {
    return 64;
}
OMP_API int omp_get_level(void) {
    const omp_team *t = herd__omp_task()->team;
    return t ? t->level : 0;
}
OMP_API int omp_get_active_level(void) {
    const omp_team *t = herd__omp_task()->team;
    return t ? t->active_level : 0;
}
OMP_API int omp_get_ancestor_thread_num(int level) {
    const omp_task *t = herd__omp_task();
    if (level == 0)
        return 0;
    const omp_team *team = t->team;
    if (!team || level < 0 || level > team->level)
        return -1;
    while (team->level > level) {
        t = team->parent;
        team = t->team;
    }
    return t->thread_num;
}
OMP_API int omp_get_team_size(int level) {
    if (level == 0)
        return 1;
    const omp_team *team = team_at(herd__omp_task(), level);
    return team ? team->nthreads : -1;
}
OMP_API void omp_set_schedule(int kind, int chunk) {
    omp_icv *i = herd__omp_icv_change(herd__omp_task());
    i->run_sched = kind;
    i->run_chunk = chunk;
}
static void get_schedule(int llvm, int *kind, int *chunk) {
    const omp_icv *i = herd__omp_task()->icv;
    long c;
    *kind = herd__omp_run_sched(i->run_sched, i->run_chunk, llvm, &c);
    *chunk = (int)c;
}
OMP_API void omp_get_schedule(int *kind, int *chunk) {
    get_schedule(0, kind, chunk);
}
/* LLVM's omp_get_schedule: libomp's default when run-sched-var was never
 * set, as its loops run it (kmp/loop.c). */
void herd__omp_llvm_get_schedule(int *kind, int *chunk) {
    get_schedule(1, kind, chunk);
}
OMP_API int omp_in_final(void) {
    return herd__omp_task()->final;
}
OMP_API int omp_get_cancellation(void) {
    return herd__omp_g.cancellation;
}
OMP_API int omp_get_proc_bind(void) {
    return herd__omp_task()->icv->bind;
}
/* The places routines are in places.c. */
OMP_API int omp_get_num_devices(void) {
    return 0;
}
OMP_API int omp_get_default_device(void) {
    return 0;
}
OMP_API void omp_set_default_device(int d) {
    (void)d;
}
OMP_API int omp_is_initial_device(void) {
    return 1;
}
OMP_API int omp_get_initial_device(void) {
    return 0;
}
OMP_API int omp_get_device_num(void) {
    return 0;
}
OMP_API int omp_get_max_task_priority(void) {
    return herd__omp_g.max_task_priority;
}
OMP_API void omp_display_env(int verbose) {
    herd__omp_display_env(verbose);
}

OMP_API double omp_get_wtime(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
OMP_API double omp_get_wtick(void) {
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------- Fortran */

#define F_INT0(name)                                                                               \
    OMP_API int name##_(void) {                                                                    \
        return name();                                                                             \
    }
F_INT0(omp_get_thread_num)
F_INT0(omp_get_cancellation)
F_INT0(omp_get_num_threads)
F_INT0(omp_get_max_threads)
F_INT0(omp_get_num_procs)
F_INT0(omp_in_parallel)
F_INT0(omp_get_dynamic)
F_INT0(omp_get_nested)
F_INT0(omp_get_max_active_levels)
F_INT0(omp_get_level)
F_INT0(omp_get_active_level)
F_INT0(omp_in_final)
F_INT0(omp_get_num_devices)
F_INT0(omp_is_initial_device)
F_INT0(omp_get_max_task_priority)
OMP_API void omp_set_num_threads_(const int *n) {
    omp_set_num_threads(*n);
}
OMP_API void omp_set_num_threads_8_(const long *n) {
    omp_set_num_threads((int)*n);
}
OMP_API void omp_set_dynamic_(const int *d) {
    omp_set_dynamic(*d);
}
OMP_API void omp_set_nested_(const int *n) {
    omp_set_nested(*n);
}
OMP_API void omp_set_max_active_levels_(const int *n) {
    omp_set_max_active_levels(*n);
}
OMP_API int omp_get_ancestor_thread_num_(const int *l) {
    return omp_get_ancestor_thread_num(*l);
}
OMP_API int omp_get_team_size_(const int *l) {
    return omp_get_team_size(*l);
}
OMP_API double omp_get_wtime_(void) {
    return omp_get_wtime();
}
OMP_API double omp_get_wtick_(void) {
    return omp_get_wtick();
}
/* The Fortran locks are in lock.c (their symbol versions). */

/* The same routines under the LLVM ABI's version (kmp/, omp.h). */
OMP_LLVM_ALIAS(omp_get_thread_num, "OMP_1.0");
OMP_LLVM_ALIAS(omp_get_num_threads, "OMP_1.0");
OMP_LLVM_ALIAS(omp_get_max_threads, "OMP_1.0");
OMP_LLVM_ALIAS(omp_get_num_procs, "OMP_1.0");
OMP_LLVM_ALIAS(omp_in_parallel, "OMP_1.0");
OMP_LLVM_ALIAS(omp_set_num_threads, "OMP_1.0");
OMP_LLVM_ALIAS(omp_set_dynamic, "OMP_1.0");
OMP_LLVM_ALIAS(omp_get_dynamic, "OMP_1.0");
OMP_LLVM_ALIAS(omp_set_nested, "OMP_1.0");
OMP_LLVM_ALIAS(omp_get_nested, "OMP_1.0");
OMP_LLVM_ALIAS(omp_set_max_active_levels, "OMP_3.0");
OMP_LLVM_ALIAS(omp_get_max_active_levels, "OMP_3.0");
OMP_LLVM_ALIAS(omp_get_supported_active_levels, "OMP_5.0.1");
OMP_LLVM_ALIAS(omp_get_level, "OMP_3.0");
OMP_LLVM_ALIAS(omp_get_active_level, "OMP_3.0");
OMP_LLVM_ALIAS(omp_get_ancestor_thread_num, "OMP_3.0");
OMP_LLVM_ALIAS(omp_get_team_size, "OMP_3.0");
OMP_LLVM_ALIAS(omp_set_schedule, "OMP_3.0");
OMP_LLVM_ALIAS_OF(omp_get_schedule, herd__omp_llvm_get_schedule);
OMP_LLVM_ALIAS(omp_in_final, "OMP_3.1");
OMP_LLVM_ALIAS(omp_get_cancellation, "OMP_4.0");
OMP_LLVM_ALIAS(omp_get_proc_bind, "OMP_4.0");
OMP_LLVM_ALIAS(omp_get_num_devices, "OMP_4.0");
OMP_LLVM_ALIAS(omp_get_default_device, "OMP_4.0");
OMP_LLVM_ALIAS(omp_set_default_device, "OMP_4.0");
OMP_LLVM_ALIAS(omp_is_initial_device, "OMP_4.0");
OMP_LLVM_ALIAS(omp_get_initial_device, "OMP_4.5");
OMP_LLVM_ALIAS(omp_get_device_num, "OMP_5.0.2");
OMP_LLVM_ALIAS(omp_get_max_task_priority, "OMP_4.5");
OMP_LLVM_ALIAS(omp_display_env, "OMP_5.1");
OMP_LLVM_ALIAS(omp_get_wtime, "OMP_2.0");
OMP_LLVM_ALIAS(omp_get_wtick, "OMP_2.0");

/* The Fortran bindings above under LLVM's version too: libomp's take their
 * arguments as gfortran's do (by reference, character lengths after the
 * others), and flang calls them where a program names a routine without
 * omp_lib's interface (GCC's stack.f90). */
OMP_LLVM_ALIAS(omp_get_active_level_, "OMP_3.0");
OMP_LLVM_ALIAS(omp_get_ancestor_thread_num_, "OMP_3.0");
OMP_LLVM_ALIAS(omp_get_cancellation_, "OMP_4.0");
OMP_LLVM_ALIAS(omp_get_dynamic_, "OMP_1.0");
OMP_LLVM_ALIAS(omp_get_level_, "OMP_3.0");
OMP_LLVM_ALIAS(omp_get_max_active_levels_, "OMP_3.0");
OMP_LLVM_ALIAS(omp_get_max_task_priority_, "OMP_4.5");
OMP_LLVM_ALIAS(omp_get_max_threads_, "OMP_1.0");
OMP_LLVM_ALIAS(omp_get_nested_, "OMP_1.0");
OMP_LLVM_ALIAS(omp_get_num_devices_, "OMP_4.0");
OMP_LLVM_ALIAS(omp_get_num_procs_, "OMP_1.0");
OMP_LLVM_ALIAS(omp_get_num_threads_, "OMP_1.0");
OMP_LLVM_ALIAS(omp_get_team_size_, "OMP_3.0");
OMP_LLVM_ALIAS(omp_get_thread_num_, "OMP_1.0");
OMP_LLVM_ALIAS(omp_get_wtick_, "OMP_2.0");
OMP_LLVM_ALIAS(omp_get_wtime_, "OMP_2.0");
OMP_LLVM_ALIAS(omp_in_final_, "OMP_3.1");
OMP_LLVM_ALIAS(omp_in_parallel_, "OMP_1.0");
OMP_LLVM_ALIAS(omp_is_initial_device_, "OMP_4.0");
OMP_LLVM_ALIAS(omp_set_dynamic_, "OMP_1.0");
OMP_LLVM_ALIAS(omp_set_max_active_levels_, "OMP_3.0");
OMP_LLVM_ALIAS(omp_set_nested_, "OMP_1.0");
OMP_LLVM_ALIAS(omp_set_num_threads_, "OMP_1.0");
