/* The device memory routines and omp_pause_resource, on a machine whose
 * only device is the host (the initial device, number 0 =
 * omp_get_num_devices()), as the system libgomp without offload plugins:
 * host memory is device memory, every host address is present, and a
 * device number other than the host's is refused (NULL, or non-zero). */
#include "omp/omp.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define HOST 0 /* omp_get_initial_device() */

OMP_API void *omp_target_alloc(size_t size, int device) {
    return device == HOST ? malloc(size ? size : 1) : NULL;
}

OMP_API void omp_target_free(void *ptr, int device) {
    if (device == HOST)
        free(ptr);
}

OMP_API int omp_target_is_present(const void *ptr, int device) {
    (void)ptr;
    return device == HOST;
}

OMP_API int omp_target_memcpy(void *dst, const void *src, size_t length, size_t dst_offset,
                              size_t src_offset, int dst_device, int src_device) {
    if (dst_device != HOST || src_device != HOST)
        return EINVAL;
    memmove((char *)dst + dst_offset, (const char *)src + src_offset, length);
    return 0;
}

/* One hyper-rectangle of nd dimensions (row-major, the last varying
 * fastest): volume[], offsets[] and dimensions[] in elements. */
static void copy_rect(char *dst, const char *src, size_t es, int nd, const size_t *vol,
                      const size_t *doff, const size_t *soff, const size_t *ddim,
                      const size_t *sdim) {
    if (nd == 1) {
        memmove(dst + doff[0] * es, src + soff[0] * es, vol[0] * es);
        return;
    }
    size_t dstride = es, sstride = es;
    for (int i = 1; i < nd; i++) {
        dstride *= ddim[i];
        sstride *= sdim[i];
    }
    for (size_t j = 0; j < vol[0]; j++)
        copy_rect(dst + (doff[0] + j) * dstride, src + (soff[0] + j) * sstride, es, nd - 1, vol + 1,
                  doff + 1, soff + 1, ddim + 1, sdim + 1);
}

OMP_API int omp_target_memcpy_rect(void *dst, const void *src, size_t element_size, int num_dims,
                                   const size_t *volume, const size_t *dst_offsets,
                                   const size_t *src_offsets, const size_t *dst_dimensions,
                                   const size_t *src_dimensions, int dst_device, int src_device) {
    if (!dst && !src)
        return INT_MAX; /* the number of dimensions it takes */
    if (dst_device != HOST || src_device != HOST || num_dims < 1 || !dst || !src)
        return EINVAL;
    copy_rect(dst, src, element_size, num_dims, volume, dst_offsets, src_offsets, dst_dimensions,
              src_dimensions);
    return 0;
}

/* Device memory of the host is the host's memory: nothing to associate. */
OMP_API int omp_target_associate_ptr(const void *host_ptr, const void *device_ptr, size_t size,
                                     size_t device_offset, int device) {
    (void)host_ptr, (void)device_ptr, (void)size, (void)device_offset, (void)device;
    return EINVAL;
}

OMP_API int omp_target_disassociate_ptr(const void *ptr, int device) {
    (void)ptr, (void)device;
    return EINVAL;
}

/* Pausing stops herd's workers (their threads end, their stacks are
 * freed) when no region runs: so a program may fork() afterwards and the
 * child start afresh, as OpenMP 5.0 prescribes; the next region starts herd
 * again. Soft and hard pauses do the same (herd keeps no other state worth
 * keeping); threadprivate data of the ended threads goes with them. While a
 * region runs the pause is refused (non-zero). The host is the only device. */
enum { PAUSE_SOFT = 1, PAUSE_HARD = 2 };

OMP_API int omp_pause_resource(int kind, int device) {
    if ((kind != PAUSE_SOFT && kind != PAUSE_HARD) || (device != 0 && device != -1))
        return -1;
    return herd__omp_pause();
}

OMP_API int omp_pause_resource_all(int kind) {
    if (kind != PAUSE_SOFT && kind != PAUSE_HARD)
        return -1;
    return herd__omp_pause();
}

/* The same routines under the LLVM ABI's version (kmp/, omp.h). */
OMP_LLVM_ALIAS(omp_pause_resource, "OMP_5.0");
OMP_LLVM_ALIAS(omp_pause_resource_all, "OMP_5.0");
