/* API misuse returns the documented codes (include/herd/herd.h): calls that
 * need a task from outside one, calls that must not run in a task from
 * inside one, lifecycle calls in the wrong state, malformed arguments and
 * settings, a full task queue. */
// herd-test-matrix: unit
// herd-test-env: HERD_WORKERS=1
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=4 HERD_IDLE=sleep
// herd-test-timeout: 120
#include "../common/check.h"
#include "core/runtime.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

static void nop(void *p) {
    (void)p;
}
static uint64_t nop_future(void *p) {
    (void)p;
    return 1;
}

/* Every call that is valid only inside a task, from a thread that is not
 * one (the main thread, before or after start, or a plain pthread). */
static void check_outside_task(void) {
    uint64_t word = 5, v = 0;
    herd_mutex m;
    herd_cond c;
    herd_barrier b;
    herd_group g;
    herd_future f;
    herd_mutex_init(&m);
    herd_cond_init(&c);
    CHECK_OK(herd_barrier_init(&b, 2)); /* init is valid anywhere */
    herd_group_init(&g);

    CHECK_RC(herd_spawn(nop, NULL, 0), HERD_ENOTASK);
    CHECK_RC(herd_wait(), HERD_ENOTASK);
    CHECK_RC(herd_yield(), HERD_ENOTASK);
    CHECK_RC(herd_group_spawn(&g, nop, NULL, 0), HERD_ENOTASK);
    CHECK_RC(herd_group_wait(&g), HERD_ENOTASK);
    CHECK_RC(herd_future_spawn(&f, nop_future, NULL, 0), HERD_ENOTASK);
    f.herd__value = 0;
    CHECK_RC(herd_future_get(&f, &v), HERD_ENOTASK);
    CHECK_RC(herd_mutex_lock(&m), HERD_ENOTASK);
    CHECK_RC(herd_cond_wait(&c, &m), HERD_ENOTASK);
    CHECK_RC(herd_barrier_wait(&b), HERD_ENOTASK);
    CHECK_RC(herd_feb_readFF(&word, &v), HERD_ENOTASK);
    CHECK_RC(herd_feb_readFE(&word, &v), HERD_ENOTASK);
    CHECK_RC(herd_feb_writeEF(&word, 1), HERD_ENOTASK);
    CHECK_EQ(word, 5);
    CHECK_EQ(herd_worker_id(), -1);
    herd_barrier_destroy(&b);
}

/* The non-blocking synchronisation calls. The header's synchronisation
 * section says all of its calls "may be used only from inside herd tasks
 * (HERD_ENOTASK otherwise)". */
static void check_outside_task_nonblocking(void) {
    uint64_t word = 5;
    herd_mutex m;
    herd_cond c;
    herd_mutex_init(&m);
    herd_cond_init(&c);
    CHECK_RC(herd_feb_writeF(&word, 1), HERD_ENOTASK);
    CHECK_RC(herd_feb_fill(&word), HERD_ENOTASK);
    CHECK_RC(herd_feb_empty(&word), HERD_ENOTASK);
    CHECK_RC(herd_mutex_trylock(&m), HERD_ENOTASK);
    CHECK_RC(herd_mutex_unlock(&m), HERD_ENOTASK);
    CHECK_RC(herd_cond_signal(&c), HERD_ENOTASK);
    CHECK_RC(herd_cond_broadcast(&c), HERD_ENOTASK);
    CHECK_EQ(word, 5);
}

static void *outside_thread(void *p) {
    (void)p;
    check_outside_task();
    return NULL;
}

/* Inside a task: lifecycle calls and herd_run are refused. */
static void inside_root(void *p) {
    (void)p;
    CHECK_RC(herd_run(nop, NULL, 0), HERD_ETASK);
    CHECK_RC(herd_stop(), HERD_ETASK);
    int rc = herd_start(NULL); /* already started, and in a task */
    CHECK(rc == HERD_ESTATE || rc == HERD_ETASK);
    int id = herd_worker_id();
    CHECK(id >= 0 && id < herd_num_workers());

    /* Malformed arguments. */
    unsigned char big[HERD_ARG_MAX + 1] = {0};
    CHECK_RC(herd_spawn(NULL, NULL, 0), HERD_EINVAL);
    CHECK_RC(herd_spawn(nop, big, sizeof big), HERD_EINVAL);
    herd_group g;
    herd_group_init(&g);
    CHECK_RC(herd_group_spawn(&g, NULL, NULL, 0), HERD_EINVAL);
    CHECK_RC(herd_group_spawn(&g, nop, big, sizeof big), HERD_EINVAL);
    CHECK_OK(herd_group_wait(&g)); /* the failed spawns left the group empty */
    herd_future f;
    CHECK_RC(herd_future_spawn(&f, NULL, NULL, 0), HERD_EINVAL);
    herd_mutex m;
    herd_mutex_init(&m);
    CHECK_RC(herd_mutex_unlock(&m), HERD_EINVAL);
    herd_cond c;
    herd_cond_init(&c);
    CHECK_RC(herd_cond_wait(&c, &m), HERD_EINVAL);
    herd_barrier b;
    CHECK_RC(herd_barrier_init(&b, 0), HERD_EINVAL);
    uint64_t words[2] = {0, 0}, v;
    uint64_t *odd = (uint64_t *)(void *)((char *)words + 3);
    CHECK_RC(herd_feb_readFF(odd, &v), HERD_EINVAL);
    CHECK_RC(herd_feb_writeEF(odd, 1), HERD_EINVAL);
    CHECK_OK(herd_wait());
}

