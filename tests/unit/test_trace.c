/* Timeline tracing (HERD_TRACE, src/core/trace.c): a run with tracing on
 * writes a Chrome trace-event JSON file that parses (a strict parser below,
 * and python3's json module when there is one), names one thread track per
 * worker, holds one "run" span per task the loops ran (herd_stats' executed
 * minus inlined), one "suspended" end and one "resume" span per suspension
 * (herd_stats' blocks), one steal instant per steal (herd_stats' steals)
 * naming a victim other than the thief, spans that never overlap on one
 * worker, idle spans on a worker that had nothing to do, and the task
 * functions' names (from the dynamic and from the full symbol table).
 * Events beyond the per-worker cap are counted in the file and on stderr.
 * Malformed settings are refused at herd_start() with the usual message; a
 * file that cannot be written at herd_stop() makes it return HERD_ESYS with
 * a message naming HERD_TRACE and the path. */
// herd-test-env:
// herd-test-env: HERD_IDLE=sleep
// herd-test-env: HERD_IDLE=spin
// herd-test-timeout: 180
#include "../common/check.h"
#include "core/trace.h" /* herd__trace_cap, to see events dropped */

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NWORKERS 2

/* ------------------------------------------------------- a JSON parser */

/* A strict RFC 8259 parser into a small tree: objects keep their keys in
 * order, numbers are doubles, strings are decoded (escapes, \u with
 * surrogate pairs, UTF-8 checked). No trailing commas, no raw control
 * characters, no leading zeros, nothing after the value. */
