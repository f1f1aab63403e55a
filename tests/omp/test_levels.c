/* ICVs given per nesting level: OMP_NUM_THREADS=3,2 and
 * OMP_PROC_BIND=spread,close (this program sets them and runs itself
 * again). Item L of a list is the nthreads-var and bind-var of the implicit
 * tasks of a team at level L (item 0 the initial task's); past the list a
 * team's members inherit the encountering task's, and a list asks for
 * nested parallelism. A proc_bind clause sets the members' bind-var past
 * the list under libgomp's rules (GCC's ABI); libomp keeps the encountering
 * task's (LLVM's ABI: the clang build). */
#include "check_omp.h"

#include <stdatomic.h>

int main(int argc, char **argv) {
    const char *n = getenv("OMP_NUM_THREADS");
    if (!n || strcmp(n, "3,2")) {
        (void)argc;
        setenv("OMP_NUM_THREADS", "3,2", 1);
        setenv("OMP_PROC_BIND", "spread,close", 1);
        unsetenv("OMP_PLACES");
        unsetenv("OMP_MAX_ACTIVE_LEVELS");
        unsetenv("OMP_NESTED");
        execv("/proc/self/exe", argv);
        CHECK(!"exec");
    }
    CHECK_EQ(omp_get_max_threads(), 3);
    CHECK_EQ(omp_get_proc_bind(), omp_proc_bind_spread);
    CHECK(omp_get_max_active_levels() >= 2);
    _Atomic int outer = 0, inner = 0, bad = 0;
#pragma omp parallel
    {
        atomic_fetch_add(&outer, 1);
        if (omp_get_num_threads() != 3 || omp_get_max_threads() != 2 ||
            omp_get_proc_bind() != omp_proc_bind_close)
            atomic_fetch_add(&bad, 1);
#pragma omp parallel
        {
            atomic_fetch_add(&inner, 1);
            /* past the lists: inherited */
            if (omp_get_level() != 2 || omp_get_num_threads() != 2 || omp_get_max_threads() != 2 ||
                omp_get_proc_bind() != omp_proc_bind_close)
                atomic_fetch_add(&bad, 1);
#pragma omp parallel num_threads(1) proc_bind(spread)
            {
#if defined(__clang__)
                omp_proc_bind_t want = omp_proc_bind_close; /* libomp: the clause leaves bind-var */
#else
                omp_proc_bind_t want = omp_proc_bind_spread; /* libgomp: the clause's */
#endif
                if (omp_get_proc_bind() != want)
                    atomic_fetch_add(&bad, 1);
            }
        }
    }
    CHECK_EQ(atomic_load(&outer), 3);
    CHECK_EQ(atomic_load(&inner), 6);
    CHECK_EQ(atomic_load(&bad), 0);
    /* Back at level 0: the initial task's own values. */
    CHECK_EQ(omp_get_max_threads(), 3);
    CHECK_EQ(omp_get_proc_bind(), omp_proc_bind_spread);
    puts("levels: ok");
    return 0;
}