/* A task queue holds 2^20 queued children: the next spawn is HERD_ENOMEM,
 * and the queued ones still run. Only with one worker is the count exact
 * (nobody steals from the queue). */
#define QUEUE_CAP (1 << 20)
static _Atomic long full_ran;

static void count_child(void *p) {
    (void)p;
    atomic_fetch_add_explicit(&full_ran, 1, memory_order_relaxed);
}

static void queue_full_root(void *p) {
    (void)p;
    long n = 0;
    int rc;
    while ((rc = herd_spawn(count_child, NULL, 0)) == 0)
        n++;
    CHECK_RC(rc, HERD_ENOMEM);
    CHECK_EQ(n, QUEUE_CAP);
    CHECK_EQ(atomic_load(&full_ran), 0); /* one worker, and we never waited */
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&full_ran), n);
    /* After the wait the queue has room again. */
    CHECK_OK(herd_spawn(count_child, NULL, 0));
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&full_ran), n + 1);
}

/* Run fn() with fd 2 sent to a temporary file; the captured text goes in buf. */
static void capture_stderr(void (*fn)(void *), void *arg, char *buf, size_t len) {
    char path[] = "/tmp/herd_test_errors_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    fflush(stderr);
    int saved = dup(2);
    CHECK(saved >= 0);
    CHECK(dup2(fd, 2) == 2);
    fn(arg);
    fflush(stderr);
    CHECK(dup2(saved, 2) == 2);
    close(saved);
    ssize_t n = pread(fd, buf, len - 1, 0);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
}

static int start_rc;
static void start_into(void *p) {
    start_rc = herd_start(p);
}

static void check_bad_settings(void) {
    char saved[64] = "";
    const char *env = getenv("HERD_WORKERS");
    if (env)
        snprintf(saved, sizeof saved, "%s", env);

    char msg[4096];
    CHECK(setenv("HERD_WORKERS", "abc", 1) == 0);
    capture_stderr(start_into, NULL, msg, sizeof msg);
    CHECK_RC(start_rc, HERD_EINVAL);
    CHECK(strstr(msg, "HERD_WORKERS") != NULL); /* names the variable... */
    CHECK(strstr(msg, "abc") != NULL);          /* ...and the value */
    CHECK_EQ(herd_num_workers(), 0);            /* and nothing started */
    CHECK_RC(herd_run(nop, NULL, 0), HERD_ESTATE);

    CHECK(setenv("HERD_WORKERS", "0", 1) == 0);
    capture_stderr(start_into, NULL, msg, sizeof msg);
    CHECK_RC(start_rc, HERD_EINVAL);

    /* A config field wins over the (malformed) variable... */
    herd_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.workers = 2;
    CHECK_OK(herd_start(&cfg));
    CHECK_EQ(herd_num_workers(), 2);
    CHECK_OK(herd_stop());
    /* ...and a malformed field is refused too. */
    cfg.workers = -2;
    CHECK(unsetenv("HERD_WORKERS") == 0);
    capture_stderr(start_into, &cfg, msg, sizeof msg);
    CHECK_RC(start_rc, HERD_EINVAL);
    CHECK_EQ(herd_num_workers(), 0);

    /* A misspelt HERD_ variable stops start-up as well. */
    CHECK(setenv("HERD_WOKRERS", "2", 1) == 0);
    capture_stderr(start_into, NULL, msg, sizeof msg);
    CHECK_RC(start_rc, HERD_EINVAL);
    CHECK(strstr(msg, "HERD_WOKRERS") != NULL);
    CHECK(unsetenv("HERD_WOKRERS") == 0);

    if (saved[0])
        CHECK(setenv("HERD_WORKERS", saved, 1) == 0);
}

static int stop_rc;
static void stop_into(void *p) {
    (void)p;
    stop_rc = herd_stop();
}

/* A statistics file that cannot be written: herd_stop() says so on stderr
 * and returns HERD_ESYS, and the runtime is stopped all the same. */
