/* Statistics report (src/core/stats_report.c): the table is aligned and
 * carries the totals; the JSON is one valid object (checked by a small
 * strict parser below) with the right counts, whatever bytes the strings
 * hold; herd__stats_report honours the mode and reports write failures
 * as HERD_ESYS with a message naming HERD_STATS and the path. */
#include "core/config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* ------------------------------------------------------ a strict checker */

/* A recursive-descent JSON (RFC 8259) recogniser: enough to prove the
 * output parses, with no tolerance for trailing commas, raw control
 * characters in strings, bad escapes or malformed UTF-8. */
typedef struct parser {
    const char *p;
    int depth;
} parser;

static int parse_value(parser *ps);

static void skip_ws(parser *ps) {
    while (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\t' || *ps->p == '\r')
        ps->p++;
}

static int hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int parse_string(parser *ps) {
    if (*ps->p != '"')
        return 0;
    ps->p++;
    for (;;) {
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            ps->p++;
            return 1;
        }
        if (c < 0x20)
            return 0; /* includes the terminating NUL */
        if (c == '\\') {
            char e = ps->p[1];
            if (e == 'u') {
                for (int i = 2; i < 6; i++)
                    if (!hex(ps->p[i]))
                        return 0;
                ps->p += 6;
            } else if (e && strchr("\"\\/bfnrt", e)) {
                ps->p += 2;
            } else {
                return 0;
            }
        } else if (c < 0x80) {
            ps->p++;
        } else {
            /* Multi-byte UTF-8: a lead byte and its continuation bytes. */
            int n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
            if (c > 0xf4 || n == 0)
                return 0;
            for (int i = 1; i < n; i++)
                if (((unsigned char)ps->p[i] & 0xc0) != 0x80)
                    return 0;
            ps->p += n;
        }
    }
}

static int parse_number(parser *ps) {
    const char *p = ps->p;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return 0;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (*p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    ps->p = p;
    return 1;
}

static int parse_seq(parser *ps, char close, int is_object) {
    if (++ps->depth > 64)
        return 0;
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        ps->depth--;
        return 1;
    }
    for (;;) {
        skip_ws(ps);
        if (is_object) {
            if (!parse_string(ps))
                return 0;
            skip_ws(ps);
            if (*ps->p++ != ':')
                return 0;
        }
        if (!parse_value(ps))
            return 0;
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p != close)
            return 0;
        ps->p++;
        ps->depth--;
        return 1;
    }
}

static int parse_value(parser *ps) {
    skip_ws(ps);
    switch (*ps->p) {
    case '{':
        return parse_seq(ps, '}', 1);
    case '[':
        return parse_seq(ps, ']', 0);
    case '"':
        return parse_string(ps);
    case 't':
        return strncmp(ps->p, "true", 4) == 0 ? (ps->p += 4, 1) : 0;
    case 'f':
        return strncmp(ps->p, "false", 5) == 0 ? (ps->p += 5, 1) : 0;
    case 'n':
        return strncmp(ps->p, "null", 4) == 0 ? (ps->p += 4, 1) : 0;
    default:
        return parse_number(ps);
    }
}

/* The whole text is exactly one JSON object. */
static int is_json_object(const char *text) {
    parser ps = {text, 0};
    skip_ws(&ps);
    if (*ps.p != '{' || !parse_value(&ps))
        return 0;
    skip_ws(&ps);
    return *ps.p == '\0';
}

static void test_checker_itself(void) {
    CHECK(is_json_object("{}"));
    CHECK(is_json_object("{\"a\": [1, -2.5e3, true, null, \"x\\u00e9\"], \"b\": {}}"));
    CHECK(!is_json_object("{\"a\": 1,}"));
    CHECK(!is_json_object("{\"a\": [1 2]}"));
    CHECK(!is_json_object("{\"a\": \"tab\there\"}"));
    CHECK(!is_json_object("{\"a\": \"\\x41\"}"));
    CHECK(!is_json_object("{\"a\": \"\xff\"}"));
    CHECK(!is_json_object("{\"a\": 01}"));
    CHECK(!is_json_object("{\"a\": 1} x"));
    CHECK(!is_json_object("[1]"));
}

/* ------------------------------------------------------------- helpers */

static char text[65536];

/* Read the whole of f (from its start) into `text`, then close f. */
static void slurp(FILE *f) {
    fflush(f);
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
}

static int slurp_path(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    return 1;
}

