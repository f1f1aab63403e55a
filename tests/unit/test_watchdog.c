/* The hang watchdog and the dump of blocked tasks (src/core/watchdog.c).
 *
 * The test re-executes itself (/proc/self/exe) with an argument naming the
 * case; the child starts herd with HERD_WATCHDOG=1, prints the address of
 * the object it is about to deadlock on ("expect: <kind> <address>"), and
 * deadlocks. The parent reads the child's stderr through a pipe and checks
 * that the child died of SIGABRT after a dump naming that kind and address.
 * Deadlock shapes: re-locking one's own mutex, a barrier missing a
 * participant, a full/empty word never filled, a group wait on a child that
 * blocks forever. Then the on-demand dump: the parent sends SIGQUIT while
 * a task is blocked, reads the dump, lets the child go on, and checks it
 * exits normally. And HERD_WATCHDOG's malformed values. */
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=1
// herd-test-timeout: 60
#include "../common/check.h"
#include "../common/child.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

/* ------------------------------------------------------------------ child */

static herd_mutex mutex;
static herd_barrier barrier;
static uint64_t word;
static uint64_t never_word;
static herd_group group;

static void expect(const char *what, const void *addr) {
    fprintf(stderr, "expect: %s %p\n", what, addr);
    fflush(stderr);
}

void herd_test_wd_relock(void *p);
void herd_test_wd_relock(void *p) {
    (void)p;
    expect("mutex", &mutex);
    CHECK_OK(herd_mutex_lock(&mutex));
    CHECK_OK(herd_mutex_lock(&mutex)); /* never returns */
}

void herd_test_wd_barrier(void *p);
void herd_test_wd_barrier(void *p) {
    (void)p;
    expect("barrier", &barrier);
    /* count 2, one arrival. Not a tail call (the result is used): the
     * return address would be our caller's. */
    CHECK(herd_barrier_wait(&barrier) >= 0);
}

void herd_test_wd_feb(void *p);
void herd_test_wd_feb(void *p) {
    (void)p;
    uint64_t v;
    expect("full/empty word", &word);
    CHECK_OK(herd_feb_empty(&word));
    CHECK_OK(herd_feb_readFE(&word, &v));
}

void herd_test_wd_child(void *p);
void herd_test_wd_child(void *p) {
    (void)p;
    uint64_t v;
    CHECK_OK(herd_feb_readFF(&never_word, &v));
}

void herd_test_wd_group(void *p);
void herd_test_wd_group(void *p) {
    (void)p;
    herd_group_init(&group);
    CHECK_OK(herd_feb_empty(&never_word));
    expect("group", &group);
    expect("full/empty word", &never_word);
    CHECK_OK(herd_group_spawn(&group, herd_test_wd_child, NULL, 0));
    CHECK_OK(herd_group_wait(&group));
}

static atomic_int waiter_started;

static void quit_waiter(void *p) {
    (void)p;
    uint64_t v;
    atomic_store(&waiter_started, 1);
    CHECK_OK(herd_feb_readFF(&word, &v));
    CHECK_EQ(v, 42);
}

static void quit_root(void *p) {
    (void)p;
    CHECK_OK(herd_feb_empty(&word));
    CHECK_OK(herd_spawn(quit_waiter, NULL, 0));
    while (!atomic_load(&waiter_started)) /* 1 worker: the waiter runs here */
        CHECK_OK(herd_yield());
    expect("full/empty word", &word);
    fprintf(stderr, "ready\n");
    char c;
    CHECK(read(0, &c, 1) == 1); /* the parent has seen the dump */
    CHECK_OK(herd_feb_writeEF(&word, 42));
    CHECK_OK(herd_wait());
}

static void noop(void *p) {
    (void)p;
}

/* storm: tasks block and resume on one mutex while the parent sends
 * SIGQUIT after SIGQUIT; the program's own handler, installed before
 * herd_start, must still run (herd chains it), and every dump must end. */
static atomic_int own_quits; /* lock-free: safe in a handler, and it may run on any thread */
static void own_quit_handler(int sig) {
    (void)sig;
    atomic_fetch_add(&own_quits, 1);
}

static void storm_task(void *p) {
    (void)p;
    for (int i = 0; i < 500; i++) {
        CHECK_OK(herd_mutex_lock(&mutex));
        CHECK_OK(herd_yield());
        CHECK_OK(herd_mutex_unlock(&mutex));
    }
}

