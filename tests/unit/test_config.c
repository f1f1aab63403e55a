/* Start-up settings (src/core/config.c): every accepted form of every
 * HERD_* variable, every class of malformed value with the message it must
 * print, config-over-environment precedence, unknown-variable rejection and
 * the size/integer parsers' edge cases.
 *
 * Messages are checked by redirecting fd 2 into a temporary file around each
 * call, so the test sees exactly what a user would see. */
#include "core/config.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* ------------------------------------------------------------ harness */

/* Remove every HERD_* variable, so that the test starts from the defaults
 * whatever the environment of the CTest run holds. */
static void clear_herd_env(void) {
    for (;;) {
        char name[256] = "";
        for (char **e = environ; e && *e; e++) {
            if (strncmp(*e, "HERD_", 5) == 0) {
                size_t len = strcspn(*e, "=");
                if (len >= sizeof name)
                    len = sizeof name - 1;
                memcpy(name, *e, len);
                name[len] = '\0';
                break;
            }
        }
        if (!name[0])
            return;
        unsetenv(name);
    }
}

static char captured[8192];
static int saved_fd = -1;
static FILE *capture_file;

static void capture_begin(void) {
    fflush(stderr);
    capture_file = tmpfile();
    if (!capture_file) {
        perror("tmpfile");
        exit(1);
    }
    saved_fd = dup(2);
    dup2(fileno(capture_file), 2);
}

static void capture_end(void) {
    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    rewind(capture_file);
    size_t n = fread(captured, 1, sizeof captured - 1, capture_file);
    captured[n] = '\0';
    fclose(capture_file);
}

