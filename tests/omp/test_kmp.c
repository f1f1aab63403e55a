/* libomp's own extensions as a clang program calls them (clang build only:
 * libgomp has none of them), under the system libomp and herd's libomp.so.5:
 * - the affinity mask routines (kmp_affinity_mask_t): a mask of OS
 *   processor numbers, checked numbers, and binding the calling thread;
 * - the Fortran entry points of the kmp_* and affinity routines (name_,
 *   arguments by reference, a character argument's length after the
 *   others), as a Fortran program without omp_lib's interfaces calls them;
 * - omp_get_schedule_ at LLVM's version: the same run-sched-var as the C
 *   routine (libomp's default when nothing set it);
 * - entry points of libomp's that clang 14 does not emit but newer clangs,
 *   the Intel compilers or libomptarget call (tests/omp/
 *   kmp_exports_omitted.txt says why the rest are left out): the Intel
 *   lock entries, the barrier with a master block, the error directive's
 *   warning (its fatal form and the lines: omp.kmp.clang.error*), the
 *   allocator entries, proxy tasks, task parts and ids, vector
 *   threadprivate, the kmpc_* forms of the kmp_* extensions, the Fortran
 *   interop and tool routines, pausing.
 * Each checks what libomp does too (the same program runs on both). */
#include "check_omp.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
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

/* libomp's entry points, as its kmp.h declares them. */
typedef struct ident {
    int32_t reserved_1, flags, reserved_2, reserved_3;
    const char *psource;
} ident_t;
static ident_t loc = {0, 2, 0, 0, NULL}; /* no place: libomp 14 crashes printing one */
int32_t __kmpc_global_thread_num(ident_t *loc);
void __kmpc_init_lock(ident_t *loc, int32_t gtid, void **lock);
void __kmpc_init_lock_with_hint(ident_t *loc, int32_t gtid, void **lock, uintptr_t hint);
void __kmpc_destroy_lock(ident_t *loc, int32_t gtid, void **lock);
void __kmpc_set_lock(ident_t *loc, int32_t gtid, void **lock);
void __kmpc_unset_lock(ident_t *loc, int32_t gtid, void **lock);
int __kmpc_test_lock(ident_t *loc, int32_t gtid, void **lock);
void __kmpc_init_nest_lock(ident_t *loc, int32_t gtid, void **lock);
void __kmpc_init_nest_lock_with_hint(ident_t *loc, int32_t gtid, void **lock, uintptr_t hint);
void __kmpc_destroy_nest_lock(ident_t *loc, int32_t gtid, void **lock);
void __kmpc_set_nest_lock(ident_t *loc, int32_t gtid, void **lock);
void __kmpc_unset_nest_lock(ident_t *loc, int32_t gtid, void **lock);
int __kmpc_test_nest_lock(ident_t *loc, int32_t gtid, void **lock);
int32_t __kmpc_barrier_master(ident_t *loc, int32_t gtid);
void __kmpc_end_barrier_master(ident_t *loc, int32_t gtid);
int32_t __kmpc_barrier_master_nowait(ident_t *loc, int32_t gtid);
void __kmpc_scope(ident_t *loc, int32_t gtid, void *reserved);
void __kmpc_end_scope(ident_t *loc, int32_t gtid, void *reserved);
void __kmpc_error(ident_t *loc, int severity, const char *message);
omp_allocator_handle_t __kmpc_init_allocator(int gtid, omp_memspace_handle_t space, int ntraits,
                                             omp_alloctrait_t traits[]);
void __kmpc_destroy_allocator(int gtid, omp_allocator_handle_t al);
void __kmpc_set_default_allocator(int gtid, omp_allocator_handle_t al);
omp_allocator_handle_t __kmpc_get_default_allocator(int gtid);
typedef int32_t (*kmp_routine)(int32_t gtid, void *task);
typedef struct kmp_task {
    void *shareds;
    kmp_routine routine;
    int32_t part_id;
} kmp_task_t;
kmp_task_t *__kmpc_omp_task_alloc(ident_t *loc, int32_t gtid, int32_t flags, size_t task_size,
                                  size_t shareds_size, kmp_routine routine);
int32_t __kmpc_omp_task(ident_t *loc, int32_t gtid, kmp_task_t *task);
int32_t __kmpc_omp_task_parts(ident_t *loc, int32_t gtid, kmp_task_t *task);
int32_t __kmpc_omp_taskwait(ident_t *loc, int32_t gtid);
void __kmpc_proxy_task_completed_ooo(kmp_task_t *task);
uint64_t __kmpc_get_taskid(void);
uint64_t __kmpc_get_parent_taskid(void);
void __kmpc_pop_num_threads(ident_t *loc, int32_t gtid);
int __kmpc_pause_resource(int level);
void __kmpc_threadprivate_register_vec(ident_t *loc, void *data, void *(*ctor)(void *, size_t),
                                       void *(*cctor)(void *, void *, size_t),
                                       void (*dtor)(void *, size_t), size_t n);
