/* Fortran bindings (gfortran's calling convention, as the system libgomp's
 * fortran.c defines them): arguments by reference unless the interface
 * says `value` (omp_fulfill_event), character arguments with their lengths
 * after the others (blank-padded, not NUL-terminated), `_8_` variants for
 * integer(8) arguments. Each calls the C routine. The simple ones of
 * OpenMP 1.0 to 4.5 are in api.c and teams.c, the locks in lock.c. */
#include "omp/omp.h"

#include <stdlib.h>
#include <string.h>

/* The C routines (other files). */
int omp_get_ancestor_thread_num(int level);
int omp_get_team_size(int level);
void omp_set_dynamic(int d);
void omp_set_nested(int n);
void omp_set_max_active_levels(int n);
void omp_set_schedule(int kind, int chunk);
void omp_get_schedule(int *kind, int *chunk);
int omp_get_proc_bind(void);
int omp_get_num_places(void);
int omp_get_place_num(void);
int omp_get_partition_num_places(void);
int omp_get_place_num_procs(int place);
void omp_get_place_proc_ids(int place, int *ids);
void omp_get_partition_place_nums(int *places);
int omp_get_default_device(void);
void omp_set_default_device(int d);
int omp_get_initial_device(void);
int omp_get_device_num(void);
int omp_get_supported_active_levels(void);
int omp_get_thread_limit(void);
void omp_display_env(int verbose);
int omp_pause_resource(int kind, int device);
int omp_pause_resource_all(int kind);
void omp_fulfill_event(uintptr_t event);
size_t omp_capture_affinity(char *buffer, size_t size, const char *format);
void omp_display_affinity(const char *format);
void omp_set_affinity_format(const char *format);
size_t omp_get_affinity_format(char *buffer, size_t size);
uintptr_t omp_init_allocator(uintptr_t memspace, int ntraits, const void *traits);
void omp_destroy_allocator(uintptr_t allocator);
void omp_set_default_allocator(uintptr_t allocator);
uintptr_t omp_get_default_allocator(void);

/* An integer(8) argument as a C int, saturated as libgomp does. */
static int to_int(long v) {
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int)v;
}

OMP_API int omp_get_thread_limit_(void) {
    return omp_get_thread_limit();
}
OMP_API int omp_get_ancestor_thread_num_8_(const long *l) {
    return omp_get_ancestor_thread_num(to_int(*l));
}
OMP_API int omp_get_team_size_8_(const long *l) {
    return omp_get_team_size(to_int(*l));
}
OMP_API void omp_set_dynamic_8_(const long *d) {
    omp_set_dynamic(*d != 0);
}
OMP_API void omp_set_nested_8_(const long *n) {
    omp_set_nested(*n != 0);
}
OMP_API void omp_set_max_active_levels_8_(const long *n) {
    omp_set_max_active_levels(to_int(*n));
}
OMP_API int omp_get_supported_active_levels_(void) {
    return omp_get_supported_active_levels();
}

/* Schedules: the kind without the monotonic bit, as libgomp reports it
 * to Fortran (OpenMP 4.5 code does not expect it). */
OMP_API void omp_set_schedule_(const int *kind, const int *chunk) {
    omp_set_schedule(*kind, *chunk);
}
OMP_API void omp_set_schedule_8_(const int *kind, const long *chunk) {
    omp_set_schedule(*kind, to_int(*chunk));
}
/* Fortran's kind has no monotonic bit (omp_lib's omp_sched_kind) */
static void fortran_schedule(void (*get)(int *, int *), int *kind, int *chunk) {
    int k, c;
    get(&k, &c);
    *kind = k & ~(int)OMP_SCHED_MONOTONIC;
    *chunk = c;
}
OMP_API void omp_get_schedule_(int *kind, int *chunk) {
    fortran_schedule(omp_get_schedule, kind, chunk);
}
/* LLVM's (a flang call without omp_lib's interface): libomp's default */
static void llvm_get_schedule_(int *kind, int *chunk) {
    fortran_schedule(herd__omp_llvm_get_schedule, kind, chunk);
}
OMP_LLVM_ALIAS_OF(omp_get_schedule_, llvm_get_schedule_);
OMP_API void omp_get_schedule_8_(int *kind, long *chunk) {
    int c;
    fortran_schedule(omp_get_schedule, kind, &c);
    *chunk = c;
}

