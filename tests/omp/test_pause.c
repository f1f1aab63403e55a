/* omp_pause_resource[_all] outside every region: the runtime's threads
 * end, a program may fork() and the child runs regions of its own, and the
 * next region of the parent starts the runtime again (OpenMP 5.0). A
 * paused runtime's threads are new ones: their threadprivate data starts
 * afresh (libgomp's pause-2 checks the same). OpenMP 5.1 (3.6.1) lets a
 * soft pause keep threadprivate data or discard it: LLVM's libomp 14 keeps
 * its threads and their data, so that check is not made there; and its
 * next region after a hard pause stops the program ("Thread identifier
 * invalid", or an assertion in a forked child: llvm-project issue 154201),
 * so the rounds pause soft there.
 * The threads end: when a pause returns, the process has the threads it
 * had before its first region (herd joins them), also after teams larger
 * than the runtime's workers and nested teams (herd's guest threads, hot
 * ones of a thread included). libgomp's end soon after (waited for, up to
 * WAIT_S: a hang detector); libomp's soft pause keeps its threads (not
 * checked there). Nor under ThreadSanitizer (omp-san), whose runtime
 * starts a thread of its own at the program's first thread creation; the
 * guests still end there, under its eye. */
#include "check_omp.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>

#define WAIT_S 30

static int threads_now(void) {
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void check_threads_ended(int before) {
    if (omp_test_on_llvm_libomp() || omp_test_under_tsan())
        return;
    if (omp_test_on_herd()) {
        CHECK_EQ(threads_now(), before);
        return;
    }
    for (int ms = 0; threads_now() != before && ms < WAIT_S * 1000; ms++)
        usleep(1000);
    CHECK_EQ(threads_now(), before);
}

/* A team of 4 (more than the workers in the test matrix) whose members 0
 * and 1 each run a nested team of 2. */
static void wide_and_nested(void) {
    int sum = 0;
    omp_set_max_active_levels(2);
#pragma omp parallel num_threads(4) reduction(+ : sum)
    {
        sum += 1;
        if (omp_get_thread_num() < 2) {
#pragma omp parallel num_threads(2) reduction(+ : sum)
            sum += 10;
        }
    }
    omp_set_max_active_levels(1);
    CHECK_EQ(sum, 4 + 2 * 2 * 10);
}

static int tp = 128;
#pragma omp threadprivate(tp)

static int region_sum(void) {
    int sum = 0, members = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum, members)
    {
        sum += omp_get_thread_num() + 1;
        members += omp_get_num_threads();
    }
    CHECK_EQ(members, omp_get_max_threads() < 2 ? 1 : 4); /* each of 2 saw 2 */
    return sum;
}

int main(void) {
    int before = threads_now();
    int want = omp_get_max_threads() < 2 ? 1 : 3;
    CHECK_EQ(region_sum(), want);
#pragma omp parallel num_threads(2)
    tp = omp_get_thread_num() + 256;
    CHECK_EQ(omp_pause_resource(omp_pause_soft, omp_get_initial_device()), 0);
    int stale = 0;
#pragma omp parallel num_threads(2) reduction(+ : stale)
    if (omp_get_thread_num() != 0 && tp != 128)
        stale++; /* a thread of before the pause */
    if (!omp_test_on_llvm_libomp())
        CHECK_EQ(stale, 0);
    omp_pause_resource_t kind = omp_test_on_llvm_libomp() ? omp_pause_soft : omp_pause_hard;
    for (int round = 0; round < 3; round++) {
        wide_and_nested();
        CHECK_EQ(omp_pause_resource_all(kind), 0);
        check_threads_ended(before);
        fflush(NULL);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            alarm(30); /* a hung child ends, and the parent sees it */
            int s1 = region_sum(), s2 = region_sum();
            _exit(s1 == want && s2 == want ? 0 : 3);
        }
        int status = 0;
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        CHECK(WIFEXITED(status));
        CHECK_EQ(WEXITSTATUS(status), 0);
        CHECK_EQ(region_sum(), want); /* the parent's runtime starts again */
    }
    puts("pause: ok");
    return 0;
}
