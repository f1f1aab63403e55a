/* libomp's Fortran entry points of the kmp_* extensions (name_, arguments
 * by reference, a character argument's length after the others), as a
 * Fortran program compiled without omp_lib's bind(c) interfaces calls them
 * (ifort's and gfortran's convention; flang's omp_lib calls the C names).
 * Each calls the C routine (api.c, affinity.c). With them, the Fortran
 * forms of the interop and tool routines, which libomp exports too. */
#include "omp/kmp/kmp.h"

#include <stdlib.h>

typedef void *kmp_affinity_mask_t;

/* The C routines. */
void kmp_set_stacksize(int size);
void kmp_set_stacksize_s(size_t size);
int kmp_get_stacksize(void);
size_t kmp_get_stacksize_s(void);
void kmp_set_blocktime(int ms);
int kmp_get_blocktime(void);
void kmp_set_library_serial(void);
void kmp_set_library_turnaround(void);
void kmp_set_library_throughput(void);
void kmp_set_library(int mode);
int kmp_get_library(void);
void kmp_set_defaults(const char *str);
void kmp_set_disp_num_buffers(int n);
void kmp_set_warnings_on(void);
void kmp_set_warnings_off(void);
void *kmp_malloc(size_t size);
void *kmp_aligned_malloc(size_t size, size_t align);
void *kmp_calloc(size_t n, size_t size);
void *kmp_realloc(void *p, size_t size);
void kmp_free(void *p);
int kmp_get_cancellation_status(int kind);
int kmp_get_affinity_max_proc(void);
void kmp_create_affinity_mask(kmp_affinity_mask_t *mask);
void kmp_destroy_affinity_mask(kmp_affinity_mask_t *mask);
int kmp_set_affinity_mask_proc(int proc, kmp_affinity_mask_t *mask);
int kmp_unset_affinity_mask_proc(int proc, kmp_affinity_mask_t *mask);
int kmp_get_affinity_mask_proc(int proc, kmp_affinity_mask_t *mask);
int kmp_set_affinity(kmp_affinity_mask_t *mask);
int kmp_get_affinity(kmp_affinity_mask_t *mask);

