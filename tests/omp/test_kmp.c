/* libomp's own extensions as a clang program calls them (clang build only:
 * libgomp has none of them), under the system libomp and herd's libomp.so.5:
 * - the affinity mask routines (kmp_affinity_mask_t): a mask of OS
 *   processor numbers, checked numbers, and binding the calling thread;
 * - the Fortran entry points of the kmp_* and affinity routines (name_,
 *   arguments by reference, a character argument's length after the
 *   others), as a Fortran program without omp_lib's interfaces calls them;
 * - omp_get_schedule_ at LLVM's version: the same run-sched-var as the C
 *   routine (libomp's default when nothing set it). */
#include "check_omp.h"

#include <sched.h>
#include <stdint.h>
#include <string.h>

/* The Fortran entry points (libomp's kmp_ftn_entry.h convention). */
void kmp_set_blocktime_(const int *ms);
int kmp_get_blocktime_(void);
size_t kmp_get_stacksize_s_(void);
int kmp_get_stacksize_(void);
void kmp_set_library_throughput_(void);
int kmp_get_library_(void);
void *kmp_malloc_(const size_t *size);
void *kmp_aligned_malloc_(const size_t *size, const size_t *align);
void *kmp_calloc_(const size_t *n, const size_t *size);
void *kmp_realloc_(void *const *p, const size_t *size);
void kmp_free_(void *const *p);
int kmp_get_affinity_max_proc_(void);
void kmp_create_affinity_mask_(kmp_affinity_mask_t *mask);
void kmp_destroy_affinity_mask_(kmp_affinity_mask_t *mask);
int kmp_set_affinity_mask_proc_(const int *proc, kmp_affinity_mask_t *mask);
int kmp_unset_affinity_mask_proc_(const int *proc, kmp_affinity_mask_t *mask);
int kmp_get_affinity_mask_proc_(const int *proc, kmp_affinity_mask_t *mask);
int kmp_set_affinity_(kmp_affinity_mask_t *mask);
int kmp_get_affinity_(kmp_affinity_mask_t *mask);
void omp_get_schedule_(int *kind, int *chunk);
void kmp_set_defaults_(const char *str, size_t len); /* the length after the others */
int __kmpc_get_target_offload(void);

/* The first CPU the process may run on, and how many it may. */
static int first_cpu(int *count) {
    cpu_set_t s;
    CHECK_EQ(sched_getaffinity(0, sizeof s, &s), 0);
    *count = CPU_COUNT(&s);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &s))
            return c;
    CHECK(0);
    return -1;
}

/* Binds the calling thread to cpu through a mask and checks the kernel's
 * mask and kmp_get_affinity's; restores all of `all`. */
static void bind_and_check(int cpu, kmp_affinity_mask_t all) {
    kmp_affinity_mask_t m;
    kmp_create_affinity_mask(&m);
    CHECK_EQ(kmp_set_affinity_mask_proc(cpu, &m), 0);
    CHECK_EQ(kmp_set_affinity(&m), 0);
    cpu_set_t s;
    CHECK_EQ(sched_getaffinity(0, sizeof s, &s), 0);
    CHECK_EQ(CPU_COUNT(&s), 1);
    CHECK(CPU_ISSET(cpu, &s));
    kmp_affinity_mask_t got;
    kmp_create_affinity_mask(&got);
    CHECK_EQ(kmp_get_affinity(&got), 0);
    for (int c = 0; c < kmp_get_affinity_max_proc(); c++)
        CHECK_EQ(kmp_get_affinity_mask_proc(c, &got), c == cpu);
    kmp_destroy_affinity_mask(&got);
    kmp_destroy_affinity_mask(&m);
    CHECK(m == NULL);
    CHECK_EQ(kmp_set_affinity(&all), 0);
}

