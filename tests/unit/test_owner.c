/* Owner-only contracts are asserted in debug builds: a split deque step
 * from a thread that does not own the deque (split-deque.md, "Who the owner
 * is"), and a worker's owner-only function from a thread that does not run
 * the worker (HERD_ASSERT_OWNER, core/runtime.h), abort with herd's
 * assertion message. Each such call runs in a child process, and the parent
 * checks how the child ended; the owner's own calls run here and must not
 * abort. A build without asserts (release) has nothing to check: the test
 * says so and exits 77, which tests/CMakeLists.txt reports as skipped. */
#include "../common/check.h"
#include "../common/child.h"

#include "arch/assert.h"
#include "core/runtime.h"
#include "queue/split_deque.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>

#if HERD_ASSERTS

static void noop(void *arg) {
    (void)arg;
}

/* A runtime built, not started (as `herd topo` builds one): two workers,
 * run by no thread. */
static herd__rt *build(void) {
    herd_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.topology = "pack:1 core:2 pu:1";
    cfg.stats = "0";
    herd__rt *rt = calloc(1, sizeof *rt);
    CHECK(rt != NULL);
    CHECK_OK(herd__rt_build(rt, &cfg));
    return rt;
}

/* ------------------------------------------------------------------ child */

static void *pop_not_owner(void *q) {
    herd__taskcopy t;
    herd__sdq_pop(q, 0, &t); /* S2 by a thread that does not own q: aborts */
    return NULL;
}

static int child_main(const char *which) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core); /* an expected abort: no core file */
    if (strcmp(which, "deque") == 0) {
        herd__sdq q;
        CHECK_OK(herd__sdq_init(&q, 64));
        herd__sdq_own(&q);
        int i = 1;
        CHECK_OK(herd__sdq_push(&q, noop, NULL, HERD__KIND_TASK, &i, sizeof i));
        pthread_t th;
        CHECK(pthread_create(&th, NULL, pop_not_owner, &q) == 0);
        pthread_join(th, NULL);
    } else if (strcmp(which, "worker") == 0) {
        herd__rt *rt = build();
        herd__tls = &rt->workers[0].hot; /* this thread runs worker 0 ... */
        herd__work out;
        herd__take_placed_mine(&rt->workers[1], &out); /* ... not worker 1: aborts */
    } else {
        return 2;
    }
    fprintf(stderr, "test: the owner-only call from another thread was not caught\n");
    return 3; /* must not get here */
}

/* ----------------------------------------------------------------- parent */

static void run_case(const char *which, const char *what) {
    static char out[65536];
    char *argv[] = {"test_owner", (char *)which, NULL};
    int status = check_run_self(argv, NULL, NULL, out, sizeof out);
    CHECK(check_child_died_of(which, status, out, SIGABRT));
    CHECK(strstr(out, "herd: assertion failed: ") != NULL);
    CHECK(strstr(out, what) != NULL);
}

/* The same calls by their owners return. */
static void owners_pass(void) {
    herd__sdq q;
    herd__taskcopy t;
    CHECK_OK(herd__sdq_init(&q, 64));
    herd__sdq_own(&q);
    int i = 1;
    CHECK_OK(herd__sdq_push(&q, noop, NULL, HERD__KIND_TASK, &i, sizeof i));
    CHECK(herd__sdq_pop(&q, 0, &t) == HERD__POP_OK);
    herd__sdq_own(NULL);
    herd__sdq_fini(&q);

    herd__rt *rt = build();
    herd__tls = &rt->workers[1].hot;
    herd__work out;
    CHECK_EQ(herd__take_placed_mine(&rt->workers[1], &out), 0); /* nothing placed */
    herd__tls = NULL;
    herd__rt_free(rt);
}

int main(int argc, char **argv) {
    if (argc > 1)
        return child_main(argv[1]);
    STEP("the owners' own calls pass");
    owners_pass();
    STEP("a thread that does not own a split deque pops from it (S2)");
    run_case("deque", "owner only");
    STEP("a thread running worker 0 takes worker 1's placed work");
    run_case("worker", "herd__tls == &(w)->hot");
    printf("-- ok\n");
    return 0;
}

#else /* no asserts in this build: nothing to check */

int main(void) {
    printf("-- skipped: this build has no asserts (NDEBUG)\n");
    return 77;
}

#endif
