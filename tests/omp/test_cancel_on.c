/* Cancellation with OMP_CANCELLATION=true (this program sets it and runs
 * itself again): cancel parallel ends the region for every member (one
 * waiting at a barrier leaves it, code after it never runs), cancel for
 * and cancel sections end the construct for members at a cancellation
 * point (each waits at one until the cancel comes, so the check is exact),
 * and a region after a cancelled one runs whole. */
#include "check_omp.h"

#include <stdatomic.h>

static void test_parallel(void) {
    _Atomic int after_barrier = 0, members = 0;
#pragma omp parallel num_threads(2)
    {
        atomic_fetch_add(&members, 1);
        if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
        }
#pragma omp barrier
        atomic_fetch_add(&after_barrier, 1); /* thread 0 never came: nobody passes */
    }
    CHECK(atomic_load(&members) >= 1);
    CHECK_EQ(atomic_load(&after_barrier), 0);
}

static void test_for(void) {
    _Atomic int ran = 0, stuck_left = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp for schedule(static)
        for (int i = 0; i < 1000; i++) {
            if (i == 0) {
#pragma omp cancel for
            }
            if (i == 500) { /* the other member: waits for the cancel */
                for (;;) {
#pragma omp cancellation point for
                }
            }
            atomic_fetch_add(&ran, 1);
        }
        atomic_fetch_add(&stuck_left, 1);
    }
    CHECK_EQ(atomic_load(&ran), 0);
    CHECK(atomic_load(&stuck_left) >= 1);
}

static void test_sections(void) {
    _Atomic int after = 0;
#pragma omp parallel num_threads(2)
#pragma omp sections
    {
#pragma omp section
        {
#pragma omp cancel sections
            atomic_fetch_add(&after, 1);
        }
#pragma omp section
        {
            for (;;) {
#pragma omp cancellation point sections
            }
            atomic_fetch_add(&after, 1);
        }
    }
    CHECK_EQ(atomic_load(&after), 0);
}

static void test_after(void) {
    int sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
    {
#pragma omp for
        for (int i = 0; i < 100; i++)
            sum += i;
#pragma omp barrier
    }
    CHECK_EQ(sum, 4950);
}

int main(int argc, char **argv) {
    const char *c = getenv("OMP_CANCELLATION");
    if (!c || strcmp(c, "true")) {
        (void)argc;
        setenv("OMP_CANCELLATION", "true", 1);
        execv("/proc/self/exe", argv);
        CHECK(!"exec");
    }
    CHECK_EQ(omp_get_cancellation(), 1);
    for (int r = 0; r < 20; r++) {
        test_parallel();
        test_for();
        test_sections();
        test_after();
    }
    puts("cancel on: ok");
    return 0;
}