static void storm_root(void *p) {
    (void)p;
    fprintf(stderr, "ready\n");
    for (int i = 0; i < 4; i++)
        CHECK_OK(herd_spawn(storm_task, NULL, 0));
    CHECK_OK(herd_wait());
    while (atomic_load(&own_quits) == 0) /* a signal reached herd's handler, then ours */
        CHECK_OK(herd_yield());
}

/* A task blocked for three periods while another makes progress (spawns):
 * no hang, the watchdog must stay silent. */
static void busy_root(void *p) {
    (void)p;
    herd_group g; /* the waiter is not our child: herd_wait would wait for it */
    herd_group_init(&g);
    CHECK_OK(herd_feb_empty(&word));
    CHECK_OK(herd_group_spawn(&g, quit_waiter, NULL, 0));
    while (!atomic_load(&waiter_started))
        CHECK_OK(herd_yield());
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        CHECK_OK(herd_spawn(noop, NULL, 0));
        CHECK_OK(herd_wait());
        usleep(1000);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while (t.tv_sec - t0.tv_sec < 3);
    CHECK_OK(herd_feb_writeEF(&word, 42));
    CHECK_OK(herd_group_wait(&g));
}

static int child_main(const char *which) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core); /* an expected abort: no core file */
    /* herd leaves an ignored SIGQUIT ignored; ctest run as a background job
     * of a non-interactive shell starts us so. */
    signal(SIGQUIT, SIG_DFL);
    if (strcmp(which, "quit-masked") == 0 || strcmp(which, "report") == 0) {
        /* Every thread of the program blocks SIGQUIT (the workers inherit
         * the mask): only herd's watchdog thread takes it. */
        sigset_t q;
        sigemptyset(&q);
        sigaddset(&q, SIGQUIT);
        CHECK(pthread_sigmask(SIG_BLOCK, &q, NULL) == 0);
        if (strcmp(which, "quit-masked") == 0)
            which = "quit";
    }
    if (strcmp(which, "storm") == 0) {
        CHECK(signal(SIGQUIT, own_quit_handler) != SIG_ERR);
#if defined(__SANITIZE_THREAD__)
        /* TSan holds a signal for a thread until it calls an intercepted
         * function, which the yielding workers never do: leave SIGQUIT to
         * herd's watchdog thread (see run_quit's masked case). */
        sigset_t q;
        sigemptyset(&q);
        sigaddset(&q, SIGQUIT);
        CHECK(pthread_sigmask(SIG_BLOCK, &q, NULL) == 0);
#endif
    }
    CHECK_OK(herd_start(NULL));
    herd_mutex_init(&mutex);
    CHECK_OK(herd_barrier_init(&barrier, 2));
    if (strcmp(which, "relock") == 0)
        herd_run(herd_test_wd_relock, NULL, 0);
    else if (strcmp(which, "barrier") == 0)
        herd_run(herd_test_wd_barrier, NULL, 0);
    else if (strcmp(which, "feb") == 0)
        herd_run(herd_test_wd_feb, NULL, 0);
    else if (strcmp(which, "group") == 0)
        herd_run(herd_test_wd_group, NULL, 0);
    else if (strcmp(which, "busy") == 0) {
        herd_run(busy_root, NULL, 0);
        CHECK_OK(herd_stop());
        fprintf(stderr, "finished\n");
        return 0;
    } else if (strcmp(which, "storm") == 0) {
        herd_run(storm_root, NULL, 0);
        CHECK_OK(herd_stop());
        fprintf(stderr, "finished\n");
        return 0;
    } else if (strcmp(which, "quit") == 0 || strcmp(which, "report") == 0) {
        herd_run(quit_root, NULL, 0);
        CHECK_OK(herd_stop());
        fprintf(stderr, "finished\n");
        return 0;
    } else
        return 2;
    fprintf(stderr, "test: the deadlock was not reported\n");
    return 3; /* must not get here */
}

/* ----------------------------------------------------------------- parent */

static pid_t spawn_child(const char *which, const char *watchdog, int *err_fd, int *in_fd) {
    int errp[2], inp[2];
    CHECK(pipe(errp) == 0);
    CHECK(pipe(inp) == 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(errp[1], 2);
        dup2(inp[0], 0);
        close(errp[0]);
        close(errp[1]);
        close(inp[0]);
        close(inp[1]);
        setenv("HERD_WATCHDOG", watchdog, 1);
        execl("/proc/self/exe", "test_watchdog", which, (char *)NULL);
        _exit(127);
    }
    close(errp[1]);
    close(inp[0]);
    *err_fd = errp[0];
    *in_fd = inp[1];
    return pid;
}