static void test_masks(void) {
    int n, cpu = first_cpu(&n), max = kmp_get_affinity_max_proc();
    CHECK(max > cpu);
    CHECK_EQ(kmp_get_affinity_max_proc_(), max);
    kmp_affinity_mask_t m;
    kmp_create_affinity_mask(&m);
    CHECK(m != NULL);
    CHECK_EQ(kmp_get_affinity_mask_proc(cpu, &m), 0); /* created empty */
    CHECK_EQ(kmp_set_affinity_mask_proc(cpu, &m), 0);
    CHECK_EQ(kmp_get_affinity_mask_proc(cpu, &m), 1);
    CHECK_EQ(kmp_unset_affinity_mask_proc(cpu, &m), 0);
    CHECK_EQ(kmp_get_affinity_mask_proc(cpu, &m), 0);
    /* numbers no processor has */
    CHECK_EQ(kmp_set_affinity_mask_proc(-1, &m), -1);
    CHECK_EQ(kmp_set_affinity_mask_proc(max, &m), -1);
    CHECK_EQ(kmp_get_affinity_mask_proc(max, &m), -1);
    /* the Fortran forms, the same mask */
    CHECK_EQ(kmp_set_affinity_mask_proc_(&cpu, &m), 0);
    CHECK_EQ(kmp_get_affinity_mask_proc_(&cpu, &m), 1);
    CHECK_EQ(kmp_unset_affinity_mask_proc_(&cpu, &m), 0);
    CHECK_EQ(kmp_get_affinity_mask_proc_(&cpu, &m), 0);
    kmp_destroy_affinity_mask_(&m);
    CHECK(m == NULL);

    /* the thread's mask now, to bind it back to */
    kmp_affinity_mask_t all;
    kmp_create_affinity_mask_(&all);
    CHECK_EQ(kmp_get_affinity_(&all), 0);
    int in = 0;
    for (int c = 0; c < max; c++)
        in += kmp_get_affinity_mask_proc(c, &all) == 1;
    CHECK_EQ(in, n);
    bind_and_check(cpu, all);
    CHECK_EQ(kmp_set_affinity_(&all), 0);
    cpu_set_t s;
    CHECK_EQ(sched_getaffinity(0, sizeof s, &s), 0);
    CHECK_EQ(CPU_COUNT(&s), n);

    /* in a team: each member binds its own thread, and only its own */
    int bad = 0;
#pragma omp parallel num_threads(2) reduction(+ : bad)
    {
        kmp_affinity_mask_t mine;
        kmp_create_affinity_mask(&mine);
        bad += kmp_set_affinity_mask_proc(cpu, &mine) != 0;
        bad += kmp_set_affinity(&mine) != 0;
        cpu_set_t t;
        bad += sched_getaffinity(0, sizeof t, &t) != 0 || CPU_COUNT(&t) != 1 || !CPU_ISSET(cpu, &t);
        bad += kmp_set_affinity(&all) != 0;
        kmp_destroy_affinity_mask(&mine);
    }
    CHECK_EQ(bad, 0);
    kmp_destroy_affinity_mask(&all);
}

static void test_fortran_kmp(void) {
    int ms = 42;
    kmp_set_blocktime_(&ms);
    CHECK_EQ(kmp_get_blocktime_(), 42);
    CHECK_EQ(kmp_get_blocktime(), 42);
    CHECK_EQ(kmp_get_stacksize_s_(), kmp_get_stacksize_s());
    CHECK_EQ(kmp_get_stacksize_(), kmp_get_stacksize());
    kmp_set_library_throughput_();
    CHECK_EQ(kmp_get_library_(), kmp_get_library());

    size_t size = 100, align = 256, n = 10, el = 8;
    char *p = kmp_malloc_(&size);
    CHECK(p != NULL);
    memset(p, 7, size);
    size = 4000;
    void *q = p;
    p = kmp_realloc_(&q, &size);
    CHECK(p != NULL);
    CHECK_EQ(p[99], 7);
    q = p;
    kmp_free_(&q);
    void *a = kmp_aligned_malloc_(&size, &align);
    CHECK(a != NULL && (uintptr_t)a % align == 0);
    kmp_free_(&a);
    long *z = kmp_calloc_(&n, &el);
    CHECK(z != NULL);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ(z[i], 0);
    q = z;
    kmp_free_(&q);

    /* a character argument and its length (libomp reads past the length:
     * a string that ends there) */
    static const char off[] = "OMP_TARGET_OFFLOAD=DISABLED", def[] = "OMP_TARGET_OFFLOAD=default";
    kmp_set_defaults_(off, sizeof off - 1);
    CHECK_EQ(__kmpc_get_target_offload(), 0); /* disabled */
    kmp_set_defaults_(def, sizeof def - 1);
    CHECK_EQ(__kmpc_get_target_offload(), 1);
}

static void test_schedule(void) {
    int ck, cc, fk, fc;
    omp_get_schedule((omp_sched_t *)&ck, &cc);
    omp_get_schedule_(&fk, &fc);
    CHECK_EQ(fk, ck & 0x7fffffff); /* Fortran's kind has no monotonic bit */
    CHECK_EQ(fc, cc);
    omp_set_schedule(omp_sched_guided, 5);
    omp_get_schedule_(&fk, &fc);
    CHECK_EQ(fk, omp_sched_guided);
    CHECK_EQ(fc, 5);
}

int main(void) {
    test_masks();
    test_fortran_kmp();
    test_schedule();
    puts("kmp: ok");
    return 0;
}