OMP_API int omp_get_proc_bind_(void) {
    return omp_get_proc_bind();
}
OMP_API int omp_get_num_places_(void) {
    return omp_get_num_places();
}
OMP_API int omp_get_place_num_(void) {
    return omp_get_place_num();
}
OMP_API int omp_get_partition_num_places_(void) {
    return omp_get_partition_num_places();
}
OMP_API int omp_get_place_num_procs_(const int *p) {
    return omp_get_place_num_procs(*p);
}
OMP_API int omp_get_place_num_procs_8_(const long *p) {
    return omp_get_place_num_procs(to_int(*p));
}
OMP_API void omp_get_place_proc_ids_(const int *p, int *ids) {
    omp_get_place_proc_ids(*p, ids);
}
/* The 8-byte flavours (-fdefault-integer-8): the C routine's ints, widened
 * into the caller's array (as many as the C routine answers for). */
OMP_API void omp_get_place_proc_ids_8_(const long *p, long *ids) {
    int place = to_int(*p), n = omp_get_place_num_procs(place);
    int *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    if (!tmp)
        herd__omp_fatal("omp_get_place_proc_ids_8_: out of memory");
    omp_get_place_proc_ids(place, tmp);
    for (int i = 0; i < n; i++)
        ids[i] = tmp[i];
    free(tmp);
}
OMP_API void omp_get_partition_place_nums_(int *places) {
    omp_get_partition_place_nums(places);
}
OMP_API void omp_get_partition_place_nums_8_(long *places) {
    int n = omp_get_partition_num_places();
    int *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    if (!tmp)
        herd__omp_fatal("omp_get_partition_place_nums_8_: out of memory");
    omp_get_partition_place_nums(tmp);
    for (int i = 0; i < n; i++)
        places[i] = tmp[i];
    free(tmp);
}

OMP_API int omp_get_default_device_(void) {
    return omp_get_default_device();
}
OMP_API void omp_set_default_device_(const int *d) {
    omp_set_default_device(*d);
}
OMP_API void omp_set_default_device_8_(const long *d) {
    omp_set_default_device(to_int(*d));
}
OMP_API int omp_get_initial_device_(void) {
    return omp_get_initial_device();
}
OMP_API int omp_get_device_num_(void) {
    return omp_get_device_num();
}

OMP_API void omp_display_env_(const int *verbose) {
    omp_display_env(*verbose);
}
OMP_API void omp_display_env_8_(const long *verbose) {
    omp_display_env(*verbose != 0);
}
OMP_API int omp_pause_resource_(const int *kind, const int *device) {
    return omp_pause_resource(*kind, *device);
}
OMP_API int omp_pause_resource_all_(const int *kind) {
    return omp_pause_resource_all(*kind);
}

/* integer(omp_event_handle_kind), value */
OMP_API void omp_fulfill_event_(intptr_t event) {
    omp_fulfill_event((uintptr_t)event);
}

/* Allocators: handles are integer(c_intptr_t). */
OMP_API intptr_t omp_init_allocator_(const intptr_t *memspace, const int *ntraits,
                                     const void *traits) {
    return (intptr_t)omp_init_allocator((uintptr_t)*memspace, *ntraits, traits);
}
OMP_API intptr_t omp_init_allocator_8_(const intptr_t *memspace, const long *ntraits,
                                       const void *traits) {
    return (intptr_t)omp_init_allocator((uintptr_t)*memspace, to_int(*ntraits), traits);
}
OMP_API void omp_destroy_allocator_(const intptr_t *a) {
    omp_destroy_allocator((uintptr_t)*a);
}
OMP_API void omp_set_default_allocator_(const intptr_t *a) {
    omp_set_default_allocator((uintptr_t)*a);
}
OMP_API intptr_t omp_get_default_allocator_(void) {
    return (intptr_t)omp_get_default_allocator();
}

/* A Fortran string as a C one (NULL when empty: for the affinity
 * routines, the affinity-format-var applies); the caller frees it. */
char *herd__omp_c_string(const char *s, size_t len) {
    if (!len)
        return NULL;
    char *c = malloc(len + 1);
    if (!c)
        herd__omp_fatal("out of memory for a character argument");
    memcpy(c, s, len);
    c[len] = '\0';
    return c;
}