/* Append what fd has until EOF or until `until` appears after `from`. */
static size_t read_until(int fd, char *out, size_t n, size_t cap, size_t from, const char *until) {
    ssize_t r;
    while (!(until && strstr(out + from, until)) && (r = read(fd, out + n, cap - 1 - n)) > 0) {
        n += (size_t)r;
        out[n] = '\0';
    }
    return n;
}

/* Every "expect: <kind> <addr>" line of out must appear in the dump as
 * "waits on <kind> <addr>", or "inside <kind> <addr>" (a group's child run
 * on the waiter's own stack blocks there). Returns how many. */
static int check_expected(const char *out) {
    int n = 0;
    for (const char *p = out; (p = strstr(p, "expect: ")) != NULL; p++) {
        const char *end = strchr(p, '\n');
        CHECK(end != NULL);
        char want[256], inside[256];
        snprintf(want, sizeof want, "waits on %.*s", (int)(end - p - 8), p + 8);
        snprintf(inside, sizeof inside, "inside %.*s", (int)(end - p - 8), p + 8);
        printf("looking for '%s' or '%s'\n", want, inside);
        CHECK(strstr(out, want) != NULL || strstr(out, inside) != NULL);
        n++;
    }
    return n;
}

/* The task functions are not static: the executable exports them
 * (tests/CMakeLists.txt links with -rdynamic), so the dump names where each
 * task blocked by function. */
static void run_deadlock(const char *which, int nexpect, const char *at) {
    int err, in;
    static char out[65536];
    out[0] = '\0';
    pid_t pid = spawn_child(which, "1", &err, &in);
    size_t n = read_until(err, out, 0, sizeof out, 0, NULL);
    (void)n;
    close(err);
    close(in);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(check_child_died_of(which, status, out, SIGABRT));
    CHECK(strstr(out, "Sanitizer") == NULL); /* the TSan and ASan builds: no report */
    CHECK(strstr(out, "herd: watchdog: no task started, finished or switched for 1 s") != NULL);
    CHECK(strstr(out, "herd: watchdog: aborting") != NULL);
    CHECK_EQ(check_expected(out), nexpect);
    char where[128];
    snprintf(where, sizeof where, " at %s+0x", at);
    CHECK(strstr(out, where) != NULL);
}

/* The child blocks a task and waits for a line on stdin; which = "quit":
 * the parent sends SIGQUIT until a dump shows the task; "report"
 * (HERD_WATCHDOG=1,report): the parent waits for the watchdog's report.
 * Then it lets the child finish, which must exit normally. */
static void run_quit(const char *which) {
    int err, in;
    static char out[65536];
    out[0] = '\0';
    int report = strcmp(which, "report") == 0;
    pid_t pid = spawn_child(which, report ? "1,report" : "0", &err, &in);
    size_t n = read_until(err, out, 0, sizeof out, 0, "ready\n");
    CHECK(strstr(out, "ready\n") != NULL);
    int found = 0;
    if (report) {
        const char *last = "herd: watchdog: the program goes on (report only)\n";
        n = read_until(err, out, n, sizeof out, 0, last);
        CHECK(strstr(out, last) != NULL);
        const char *e = strstr(out, "expect: ");
        const char *nl = strchr(e, '\n');
        char want[256];
        snprintf(want, sizeof want, "waits on %.*s", (int)(nl - e - 8), e + 8);
        found = strstr(out, want) != NULL;
    }
    /* The waiter may still be on its way to suspending: ask again until a
     * dump shows it (each SIGQUIT gives one dump, ended by its last line). */
    for (int tries = 0; tries < 100 && !found; tries++) {
        size_t from = n;
        CHECK(kill(pid, SIGQUIT) == 0);
        n = read_until(err, out, n, sizeof out, from, "herd: end of the dump\n");
        CHECK(strstr(out + from, "herd: end of the dump\n") != NULL);
        const char *e = strstr(out, "expect: ");
        const char *nl = strchr(e, '\n');
        char want[256];
        snprintf(want, sizeof want, "waits on %.*s", (int)(nl - e - 8), e + 8);
        found = strstr(out + from, want) != NULL;
        if (!found)
            usleep(10000);
    }
    CHECK(write(in, "g", 1) == 1);
    close(in);
    n = read_until(err, out, n, sizeof out, n, NULL);
    close(err);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    printf("child '%s' stderr:\n%s", which, out);
    CHECK(found);
    if (!report)
        CHECK(strstr(out, "herd: blocked tasks on request (SIGQUIT)") != NULL);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    CHECK(strstr(out, "finished\n") != NULL);
    CHECK(strstr(out, "Sanitizer") == NULL);
}

