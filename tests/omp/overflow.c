/* Stack overflow in OpenMP tasks under herd-omp (docs/design/stacks.md): a
 * team member (implicit task) or an explicit task that recurses with 1 KiB,
 * 64 KiB, 1 MiB or 16 MiB frames until it runs off its stack stops the
 * program with SIGABRT and a message naming the function that overflowed,
 * the stack size and OMP_STACKSIZE, and writes nothing outside its stack
 * (the sentinel of tests/common/sentinel.h, mapped right below the stack's
 * guard region, is read back unchanged).
 *
 * Run only under herd's library (tests/omp/CMakeLists.txt): under libgomp a
 * thread's one-page guard lets such frames through, which is the point.
 * Member 0 stays in user code (no scheduling point) so that the recursion
 * runs on member 1, on a stack of herd's: member 0 runs on the main thread's
 * own stack, which is the kernel's and ulimit -s's, as under libgomp.
 *
 * Mutations: HERD_STACK_GUARD=4K (a one-page guard) fails the 64 KiB and
 * larger cases here (the frames land in the sentinel). */
#include "../common/child.h"
#include "../common/sentinel.h"
#include "check_omp.h"

#include <omp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

/* ------------------------------------------------------------------ child */

static size_t frame_bytes;
static int sentinel_fd;
static size_t sentinel_bytes;

uint64_t herd_omp_test_recurse(uint64_t depth);

/* Exported (linked with -rdynamic), so the report can name it. */
__attribute__((noinline)) uint64_t herd_omp_test_recurse(uint64_t depth) {
    volatile unsigned char big[frame_bytes];
    big[0] = 0xc3; /* the lowest byte first: never the sentinel's pattern */
    big[frame_bytes - 1] = (unsigned char)depth;
    if (depth == UINT64_MAX)
        return 0;
    uint64_t r = herd_omp_test_recurse(depth + 1) + big[depth % frame_bytes];
    __asm__ volatile("" ::"r"(big) : "memory");
    return r;
}

static void overflow_here(void) {
    if (sentinel_place(sentinel_fd, sentinel_bytes) != 0)
        _exit(SENTINEL_NO_ROOM); /* the parent runs the case again */
    printf("%llu\n", (unsigned long long)herd_omp_test_recurse(0));
}

static int child_main(char **argv) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core); /* an expected abort: no core file */
    int explicit_task = strcmp(argv[2], "task") == 0;
    frame_bytes = strtoull(argv[3], NULL, 10);
    sentinel_fd = atoi(argv[4]);
    sentinel_bytes = strtoull(argv[5], NULL, 10);
#pragma omp parallel num_threads(2)
    {
        CHECK_EQ(omp_get_num_threads(), 2);
        if (omp_get_thread_num() == 0) {
            for (;;) { /* user code, no scheduling point, until the process dies */
                struct timespec ts = {0, 10 * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
        }
        if (explicit_task) {
#pragma omp task
            overflow_here();
#pragma omp taskwait
        } else {
            overflow_here();
        }
    }
    fprintf(stderr, "test: the overflow was not detected\n");
    return 3;
}

/* ----------------------------------------------------------------- parent */

/* What herd-omp gives a task: OMP_STACKSIZE (the forms used here), else
 * the RLIMIT_STACK soft limit, 2 MiB when unlimited. */
static size_t expected_stack(void) {
    const char *s = getenv("OMP_STACKSIZE");
    if (s) {
        char *end;
        size_t v = strtoull(s, &end, 10);
        return *end == 'M' ? v << 20 : *end == 'B' ? v : v << 10;
    }
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_STACK, &rl) == 0);
    if (rl.rlim_cur == RLIM_INFINITY)
        return (size_t)2 << 20;
    return rl.rlim_cur > ((rlim_t)1 << 30) ? (size_t)1 << 30 : (size_t)rl.rlim_cur;
}

static int run_once(const char *kind, size_t frame) {
    size_t mib = (size_t)1 << 20;
    size_t sbytes = (frame + mib - 1) / mib * mib + 2 * mib; /* the frame and 2 MiB, in MiB */
    int fd = sentinel_create(sbytes);
    CHECK(fd >= 0);
    char a_frame[32], a_fd[16], a_size[32];
    snprintf(a_frame, sizeof a_frame, "%zu", frame);
    snprintf(a_fd, sizeof a_fd, "%d", fd);
    snprintf(a_size, sizeof a_size, "%zu", sbytes);
    static char out[65536];
    char *argv[] = {"omp_overflow", "child", (char *)kind, a_frame, a_fd, a_size, NULL};
    int status = check_run_self(argv, NULL, NULL, out, sizeof out);
    if (WIFEXITED(status) && WEXITSTATUS(status) == SENTINEL_NO_ROOM) {
        close(fd);
        return 0;
    }
    printf("child (%s, frames of %zu bytes) stderr:\n%s", kind, frame, out);
    if (WIFEXITED(status))
        printf("child exited with %d\n", WEXITSTATUS(status));
    CHECK(strstr(out, "sentinel mapped: ") != NULL);
    long damage = sentinel_damage(fd, sbytes);
    printf("sentinel bytes changed: %ld\n", damage);
    CHECK_EQ(damage, 0);
    close(fd);
    CHECK(WIFSIGNALED(status));
    CHECK_EQ(WTERMSIG(status), SIGABRT);
    CHECK(strstr(out, "herd: stack overflow in task herd_omp_test_recurse on worker 1") != NULL);
    char size[96];
    snprintf(size, sizeof size, "Each task stack has %zu bytes", expected_stack());
    CHECK(strstr(out, size) != NULL);
    CHECK(strstr(out, "; OMP_STACKSIZE); raise OMP_STACKSIZE or use less stack in the task.") !=
          NULL);
    return 1;
}

static void run_case(const char *kind, size_t frame) {
    for (int i = 0; i < SENTINEL_TRIES; i++)
        if (run_once(kind, frame))
            return;
    CHECK(!"no room for the sentinel below the stack in any run");
}

int main(int argc, char **argv) {
    if (argc > 5 && strcmp(argv[1], "child") == 0)
        return child_main(argv);
    static const size_t frames[] = {1 << 10, 64 << 10, 1 << 20, 16 << 20};
    static const char *const kinds[] = {"member", "task"};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < sizeof frames / sizeof frames[0]; i++) {
            printf("-- %s, frames of %zu bytes\n", kinds[k], frames[i]);
            run_case(kinds[k], frames[i]);
        }
    printf("-- ok\n");
    return 0;
}
