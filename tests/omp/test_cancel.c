/* cancel and cancellation points. With cancel-var false (OMP_CANCELLATION
 * unset, as here) they do nothing: every iteration, member and task runs.
 * With OMP_CANCELLATION=true (omp.cancel.enabled) some of them may not run
 * (omp.cancel_on checks each kind exactly). */
#include "check_omp.h"

int main(void) {
    int cancel_on = omp_get_cancellation();
    int seen = 0, members = 0, tasks = 0;
#pragma omp parallel num_threads(2) reduction(+ : members)
    {
#pragma omp for reduction(+ : seen)
        for (int i = 0; i < 1000; i++) {
            if (i == 10) {
#pragma omp cancel for
            }
            seen++;
#pragma omp cancellation point for
        }
#pragma omp single
#pragma omp taskgroup
        for (int i = 0; i < 100; i++) {
#pragma omp task
            {
                if (i == 3) {
#pragma omp cancel taskgroup
                }
#pragma omp atomic
                tasks++;
            }
        }
        members++;
        if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
        }
#pragma omp cancellation point parallel
    }
    if (cancel_on) { /* some of it may have been cancelled */
        CHECK(seen <= 1000 && tasks <= 100);
    } else {
        CHECK_EQ(seen, 1000);
        CHECK_EQ(tasks, 100);
        CHECK_EQ(members, omp_get_max_threads() < 2 ? 1 : 2);
    }
    printf("omp cancel: ok\n");
    return 0;
}