typedef enum jtype { J_NULL = 1, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jval {
    jtype t;
    double num;          /* J_NUM; J_BOOL: 0 or 1 */
    char *str;           /* J_STR */
    struct jval **items; /* J_ARR, J_OBJ */
    char **keys;         /* J_OBJ */
    size_t n, cap;
} jval;

typedef struct jparser {
    const char *p;
    int depth;
} jparser;

static jval *jnew(jtype t) {
    jval *v = calloc(1, sizeof *v);
    CHECK(v != NULL);
    v->t = t;
    return v;
}

static void jfree(jval *v) {
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        jfree(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

static void jpush(jval *v, char *key, jval *item) {
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 8;
        v->items = realloc(v->items, v->cap * sizeof *v->items);
        CHECK(v->items != NULL);
        if (v->t == J_OBJ) {
            v->keys = realloc(v->keys, v->cap * sizeof *v->keys);
            CHECK(v->keys != NULL);
        }
    }
    if (v->t == J_OBJ)
        v->keys[v->n] = key;
    v->items[v->n++] = item;
}

static void skip_ws(jparser *ps) {
    while (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\t' || *ps->p == '\r')
        ps->p++;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static long hex4(const char *p) {
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

static size_t put_utf8(char *out, unsigned long cp) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A string literal at ps->p, decoded into a new buffer; NULL if malformed. */
static char *parse_string(jparser *ps) {
    if (*ps->p != '"')
        return NULL;
    const char *p = ps->p + 1;
    size_t cap = 16, n = 0;
    char *out = malloc(cap);
    CHECK(out != NULL);
    for (;;) {
        if (n + 8 > cap) {
            cap *= 2;
            out = realloc(out, cap);
            CHECK(out != NULL);
        }
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            break;
        if (c < 0x20)
            goto bad; /* raw control character, or the end of the text */
        if (c == '\\') {
            char e = p[1];
            const char *simple = strchr("\"\\/bfnrt", e);
            if (e && simple) {
                out[n++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
                p += 2;
                continue;
            }
            if (e != 'u')
                goto bad;
            long cp = hex4(p + 2);
            if (cp < 0)
                goto bad;
            p += 6;
            if (cp >= 0xd800 && cp <= 0xdbff) { /* a high surrogate needs its low half */
                if (p[0] != '\\' || p[1] != 'u')
                    goto bad;
                long lo = hex4(p + 2);
                if (lo < 0xdc00 || lo > 0xdfff)
                    goto bad;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                p += 6;
            } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                goto bad;
            }
            n += put_utf8(out + n, (unsigned long)cp);
            continue;
        }
        if (c < 0x80) {
            out[n++] = (char)c;
            p++;
            continue;
        }
        /* UTF-8: a valid lead byte and its continuation bytes. */
        int len = c >= 0xc2 && c <= 0xdf   ? 2
                  : c >= 0xe0 && c <= 0xef ? 3
                  : c >= 0xf0 && c <= 0xf4 ? 4
                                           : 0;
        if (!len)
            goto bad;
        for (int i = 1; i < len; i++)
            if (((unsigned char)p[i] & 0xc0) != 0x80)
                goto bad;
        memcpy(out + n, p, (size_t)len);
        n += (size_t)len;
        p += len;
    }
    out[n] = '\0';
    ps->p = p + 1;
    return out;
bad:
    free(out);
    return NULL;
}

static jval *parse_value(jparser *ps);

static jval *parse_number(jparser *ps) {
    const char *p = ps->p;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return NULL;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (*p < '0' || *p > '9')
            return NULL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    jval *v = jnew(J_NUM);
    v->num = strtod(ps->p, NULL);
    ps->p = p;
    return v;
}

/* An array or an object; the opening bracket is at ps->p. */
static jval *parse_container(jparser *ps, jtype t) {
    char close = t == J_ARR ? ']' : '}';
    jval *v = jnew(t);
    ps->p++;
    skip_ws(ps);
    if (*ps->p == close) {
        ps->p++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (t == J_OBJ) {
            key = parse_string(ps);
            if (!key)
                goto bad;
            skip_ws(ps);
            if (*ps->p != ':') {
                free(key);
                goto bad;
            }
            ps->p++;
        }
        jval *item = parse_value(ps);
        if (!item) {
            free(key);
            goto bad;
        }
        jpush(v, key, item);
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == close) {
            ps->p++;
            return v;
        }
        goto bad;
    }
bad:
    jfree(v);
    return NULL;
}

static jval *parse_value(jparser *ps) {
    skip_ws(ps);
    if (++ps->depth > 64)
        return NULL;
    jval *v = NULL;
    char c = *ps->p;
    if (c == '{') {
        v = parse_container(ps, J_OBJ);
    } else if (c == '[') {
        v = parse_container(ps, J_ARR);
    } else if (c == '"') {
        char *s = parse_string(ps);
        if (s) {
            v = jnew(J_STR);
            v->str = s;
        }
    } else if (strncmp(ps->p, "true", 4) == 0 || strncmp(ps->p, "false", 5) == 0) {
        v = jnew(J_BOOL);
        v->num = c == 't';
        ps->p += c == 't' ? 4 : 5;
    } else if (strncmp(ps->p, "null", 4) == 0) {
        v = jnew(J_NULL);
        ps->p += 4;
    } else {
        v = parse_number(ps);
    }
    ps->depth--;
    return v;
}

static jval *parse_document(const char *text) {
    jparser ps = {text, 0};
    jval *v = parse_value(&ps);
    if (!v)
        return NULL;
    skip_ws(&ps);
    if (*ps.p != '\0') {
        jfree(v);
        return NULL;
    }
    return v;
}

/* The member `key` of object v, or NULL. */
static const jval *jget(const jval *v, const char *key) {
    if (!v || v->t != J_OBJ)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->keys[i], key) == 0)
            return v->items[i];
    return NULL;
}

static const char *jstr(const jval *v, const char *key) {
    const jval *m = jget(v, key);
    return m && m->t == J_STR ? m->str : NULL;
}

/* The number at key; NAN when absent or not a number. */
static double jnum(const jval *v, const char *key) {
    const jval *m = jget(v, key);
    return m && m->t == J_NUM ? m->num : NAN;
}

/* The parser refuses what it must (so that "it parsed" means something). */
static void check_parser(void) {
    STEP("the test's JSON parser accepts and refuses what it should");
    const char *good[] = {"{}", "[]", "[1,-2.5e3,0.125,\"a\\u00e9\\ud83d\\ude00\",true,false,null]",
                          " {\"a\" : {\"b\":[{}]}} ", "\"caf\xc3\xa9\""};
    const char *bad[] = {"",         "{",        "[1,]",      "{\"a\":1,}", "[01]",  "[1.]",
                         "[.5]",     "\"a\tb\"", "\"\\x\"",   "[1] 2",      "{a:1}", "\"\\ud800\"",
                         "\"\xff\"", "[-]",      "{\"a\" 1}", "nul",        "[1 2]"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        jval *v = parse_document(good[i]);
        if (!v)
            fprintf(stderr, "refused: %s\n", good[i]);
        CHECK(v != NULL);
        jfree(v);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        jval *v = parse_document(bad[i]);
        if (v)
            fprintf(stderr, "accepted: %s\n", bad[i]);
        CHECK(v == NULL);
    }
    jval *v = parse_document("[\"a\\u00e9\\ud83d\\ude00\\n\"]");
    CHECK(v && v->n == 1 && strcmp(v->items[0]->str, "a\xc3\xa9\xf0\x9f\x98\x80\n") == 0);
    jfree(v);
}

/* ------------------------------------------------------------ helpers */

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
        CHECK(f != NULL);
    }
    CHECK(fseek(f, 0, SEEK_END) == 0);
    long size = ftell(f);
    CHECK(size >= 0);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    CHECK(text != NULL);
    CHECK(fread(text, 1, (size_t)size, f) == (size_t)size);
    text[size] = '\0';
    fclose(f);
    return text;
}

