/* Stack overflow with frames of every size (docs/design/stacks.md,
 * "Overflow is reported, never silent"): a task that recurses with 1 KiB,
 * 64 KiB, 1 MiB or 16 MiB frames until it runs off its stack must stop the
 * program with SIGABRT and a message naming the task function, the function
 * that overflowed, the stack size and the setting to raise, and must not
 * write one byte outside its own stack.
 *
 * Each case runs in a child (this program re-executed with the case's
 * arguments). The parent makes a sentinel (tests/common/sentinel.h): a
 * shared memory file filled with a pattern, which the child's task maps
 * right below its stack's guard region, where a frame that jumped the guard
 * would land first. Each frame writes its lowest byte first (the farthest
 * jump a frame can make). After the child died, the parent reads the
 * sentinel back: every byte must still be the pattern.
 *
 * The last case runs the task on a thread that lent itself to the runtime
 * (adopt mode, as the OpenMP layer does), which needs an alternate signal
 * stack of herd's to report anything.
 *
 * Mutations: HERD_STACK_GUARD=4K (the one-page guard of before) makes the
 * 64 KiB case fail here (its frames land in the sentinel); without
 * herd__overflow_adopter_init in herd__adopt_enter the adopt case dies of
 * a bare SIGSEGV. */
// herd-test-env: HERD_WORKERS=1
// herd-test-env: HERD_WORKERS=2 HERD_STACK=16K
// herd-test-env: HERD_WORKERS=2 HERD_STACK=1M
// herd-test-timeout: 120
#include "../common/check.h"
#include "../common/child.h"
#include "../common/sentinel.h"

#include "core/config.h"
#include "core/runtime.h"

#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* ------------------------------------------------------------------ child */

static size_t frame_bytes;
static int sentinel_fd;
static size_t sentinel_bytes;

void herd_test_frames_task(void *p);
uint64_t herd_test_frames_recurse(uint64_t depth);

/* Exported (tests link with -rdynamic), so the report can name it. */
__attribute__((noinline)) uint64_t herd_test_frames_recurse(uint64_t depth) {
    volatile unsigned char big[frame_bytes];
    big[0] = 0xc3; /* the lowest byte first: never the sentinel's pattern */
    big[frame_bytes - 1] = (unsigned char)depth;
    if (depth == UINT64_MAX) /* never: keeps the compiler from calling it infinite */
        return 0;
    uint64_t r = herd_test_frames_recurse(depth + 1) + big[depth % frame_bytes];
    __asm__ volatile("" ::"r"(big) : "memory");
    return r;
}

static _Atomic int holders, task_started; /* run mode (root_run, below) */

void herd_test_frames_task(void *p) {
    (void)p;
    atomic_store(&task_started, 1);
    if (sentinel_place(sentinel_fd, sentinel_bytes) != 0)
        _exit(SENTINEL_NO_ROOM); /* the parent runs the case again */
    printf("%llu\n", (unsigned long long)herd_test_frames_recurse(0));
}

/* Run mode: the task must run on the lowest task stack of the process, or
 * no room is left below its guard for the sentinel (every worker's stack
 * is mapped downwards from the last one). A root on a worker's first stack
 * had another worker's stack right below whenever that worker started
 * later (often under load: 20 tries in a row failed in TSan runs of CI).
 * So the root keeps the other workers busy in a holder task, spawns the
 * task and blocks: its worker maps a fresh stack, the lowest, and runs the
 * task there; nobody else can take it first. */
static void holder(void *p) {
    (void)p;
    atomic_fetch_add(&holders, 1);
    for (long i = 0; !atomic_load(&task_started) && i < 2000000000L; i++)
        ;
}

static void root_run(void *p) {
    (void)p;
    int others = herd_num_workers() - 1;
    for (int i = 0; i < others; i++)
        CHECK_OK(herd_spawn(holder, NULL, 0));
    /* Public, so that the other workers take them (bounded: a holder that
     * never starts leaves the old layout, and the parent tries again). */
    for (long i = 0; atomic_load(&holders) < others && i < 2000000000L; i++)
        herd__publish_slow();
    static uint64_t word;
    uint64_t v;
    CHECK_OK(herd_feb_empty(&word));
    CHECK_OK(herd_spawn(herd_test_frames_task, NULL, 0));
    CHECK_OK(herd_feb_readFF(&word, &v)); /* blocks: never filled */
}

