/* The OpenMP creation throttle's bound on one thread (src/omp/throttle.h):
 * it starts at the setting, goes to 64 times the setting at a thief's
 * request, and halves after OMP_THROTTLE_CALM tasks created without a
 * request, down to the setting again; a request restarts the count. The
 * OpenMP programs (tests/omp) check what the bound is for: every task runs
 * once, and with one thread (no thief) at most the setting wait. */
#include "omp/throttle.h"

#include "../common/check.h"

/* Create n tasks with no thief asking, as task.c does (the calm count moves
 * only while the bound is raised). */
static void create_calmly(omp_throttle *t, long n) {
    for (long i = 0; i < n; i++)
        if (t->shift)
            omp_throttle_calm(t);
}

int main(void) {
    omp_throttle t = {0, 0};
    CHECK_EQ(omp_throttle_bound(&t, 4), 4);
    create_calmly(&t, 10 * OMP_THROTTLE_CALM); /* never below the setting */
    CHECK_EQ(omp_throttle_bound(&t, 4), 4);

    /* A request raises it to 64 times the setting at once, and further
     * requests keep it there. */
    for (int k = 1; k <= 3; k++) {
        omp_throttle_asked(&t);
        CHECK_EQ(omp_throttle_bound(&t, 4), 256);
    }
    CHECK_EQ(omp_throttle_bound(&t, 1000000), 64000000u); /* the largest setting fits */

    /* One step down per OMP_THROTTLE_CALM tasks, not before. */
    create_calmly(&t, OMP_THROTTLE_CALM - 1);
    CHECK_EQ(omp_throttle_bound(&t, 4), 256);
    create_calmly(&t, 1);
    CHECK_EQ(omp_throttle_bound(&t, 4), 128);

    /* A request restarts the count, from the top: OMP_THROTTLE_CALM - 1
     * tasks, a request (from 128 back to 256), OMP_THROTTLE_CALM - 1 more:
     * still at the top. */
    create_calmly(&t, OMP_THROTTLE_CALM - 1);
    CHECK_EQ(omp_throttle_bound(&t, 4), 128);
    omp_throttle_asked(&t);
    CHECK_EQ(omp_throttle_bound(&t, 4), 256);
    create_calmly(&t, OMP_THROTTLE_CALM - 1);
    CHECK_EQ(omp_throttle_bound(&t, 4), 256);

    /* Back to the setting after RAISE_MAX quiet stretches, and it stays. */
    create_calmly(&t, 1 + (long)(OMP_THROTTLE_RAISE_MAX - 1) * OMP_THROTTLE_CALM);
    CHECK_EQ(omp_throttle_bound(&t, 4), 4);
    CHECK_EQ(t.shift, 0);
    create_calmly(&t, 5 * OMP_THROTTLE_CALM);
    CHECK_EQ(omp_throttle_bound(&t, 4), 4);
    printf("omp throttle: ok\n");
    return 0;
}