static herd_worker_stats sample(int i) {
    herd_worker_stats w;
    uint64_t k = (uint64_t)i + 1;
    w.spawned = 1000 * k;
    w.executed = 900 * k;
    w.inlined = 500 * k;
    w.steals = 40 * k;
    w.steals_local = 30 * k;
    w.steals_remote = 10 * k;
    w.stolen_tasks = 80 * k;
    w.max_chunk = 5 + k; /* 6, 7, 8: the total row shows the largest */
    w.shepherd = i / 2;
    w.steal_attempts = 123456 * k;
    w.failed_steals = 7 * k;
    w.blocks = 3 * k;
    w.stacks_allocated = 2 * k;
    w.rescues = 11 * k;
    w.busy_ns = 1500000 * k; /* 1.5 ms per k */
    w.idle_ns = 250000 * k;
    return w;
}

static herd__settings sample_settings(void) {
    herd__settings s;
    memset(&s, 0, sizeof s);
    s.workers = 3;
    snprintf(s.sched, sizeof s.sched, "ws");
    s.bind = HERD__BIND_SCATTER;
    snprintf(s.topology, sizeof s.topology, "pack:2 core:4 pu:1");
    s.shepherd = HERD__LVL_L3;
    s.stack_size = 131072;
    s.idle = HERD__IDLE_ADAPTIVE;
    s.stats = HERD__STATS_OFF;
    s.stack_guard = 1;
    s.spawn = HERD__SPAWN_HELP_FIRST;
    s.steal = HERD__TAKE_CHUNK;
    s.steal_chunk = 12;
    return s;
}

static size_t count_of(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* --------------------------------------------------------------- table */

static void test_table(void) {
    enum { N = 3 };
    herd_worker_stats w[N];
    for (int i = 0; i < N; i++)
        w[i] = sample(i);
    FILE *f = tmpfile();
    herd__stats_print_table(f, w, N);
    slurp(f);

    static const char *headers[] = {"worker", "shep",   "spawned", "executed", "inlined",  "steals",
                                    "local",  "remote", "moved",   "chunk",    "attempts", "failed",
                                    "blocks", "stacks", "rescues", "busy ms",  "idle ms"};
    for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++)
        CHECK(strstr(text, headers[i]) != NULL);
    CHECK(strncmp(text, "worker", 6) == 0);

    /* Header, N workers and the total: N + 2 lines, all the same width
     * because every column is padded to its widest cell. */
    size_t lines = 0, width = 0;
    int same_width = 1;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        if (lines == 0)
            width = len;
        same_width &= len == width;
        lines++;
        p += len + (p[len] == '\n');
    }
    CHECK(lines == N + 2);
    CHECK(same_width);

    /* The total row: 1000+2000+3000 spawned, 123456*6 attempts,
     * (1.5+3+4.5) ms busy. */
    const char *total = strstr(text, "\ntotal");
    CHECK(total != NULL);
    if (total) {
        CHECK(strstr(total, " 6000 ") != NULL);
        CHECK(strstr(total, " 5400 ") != NULL);
        CHECK(strstr(total, " 740736 ") != NULL);
        CHECK(strstr(total, " 180 ") != NULL && strstr(total, " 60 ") != NULL); /* local, remote */
        CHECK(strstr(total, " 480 ") != NULL);                                  /* moved */
        CHECK(strstr(total, " 66 ") != NULL);                                   /* rescues */
        CHECK(strstr(total, " 8 ") != NULL); /* the largest chunk, not a sum */
        CHECK(strstr(total, " 9.0 ") != NULL);
        CHECK(strstr(total, " 1.5\n") != NULL); /* idle: 0.25+0.5+0.75 ms */
    }

    /* No workers: header and a zero total. */
    f = tmpfile();
    herd__stats_print_table(f, NULL, 0);
    slurp(f);
    CHECK(count_of(text, "\n") == 2);
    CHECK(strstr(text, "\ntotal") != NULL);
}

/* ---------------------------------------------------------------- JSON */