static int child_main(char **argv) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core); /* an expected abort: no core file */
    frame_bytes = strtoull(argv[2], NULL, 10);
    sentinel_fd = atoi(argv[3]);
    sentinel_bytes = strtoull(argv[4], NULL, 10);
    if (strcmp(argv[5], "adopt") == 0) {
        /* This thread lends itself as worker 0 (the OpenMP layer's way),
         * spawns the task and blocks: worker 0 (this thread) goes on on a
         * stack of herd's and runs the task there. The fault's signal
         * needs an alternate stack on this thread. With more workers, they
         * are kept busy first, as in run mode (root_run): a worker that
         * started later mapped its stack right below the task's (under
         * TSan, 1 of 5 runs found no room in 20 tries). */
        herd__frame fr;
        CHECK_OK(herd__start_ex(NULL, HERD__START_ADOPT, NULL));
        CHECK_OK(herd__adopt_enter(&fr));
        root_run(NULL);
        herd__adopt_leave(&fr);
    } else {
        CHECK_OK(herd_start(NULL));
        herd_run(root_run, NULL, 0);
    }
    fprintf(stderr, "test: the overflow was not detected\n");
    return 3;
}

/* ----------------------------------------------------------------- parent */

static size_t expected_stack(void) {
    const char *s = getenv("HERD_STACK");
    size_t v = 128 << 10; /* the default */
    if (s)
        CHECK(herd__parse_size(s, &v) == 0);
    return v;
}

static int run_once(size_t frame, const char *mode) {
    size_t mib = (size_t)1 << 20;
    size_t sbytes = (frame + mib - 1) / mib * mib + 2 * mib; /* the frame and 2 MiB, in MiB */
    int fd = sentinel_create(sbytes);
    CHECK(fd >= 0);
    char a_frame[32], a_fd[16], a_size[32];
    snprintf(a_frame, sizeof a_frame, "%zu", frame);
    snprintf(a_fd, sizeof a_fd, "%d", fd);
    snprintf(a_size, sizeof a_size, "%zu", sbytes);
    static char out[65536];
    char *argv[] = {"test_overflow_frames", "child", a_frame, a_fd, a_size, (char *)mode, NULL};
    int status = check_run_self(argv, NULL, NULL, out, sizeof out);
    if (WIFEXITED(status) && WEXITSTATUS(status) == SENTINEL_NO_ROOM) {
        close(fd);
        return 0;
    }
    printf("child (frames of %zu bytes) stderr:\n%s", frame, out);
    if (WIFEXITED(status))
        printf("child exited with %d\n", WEXITSTATUS(status));
    CHECK(strstr(out, "sentinel mapped: ") != NULL);
    long damage = sentinel_damage(fd, sbytes);
    printf("sentinel bytes changed: %ld\n", damage);
    CHECK_EQ(damage, 0);
    close(fd);
    CHECK(WIFSIGNALED(status));
    CHECK_EQ(WTERMSIG(status), SIGABRT);
    CHECK(strstr(out, "herd: stack overflow in task herd_test_frames_task on worker") != NULL);
    /* The function that overflowed: the recursion, or whatever it called
     * when the stack ran out (under ASan, with 1 MiB frames on a 1 MiB
     * stack, the dynamic linker resolving an __asan_* call at depth 0). */
    CHECK(strstr(out, "overflowing in herd_test_frames_recurse") != NULL ||
          (CHECK_SANITIZED && strstr(out, "overflowing in ") != NULL));
    char size[96];
    snprintf(size, sizeof size, "Each task stack has %zu bytes", expected_stack());
    CHECK(strstr(out, size) != NULL);
    CHECK(strstr(out, "; HERD_STACK); raise HERD_STACK or use less stack in the task.") != NULL);
    return 1;
}

static void run_case(size_t frame, const char *mode) {
    for (int i = 0; i < SENTINEL_TRIES; i++)
        if (run_once(frame, mode))
            return;
    CHECK(!"no room for the sentinel below the stack in any run");
}

int main(int argc, char **argv) {
    if (argc > 5 && strcmp(argv[1], "child") == 0)
        return child_main(argv);
    static const size_t frames[] = {1 << 10, 64 << 10, 1 << 20, 16 << 20};
    for (size_t i = 0; i < sizeof frames / sizeof frames[0]; i++) {
        STEP("frames of %zu bytes", frames[i]);
        run_case(frames[i], "run");
    }
    STEP("adopt mode: the adopting thread runs the task on a stack of herd's");
    run_case(64 << 10, "adopt");
    STEP("ok");
    return 0;
}
