/* Stack overflow detection (src/core/overflow.c, src/ult/stack.c): a task
 * that recurses with a large local array until it runs off its stack must
 * stop the program with SIGABRT and a message that names the task function.
 *
 * The test re-executes itself (/proc/self/exe) with an argument naming the
 * case; that child starts herd and overflows; the parent reads the child's
 * stderr through a pipe and checks how it died. Cases: the root task
 * overflows; a child task overflows while running on its parent's stack (a
 * plain call from the parent's herd_wait); a stolen or resumed task
 * overflows on a stack of its own (the child blocks first, then recurses).
 * Under HERD_SPAWN=work-first (the last configuration) every child runs at
 * once on a fresh stack, called from its parent's spawn (herd__ctx_call,
 * src/arch/): the report must name it all the same.
 *
 * The task functions are not static, so that dladdr() can name them when the
 * executable exports its symbols. When it does not (linked without
 * -rdynamic), the runtime prints the function's offset in the executable
 * instead; the parent accepts that form only if the offset is exactly the
 * function's, and says so. */
// herd-test-env: HERD_WORKERS=1
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=2 HERD_STACK=64K
// herd-test-env: HERD_WORKERS=4 HERD_STACK=16K HERD_IDLE=sleep
// herd-test-env: HERD_WORKERS=2 HERD_SPAWN=work-first
// herd-test-timeout: 60
#include "../common/check.h"
#include "../common/child.h"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* ------------------------------------------------------------------ child */

/* Each level holds a 4 KiB array that it really writes: no frame can jump
 * over the guard page without touching it. */
__attribute__((noinline)) static uint64_t recurse(uint64_t depth) {
    volatile unsigned char big[4096];
    if (depth == UINT64_MAX) /* never: keeps the compiler from calling it infinite */
        return 0;
    for (size_t i = 0; i < sizeof big; i += 64)
        big[i] = (unsigned char)(depth + i);
    uint64_t r = recurse(depth + 1) + big[depth % sizeof big];
    __asm__ volatile("" ::"r"(&big) : "memory");
    return r;
}

void herd_test_overflow_root(void *p);
void herd_test_overflow_child(void *p);
void herd_test_overflow_blocked(void *p);

void herd_test_overflow_root(void *p) {
    (void)p;
    printf("%llu\n", (unsigned long long)recurse(0));
}

void herd_test_overflow_child(void *p) {
    (void)p;
    printf("%llu\n", (unsigned long long)recurse(0));
}

static void inline_parent(void *p) {
    (void)p;
    CHECK_OK(herd_spawn(herd_test_overflow_child, NULL, 0));
    CHECK_OK(herd_wait());
}

static uint64_t blocked_word;

void herd_test_overflow_blocked(void *p) {
    (void)p;
    uint64_t v;
    CHECK_OK(herd_feb_readFF(&blocked_word, &v)); /* resumes on a stack of its own */
    printf("%llu\n", (unsigned long long)recurse(v));
}

static void blocked_parent(void *p) {
    (void)p;
    CHECK_OK(herd_feb_empty(&blocked_word));
    CHECK_OK(herd_spawn(herd_test_overflow_blocked, NULL, 0));
    for (int i = 0; i < 10; i++)
        CHECK_OK(herd_yield());
    CHECK_OK(herd_feb_writeF(&blocked_word, 1));
    CHECK_OK(herd_wait());
}

static int child_main(const char *which) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core); /* an expected abort: no core file */
    CHECK_OK(herd_start(NULL));
    if (strcmp(which, "root") == 0)
        herd_run(herd_test_overflow_root, NULL, 0);
    else if (strcmp(which, "child") == 0)
        herd_run(inline_parent, NULL, 0);
    else if (strcmp(which, "blocked") == 0)
        herd_run(blocked_parent, NULL, 0);
    else
        return 2;
    fprintf(stderr, "test: the overflow was not detected\n");
    return 3; /* must not get here */
}

/* ----------------------------------------------------------------- parent */

/* How the runtime names fn when the executable exports no symbols: with its
 * offset in the executable ("+0x1234"). */
static void offset_form(void (*fn)(void *), char *buf, size_t len) {
    Dl_info info;
    void *addr = *(void **)&fn;
    buf[0] = '\0';
    if (dladdr(addr, &info) && info.dli_fname)
        snprintf(buf, len, "+%#lx;", (unsigned long)((char *)addr - (char *)info.dli_fbase));
}

static int exported_names_seen, offsets_seen;

static void run_case(const char *which, const char *fn_name, void (*fn)(void *)) {
    static char out[65536];
    char *argv[] = {"test_overflow", (char *)which, NULL};
    int status = check_run_self(argv, NULL, NULL, out, sizeof out);
    CHECK(check_child_died_of(which, status, out, SIGABRT));
    CHECK(strstr(out, "stack overflow in task") != NULL);
    if (strstr(out, fn_name)) {
        exported_names_seen++;
        return;
    }
    char off[64];
    offset_form(fn, off, sizeof off);
    CHECK(off[0] != '\0');
    CHECK(strstr(out, off) != NULL); /* named by its exact offset, at least */
    offsets_seen++;
}

int main(int argc, char **argv) {
    if (argc > 1)
        return child_main(argv[1]);
    STEP("the root task overflows");
    run_case("root", "herd_test_overflow_root", herd_test_overflow_root);
    STEP("a child overflows on its parent's stack");
    run_case("child", "herd_test_overflow_child", herd_test_overflow_child);
    STEP("a resumed task overflows on its own stack");
    run_case("blocked", "herd_test_overflow_blocked", herd_test_overflow_blocked);
    /* tests/CMakeLists.txt links every test with ENABLE_EXPORTS (-rdynamic),
     * so each report must carry the function's name, not just its offset. */
    CHECK_EQ(exported_names_seen, 3);
    CHECK_EQ(offsets_seen, 0);
    STEP("ok");
    return 0;
}