void *__kmpc_threadprivate(ident_t *loc, int32_t gtid, void *data, size_t size);
void *kmp_threadprivate_insert(int gtid, void *pc_addr, void *data_addr, size_t size);
int kmp_get_num_known_threads(void);
int kmp_get_num_known_threads_(void);
int kmp_set_thread_affinity_mask_initial(void);
void kmpc_set_blocktime(int ms);
void kmpc_set_stacksize_s(size_t size);
void kmpc_set_defaults(const char *str);
void kmpc_set_disp_num_buffers(int n);
void *kmpc_malloc(size_t size);
void *kmpc_calloc(size_t n, size_t size);
void *kmpc_realloc(void *p, size_t size);
void *kmpc_aligned_malloc(size_t size, size_t align);
void kmpc_free(void *p);
int kmpc_set_affinity_mask_proc(int proc, void **mask);
int kmpc_unset_affinity_mask_proc(int proc, void **mask);
int kmpc_get_affinity_mask_proc(int proc, void **mask);
int omp_control_tool_(const int *command, const int *modifier, void *arg);
int omp_get_num_interop_properties_(const omp_interop_t *interop);
intptr_t omp_get_interop_int_(const omp_interop_t *interop, const int *prop, int *rc);
const char *omp_get_interop_name_(const omp_interop_t *interop, const int *prop);
void omp_init_lock_with_hint_(omp_lock_t *lock, const int *hint);
void omp_init_nest_lock_with_hint_(omp_nest_lock_t *lock, const int *hint);
void omp_set_lock_(omp_lock_t *lock);
void omp_unset_lock_(omp_lock_t *lock);
int omp_test_nest_lock_(omp_nest_lock_t *lock);
void omp_unset_nest_lock_(omp_nest_lock_t *lock);
void omp_destroy_lock_(omp_lock_t *lock);
void omp_destroy_nest_lock_(omp_nest_lock_t *lock);

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
    CHECK_EQ(kmp_get_library(), 3); /* libomp's library_throughput */

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

/* The Intel lock entries: a simple lock excludes a team of 4 from a
 * read-modify-write; a nest lock counts its owner's sets and excludes the
 * others; the variable holds what omp_*_lock hold (mixed calls). */