/* A second opinion on validity from python3's json module, when the
 * machine has python3 (CI does). */
static void python_validates(const char *path) {
    if (system("command -v python3 >/dev/null 2>&1") != 0) {
        STEP("python3 not found: the JSON is checked by the test's parser only");
        return;
    }
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding=\"utf-8\"))' '%s'",
             path);
    CHECK_EQ(system(cmd), 0);
}

/* stderr captured into a buffer around a call. */
static char captured[4096];
static int saved_fd = -1;
static FILE *capture_file;

static void capture_begin(void) {
    fflush(stderr);
    capture_file = tmpfile();
    CHECK(capture_file != NULL);
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
    fputs(captured, stderr); /* still shown in the test's log */
}

static char tmpdir[64];

static void make_tmpdir(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/herd-trace-test-XXXXXX");
    CHECK(mkdtemp(tmpdir) != NULL);
}

/* ------------------------------------------------------------ workload */

typedef struct fib_arg {
    int n;
    uint64_t *out;
} fib_arg;

static herd_mutex counter_lock;
static uint64_t leaves;

/* Not static: a program linked with -rdynamic (the tests are) has it in
 * the dynamic symbol table, where dladdr() finds its name. */
void trace_fib(void *p);

void trace_fib(void *p) {
    const fib_arg *a = p;
    if (a->n < 2) {
        *a->out = (uint64_t)a->n;
        CHECK_OK(herd_mutex_lock(&counter_lock)); /* contended: some leaves suspend */
        uint64_t k = ++leaves;
        CHECK_OK(herd_mutex_unlock(&counter_lock));
        if (k % 8 == 0)
            CHECK_OK(herd_yield()); /* every 8th leaf suspends once */
        return;
    }
    uint64_t x = 0, y = 0;
    fib_arg left = {a->n - 1, &x}, right = {a->n - 2, &y};
    CHECK_OK(herd_spawn(trace_fib, &left, sizeof left));
    trace_fib(&right);
    CHECK_OK(herd_wait());
    *a->out = x + y;
}

/* A steal that must happen: the root queues `stolen` and keeps queueing
 * no-op children (each spawn publishes work when a thief asks for it) until
 * `stolen` has started; its own worker is busy all that time, so the other
 * worker must have stolen it. */
static int stolen_started;

void trace_stolen(void *p);

void trace_stolen(void *p) {
    (void)p;
    __atomic_store_n(&stolen_started, 1, __ATOMIC_RELEASE);
}