KMP_API void kmp_set_stacksize_(const int *size) {
    kmp_set_stacksize(*size);
}
KMP_API void kmp_set_stacksize_s_(const size_t *size) {
    kmp_set_stacksize_s(*size);
}
KMP_API int kmp_get_stacksize_(void) {
    return kmp_get_stacksize();
}
KMP_API size_t kmp_get_stacksize_s_(void) {
    return kmp_get_stacksize_s();
}
KMP_API void kmp_set_blocktime_(const int *ms) {
    kmp_set_blocktime(*ms);
}
KMP_API int kmp_get_blocktime_(void) {
    return kmp_get_blocktime();
}
KMP_API void kmp_set_library_serial_(void) {
    kmp_set_library_serial();
}
KMP_API void kmp_set_library_turnaround_(void) {
    kmp_set_library_turnaround();
}
KMP_API void kmp_set_library_throughput_(void) {
    kmp_set_library_throughput();
}
KMP_API void kmp_set_library_(const int *mode) {
    kmp_set_library(*mode);
}
KMP_API int kmp_get_library_(void) {
    return kmp_get_library();
}
/* a blank-padded character argument: its blanks are not the value's */
KMP_API void kmp_set_defaults_(const char *str, size_t len) {
    while (len > 0 && str[len - 1] == ' ')
        len--;
    char *s = herd__omp_c_string(str, len);
    kmp_set_defaults(s);
    free(s); /* kmp_set_defaults keeps a copy of what it takes */
}
KMP_API void kmp_set_disp_num_buffers_(const int *n) {
    kmp_set_disp_num_buffers(*n);
}
KMP_API void kmp_set_warnings_on_(void) {
    kmp_set_warnings_on();
}
KMP_API void kmp_set_warnings_off_(void) {
    kmp_set_warnings_off();
}
KMP_API void *kmp_malloc_(const size_t *size) {
    return kmp_malloc(*size);
}
KMP_API void *kmp_aligned_malloc_(const size_t *size, const size_t *align) {
    return kmp_aligned_malloc(*size, *align);
}
KMP_API void *kmp_calloc_(const size_t *n, const size_t *size) {
    return kmp_calloc(*n, *size);
}
KMP_API void *kmp_realloc_(void *const *p, const size_t *size) {
    return kmp_realloc(*p, *size);
}
KMP_API void kmp_free_(void *const *p) {
    kmp_free(*p);
}
/* by value, as libomp's own Fortran entry takes it */
KMP_API int kmp_get_cancellation_status_(int kind) {
    return kmp_get_cancellation_status(kind);
}
KMP_API int kmp_get_affinity_max_proc_(void) {
    return kmp_get_affinity_max_proc();
}
KMP_API void kmp_create_affinity_mask_(kmp_affinity_mask_t *mask) {
    kmp_create_affinity_mask(mask);
}
KMP_API void kmp_destroy_affinity_mask_(kmp_affinity_mask_t *mask) {
    kmp_destroy_affinity_mask(mask);
}
KMP_API int kmp_set_affinity_mask_proc_(const int *proc, kmp_affinity_mask_t *mask) {
    return kmp_set_affinity_mask_proc(*proc, mask);
}
KMP_API int kmp_unset_affinity_mask_proc_(const int *proc, kmp_affinity_mask_t *mask) {
    return kmp_unset_affinity_mask_proc(*proc, mask);
}
KMP_API int kmp_get_affinity_mask_proc_(const int *proc, kmp_affinity_mask_t *mask) {
    return kmp_get_affinity_mask_proc(*proc, mask);
}
KMP_API int kmp_set_affinity_(kmp_affinity_mask_t *mask) {
    return kmp_set_affinity(mask);
}
KMP_API int kmp_get_affinity_(kmp_affinity_mask_t *mask) {
    return kmp_get_affinity(mask);
}

/* libomp's Fortran entry points of the interop and tool routines (api.c:
 * no interop object and no tool here), arguments by reference; ret_code
 * is optional in Fortran (NULL when absent), as in C. */
int omp_get_num_interop_properties(const void *interop);
intptr_t omp_get_interop_int(const void *interop, int prop, int *rc);
void *omp_get_interop_ptr(const void *interop, int prop, int *rc);
const char *omp_get_interop_str(const void *interop, int prop, int *rc);
const char *omp_get_interop_name(const void *interop, int prop);
const char *omp_get_interop_type_desc(const void *interop, int prop);
const char *omp_get_interop_rc_desc(const void *interop, int rc);
int omp_control_tool(int command, int modifier, void *arg);

KMP_API int omp_get_num_interop_properties_(const void *const *interop) {
    return omp_get_num_interop_properties(*interop);
}
KMP_API intptr_t omp_get_interop_int_(const void *const *interop, const int *prop, int *rc) {
    return omp_get_interop_int(*interop, *prop, rc);
}
KMP_API void *omp_get_interop_ptr_(const void *const *interop, const int *prop, int *rc) {
    return omp_get_interop_ptr(*interop, *prop, rc);
}
KMP_API const char *omp_get_interop_str_(const void *const *interop, const int *prop, int *rc) {
    return omp_get_interop_str(*interop, *prop, rc);
}
KMP_API const char *omp_get_interop_name_(const void *const *interop, const int *prop) {
    return omp_get_interop_name(*interop, *prop);
}
KMP_API const char *omp_get_interop_type_desc_(const void *const *interop, const int *prop) {
    return omp_get_interop_type_desc(*interop, *prop);
}
KMP_API const char *omp_get_interop_rc_desc_(const void *const *interop, const int *rc) {
    return omp_get_interop_rc_desc(*interop, *rc);
}
KMP_API int omp_control_tool_(const int *command, const int *modifier, void *arg) {
    return omp_control_tool(*command, *modifier, arg);
}
