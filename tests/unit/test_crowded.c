/* Whether threads of the program may be waiting for a CPU
 * (herd__cpus_crowded, core/worker.c; core/seam_omp.h), and the spin-wait
 * that asks who else could end a wait (herd__spin_wait):
 * - no runtime: crowded (nothing is known);
 * - W workers on a process with N CPUs, B threads counted beside them
 *   (herd__beside_add, as the OpenMP layer counts its awake guests):
 *   crowded exactly when W > N or B > N - W, for B from 0 to N + 1 and
 *   back down to 0;
 * - with one worker, herd__spin_wait consults its predicate only while a
 *   thread beside the workers is counted (only such a thread could end the
 *   wait): with nobody counted it returns 0 even though the predicate
 *   already holds; with one counted it returns 1. With several workers it
 *   returns 1 either way.
 * Mutations: herd__cpus_crowded that ignores the spare CPUs (any thread
 * beside means crowded) fails the B <= N - W rows; herd__spin_wait back on
 * `nworkers < 2` alone fails the counted case with one worker. */
// herd-test-env: HERD_WORKERS=1
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=3
#include "../common/check.h"
#include "core/runtime.h"
#include "core/seam_omp.h"

#include <sched.h>
#include <stdatomic.h>

static int process_cpus(void) {
    cpu_set_t cpus;
    return sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
}

static int always(void *p) {
    (void)p;
    return 1;
}

static _Atomic int spin_result[2];

/* In a task: herd__spin_wait on a predicate that already holds, with
 * nobody beside the workers counted and then with one. */
static void spin_task(void *p) {
    (void)p;
    atomic_store(&spin_result[0], herd__spin_wait(herd__self(), always, NULL));
    herd__beside_add(1);
    atomic_store(&spin_result[1], herd__spin_wait(herd__self(), always, NULL));
    herd__beside_add(-1);
}

int main(void) {
    CHECK(herd__cpus_crowded()); /* no runtime */
    CHECK_OK(herd_start(NULL));
    int w = herd_num_workers(), n = process_cpus();
    STEP("%d worker(s) on %d CPUs", w, n);
    CHECK_EQ(herd__beside_count(), 0);
    for (int b = 0; b <= n + 1; b++) {
        STEP("%d beside", b);
        CHECK_EQ(herd__cpus_crowded(), w > n || b > n - w);
        herd__beside_add(1);
    }
    for (int b = n + 2; b > 0; b--)
        herd__beside_add(-1);
    CHECK_EQ(herd__cpus_crowded(), w > n); /* counted out again */

    CHECK_OK(herd_run(spin_task, NULL, 0));
    if (w > n) { /* more workers than CPUs: the spin-wait never spins */
        CHECK_EQ(spin_result[0], 0);
        CHECK_EQ(spin_result[1], 0);
    } else {
        CHECK_EQ(spin_result[0], w > 1); /* nobody beside: only another worker */
        CHECK_EQ(spin_result[1], 1);     /* one thread beside */
    }
    CHECK_OK(herd_stop());
    printf("ok\n");
    return 0;
}