/* The C result, blank-padded into buffer; returns the full length. */
static int blank_padded(char *buffer, size_t buffer_len, const char *c, size_t len) {
    size_t n = len < buffer_len ? len : buffer_len;
    memcpy(buffer, c, n);
    memset(buffer + n, ' ', buffer_len - n);
    return (int)len;
}

OMP_API void omp_set_affinity_format_(const char *format, size_t format_len) {
    char *f = herd__omp_c_string(format, format_len);
    omp_set_affinity_format(f ? f : "");
    free(f);
}

OMP_API int omp_get_affinity_format_(char *buffer, size_t buffer_len) {
    size_t len = omp_get_affinity_format(NULL, 0);
    char *c = malloc(len + 1);
    if (!c)
        herd__omp_fatal("out of memory for an affinity format");
    omp_get_affinity_format(c, len + 1);
    int r = blank_padded(buffer, buffer_len, c, len);
    free(c);
    return r;
}

OMP_API void omp_display_affinity_(const char *format, size_t format_len) {
    char *f = herd__omp_c_string(format, format_len);
    omp_display_affinity(f);
    free(f);
}

OMP_API int omp_capture_affinity_(char *buffer, const char *format, size_t buffer_len,
                                  size_t format_len) {
    char *f = herd__omp_c_string(format, format_len);
    size_t len = omp_capture_affinity(NULL, 0, f);
    char *c = malloc(len + 1);
    if (!c)
        herd__omp_fatal("out of memory for an affinity display");
    omp_capture_affinity(c, len + 1, f);
    int r = blank_padded(buffer, buffer_len, c, len);
    free(c);
    free(f);
    return r;
}

/* The Fortran bindings above under LLVM's version too: libomp's take their
 * arguments as gfortran's do (by reference, character lengths after the
 * others), and flang calls them where a program names a routine without
 * omp_lib's interface (GCC's stack.f90). */
OMP_LLVM_ALIAS(omp_capture_affinity_, "OMP_5.0");
OMP_LLVM_ALIAS(omp_destroy_allocator_, "OMP_5.0.1");
OMP_LLVM_ALIAS(omp_display_affinity_, "OMP_5.0");
OMP_LLVM_ALIAS(omp_display_env_, "OMP_5.1");
OMP_LLVM_ALIAS(omp_fulfill_event_, "OMP_5.0.1");
OMP_LLVM_ALIAS(omp_get_affinity_format_, "OMP_5.0");
OMP_LLVM_ALIAS(omp_get_default_allocator_, "OMP_5.0.1");
OMP_LLVM_ALIAS(omp_get_default_device_, "OMP_4.0");
OMP_LLVM_ALIAS(omp_get_device_num_, "OMP_5.0.2");
OMP_LLVM_ALIAS(omp_get_initial_device_, "OMP_4.5");
OMP_LLVM_ALIAS(omp_get_num_places_, "OMP_4.5");
OMP_LLVM_ALIAS(omp_get_partition_num_places_, "OMP_4.5");
OMP_LLVM_ALIAS(omp_get_partition_place_nums_, "OMP_4.5");
OMP_LLVM_ALIAS(omp_get_place_num_, "OMP_4.5");
OMP_LLVM_ALIAS(omp_get_place_num_procs_, "OMP_4.5");
OMP_LLVM_ALIAS(omp_get_place_proc_ids_, "OMP_4.5");
OMP_LLVM_ALIAS(omp_get_proc_bind_, "OMP_4.0");
OMP_LLVM_ALIAS(omp_get_supported_active_levels_, "OMP_5.0.1");
OMP_LLVM_ALIAS(omp_get_thread_limit_, "OMP_3.0");
OMP_LLVM_ALIAS(omp_init_allocator_, "OMP_5.0.1");
OMP_LLVM_ALIAS(omp_pause_resource_, "OMP_5.0");
OMP_LLVM_ALIAS(omp_pause_resource_all_, "OMP_5.0");
OMP_LLVM_ALIAS(omp_set_affinity_format_, "OMP_5.0");
OMP_LLVM_ALIAS(omp_set_default_allocator_, "OMP_5.0.1");
OMP_LLVM_ALIAS(omp_set_default_device_, "OMP_4.0");
OMP_LLVM_ALIAS(omp_set_schedule_, "OMP_3.0");
