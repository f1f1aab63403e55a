/* The watchdog's dump under libherd-omp (src/core/watchdog.c): each case
 * re-executes this program (/proc/self/exe) with HERD_WATCHDOG=1; the child
 * prints the address of the lock it is about to deadlock on and deadlocks;
 * the parent checks that the child died of SIGABRT after a dump that names
 * the OpenMP construct and the lock's address.
 *   lock:     a task sets an OpenMP lock it already holds (omp_set_lock
 *             twice); the other member waits at a barrier.
 *   taskwait: a taskwait on a task that blocks on a lock its parent holds
 *             (the child may run on the parent's stack, inside its taskwait,
 *             or on another thread: either way the dump shows both).
 * Built with -fopenmp and run only under herd's library (tests/omp/
 * CMakeLists.txt): the system libgomp has no watchdog. */
#include "../common/child.h"
#include "check_omp.h"

#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

static omp_lock_t lock;

static void expect_lock(void) {
    fprintf(stderr, "expect: OpenMP lock %p\n", (void *)&lock);
    fflush(stderr);
}

static void lock_twice(void) {
#pragma omp parallel num_threads(2)
    {
#pragma omp single nowait
        {
            expect_lock();
            omp_set_lock(&lock);
            omp_set_lock(&lock); /* never returns */
        }
#pragma omp barrier
    }
}

static void taskwait_lock(void) {
#pragma omp parallel num_threads(2)
#pragma omp single
    {
        expect_lock();
        omp_set_lock(&lock);
#pragma omp task
        omp_set_lock(&lock); /* blocks: the parent holds it */
#pragma omp taskwait
        omp_unset_lock(&lock);
    }
}

static int child_main(const char *which) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core); /* an expected abort: no core file */
    omp_init_lock(&lock);
    if (strcmp(which, "lock") == 0)
        lock_twice();
    else if (strcmp(which, "taskwait") == 0)
        taskwait_lock();
    else
        return 2;
    fprintf(stderr, "test: the deadlock was not reported\n");
    return 3;
}

static void run_case(const char *which, const char *also) {
    static char out[65536];
    char *argv[] = {"omp_watchdog", (char *)which, NULL};
    int status = check_run_self(argv, "HERD_WATCHDOG", "1", out, sizeof out);
    printf("child '%s' stderr:\n%s", which, out);
    fflush(stdout);
    CHECK(WIFSIGNALED(status));
    CHECK_EQ(WTERMSIG(status), SIGABRT);
    CHECK(strstr(out, "herd: watchdog: aborting") != NULL);
    const char *e = strstr(out, "expect: ");
    CHECK(e != NULL);
    const char *nl = strchr(e, '\n');
    char want[256];
    snprintf(want, sizeof want, "waits on %.*s", (int)(nl - e - 8), e + 8);
    printf("looking for '%s' and '%s'\n", want, also);
    fflush(stdout);
    CHECK(strstr(out, want) != NULL);
    CHECK(strstr(out, also) != NULL);
}

int main(int argc, char **argv) {
    if (argc > 1)
        return child_main(argv[1]);
    run_case("lock", "OpenMP barrier");
    run_case("taskwait", "OpenMP taskwait");
    printf("ok\n");
    return 0;
}