static void check_stats_unwritable(void) {
    herd_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.stats = "/nonexistent-herd-dir/stats.json"; /* not checked at start-up */
    CHECK_OK(herd_start(&cfg));
    CHECK_OK(herd_run(nop, NULL, 0));
    char msg[4096];
    capture_stderr(stop_into, NULL, msg, sizeof msg);
    CHECK_RC(stop_rc, HERD_ESYS);
    CHECK(strcmp(msg, "herd: HERD_STATS=/nonexistent-herd-dir/stats.json: cannot write: "
                      "No such file or directory\n") == 0);
    CHECK_EQ(herd_num_workers(), 0);
    CHECK_RC(herd_stop(), HERD_ESTATE);
}

/* The big-argument area of a worker's deque (tasks with more than
 * HERD__SLOT_INLINE_ARG bytes of arguments, 256 MiB of address space) is
 * reserved at its first use, not at herd_start: a worker that queued no such
 * task holds none (checked for the schedulers that queue in the worker's
 * deque), and the first such task gets its arguments intact. */
#define BIG_ARG 100
static _Atomic int big_ok;

static void big_child(void *p) {
    const unsigned char *b = p;
    int ok = 1;
    for (int i = 0; i < BIG_ARG; i++)
        ok &= b[i] == (unsigned char)(i * 7);
    atomic_fetch_add_explicit(&big_ok, ok, memory_order_relaxed);
}

static void big_root(void *p) {
    (void)p;
    herd__worker *w = herd__self();
    CHECK(w->hot.q.big == NULL); /* nothing big was queued on this worker yet */
    unsigned char b[BIG_ARG];
    for (int i = 0; i < BIG_ARG; i++)
        b[i] = (unsigned char)(i * 7);
    /* Where it goes depends on the scheduler and the spawn policy (the
     * deque, then maybe a shepherd's queue, or run at once under
     * work-first); wherever, its arguments arrive intact. */
    CHECK_OK(herd_spawn(big_child, b, sizeof b));
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&big_ok), 1);
}

static void check_big_area_lazy(void) {
    CHECK_OK(herd_start(NULL));
    CHECK_OK(herd_run(nop, NULL, 0));
    herd__rt *rt = herd__rt_global;
    for (int i = 0; i < rt->nworkers; i++)
        CHECK(rt->workers[i].hot.q.big == NULL);
    CHECK_OK(herd_run(big_root, NULL, 0));
    CHECK_OK(herd_stop());
}

int main(void) {
    STEP("before start");
    CHECK_EQ(herd_num_workers(), 0);
    CHECK_RC(herd_run(nop, NULL, 0), HERD_ESTATE);
    CHECK_RC(herd_stop(), HERD_ESTATE);
    CHECK_RC(herd_stats(NULL, 0), HERD_ESTATE);
    check_outside_task();

    STEP("herd_strerror");
    const int codes[] = {HERD_OK,     HERD_EINVAL, HERD_ENOMEM, HERD_ENOTASK,
                         HERD_ESTATE, HERD_EBUSY,  HERD_ESYS,   HERD_ETASK};
    const int ncodes = (int)(sizeof codes / sizeof codes[0]);
    for (int i = 0; i < ncodes; i++) {
        const char *s = herd_strerror(codes[i]);
        CHECK(s != NULL && s[0] != '\0');
        for (int j = 0; j < i; j++)
            CHECK(strcmp(s, herd_strerror(codes[j])) != 0); /* each says something else */
    }
    const int unknown[] = {1, -8, -100, 12345, -2147483647 - 1};
    for (int i = 0; i < (int)(sizeof unknown / sizeof unknown[0]); i++)
        CHECK(herd_strerror(unknown[i]) != NULL);

    STEP("lifecycle");
    CHECK_OK(herd_start(NULL));
    CHECK_RC(herd_start(NULL), HERD_ESTATE);
    CHECK(herd_num_workers() >= 1);
    check_outside_task();
    pthread_t th;
    CHECK(pthread_create(&th, NULL, outside_thread, NULL) == 0);
    CHECK(pthread_join(th, NULL) == 0);

    STEP("inside a task");
    CHECK_OK(herd_run(inside_root, NULL, 0));

    if (herd_num_workers() == 1) {
        STEP("a full task queue: HERD_ENOMEM");
        CHECK_OK(herd_run(queue_full_root, NULL, 0));
    }

    CHECK_OK(herd_stop());
    CHECK_RC(herd_stop(), HERD_ESTATE);
    CHECK_RC(herd_run(nop, NULL, 0), HERD_ESTATE);

    STEP("malformed settings");
    check_bad_settings();
    CHECK_OK(herd_start(NULL)); /* the environment is as it was */
    CHECK_OK(herd_run(inside_root, NULL, 0));
    CHECK_OK(herd_stop());

    STEP("the deque's big-argument area is reserved at its first use");
    check_big_area_lazy();

    STEP("a statistics file that cannot be written: HERD_ESYS from herd_stop");
    check_stats_unwritable();

    STEP("non-blocking synchronisation calls outside a task");
    check_outside_task_nonblocking();
    CHECK_OK(herd_start(NULL));
    check_outside_task_nonblocking();
    CHECK_OK(herd_stop());
    STEP("ok");
    return 0;
}