static void nop(void *p) {
    (void)p;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void forced_steal(void *p) {
    (void)p;
    int me = herd_worker_id();
    CHECK_OK(herd_spawn(trace_stolen, NULL, 0));
    double deadline = now_s() + 20;
    while (!__atomic_load_n(&stolen_started, __ATOMIC_ACQUIRE)) {
        CHECK(now_s() < deadline);
        CHECK_OK(herd_spawn(nop, NULL, 0));
        struct timespec ts = {0, 20 * 1000};
        nanosleep(&ts, NULL); /* the thief may share our core */
    }
    CHECK_EQ(herd_worker_id(), me); /* we never suspended */
    CHECK_OK(herd_wait());
}

static uint64_t fib_seq(int n) {
    return n < 2 ? (uint64_t)n : fib_seq(n - 1) + fib_seq(n - 2);
}

/* Runs alone and spawns nothing: the other worker has nothing to do.
 * Static: its name comes from the program's full symbol table (.symtab),
 * not from the dynamic one. */
static void trace_lonely(void *p) {
    (void)p;
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------- checking */

typedef struct expect {
    int nworkers;
    uint64_t runs;    /* sum of executed - inlined */
    uint64_t blocks;  /* sum of blocks */
    uint64_t steals;  /* sum of steals */
    const char *task; /* a name some run span must contain */
    int lonely;       /* the trace_lonely case: one run; the other worker idles */
    int cap;          /* herd__trace_cap was lowered to this */
} expect;

static void totals(expect *e) {
    herd_worker_stats st[NWORKERS];
    CHECK_EQ(herd_stats(st, NWORKERS), NWORKERS);
    e->nworkers = NWORKERS;
    e->runs = e->blocks = e->steals = 0;
    for (int i = 0; i < NWORKERS; i++) {
        e->runs += st[i].executed - st[i].inlined;
        e->blocks += st[i].blocks;
        e->steals += st[i].steals;
    }
}

typedef struct span {
    double ts, dur;
} span;

static int by_ts(const void *a, const void *b) {
    const span *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* A trace cut short by the cap: still valid, each worker kept at most the
 * cap, and otherData counts what was dropped. Spans of a worker still do
 * not overlap, and every span has its end. */
static void check_dropped(const jval *doc, const expect *want) {
    const jval *events = jget(doc, "traceEvents"), *other = jget(doc, "otherData");
    CHECK_EQ(jnum(other, "cap_per_worker"), want->cap);
    double dropped = jnum(other, "events_dropped");
    CHECK(dropped > 0);
    const jval *per = jget(other, "dropped_per_worker");
    CHECK(per != NULL && per->t == J_ARR && per->n == (size_t)want->nworkers);
    double sum = 0;
    for (size_t i = 0; i < per->n; i++)
        sum += per->items[i]->num;
    CHECK_EQ(sum, dropped);
    int kept[NWORKERS + 1] = {0};
    for (size_t i = 0; i < events->n; i++) {
        const jval *e = events->items[i];
        if (strcmp(jstr(e, "ph"), "M") == 0)
            continue;
        int t = (int)jnum(e, "tid");
        CHECK(t >= 1 && t <= want->nworkers);
        kept[t]++;
        if (strcmp(jstr(e, "ph"), "X") == 0) {
            const char *end = jstr(jget(e, "args"), "end");
            CHECK(jnum(e, "dur") >= 0);
            CHECK(!end || strcmp(end, "finished") == 0 || strcmp(end, "suspended") == 0);
        }
    }
    double total = 0;
    for (int t = 1; t <= want->nworkers; t++) {
        CHECK(kept[t] <= want->cap);
        total += kept[t];
    }
    CHECK_EQ(total, jnum(other, "events"));
}

/* Parse the trace at path and check everything the header promises. */
static void check_trace(const char *path, const expect *want) {
    python_validates(path);
    char *text = read_file(path);
    jval *doc = parse_document(text);
    if (!doc)
        fprintf(stderr, "%s does not parse as JSON\n", path);
    CHECK(doc != NULL && doc->t == J_OBJ);
    const jval *events = jget(doc, "traceEvents");
    CHECK(events != NULL && events->t == J_ARR);
    const jval *other = jget(doc, "otherData");
    CHECK(other != NULL && other->t == J_OBJ);
    CHECK_EQ(jnum(other, "workers"), want->nworkers);
    if (want->cap) {
        check_dropped(doc, want);
        goto done; /* the counts below hold only for a complete trace */
    }
    CHECK_EQ(jnum(other, "events_dropped"), 0);
    CHECK_EQ(jnum(other, "cap_per_worker"), 1 << 20);

    int n = want->nworkers;
    int names[NWORKERS + 1] = {0};
    double idle_us[NWORKERS + 1] = {0}, first_us[NWORKERS + 1], last_us[NWORKERS + 1] = {0};
    double run_ts = 0, run_end = 0;
    uint64_t runs = 0, resumes = 0, suspended = 0, steals = 0, idles[NWORKERS + 1] = {0};
    uint64_t runs_of[NWORKERS + 1] = {0}, named = 0;
    span *spans[NWORKERS + 1];
    size_t nspans[NWORKERS + 1] = {0};
    for (int t = 0; t <= n; t++) {
        first_us[t] = INFINITY;
        spans[t] = malloc((events->n + 1) * sizeof(span));
        CHECK(spans[t] != NULL);
    }
    for (size_t i = 0; i < events->n; i++) {
        const jval *e = events->items[i];
        CHECK(e->t == J_OBJ);
        const char *ph = jstr(e, "ph"), *name = jstr(e, "name"), *cat = jstr(e, "cat");
        double tid = jnum(e, "tid");
        CHECK(ph != NULL && name != NULL);
        CHECK(!isnan(jnum(e, "pid")) && !isnan(tid));
        CHECK(tid >= 0 && tid <= n && tid == (int)tid);
        int t = (int)tid, worker = t - 1;
        if (strcmp(ph, "M") == 0) {
            if (strcmp(name, "thread_name") == 0) {
                char prefix[32];
                snprintf(prefix, sizeof prefix, "worker %d (", worker);
                const char *tn = jstr(jget(e, "args"), "name");
                CHECK(t >= 1 && tn != NULL && strncmp(tn, prefix, strlen(prefix)) == 0);
                names[t]++;
            }
            continue;
        }
        CHECK(t >= 1 && cat != NULL);
        double ts = jnum(e, "ts");
        CHECK(ts >= 0);
        if (strcmp(ph, "i") == 0) {
            /* The only instants are steals: a victim that is another worker. */
            CHECK(strcmp(cat, "steal") == 0);
            const jval *args = jget(e, "args");
            double victim = jnum(args, "victim"), taken = jnum(args, "taken");
            CHECK(victim >= 0 && victim < n && victim != worker);
            CHECK(taken >= 1);
            steals++;
            continue;
        }
        CHECK(strcmp(ph, "X") == 0);
        double dur = jnum(e, "dur");
        CHECK(dur >= 0);
        spans[t][nspans[t]++] = (span){ts, dur};
        first_us[t] = fmin(first_us[t], ts);
        last_us[t] = fmax(last_us[t], ts + dur);
        if (strcmp(cat, "idle") == 0) {
            idles[t]++;
            idle_us[t] += dur;
            continue;
        }
        const char *end = jstr(jget(e, "args"), "end");
        CHECK(end != NULL);
        CHECK(strcmp(end, "finished") == 0 || strcmp(end, "suspended") == 0);
        suspended += strcmp(end, "suspended") == 0;
        if (strcmp(cat, "run") == 0) {
            runs++;
            runs_of[t]++;
            named += strstr(name, want->task) != NULL;
            run_ts = ts;
            run_end = ts + dur;
        } else {
            CHECK(strcmp(cat, "resume") == 0);
            resumes++;
        }
    }
    printf("   %zu events: %llu runs, %llu resumes, %llu steals, idle spans %llu/%llu\n", events->n,
           (unsigned long long)runs, (unsigned long long)resumes, (unsigned long long)steals,
           (unsigned long long)idles[1], (unsigned long long)idles[2]);

    /* One track name per worker; the counts agree with herd_stats. */
    for (int t = 1; t <= n; t++)
        CHECK_EQ(names[t], 1);
    CHECK_EQ(runs, want->runs);
    CHECK_EQ(suspended, want->blocks);
    CHECK_EQ(resumes, want->blocks); /* every suspended task was resumed */
    CHECK_EQ(steals, want->steals);
    CHECK(named >= 1); /* task names come from the symbol table */

    /* The spans of one worker (tasks and idleness) never overlap. Times are
     * whole nanoseconds printed as microseconds with three decimals. */
    for (int t = 1; t <= n; t++) {
        qsort(spans[t], nspans[t], sizeof(span), by_ts);
        for (size_t i = 0; i + 1 < nspans[t]; i++) {
            if (spans[t][i].ts + spans[t][i].dur > spans[t][i + 1].ts + 1e-6) {
                fprintf(stderr, "tid %d: span at %.3f (+%.3f) overlaps the one at %.3f\n", t,
                        spans[t][i].ts, spans[t][i].dur, spans[t][i + 1].ts);
                CHECK(0);
            }
        }
        CHECK(idles[t] >= 1); /* each worker idled at least once: at the end */
    }

    /* One task ran, for 30 ms. The worker that did not run it was idle from
     * its first search (its thread may start late on a loaded machine) until
     * after the run, without a gap. */
    if (want->lonely) {
        CHECK_EQ(runs, 1);
        int other = runs_of[1] ? 2 : 1;
        CHECK_EQ(runs_of[other], 0);
        CHECK(run_end - run_ts >= 29000);
        CHECK(last_us[other] >= run_end);
        if (idle_us[other] < last_us[other] - first_us[other] - 0.001)
            fprintf(stderr, "worker %d: idle %.3f us of %.3f..%.3f; the run %.3f..%.3f\n",
                    other - 1, idle_us[other], first_us[other], last_us[other], run_ts, run_end);
        CHECK(idle_us[other] >= last_us[other] - first_us[other] - 0.001);
    }
    for (int t = 0; t <= n; t++)
        free(spans[t]);
done:
    jfree(doc);
    free(text);
}

/* ---------------------------------------------------------------- cases */

static void run_fib(int n) {
    uint64_t r = 0;
    fib_arg a = {n, &r};
    leaves = 0;
    CHECK_OK(herd_run(trace_fib, &a, sizeof a));
    CHECK_EQ_U64(r, fib_seq(n));
}

/* HERD_TRACE through the config struct: a spawn tree with suspensions. */
static void test_config_field(void) {
    STEP("config.trace: a fib tree with mutex waits and yields on %d workers", NWORKERS);
    char path[128];
    snprintf(path, sizeof path, "%s/config.json", tmpdir);
    herd_config cfg = {.workers = NWORKERS, .trace = path};
    herd_mutex_init(&counter_lock);
    CHECK_OK(herd_start(&cfg));
    run_fib(CHECK_SIZE(17, 12));
    run_fib(CHECK_SIZE(14, 10)); /* a second root in the same trace */
    stolen_started = 0;
    CHECK_OK(herd_run(forced_steal, NULL, 0));
    expect want = {.task = "trace_fib"};
    totals(&want);
    CHECK(want.blocks >= 1);
    CHECK(want.steals >= 1);
    CHECK_OK(herd_stop());
    check_trace(path, &want);
    unlink(path);
}

/* HERD_TRACE from the environment; a worker with nothing to do. */
static void test_env_and_idle(void) {
    STEP("HERD_TRACE from the environment: one lone task, the other worker idles");
    char path[128];
    snprintf(path, sizeof path, "%s/env.json", tmpdir);
    CHECK(setenv("HERD_TRACE", path, 1) == 0);
    herd_config cfg = {.workers = NWORKERS};
    CHECK_OK(herd_start(&cfg));
    CHECK_OK(herd_run(trace_lonely, NULL, 0));
    expect want = {.task = "trace_lonely", .lonely = 1};
    totals(&want);
    CHECK_OK(herd_stop());
    CHECK(unsetenv("HERD_TRACE") == 0);
    check_trace(path, &want);
    unlink(path);
}

/* A task that suspends (yields) many times: two events each. */
static void yielder(void *p) {
    (void)p;
    for (int i = 0; i < 400; i++)
        CHECK_OK(herd_yield());
}

/* More events than the (lowered) cap: the excess is counted, reported on
 * stderr, and herd_stop() still succeeds. */
static void test_cap(void) {
    STEP("a cap of 100 events per worker: the rest are counted as dropped");
    char path[128], want_msg[256];
    snprintf(path, sizeof path, "%s/cap.json", tmpdir);
    herd__trace_cap = 100;
    herd_config cfg = {.workers = NWORKERS, .trace = path};
    CHECK_OK(herd_start(&cfg));
    herd__trace_cap = HERD__TRACE_CAP; /* read at start: later runtimes get the default */
    CHECK_OK(herd_run(yielder, NULL, 0));
    capture_begin();
    int rc = herd_stop();
    capture_end();
    CHECK_OK(rc);
    snprintf(want_msg, sizeof want_msg, "herd: HERD_TRACE=%s: ", path);
    CHECK(strncmp(captured, want_msg, strlen(want_msg)) == 0);
    CHECK(strstr(captured, " events dropped (a worker reached the cap of 100 events per worker); "
                           "the trace is incomplete\n") != NULL);
    expect want = {.nworkers = NWORKERS, .cap = 100};
    check_trace(path, &want);
    unlink(path);
}

/* Refused at herd_start(), with the usual one-line message. */
static void expect_refused(const herd_config *cfg, const char *msg_prefix, const char *problem) {
    capture_begin();
    int rc = herd_start(cfg);
    capture_end();
    CHECK_RC(rc, HERD_EINVAL);
    CHECK(strncmp(captured, msg_prefix, strlen(msg_prefix)) == 0);
    CHECK(strstr(captured, problem) != NULL);
    CHECK(strstr(captured, "; accepted: the path of a file to write, in an existing directory\n"));
    CHECK_EQ(herd_num_workers(), 0);
}

static void test_refused_at_start(void) {
    STEP("malformed HERD_TRACE / config.trace values are refused at herd_start");
    herd_config cfg = {.workers = NWORKERS, .trace = ""};
    expect_refused(&cfg, "herd: config.trace=\"\": ", "empty value");
    cfg.trace = "/nonexistent-herd-trace-dir/t.json";
    expect_refused(&cfg, "herd: config.trace=/nonexistent-herd-trace-dir/t.json: ",
                   "directory /nonexistent-herd-trace-dir does not exist");
    cfg.trace = tmpdir;
    expect_refused(&cfg, "herd: config.trace=", "is a directory");
    cfg.trace = NULL;
    CHECK(setenv("HERD_TRACE", "", 1) == 0);
    expect_refused(&cfg, "herd: HERD_TRACE=\"\": ", "empty value");
    CHECK(setenv("HERD_TRACE", "/nonexistent-herd-trace-dir/t.json", 1) == 0);
    expect_refused(&cfg, "herd: HERD_TRACE=/nonexistent-herd-trace-dir/t.json: ",
                   "directory /nonexistent-herd-trace-dir does not exist");
    CHECK(unsetenv("HERD_TRACE") == 0);
}

/* The file cannot be written at stop: HERD_ESYS and a message, and the
 * runtime is stopped all the same. */
static void expect_esys_at_stop(const char *path, const char *reason, const char *dir_to_remove) {
    herd_config cfg = {.workers = NWORKERS, .trace = path};
    CHECK_OK(herd_start(&cfg));
    run_fib(10);
    if (dir_to_remove)
        CHECK(rmdir(dir_to_remove) == 0);
    capture_begin();
    int rc = herd_stop();
    capture_end();
    CHECK_RC(rc, HERD_ESYS);
    char want[512];
    snprintf(want, sizeof want, "herd: HERD_TRACE=%s: cannot write: %s\n", path, reason);
    CHECK(strcmp(captured, want) == 0);
    CHECK_EQ(herd_num_workers(), 0);
}

static void test_unwritable_at_stop(void) {
    STEP("a directory removed before herd_stop: HERD_ESYS");
    char dir[128], path[160];
    snprintf(dir, sizeof dir, "%s/gone", tmpdir);
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(path, sizeof path, "%s/t.json", dir);
    expect_esys_at_stop(path, strerror(ENOENT), dir);

    STEP("a full device (/dev/full): HERD_ESYS");
    expect_esys_at_stop("/dev/full", strerror(ENOSPC), NULL);

    STEP("the runtime starts again afterwards");
    herd_config cfg = {.workers = NWORKERS};
    CHECK_OK(herd_start(&cfg));
    run_fib(10);
    CHECK_OK(herd_stop());
}

int main(void) {
    /* The cases choose their own settings. */
    unsetenv("HERD_TRACE");
    unsetenv("HERD_STATS");
    unsetenv("HERD_WORKERS");
    check_parser();
    make_tmpdir();
    test_config_field();
    test_env_and_idle();
    test_cap();
    test_refused_at_start();
    test_unwritable_at_stop();
    CHECK(rmdir(tmpdir) == 0);
    printf("test_trace: all checks passed\n");
    return 0;
}