static void test_locks(void) {
    int gtid = __kmpc_global_thread_num(&loc);
    void *lk = NULL, *nl = NULL;
    __kmpc_init_lock_with_hint(&loc, gtid, &lk, omp_sync_hint_contended);
    __kmpc_init_nest_lock(&loc, gtid, &nl);
    long count = 0;
    int team = 0, bad = 0;
#pragma omp parallel num_threads(4) reduction(+ : team, bad)
    {
        int me = __kmpc_global_thread_num(&loc);
        team++;
        for (int i = 0; i < 2000; i++) {
            __kmpc_set_lock(&loc, me, &lk);
            long c = count;
            if (i % 256 == 0)
                sched_yield(); /* hold it a while now and then */
            count = c + 1;
            __kmpc_unset_lock(&loc, me, &lk);
        }
#pragma omp barrier
        /* member 0 holds the nest lock three deep; the others cannot have it */
        if (omp_get_thread_num() == 0) {
            __kmpc_set_nest_lock(&loc, me, &nl);
            __kmpc_set_nest_lock(&loc, me, &nl);
            bad += __kmpc_test_nest_lock(&loc, me, &nl) != 3;
            bad += __kmpc_test_lock(&loc, me, &lk) != 1; /* free: taken */
        }
#pragma omp barrier
        if (omp_get_thread_num() != 0) {
            bad += __kmpc_test_nest_lock(&loc, me, &nl) != 0;
            bad += __kmpc_test_lock(&loc, me, &lk) != 0;
        }
#pragma omp barrier
        if (omp_get_thread_num() == 0) {
            for (int k = 0; k < 3; k++)
                __kmpc_unset_nest_lock(&loc, me, &nl);
            __kmpc_unset_lock(&loc, me, &lk);
        }
#pragma omp barrier
        if (omp_get_thread_num() == 1) {
            bad += __kmpc_test_nest_lock(&loc, me, &nl) != 1;
            __kmpc_unset_nest_lock(&loc, me, &nl);
        }
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(count, 2000L * team);
    __kmpc_destroy_nest_lock(&loc, gtid, &nl);
    __kmpc_destroy_lock(&loc, gtid, &lk);

    /* omp_init_lock's variable, set by the entry point, and the reverse */
    omp_lock_t ol;
    omp_init_lock(&ol);
    __kmpc_set_lock(&loc, gtid, (void **)&ol);
    CHECK_EQ(omp_test_lock(&ol), 0);
    omp_unset_lock(&ol);
    __kmpc_destroy_lock(&loc, gtid, (void **)&ol);
    __kmpc_init_lock(&loc, gtid, &lk);
    omp_set_lock((omp_lock_t *)&lk);
    CHECK_EQ(__kmpc_test_lock(&loc, gtid, &lk), 0);
    __kmpc_unset_lock(&loc, gtid, &lk);
    omp_destroy_lock((omp_lock_t *)&lk);
    omp_nest_lock_t onl;
    omp_init_nest_lock(&onl);
    CHECK_EQ(__kmpc_test_nest_lock(&loc, gtid, (void **)&onl), 1);
    CHECK_EQ(omp_test_nest_lock(&onl), 2);
    omp_unset_nest_lock(&onl);
    __kmpc_unset_nest_lock(&loc, gtid, (void **)&onl);
    omp_destroy_nest_lock(&onl);
    __kmpc_init_nest_lock_with_hint(&loc, gtid, &nl, omp_sync_hint_none);
    __kmpc_destroy_nest_lock(&loc, gtid, &nl);

    /* the Fortran hinted inits, used by the Fortran routines */
    int hint = omp_sync_hint_uncontended;
    omp_lock_t fl;
    omp_nest_lock_t fnl;
    omp_init_lock_with_hint_(&fl, &hint);
    omp_set_lock_(&fl);
    CHECK_EQ(omp_test_lock(&fl), 0);
    omp_unset_lock_(&fl);
    omp_destroy_lock_(&fl);
    omp_init_nest_lock_with_hint_(&fnl, &hint);
    CHECK_EQ(omp_test_nest_lock_(&fnl), 1);
    CHECK_EQ(omp_test_nest_lock_(&fnl), 2);
    omp_unset_nest_lock_(&fnl);
    omp_unset_nest_lock_(&fnl);
    omp_destroy_nest_lock_(&fnl);
}

/* Every member arrives before member 0 alone gets 1; the others leave only
 * after its end call, and see what it wrote in between. */
static void test_barrier_master(void) {
    atomic_int arrived = 0, arrived2 = 0;
    int stage = 0, bad = 0, masters = 0, masters2 = 0;
#pragma omp parallel num_threads(4) reduction(+ : bad, masters, masters2)
    {
        int me = __kmpc_global_thread_num(&loc), n = omp_get_num_threads();
        atomic_fetch_add(&arrived, 1);
        if (__kmpc_barrier_master(&loc, me)) {
            masters++;
            bad += omp_get_thread_num() != 0;
            bad += atomic_load(&arrived) != n;
            usleep(20000); /* the others wait on meanwhile */
            stage = 1;
            __kmpc_end_barrier_master(&loc, me);
        } else {
            bad += stage != 1;
        }
        atomic_fetch_add(&arrived2, 1);
        if (__kmpc_barrier_master_nowait(&loc, me)) {
            masters2++;
            bad += omp_get_thread_num() != 0;
            bad += atomic_load(&arrived2) != n;
        }
        __kmpc_scope(&loc, me, NULL); /* nothing to do: the compiler's code */
        __kmpc_end_scope(&loc, me, NULL);
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(masters, 1);
    CHECK_EQ(masters2, 1);
}

/* uses_allocators' entry points and def-allocator-var's. */
static void test_allocators(void) {
    int gtid = __kmpc_global_thread_num(&loc);
    omp_alloctrait_t traits[] = {{omp_atk_alignment, 256}};
    omp_allocator_handle_t al = __kmpc_init_allocator(gtid, omp_default_mem_space, 1, traits);
    CHECK(al != omp_null_allocator);
    char *p = omp_alloc(100, al);
    CHECK(p != NULL && (uintptr_t)p % 256 == 0);
    omp_free(p, al);
    omp_allocator_handle_t was = __kmpc_get_default_allocator(gtid);
    CHECK(was == omp_get_default_allocator());
    __kmpc_set_default_allocator(gtid, al);
    CHECK(__kmpc_get_default_allocator(gtid) == al);
    CHECK(omp_get_default_allocator() == al);
    p = omp_alloc(10, omp_null_allocator); /* the default: al */
    CHECK(p != NULL && (uintptr_t)p % 256 == 0);
    omp_free(p, omp_null_allocator);
    __kmpc_set_default_allocator(gtid, was);
    CHECK(omp_get_default_allocator() == was);
    __kmpc_destroy_allocator(gtid, al);
}

/* A proxy task (libomptarget's asynchronous work): complete only when a
 * thread of no team says so; taskwait waits for that. A task part (the
 * Intel compilers' untied tasks) is queued and run as a task. */
enum { TASK_TIED = 1, TASK_PROXY = 0x10 };
static atomic_int proxy_done, part_ran;
static uint64_t part_id, part_parent;
static void *complete_later(void *task) {
    usleep(30000);
    atomic_store(&proxy_done, 1);
    __kmpc_proxy_task_completed_ooo(task);
    return NULL;
}
static pthread_t completer;
static int32_t proxy_body(int32_t gtid, void *task) {
    CHECK_EQ(pthread_create(&completer, NULL, complete_later, task), 0);
    return 0;
}
static int32_t part_body(int32_t gtid, void *task) {
    part_id = __kmpc_get_taskid();
    part_parent = __kmpc_get_parent_taskid();
    atomic_store(&part_ran, 1);
    return 0;
}
static void test_tasks(void) {
    CHECK_EQ(__kmpc_get_parent_taskid(), 0); /* the initial task has none */
    CHECK(__kmpc_get_taskid() != 0);
    int bad = 0;
#pragma omp parallel num_threads(2) reduction(+ : bad)
#pragma omp single
    {
        int me = __kmpc_global_thread_num(&loc);
        kmp_task_t *t = __kmpc_omp_task_alloc(&loc, me, TASK_TIED | TASK_PROXY, sizeof(kmp_task_t),
                                              0, proxy_body);
        __kmpc_omp_task(&loc, me, t);
        kmp_task_t *u =
            __kmpc_omp_task_alloc(&loc, me, TASK_TIED, sizeof(kmp_task_t), 0, part_body);
        __kmpc_omp_task_parts(&loc, me, u);
        __kmpc_omp_taskwait(&loc, me);
        bad += atomic_load(&proxy_done) != 1;
        bad += atomic_load(&part_ran) != 1;
        bad += part_id == 0 || part_parent == 0; /* (libomp's are all ~0) */
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(pthread_join(completer, NULL), 0);
}

/* Vector threadprivate (an array of C++ objects, the Intel compilers'
 * registration): a thread's copy is built by the vector constructor with
 * the registered length; the initial thread's is the variable itself.
 * kmp_threadprivate_insert's record has the copy as its par_addr. */
static long tp_vec[4] = {1, 2, 3, 4};
static long tp_plain = 5;
static atomic_int tp_ctor_len;
static void *tp_ctor(void *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        ((long *)p)[i] = 7;
    atomic_store(&tp_ctor_len, (int)n);
    return p;
}
typedef struct { /* libomp's struct private_common */
    void *next, *link, *gbl_addr, *par_addr;
    size_t cmn_size;
} tp_record;
static void test_threadprivate(void) {
    __kmpc_threadprivate_register_vec(&loc, tp_vec, tp_ctor, NULL, NULL, 4);
    int me0 = __kmpc_global_thread_num(&loc);
    CHECK(__kmpc_threadprivate(&loc, me0, tp_vec, sizeof tp_vec) == tp_vec);
    int bad = 0;
#pragma omp parallel num_threads(2) reduction(+ : bad)
    {
        int me = __kmpc_global_thread_num(&loc);
        long *v = __kmpc_threadprivate(&loc, me, tp_vec, sizeof tp_vec);
        if (gettid() == getpid()) {
            bad += v != tp_vec;
        } else {
            bad += v == tp_vec || atomic_load(&tp_ctor_len) != 4;
            for (int i = 0; i < 4; i++)
                bad += v[i] != 7;
        }
        tp_record *r = kmp_threadprivate_insert(me, &tp_plain, &tp_plain, sizeof tp_plain);
        bad +=
            r == NULL || r->par_addr != __kmpc_threadprivate(&loc, me, &tp_plain, sizeof tp_plain);
        bad += gettid() == getpid() ? r->par_addr != &tp_plain : *(long *)r->par_addr != 5;
    }
    CHECK_EQ(bad, 0);
}

/* The kmpc_* forms do what the kmp_* routines do. */
static void test_kmpc_forms(void) {
    kmpc_set_blocktime(77);
    CHECK_EQ(kmp_get_blocktime(), 77);
    kmpc_set_stacksize_s(kmp_get_stacksize_s()); /* what it is: nothing to refuse */
    kmpc_set_disp_num_buffers(7);
    kmpc_set_defaults("OMP_TARGET_OFFLOAD=DISABLED");
    CHECK_EQ(__kmpc_get_target_offload(), 0);
    kmpc_set_defaults("OMP_TARGET_OFFLOAD=default");
    char *p = kmpc_malloc(100);
    CHECK(p != NULL);
    memset(p, 3, 100);
    p = kmpc_realloc(p, 5000);
    CHECK(p != NULL && p[99] == 3);
    kmpc_free(p);
    long *z = kmpc_calloc(8, sizeof *z);
    CHECK(z != NULL && z[7] == 0);
    kmpc_free(z);
    void *a = kmpc_aligned_malloc(64, 128);
    CHECK(a != NULL && (uintptr_t)a % 128 == 0);
    kmpc_free(a);
    int n, cpu = first_cpu(&n);
    kmp_affinity_mask_t m;
    kmp_create_affinity_mask(&m);
    CHECK_EQ(kmpc_set_affinity_mask_proc(cpu, &m), 0);
    CHECK_EQ(kmpc_get_affinity_mask_proc(cpu, &m), 1);
    CHECK_EQ(kmp_get_affinity_mask_proc(cpu, &m), 1);
    CHECK_EQ(kmpc_unset_affinity_mask_proc(cpu, &m), 0);
    CHECK_EQ(kmpc_get_affinity_mask_proc(cpu, &m), 0);
    CHECK_EQ(kmpc_set_affinity_mask_proc(-1, &m), -1);

    /* bound to one CPU, then back on the process's initial ones */
    CHECK_EQ(kmp_set_affinity_mask_proc(cpu, &m), 0);
    CHECK_EQ(kmp_set_affinity(&m), 0);
    CHECK_EQ(kmp_set_thread_affinity_mask_initial(), 0);
    cpu_set_t s;
    CHECK_EQ(sched_getaffinity(0, sizeof s, &s), 0);
    CHECK_EQ(CPU_COUNT(&s), n);
    kmp_destroy_affinity_mask(&m);

    CHECK(kmp_get_num_known_threads() >= 1);
    CHECK_EQ(kmp_get_num_known_threads_(), kmp_get_num_known_threads());
}

/* The Fortran forms of the interop and tool routines: no interop object,
 * no tool. (libomp leaves ret_code alone without libomptarget.) */
static void test_fortran_interop(void) {
    omp_interop_t none = omp_interop_none;
    int cmd = omp_control_tool_start, mod = 0, prop = omp_ipr_fr_id, rc = 0;
    CHECK_EQ(omp_control_tool_(&cmd, &mod, NULL), omp_control_tool_notool);
    CHECK_EQ(omp_get_num_interop_properties_(&none), 0);
    CHECK_EQ(omp_get_interop_int_(&none, &prop, &rc), 0);
    CHECK(omp_get_interop_name_(&none, &prop) == NULL);
}

/* The error directive's warning goes on (its line: omp.kmp.clang.error). */
static void test_error_warning(void) {
    __kmpc_error(&loc, 1, "going on");
    __kmpc_error(NULL, 1, "going on");
}

/* A pause outside every region, then a region as before (the threads are
 * started again); pop_num_threads pops nothing the fork has not taken. */
static void test_pause(void) {
    int gtid = __kmpc_global_thread_num(&loc);
    CHECK_EQ(__kmpc_pause_resource(1), 0);
    int n = 0;
#pragma omp parallel num_threads(2) reduction(+ : n)
    n++;
    CHECK_EQ(n, 2);
    __kmpc_pop_num_threads(&loc, gtid);
}

int main(int argc, char **argv) {
    if (argc > 1) { /* the error directive's lines, then its fatal form */
        static ident_t at = {0, 2, 0, 0, ";dir/prog.c;main;12;9;;"};
        __kmpc_error(argv[1][0] == 'a' ? &at : &loc, 1, "going on");
        __kmpc_error(&loc, 1, NULL);
        printf("warnings: went on\n");
        fflush(stdout);
        __kmpc_error(argv[1][0] == 'a' ? &at : &loc, 2, "stop here");
        printf("not reached\n");
        return 0;
    }
    test_masks();
    test_fortran_kmp();
    test_schedule();
    test_locks();
    test_barrier_master();
    test_allocators();
    test_tasks();
    test_threadprivate();
    test_kmpc_forms();
    test_fortran_interop();
    test_error_warning();
    test_pause();
    puts("kmp: ok");
    return 0;
}
