/* The LLVM OpenMP ABI (`__kmpc_*`, what clang, icx and flang emit) as a
 * second front end over herd's one OpenMP layer (src/omp: teams, tasks,
 * worksharing, dependences). docs/design/openmp.md, "Two front ends".
 *
 * Everything here translates: the compiler's structures (ident_t,
 * kmp_task_t, kmp_depend_info, the schedule numbers) into the layer's calls.
 * The only state of the front end's own is what the LLVM ABI keeps and
 * GCC's does not: the num_threads/num_teams pushed before a fork, the task
 * block the runtime allocates for the compiler, the threads' global ids. */
#ifndef HERD_KMP_H
#define HERD_KMP_H

#include "omp/omp.h"

#include <stddef.h>
#include <stdint.h>

#define KMP_API OMP_API
/* name is routine under another of libomp's names (its kmpc_* forms of the
 * kmp_* extensions, which the Intel compilers call): an alias, the same
 * code. In routine's file, after it. */
#define KMP_ALIAS(name, routine)                                                                   \
    extern __typeof(routine) name __attribute__((alias(#routine), visibility("default")))

typedef int32_t kmp_int32;
typedef uint32_t kmp_uint32;
typedef int64_t kmp_int64;
typedef uint64_t kmp_uint64;

/* Source location; herd reads nothing of it but psource in messages. */
typedef struct ident {
    kmp_int32 reserved_1, flags, reserved_2, reserved_3;
    const char *psource;
} ident_t;

typedef kmp_int32 kmp_critical_name[8];
typedef void (*kmpc_micro)(kmp_int32 *gtid, kmp_int32 *tid, ...);

/* The schedule numbers of __kmpc_for_static_init and __kmpc_dispatch_init
 * (LLVM's enum sched_type). */
enum {
    KMP_SCH_LOWER = 32,
    KMP_SCH_STATIC_CHUNKED = 33,
    KMP_SCH_STATIC = 34,
    KMP_SCH_DYNAMIC = 35,
    KMP_SCH_GUIDED = 36,
    KMP_SCH_RUNTIME = 37,
    KMP_SCH_AUTO = 38,
    KMP_SCH_TRAPEZOIDAL = 39,
    KMP_SCH_STATIC_GREEDY = 40,
    KMP_SCH_STATIC_BALANCED = 41,
    KMP_SCH_GUIDED_ITERATIVE = 42,
    KMP_SCH_GUIDED_ANALYTICAL = 43,
    KMP_SCH_STATIC_STEAL = 44,
    KMP_SCH_STATIC_BALANCED_CHUNKED = 45,
    KMP_SCH_GUIDED_SIMD = 46,
    KMP_SCH_RUNTIME_SIMD = 47,
    KMP_ORD_LOWER = 64,
    KMP_ORD_STATIC_CHUNKED = 65,
    KMP_ORD_UPPER = 72,
    KMP_DISTRIBUTE_STATIC_CHUNKED = 91,
    KMP_DISTRIBUTE_STATIC = 92,
    KMP_NM_LOWER = 160, /* "nomerge" forms: the plain ones + 128 */
};
#define KMP_SCH_MODIFIERS ((1u << 29) | (1u << 30)) /* monotonic, nonmonotonic */

/* The thread's global id (gtid): dense, from 0, given at a thread's first
 * call; the initial thread that first calls gets 0. herd's calls take the
 * current task from its own TLS: the gtid only names per-thread copies
 * (threadprivate, task reduction copies are per team member instead). */
int herd__kmp_gtid(void);
/* Has the calling thread entered OpenMP (it has a gtid, or is a herd
 * worker)? */
int herd__kmp_known(void);

/* The program speaks LLVM's ABI (omp_global.llvm_abi): called where a
 * program's first call into the front end can be (a fork, a thread's first
 * gtid, the ompc_* routines). The first one reads the environment again
 * when the program changed it (herd__omp_env_again), then sets the flag:
 * fork.c, herd__kmp_first_call. Read first and stored once: herd__omp_g's
 * line is read by every member of every region, and a store per fork took
 * it from them (0.2 us per region, 2 threads). ORDER: acquire; pairs with
 * the release that sets the flag after the environment was read again, so
 * a thread that sees it set sees the ICVs read. */
void herd__kmp_first_call(void);
static inline void herd__kmp_seen(void) {
    if (__builtin_expect(!atomic_load_explicit(&herd__omp_g.llvm_abi, memory_order_acquire), 0))
        herd__kmp_first_call();
}

/* invoke.c: microtask(&gtid, &tid, argv[0..argc-1]). */
void herd__kmp_invoke(kmpc_micro fn, kmp_int32 *gtid, kmp_int32 *tid, int argc, void **argv);

/* taskred.c: the task reductions registered in a taskgroup that ends now
 * (its tasks done): combine the copies into the originals, finalise them. */
void herd__kmp_taskred_end(void *reg);
/* taskred.c: the task reductions a task that parent creates now sees
 * (NULL: none). When they belong to a team other than the outermost, the
 * task runs at once on its creator's thread: there a thread number is not
 * one running task's at a time (tasks of a nested team run on the workers
 * under their creator's number), as the GCC front end decides
 * (reduction.c, herd__omp_red_deferrable). */
void *herd__kmp_red_seen(const omp_task *parent);
#define KMP_RED_NONE ((void *)1) /* omp_task.kred: an explicit task that sees none */

#endif