static void run_busy(void) {
    int err, in;
    static char out[65536];
    out[0] = '\0';
    pid_t pid = spawn_child("busy", "1", &err, &in);
    read_until(err, out, 0, sizeof out, 0, NULL);
    close(err);
    close(in);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    printf("child 'busy' stderr:\n%s", out);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    CHECK(strstr(out, "finished\n") != NULL);
    CHECK(strstr(out, "watchdog") == NULL);
    CHECK(strstr(out, "Sanitizer") == NULL);
}

static void run_storm(void) {
    int err, in;
    static char out[1 << 20];
    out[0] = '\0';
    pid_t pid = spawn_child("storm", "0", &err, &in);
    size_t n = read_until(err, out, 0, sizeof out, 0, "ready\n");
    CHECK(strstr(out, "ready\n") != NULL);
    /* Signal until the child exits (it waits for one to reach its own
     * handler); read as we go, so that its dumps never fill the pipe. */
    int status = 0, sent = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (sent < 1000) {
            CHECK(kill(pid, SIGQUIT) == 0);
            sent++;
        }
        struct pollfd p = {.fd = err, .events = POLLIN};
        if (poll(&p, 1, 10) > 0) {
            ssize_t r = read(err, out + n, sizeof out - 1 - n);
            if (r > 0)
                n += (size_t)r;
            out[n] = '\0';
        }
    }
    n = read_until(err, out, n, sizeof out, n, NULL);
    close(err);
    close(in);
    int dumps = 0, ends = 0;
    for (const char *p = out; (p = strstr(p, "herd: blocked tasks on request")) != NULL; p++)
        dumps++;
    for (const char *p = out; (p = strstr(p, "herd: end of the dump\n")) != NULL; p++)
        ends++;
    printf("child 'storm': %d signals sent, %d dumps, status %#x\n", sent, dumps, status);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    CHECK(strstr(out, "finished\n") != NULL);
    CHECK(dumps >= 1);
    CHECK_EQ(ends, dumps);
    CHECK(strstr(out, "Sanitizer") == NULL);
}

/* A malformed HERD_WATCHDOG stops herd_start with a message naming it. */
static void run_malformed(const char *value, const char *problem) {
    char path[] = "/tmp/herd_test_watchdog_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    setenv("HERD_WATCHDOG", value, 1);
    int rc = herd_start(NULL);
    unsetenv("HERD_WATCHDOG");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char msg[1024] = "";
    ssize_t r = pread(fd, msg, sizeof msg - 1, 0);
    close(fd);
    unlink(path);
    CHECK(r > 0);
    msg[r] = '\0';
    printf("HERD_WATCHDOG=%s: %s", value, msg);
    CHECK_RC(rc, HERD_EINVAL);
    char want[128];
    snprintf(want, sizeof want, "herd: HERD_WATCHDOG=%s: %s", value, problem);
    CHECK(strstr(msg, want) != NULL);
    CHECK(strstr(msg, "SECONDS,report") != NULL);
}

int main(int argc, char **argv) {
    if (argc > 1)
        return child_main(argv[1]);
    STEP("HERD_WATCHDOG's malformed values are refused");
    run_malformed("abc", "");
    run_malformed("0x10", "");
    run_malformed("90000", "");
    run_malformed("5,sometimes", "unknown mode after the comma");
    run_malformed(",report", "");
    STEP("re-locking one's own mutex");
    run_deadlock("relock", 1, "herd_test_wd_relock");
    STEP("a barrier missing a participant");
    run_deadlock("barrier", 1, "herd_test_wd_barrier");
    STEP("a full/empty word never filled");
    run_deadlock("feb", 1, "herd_test_wd_feb");
    STEP("a group wait on a child that blocks forever");
    run_deadlock("group", 2, "herd_test_wd_child");
    STEP("the dump on demand (SIGQUIT) while the program's threads block it");
    run_quit("quit-masked");
#if !defined(__SANITIZE_THREAD__)
    /* Under ThreadSanitizer a signal that lands on a thread sleeping in a
     * raw system call (a worker's futex) waits until that thread calls an
     * intercepted function: the masked case above is the one it serves. */
    STEP("the dump on demand (SIGQUIT), taken by any thread, and the program goes on");
    run_quit("quit");
#endif
    STEP("HERD_WATCHDOG=1,report: the dump, and the program goes on");
    run_quit("report");
    STEP("a task blocked while others make progress: no report");
    run_busy();
    STEP("dumps while tasks block and resume; the program's own handler is chained");
    run_storm();
    STEP("ok");
    return 0;
}