static void test_json(void) {
    enum { N = 3 };
    herd_worker_stats w[N];
    for (int i = 0; i < N; i++)
        w[i] = sample(i);
    herd__settings s = sample_settings();

    FILE *f = tmpfile();
    herd__stats_print_json(f, &s, w, N);
    slurp(f);
    CHECK(is_json_object(text));
    CHECK(strncmp(text, "{\"workers\": 3,", 14) == 0);
    CHECK(strstr(text, "\"settings\": {\"workers\": 3, \"sched\": \"ws\", \"bind\": \"scatter\", "
                       "\"topology\": \"pack:2 core:4 pu:1\", \"shepherd\": \"l3\", "
                       "\"stack_size\": 131072, \"idle\": \"adaptive\", \"stack_guard\": true, "
                       "\"spawn\": \"help-first\", \"steal\": \"chunk:12\"}") != NULL);
    CHECK(count_of(text, "{\"worker\": ") == N);
    CHECK(strstr(text, "{\"worker\": 2, \"shepherd\": 1, \"spawned\": 3000,") != NULL);
    CHECK(strstr(text, "\"steals\": 120, \"steals_local\": 90, \"steals_remote\": 30, "
                       "\"stolen_tasks\": 240, \"max_chunk\": 8,") != NULL);
    const char *total = strstr(text, "\"total\": {");
    CHECK(total != NULL);
    if (total) {
        CHECK(strstr(total, "\"spawned\": 6000,") != NULL);
        CHECK(strstr(total, "\"steal_attempts\": 740736,") != NULL);
        CHECK(strstr(total, "\"stacks_allocated\": 12, \"rescues\": 66, \"busy_ns\": 9000000,") !=
              NULL);
        CHECK(strstr(total, "\"idle_ns\": 1500000}") != NULL);
    }

    /* No workers, no settings: still one valid object. */
    f = tmpfile();
    herd__stats_print_json(f, NULL, NULL, 0);
    slurp(f);
    CHECK(is_json_object(text));
    CHECK(strstr(text, "\"settings\": null") != NULL);
    CHECK(strstr(text, "\"per_worker\": []") != NULL);

    /* Strings the user typed, with every kind of awkward byte: quotes,
     * backslashes, control characters, valid UTF-8 (kept) and invalid
     * UTF-8 (replaced), including an overlong form and a surrogate. */
    snprintf(s.topology, sizeof s.topology, "%s",
             "a\"b\\c\nd\te\x01"
             "f \xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x91 \xff \xc0\xaf \xed\xa0\x80 "
             "\xe2\x82");
    f = tmpfile();
    herd__stats_print_json(f, &s, w, 1);
    slurp(f);
    CHECK(is_json_object(text));
    CHECK(strstr(text, "\"a\\\"b\\\\c\\nd\\te\\u0001f \xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\x91 "
                       "\\ufffd \\ufffd\\ufffd \\ufffd\\ufffd\\ufffd \\ufffd\\ufffd\"") != NULL);
}

/* -------------------------------------------------------------- report */

static char captured[4096];

/* herd__stats_report with stderr redirected into `captured`. */
static int report_captured(const herd__settings *s, const herd_worker_stats *w, int n) {
    FILE *cap = tmpfile();
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(cap), 2);
    int rc = herd__stats_report(s, w, n);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(cap);
    size_t len = fread(captured, 1, sizeof captured - 1, cap);
    captured[len] = '\0';
    fclose(cap);
    return rc;
}

static void test_report(void) {
    enum { N = 2 };
    herd_worker_stats w[N] = {sample(0), sample(1)};
    herd__settings s = sample_settings();

    s.stats = HERD__STATS_OFF;
    CHECK(report_captured(&s, w, N) == 0);
    CHECK(captured[0] == '\0');
    CHECK(report_captured(NULL, w, N) == 0);

    s.stats = HERD__STATS_TABLE;
    CHECK(report_captured(&s, w, N) == 0);
    CHECK(strncmp(captured, "worker", 6) == 0);
    CHECK(strstr(captured, "\ntotal") != NULL);

    /* JSON to a fresh file, then over it again (truncated, not appended). */
    char path[] = "/tmp/herd_stats_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    s.stats = HERD__STATS_JSON;
    snprintf(s.stats_path, sizeof s.stats_path, "%s", path);
    CHECK(report_captured(&s, w, N) == 0);
    CHECK(captured[0] == '\0');
    CHECK(report_captured(&s, w, 1) == 0);
    CHECK(slurp_path(path));
    CHECK(is_json_object(text));
    CHECK(count_of(text, "{\"worker\": ") == 1);
    unlink(path);

    /* A directory that does not exist: ESYS and the message. Root may write
     * anywhere, so a missing directory, not a permission, makes it fail. */
    snprintf(s.stats_path, sizeof s.stats_path, "/nonexistent-herd-dir/stats.json");
    CHECK(report_captured(&s, w, N) == HERD_ESYS);
    CHECK(strcmp(captured, "herd: HERD_STATS=/nonexistent-herd-dir/stats.json: cannot write: "
                           "No such file or directory\n") == 0);

    /* A directory is not a file. */
    snprintf(s.stats_path, sizeof s.stats_path, "/tmp");
    CHECK(report_captured(&s, w, N) == HERD_ESYS);
    CHECK(strncmp(captured, "herd: HERD_STATS=/tmp: cannot write: ", 37) == 0);

    /* The open succeeds and the write fails: found at flush time. */
    if (access("/dev/full", W_OK) == 0) {
        snprintf(s.stats_path, sizeof s.stats_path, "/dev/full");
        CHECK(report_captured(&s, w, N) == HERD_ESYS);
        CHECK(strcmp(captured, "herd: HERD_STATS=/dev/full: cannot write: "
                               "No space left on device\n") == 0);
    }
}

int main(void) {
    test_checker_itself();
    test_table();
    test_json();
    test_report();
    if (failures) {
        fprintf(stderr, "test_stats_report: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_stats_report: all checks passed\n");
    return 0;
}