static int starts_with(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Resolve with cfg and a single variable set (value NULL: none), capturing
 * stderr into `captured`. */
static int resolve_with(const herd_config *cfg, const char *var, const char *value,
                        herd__settings *s) {
    clear_herd_env();
    if (var && value)
        setenv(var, value, 1);
    capture_begin();
    int rc = herd__settings_resolve(cfg, s);
    capture_end();
    clear_herd_env();
    return rc;
}

/* The value is accepted silently. */
static int accept_env(const char *var, const char *value, herd__settings *s) {
    int rc = resolve_with(NULL, var, value, s);
    CHECK_MSG(rc == 0, "%s=%s rejected: %s", var, value, captured);
    CHECK_MSG(captured[0] == '\0', "%s=%s printed: %s", var, value, captured);
    return rc == 0;
}

/* The value is rejected with one line that starts "herd: <label>=<shown>: ",
 * contains `problem`, and then "; <forms_label>: " followed by `forms`. */
static void reject(const herd_config *cfg, const char *var, const char *value, const char *label,
                   const char *shown, const char *problem, const char *forms_label,
                   const char *forms) {
    herd__settings s;
    char prefix[512], tail[512];
    int rc = resolve_with(cfg, var, value, &s);
    snprintf(prefix, sizeof prefix, "herd: %s=%s: ", label, shown);
    snprintf(tail, sizeof tail, "; %s: %s", forms_label, forms);
    CHECK_MSG(rc == HERD_EINVAL, "%s=%s accepted (rc %d)", label, shown, rc);
    CHECK_MSG(strncmp(captured, prefix, strlen(prefix)) == 0, "message '%s' lacks prefix '%s'",
              captured, prefix);
    CHECK_MSG(count_lines(captured) == 1, "message is not one line: '%s'", captured);
    if (problem)
        CHECK_MSG(strstr(captured, problem) != NULL, "message '%s' lacks '%s'", captured, problem);
    CHECK_MSG(strstr(captured, tail) != NULL, "message '%s' lacks '%s'", captured, tail);
}

static void reject_env(const char *var, const char *value, const char *problem,
                       const char *forms_label, const char *forms) {
    reject(NULL, var, value, var, value[0] ? value : "\"\"", problem, forms_label, forms);
}

/* ------------------------------------------------------------- defaults */

static void test_defaults(void) {
    herd__settings s;
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096;
    CHECK(resolve_with(NULL, NULL, NULL, &s) == 0);
    CHECK(captured[0] == '\0');
    CHECK(s.workers == 0);
    CHECK(strcmp(s.sched, "auto") == 0); /* herd_start resolves it with the topology */
    CHECK(s.bind == HERD__BIND_COMPACT);
    CHECK(s.topology[0] == '\0');
    CHECK(s.shepherd == HERD__LVL_L3);
    CHECK(s.stack_size == (((size_t)128 << 10) + page - 1) / page * page);
    CHECK(s.idle == HERD__IDLE_ADAPTIVE);
    CHECK(s.stats == HERD__STATS_OFF);
    CHECK(s.stats_path[0] == '\0');
    CHECK(s.stack_guard == 1);
    CHECK(s.spawn == HERD__SPAWN_HELP_FIRST);
    CHECK(s.steal == HERD__TAKE_DEFAULT);
    CHECK(s.shepherd_set == 0);
    CHECK(s.trace_path[0] == '\0');

    /* A zeroed config is the same as none. */
    herd_config cfg;
    memset(&cfg, 0, sizeof cfg);
    herd__settings z;
    CHECK(resolve_with(&cfg, NULL, NULL, &z) == 0);
    CHECK(memcmp(&s, &z, sizeof s) == 0);
}

/* --------------------------------------------------------- per variable */

#define WORKERS_FORMS "an integer from 1 to 4096"

static void test_workers(void) {
    herd__settings s;
    if (accept_env("HERD_WORKERS", "1", &s))
        CHECK(s.workers == 1);
    if (accept_env("HERD_WORKERS", "16", &s))
        CHECK(s.workers == 16);
    if (accept_env("HERD_WORKERS", "4096", &s))
        CHECK(s.workers == 4096);
    if (accept_env("HERD_WORKERS", "+8", &s))
        CHECK(s.workers == 8);

    reject_env("HERD_WORKERS", "", "empty value", "accepted", WORKERS_FORMS);
    reject_env("HERD_WORKERS", "0", "out of range", "accepted", WORKERS_FORMS);
    reject_env("HERD_WORKERS", "4097", "out of range", "accepted", WORKERS_FORMS);
    reject_env("HERD_WORKERS", "-1", "out of range", "accepted", WORKERS_FORMS);
    reject_env("HERD_WORKERS", "99999999999999999999", "out of range", "accepted", WORKERS_FORMS);
    reject_env("HERD_WORKERS", "four", "not a decimal integer", "accepted", WORKERS_FORMS);
    reject_env("HERD_WORKERS", "4x", "trailing", "accepted", WORKERS_FORMS);
    reject_env("HERD_WORKERS", "4 ", "trailing", "accepted", WORKERS_FORMS);
    reject_env("HERD_WORKERS", " 4", "not a decimal integer", "accepted", WORKERS_FORMS);
    reject_env("HERD_WORKERS", "0x10", "trailing", "accepted", WORKERS_FORMS);
    /* auto: counted by herd_start from the free PUs (src/place/mapper.h). */
    if (accept_env("HERD_WORKERS", "auto", &s))
        CHECK(s.workers == 0 && s.workers_auto == 1);
    if (accept_env("HERD_WORKERS", "AUTO", &s))
        CHECK(s.workers_auto == 1);
    if (accept_env("HERD_WORKERS", "3", &s))
        CHECK(s.workers_auto == 0);
    reject_env("HERD_WORKERS", "autox", "not a decimal integer", "accepted", WORKERS_FORMS);
}

static void test_registry(void) {
    herd__settings s;
    if (accept_env("HERD_REGISTRY", "/tmp/my-registry", &s))
        CHECK(strcmp(s.registry, "/tmp/my-registry") == 0);
    if (accept_env("HERD_BIND", "xll", &s))
        CHECK(s.registry[0] == '\0');
    reject_env("HERD_REGISTRY", "", "empty value", "accepted", "the path of the registry file");
}

#define SCHED_FORMS "auto, ws, ws-nearest, numa, numa-random, hier, mts, central, lifo, fifo"

static void test_sched(void) {
    static const char *all[] = {"ws",  "ws-nearest", "numa", "numa-random", "hier",
                                "mts", "central",    "lifo", "fifo"};
    herd__settings s;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (accept_env("HERD_SCHED", all[i], &s))
            CHECK(strcmp(s.sched, all[i]) == 0);
    if (accept_env("HERD_SCHED", "auto", &s))
        CHECK(strcmp(s.sched, "auto") == 0);
    /* Names ignore case and are stored in their lower-case spelling. */
    if (accept_env("HERD_SCHED", "WS", &s))
        CHECK(strcmp(s.sched, "ws") == 0);
    if (accept_env("HERD_SCHED", "Numa-Random", &s))
        CHECK(strcmp(s.sched, "numa-random") == 0);
    /* The exact line, once, as the documentation shows it. */
    CHECK(resolve_with(NULL, "HERD_SCHED", "mst", &s) == HERD_EINVAL);
    CHECK(strcmp(captured,
                 "herd: HERD_SCHED=mst: unknown scheduler; accepted: " SCHED_FORMS "\n") == 0);
    reject_env("HERD_SCHED", "steal", "unknown scheduler", "accepted", SCHED_FORMS);
    reject_env("HERD_SCHED", "ws ", "unknown scheduler", "accepted", SCHED_FORMS);
    reject_env("HERD_SCHED", "", "empty value", "accepted", SCHED_FORMS);
}

static void test_bind(void) {
    herd__settings s;
    if (accept_env("HERD_BIND", "none", &s))
        CHECK(s.bind == HERD__BIND_NONE);
    if (accept_env("HERD_BIND", "compact", &s))
        CHECK(s.bind == HERD__BIND_COMPACT);
    if (accept_env("HERD_BIND", "scatter", &s))
        CHECK(s.bind == HERD__BIND_SCATTER);
    if (accept_env("HERD_BIND", "Scatter", &s))
        CHECK(s.bind == HERD__BIND_SCATTER);
    if (accept_env("HERD_BIND", "numa-priority", &s))
        CHECK(s.bind == HERD__BIND_NUMA_PRIORITY);
    if (accept_env("HERD_BIND", "NUMA-Priority", &s))
        CHECK(s.bind == HERD__BIND_NUMA_PRIORITY);
    if (accept_env("HERD_BIND", "static", &s))
        CHECK(s.bind == HERD__BIND_STATIC);
    if (accept_env("HERD_BIND", "BLL", &s))
        CHECK(s.bind == HERD__BIND_BLL);
    if (accept_env("HERD_BIND", "xll", &s))
        CHECK(s.bind == HERD__BIND_XLL);
    const char *forms = "none, compact, scatter, numa-priority, static, bll, xll";
    reject_env("HERD_BIND", "spread", "unknown binding policy", "accepted", forms);
    reject_env("HERD_BIND", "", "empty value", "accepted", forms);
}

static void test_topology(void) {
    herd__settings s;
    if (accept_env("HERD_TOPOLOGY", "pack:2 core:4 pu:1", &s))
        CHECK(strcmp(s.topology, "pack:2 core:4 pu:1") == 0);
    if (accept_env("HERD_TOPOLOGY", "/some/where/machine.xml", &s))
        CHECK(strcmp(s.topology, "/some/where/machine.xml") == 0);
    reject_env("HERD_TOPOLOGY", "", "empty value", "accepted", "an hwloc synthetic description");

    /* A value that would not fit: the message shows it cut short. */
    char longval[1100];
    memset(longval, 'x', sizeof longval - 1);
    longval[sizeof longval - 1] = '\0';
    CHECK(resolve_with(NULL, "HERD_TOPOLOGY", longval, &s) == HERD_EINVAL);
    CHECK(starts_with(captured, "herd: HERD_TOPOLOGY=xxx"));
    CHECK(strstr(captured, "...: too long") != NULL);
    CHECK(count_lines(captured) == 1);
    longval[1023] = '\0'; /* the longest that fits */
    if (accept_env("HERD_TOPOLOGY", longval, &s))
        CHECK(strlen(s.topology) == 1023);
}

static void test_shepherd(void) {
    static const struct {
        const char *name;
        herd__level level;
    } levels[] = {{"pu", HERD__LVL_PU},          {"core", HERD__LVL_CORE},
                  {"l2", HERD__LVL_L2},          {"l3", HERD__LVL_L3},
                  {"numa", HERD__LVL_NUMA},      {"package", HERD__LVL_PACKAGE},
                  {"machine", HERD__LVL_MACHINE}};
    herd__settings s;
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (accept_env("HERD_SHEPHERD", levels[i].name, &s))
            CHECK_MSG(s.shepherd == levels[i].level, "HERD_SHEPHERD=%s", levels[i].name);
    if (accept_env("HERD_SHEPHERD", "L3", &s))
        CHECK(s.shepherd == HERD__LVL_L3 && s.shepherd_set == 1);
    const char *forms = "pu, core, l2, l3, numa, package, machine";
    reject_env("HERD_SHEPHERD", "l4", "unknown level", "accepted", forms);
    reject_env("HERD_SHEPHERD", "socket", "unknown level", "accepted", forms);
    reject_env("HERD_SHEPHERD", "", "empty value", "accepted", forms);
}

#define STACK_FORMS "a byte count, or a number with a K, M or G suffix"

static void test_stack(void) {
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096;
    static const struct {
        const char *text;
        size_t bytes;
    } ok[] = {
        {"16K", 16384},          {"16k", 16384},
        {"16384", 16384},        {"64K", 65536},
        {"1M", 1 << 20},         {"1m", 1 << 20},
        {"512k", 512 << 10},     {"1G", (size_t)1 << 30},
        {"1g", (size_t)1 << 30}, {"1073741824", (size_t)1 << 30},
    };
    herd__settings s;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (accept_env("HERD_STACK", ok[i].text, &s))
            CHECK_MSG(s.stack_size == ok[i].bytes, "HERD_STACK=%s gave %zu", ok[i].text,
                      s.stack_size);
    /* Not a page multiple: rounded up to one. */
    if (accept_env("HERD_STACK", "20000", &s)) {
        CHECK(s.stack_size % page == 0);
        CHECK(s.stack_size >= 20000 && s.stack_size < 20000 + page);
    }

    reject_env("HERD_STACK", "", "empty value", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", "8K", "below the minimum of 16K", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", "16383", "below the minimum", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", "0", "below the minimum", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", "2G", "above the maximum of 1G", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", "1025M", "above the maximum", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", "1T", "not a size", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", "64KB", "trailing characters after the suffix", "accepted",
               STACK_FORMS);
    reject_env("HERD_STACK", "64KiB", "trailing", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", "K", "not a size", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", "-64K", "not a size", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", " 64K", "not a size", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", "64K ", "trailing", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", "1.5M", "not a size", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", "99999999999999999999G", "too large", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", "99999999999999999999", "too large", "accepted", STACK_FORMS);
    reject_env("HERD_STACK", "18014398509481984K", "too large", "accepted", STACK_FORMS);
}

static void test_idle(void) {
    herd__settings s;
    if (accept_env("HERD_IDLE", "spin", &s))
        CHECK(s.idle == HERD__IDLE_SPIN);
    if (accept_env("HERD_IDLE", "sleep", &s))
        CHECK(s.idle == HERD__IDLE_SLEEP);
    if (accept_env("HERD_IDLE", "adaptive", &s))
        CHECK(s.idle == HERD__IDLE_ADAPTIVE);
    if (accept_env("HERD_IDLE", "SPIN", &s))
        CHECK(s.idle == HERD__IDLE_SPIN);
    if (accept_env("HERD_IDLE", "adaptive", &s))
        CHECK(s.spin_us == 0); /* the default */
    if (accept_env("HERD_IDLE", "adaptive:250", &s))
        CHECK(s.idle == HERD__IDLE_ADAPTIVE && s.spin_us == 250);
    if (accept_env("HERD_IDLE", "Adaptive:1000000", &s))
        CHECK(s.spin_us == 1000000);
    const char *forms = "spin, sleep, adaptive, adaptive:US (US from 1 to 1000000 microseconds)";
    reject_env("HERD_IDLE", "busy", "unknown idle policy", "accepted", forms);
    reject_env("HERD_IDLE", "", "empty value", "accepted", forms);
    reject_env("HERD_IDLE", "adaptive:0", "out of range", "accepted", forms);
    reject_env("HERD_IDLE", "adaptive:1000001", "out of range", "accepted", forms);
    reject_env("HERD_IDLE", "adaptive:", "empty value", "accepted", forms);
    reject_env("HERD_IDLE", "adaptive:5ms", "not a decimal integer (trailing characters)",
               "accepted", forms);
    reject_env("HERD_IDLE", "adaptive:99999999999999999999", "out of range", "accepted", forms);
    reject_env("HERD_IDLE", "adaptive:4294967546", "out of range", "accepted", forms);
    reject_env("HERD_IDLE", "adaptive:-250", "out of range", "accepted", forms);
}

/* HERD_SPAWN / HERD_STEAL: every form parses here; whether the scheduler
 * has the notion is herd_start's check (tests/unit/test_sched.c). */
#define STEAL_FORMS "one, half, chunk:N (N from 1 to 65536)"

static void test_spawn_steal(void) {
    herd__settings s;
    if (accept_env("HERD_SPAWN", "help-first", &s))
        CHECK(s.spawn == HERD__SPAWN_HELP_FIRST);
    if (accept_env("HERD_SPAWN", "Work-First", &s))
        CHECK(s.spawn == HERD__SPAWN_WORK_FIRST);
    reject_env("HERD_SPAWN", "eager", "unknown spawn policy", "accepted", "help-first, work-first");
    reject_env("HERD_SPAWN", "", "empty value", "accepted", "help-first, work-first");
    if (accept_env("HERD_STEAL", "one", &s))
        CHECK(s.steal == HERD__TAKE_ONE);
    if (accept_env("HERD_STEAL", "HALF", &s))
        CHECK(s.steal == HERD__TAKE_HALF);
    if (accept_env("HERD_STEAL", "chunk:4", &s))
        CHECK(s.steal == HERD__TAKE_CHUNK && s.steal_chunk == 4);
    if (accept_env("HERD_STEAL", "chunk:65536", &s))
        CHECK(s.steal_chunk == 65536);
    reject_env("HERD_STEAL", "chunk:0", "out of range", "accepted", STEAL_FORMS);
    reject_env("HERD_STEAL", "chunk:65537", "out of range", "accepted", STEAL_FORMS);
    reject_env("HERD_STEAL", "chunk:", "empty value", "accepted", STEAL_FORMS);
    reject_env("HERD_STEAL", "chunk:4x", "trailing", "accepted", STEAL_FORMS);
    /* Overflow and negatives: refused, never wrapped into range. */
    reject_env("HERD_STEAL", "chunk:99999999999999999999", "out of range", "accepted", STEAL_FORMS);
    reject_env("HERD_STEAL", "chunk:4294967300", "out of range", "accepted", STEAL_FORMS);
    reject_env("HERD_STEAL", "chunk:-4", "out of range", "accepted", STEAL_FORMS);
    reject_env("HERD_STEAL", "chunk: 4", "not a decimal integer", "accepted", STEAL_FORMS);
    reject_env("HERD_STEAL", "all", "unknown steal amount", "accepted", STEAL_FORMS);
    reject_env("HERD_STEAL", "", "empty value", "accepted", STEAL_FORMS);
    /* The config fields win over the variables. */
    herd_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.spawn = "work-first";
    cfg.steal = "half";
    CHECK(resolve_with(&cfg, "HERD_STEAL", "one", &s) == 0);
    CHECK(s.spawn == HERD__SPAWN_WORK_FIRST && s.steal == HERD__TAKE_HALF);
    cfg.steal = "twice";
    reject(&cfg, NULL, NULL, "config.steal", "twice", "unknown steal amount", "accepted",
           STEAL_FORMS);
}

static void test_stats(void) {
    herd__settings s;
    if (accept_env("HERD_STATS", "", &s))
        CHECK(s.stats == HERD__STATS_OFF);
    if (accept_env("HERD_STATS", "0", &s))
        CHECK(s.stats == HERD__STATS_OFF);
    if (accept_env("HERD_STATS", "1", &s))
        CHECK(s.stats == HERD__STATS_TABLE && s.stats_path[0] == '\0');
    if (accept_env("HERD_STATS", "/tmp/run 1/stats.json", &s)) {
        CHECK(s.stats == HERD__STATS_JSON);
        CHECK(strcmp(s.stats_path, "/tmp/run 1/stats.json") == 0);
    }
    if (accept_env("HERD_STATS", "2", &s)) /* anything else is a path */
        CHECK(s.stats == HERD__STATS_JSON && strcmp(s.stats_path, "2") == 0);

    char longpath[1100];
    memset(longpath, 'p', sizeof longpath - 1);
    longpath[sizeof longpath - 1] = '\0';
    CHECK(resolve_with(NULL, "HERD_STATS", longpath, &s) == HERD_EINVAL);
    CHECK(starts_with(captured, "herd: HERD_STATS=ppp"));
    CHECK(strstr(captured, "path too long") != NULL);
    CHECK(strstr(captured, "; accepted: \"\" or 0 (off), 1 (table on stderr)") != NULL);
}

static void test_stack_guard(void) {
    herd__settings s;
    if (accept_env("HERD_STACK_GUARD", "1", &s))
        CHECK(s.stack_guard == 1);
    if (accept_env("HERD_STACK_GUARD", "on", &s))
        CHECK(s.stack_guard == 1);
    if (accept_env("HERD_STACK_GUARD", "0", &s))
        CHECK(s.stack_guard == 0);
    if (accept_env("HERD_STACK_GUARD", "off", &s))
        CHECK(s.stack_guard == 0);
    if (accept_env("HERD_STACK_GUARD", "OFF", &s))
        CHECK(s.stack_guard == 0);
    if (accept_env("HERD_STACK_GUARD", "On", &s))
        CHECK(s.stack_guard == 1);
    if (accept_env("HERD_STACK_GUARD", "on", &s))
        CHECK(s.stack_guard_size == 0);
    /* A size: on, with that guard. */
    if (accept_env("HERD_STACK_GUARD", "256M", &s))
        CHECK(s.stack_guard == 1 && s.stack_guard_size == (size_t)256 << 20);
    if (accept_env("HERD_STACK_GUARD", "4096", &s))
        CHECK(s.stack_guard == 1 && s.stack_guard_size == 4096);
    if (accept_env("HERD_STACK_GUARD", "64G", &s))
        CHECK(s.stack_guard == 1 && s.stack_guard_size == (size_t)64 << 30);
    const char *forms = "1, on, 0, off, or the guard's size: a byte count, or a number with a K, "
                        "M or G suffix, from 4K to 64G";
    reject_env("HERD_STACK_GUARD", "yes", "unknown value", "accepted", forms);
    reject_env("HERD_STACK_GUARD", "2", "out of range", "accepted", forms);
    reject_env("HERD_STACK_GUARD", "4095", "out of range", "accepted", forms);
    reject_env("HERD_STACK_GUARD", "65G", "out of range", "accepted", forms);
    reject_env("HERD_STACK_GUARD", "99999999999999999999", "too large", "accepted", forms);
    reject_env("HERD_STACK_GUARD", "16X", "not a size", "accepted", forms);
    reject_env("HERD_STACK_GUARD", "-4K", "unknown value", "accepted", forms);
    reject_env("HERD_STACK_GUARD", "onn", "unknown value", "accepted", forms);
    reject_env("HERD_STACK_GUARD", "", "empty value", "accepted", forms);
}

/* ----------------------------------------------------------- precedence */

static herd_config zero_config(void) {
    herd_config cfg;
    memset(&cfg, 0, sizeof cfg);
    return cfg;
}

/* The config field wins over a variable set to another valid value, and
 * over one set to a malformed value (the variable is then not read). */
static void test_config_wins(void) {
    herd__settings s;
    herd_config cfg = zero_config();

    cfg.workers = 3;
    CHECK(resolve_with(&cfg, "HERD_WORKERS", "5", &s) == 0 && s.workers == 3);
    CHECK(resolve_with(&cfg, "HERD_WORKERS", "junk", &s) == 0 && s.workers == 3);
    cfg = zero_config();
    CHECK(resolve_with(&cfg, "HERD_WORKERS", "5", &s) == 0 && s.workers == 5);

    cfg = zero_config();
    cfg.sched = "auto";
    CHECK(resolve_with(&cfg, "HERD_SCHED", "mts", &s) == 0 && strcmp(s.sched, "auto") == 0);

    cfg = zero_config();
    cfg.bind = "scatter";
    CHECK(resolve_with(&cfg, "HERD_BIND", "none", &s) == 0 && s.bind == HERD__BIND_SCATTER);
    cfg.bind = NULL;
    CHECK(resolve_with(&cfg, "HERD_BIND", "none", &s) == 0 && s.bind == HERD__BIND_NONE);
    cfg.bind = "numa-priority";
    CHECK(resolve_with(&cfg, "HERD_BIND", "none", &s) == 0 && s.bind == HERD__BIND_NUMA_PRIORITY);

    cfg = zero_config();
    cfg.topology = "pack:1 core:2 pu:2";
    CHECK(resolve_with(&cfg, "HERD_TOPOLOGY", "pack:4 pu:1", &s) == 0 &&
          strcmp(s.topology, "pack:1 core:2 pu:2") == 0);

    cfg = zero_config();
    cfg.shepherd = "core";
    CHECK(resolve_with(&cfg, "HERD_SHEPHERD", "numa", &s) == 0 && s.shepherd == HERD__LVL_CORE);

    cfg = zero_config();
    cfg.stack_size = 65536;
    CHECK(resolve_with(&cfg, "HERD_STACK", "1M", &s) == 0 && s.stack_size == 65536);
    CHECK(resolve_with(&cfg, "HERD_STACK", "1T", &s) == 0 && s.stack_size == 65536);

    cfg = zero_config();
    cfg.idle = "spin";
    CHECK(resolve_with(&cfg, "HERD_IDLE", "sleep", &s) == 0 && s.idle == HERD__IDLE_SPIN);

    cfg = zero_config();
    cfg.stats = "1";
    CHECK(resolve_with(&cfg, "HERD_STATS", "/tmp/x.json", &s) == 0 && s.stats == HERD__STATS_TABLE);
    cfg.stats = ""; /* a config may switch stats off against the variable */
    CHECK(resolve_with(&cfg, "HERD_STATS", "1", &s) == 0 && s.stats == HERD__STATS_OFF);

    cfg = zero_config();
    cfg.stack_guard = -1;
    CHECK(resolve_with(&cfg, "HERD_STACK_GUARD", "on", &s) == 0 && s.stack_guard == 0);
    cfg.stack_guard = 1;
    CHECK(resolve_with(&cfg, "HERD_STACK_GUARD", "off", &s) == 0 && s.stack_guard == 1);
    cfg.stack_guard = 0;
    CHECK(resolve_with(&cfg, "HERD_STACK_GUARD", "off", &s) == 0 && s.stack_guard == 0);
}

/* A malformed config field is reported as config.<field>. */
static void test_config_errors(void) {
    herd_config cfg = zero_config();
    cfg.workers = -2;
    reject(&cfg, NULL, NULL, "config.workers", "-2", "out of range", "accepted", WORKERS_FORMS);
    cfg.workers = 5000;
    reject(&cfg, NULL, NULL, "config.workers", "5000", "out of range", "accepted", WORKERS_FORMS);

    cfg = zero_config();
    cfg.sched = "mst";
    reject(&cfg, NULL, NULL, "config.sched", "mst", "unknown scheduler", "accepted", SCHED_FORMS);
    cfg.sched = "";
    reject(&cfg, NULL, NULL, "config.sched", "\"\"", "empty value", "accepted", SCHED_FORMS);

    cfg = zero_config();
    cfg.bind = "diagonal";
    reject(&cfg, NULL, NULL, "config.bind", "diagonal", "unknown binding policy", "accepted",
           "none, compact, scatter");

    cfg = zero_config();
    cfg.topology = "";
    reject(&cfg, NULL, NULL, "config.topology", "\"\"", "empty value", "accepted",
           "an hwloc synthetic description");

    cfg = zero_config();
    cfg.shepherd = "cluster";
    reject(&cfg, NULL, NULL, "config.shepherd", "cluster", "unknown level", "accepted",
           "pu, core, l2, l3, numa, package, machine");

    cfg = zero_config();
    cfg.stack_size = 100;
    reject(&cfg, NULL, NULL, "config.stack_size", "100", "below the minimum", "accepted",
           STACK_FORMS);
    cfg.stack_size = (size_t)2 << 30;
    reject(&cfg, NULL, NULL, "config.stack_size", "2147483648", "above the maximum", "accepted",
           STACK_FORMS);

    cfg = zero_config();
    cfg.idle = "nap";
    reject(&cfg, NULL, NULL, "config.idle", "nap", "unknown idle policy", "accepted",
           "spin, sleep, adaptive");

    cfg = zero_config();
    cfg.stack_guard = 7;
    reject(&cfg, NULL, NULL, "config.stack_guard", "7", "out of range", "accepted",
           "1 (on), -1 (off), 0 (from HERD_STACK_GUARD)");
}

/* HERD_TRACE: a path whose directory exists and may be written; what
 * cannot work is refused at start-up, not found out at herd_stop(). */
static void test_trace(void) {
    herd__settings s;
    const char *forms = "the path of a file to write, in an existing directory";
    if (accept_env("HERD_TRACE", "/tmp/herd test trace.json", &s))
        CHECK(strcmp(s.trace_path, "/tmp/herd test trace.json") == 0);
    if (accept_env("HERD_TRACE", "trace-config-test.json", &s)) /* the working directory */
        CHECK(strcmp(s.trace_path, "trace-config-test.json") == 0);
    if (accept_env("HERD_TRACE", "/dev/null", &s)) /* an existing writable file */
        CHECK(strcmp(s.trace_path, "/dev/null") == 0);
    reject_env("HERD_TRACE", "", "empty value", "accepted", forms);
    reject_env("HERD_TRACE", "/nonexistent-herd-dir/t.json",
               "directory /nonexistent-herd-dir does not exist", "accepted", forms);
    reject_env("HERD_TRACE", "/nonexistent-herd-dir/",
               "directory /nonexistent-herd-dir does not "
               "exist",
               "accepted", forms);
    reject_env("HERD_TRACE", "/tmp", "is a directory", "accepted", forms);
    reject_env("HERD_TRACE", "/tmp/", "is a directory", "accepted", forms);
    reject_env("HERD_TRACE", "/dev/null/t.json", "cannot use the path (Not a directory)",
               "accepted", forms);

    char longpath[1100];
    memset(longpath, 'p', sizeof longpath - 1);
    longpath[sizeof longpath - 1] = '\0';
    CHECK(resolve_with(NULL, "HERD_TRACE", longpath, &s) == HERD_EINVAL);
    CHECK(starts_with(captured, "herd: HERD_TRACE=ppp"));
    CHECK(strstr(captured, "path too long") != NULL);

    /* The config field wins, and is held to the same rules. */
    herd_config cfg = zero_config();
    cfg.trace = "/tmp/from-config.json";
    CHECK(resolve_with(&cfg, "HERD_TRACE", "/nonexistent-herd-dir/t.json", &s) == 0 &&
          strcmp(s.trace_path, "/tmp/from-config.json") == 0);
    cfg.trace = "";
    reject(&cfg, "HERD_TRACE", "/tmp/t.json", "config.trace", "\"\"", "empty value", "accepted",
           forms);
    cfg.trace = "/nonexistent-herd-dir/t.json";
    reject(&cfg, NULL, NULL, "config.trace", "/nonexistent-herd-dir/t.json",
           "directory /nonexistent-herd-dir does not exist", "accepted", forms);
}

/* ------------------------------------------------------------ variables */

static void test_unknown_variables(void) {
    herd__settings s;
    CHECK(resolve_with(NULL, "HERD_WOKRERS", "4", &s) == HERD_EINVAL);
    CHECK(starts_with(captured, "herd: unknown variable HERD_WOKRERS"));
    CHECK(strstr(captured, "(did you mean HERD_WORKERS?)") != NULL);
    CHECK(strstr(captured, "; known: HERD_WORKERS, HERD_SCHED") != NULL);
    CHECK(strstr(captured, "HERD_TRACE") != NULL);
    CHECK(count_lines(captured) == 1);

    CHECK(resolve_with(NULL, "HERD_SHED", "ws", &s) == HERD_EINVAL);
    CHECK(strstr(captured, "(did you mean HERD_SCHED?)") != NULL);

    /* Nothing close: no hint, still rejected. */
    CHECK(resolve_with(NULL, "HERD_FOO", "1", &s) == HERD_EINVAL);
    CHECK(starts_with(captured, "herd: unknown variable HERD_FOO; known: "));

    CHECK(resolve_with(NULL, "HERD_", "1", &s) == HERD_EINVAL);
    CHECK(starts_with(captured, "herd: unknown variable HERD_;"));

    /* Names are case-sensitive, and only the HERD_ prefix is ours. */
    CHECK(resolve_with(NULL, "herd_workers", "x", &s) == 0 && captured[0] == '\0');
    CHECK(resolve_with(NULL, "HERDSMAN", "x", &s) == 0 && captured[0] == '\0');

    /* An unknown name is rejected even when every field comes from cfg. */
    herd_config cfg = {4,      "ws", "none", "pack:1 pu:2", "pu", 65536,
                       "spin", "1",  1,      NULL,          NULL, NULL};
    CHECK(resolve_with(&cfg, "HERD_WORKER", "4", &s) == HERD_EINVAL);
    CHECK(strstr(captured, "(did you mean HERD_WORKERS?)") != NULL);
    CHECK(resolve_with(&cfg, NULL, NULL, &s) == 0);
    CHECK(s.workers == 4 && s.bind == HERD__BIND_NONE && s.shepherd == HERD__LVL_PU);
}

/* A value with control characters still gives a one-line message. */
static void test_message_is_one_line(void) {
    herd__settings s;
    CHECK(resolve_with(NULL, "HERD_SCHED", "w\ns\t\x01", &s) == HERD_EINVAL);
    CHECK(count_lines(captured) == 1);
    CHECK(starts_with(captured, "herd: HERD_SCHED=w\\ns\\t\\x01: unknown scheduler"));
}

/* -------------------------------------------------------------- parsers */

static void test_parse_int(void) {
    long v = 0;
    char buf[64];
    CHECK(herd__parse_int("0", 0, 10, &v) == 0 && v == 0);
    CHECK(herd__parse_int("10", 0, 10, &v) == 0 && v == 10);
    CHECK(herd__parse_int("-10", -10, 10, &v) == 0 && v == -10);
    CHECK(herd__parse_int("-11", -10, 10, &v) == HERD_EINVAL);
    CHECK(herd__parse_int("11", -10, 10, &v) == HERD_EINVAL);
    snprintf(buf, sizeof buf, "%ld", LONG_MAX);
    CHECK(herd__parse_int(buf, LONG_MIN, LONG_MAX, &v) == 0 && v == LONG_MAX);
    snprintf(buf, sizeof buf, "%ld", LONG_MIN);
    CHECK(herd__parse_int(buf, LONG_MIN, LONG_MAX, &v) == 0 && v == LONG_MIN);
    CHECK(herd__parse_int("99999999999999999999", LONG_MIN, LONG_MAX, &v) == HERD_EINVAL);
    CHECK(herd__parse_int("-99999999999999999999", LONG_MIN, LONG_MAX, &v) == HERD_EINVAL);
    CHECK(herd__parse_int("", 0, 10, &v) == HERD_EINVAL);
    CHECK(herd__parse_int("-", 0, 10, &v) == HERD_EINVAL);
    CHECK(herd__parse_int("+", 0, 10, &v) == HERD_EINVAL);
    CHECK(herd__parse_int("1e3", 0, 10000, &v) == HERD_EINVAL);
    CHECK(herd__parse_int("\t1", 0, 10, &v) == HERD_EINVAL);
    CHECK(herd__parse_int(NULL, 0, 10, &v) == HERD_EINVAL);
    v = 42;
    CHECK(herd__parse_int("x", 0, 10, &v) == HERD_EINVAL && v == 42); /* untouched */
}

static void test_parse_size(void) {
    size_t v = 0;
    CHECK(herd__parse_size("0", &v) == 0 && v == 0);
    CHECK(herd__parse_size("1", &v) == 0 && v == 1);
    CHECK(herd__parse_size("0K", &v) == 0 && v == 0);
    CHECK(herd__parse_size("007k", &v) == 0 && v == 7 << 10);
    CHECK(herd__parse_size("3M", &v) == 0 && v == (size_t)3 << 20);
    CHECK(herd__parse_size("2G", &v) == 0 && v == (size_t)2 << 30);
    CHECK(herd__parse_size("", &v) == HERD_EINVAL);
    CHECK(herd__parse_size("G", &v) == HERD_EINVAL);
    CHECK(herd__parse_size("1GG", &v) == HERD_EINVAL);
    CHECK(herd__parse_size("1B", &v) == HERD_EINVAL);
    CHECK(herd__parse_size("+1K", &v) == HERD_EINVAL);
    CHECK(herd__parse_size("99999999999999999999G", &v) == HERD_EINVAL);
    CHECK(herd__parse_size(NULL, &v) == HERD_EINVAL);
#if SIZE_MAX == UINT64_MAX
    CHECK(herd__parse_size("18446744073709551615", &v) == 0 && v == SIZE_MAX);
    CHECK(herd__parse_size("18446744073709551616", &v) == HERD_EINVAL);
    /* 2^34 - 1 G fits in 64 bits, 2^34 G is 2^64 and does not. */
    CHECK(herd__parse_size("17179869183G", &v) == 0 && v == (((size_t)1 << 34) - 1) << 30);
    CHECK(herd__parse_size("17179869184G", &v) == HERD_EINVAL);
    CHECK(herd__parse_size("17592186044416M", &v) == HERD_EINVAL);
    CHECK(herd__parse_size("18014398509481984K", &v) == HERD_EINVAL);
#endif
    v = 42;
    CHECK(herd__parse_size("12Q", &v) == HERD_EINVAL && v == 42); /* untouched */
}

int main(void) {
    test_defaults();
    test_workers();
    test_sched();
    test_bind();
    test_registry();
    test_topology();
    test_shepherd();
    test_stack();
    test_idle();
    test_spawn_steal();
    test_stats();
    test_trace();
    test_stack_guard();
    test_config_wins();
    test_config_errors();
    test_unknown_variables();
    test_message_is_one_line();
    test_parse_int();
    test_parse_size();
    if (failures) {
        fprintf(stderr, "test_config: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_config: all checks passed\n");
    return 0;
}
