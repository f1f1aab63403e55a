/* Internal control variables from the OMP_* environment, and what they set
 * in herd (docs/design/openmp.md, "Environment"). A malformed value stops
 * the program with a message naming the variable, the value and the
 * accepted forms, as HERD_* values do. */
#include "omp/omp.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

omp_global herd__omp_g;

static void bad(const char *var, const char *val, const char *forms) {
    herd__omp_fatal("%s=%s: not understood; accepted: %s", var, val, forms);
}

static long parse_long(const char *var, const char *s, long min, const char *forms) {
    char *end;
    while (isspace((unsigned char)*s))
        s++;
    long v = strtol(s, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (end == s || (*end && *end != ',') || v < min)
        bad(var, s, forms);
    return v;
}

/* OMP_ALLOCATOR: a predefined allocator's name (handles 1..8, omp.h). */
static int parse_allocator(const char *s) {
    static const char *names[] = {"omp_default_mem_alloc", "omp_large_cap_mem_alloc",
                                  "omp_const_mem_alloc",   "omp_high_bw_mem_alloc",
                                  "omp_low_lat_mem_alloc", "omp_cgroup_mem_alloc",
                                  "omp_pteam_mem_alloc",   "omp_thread_mem_alloc"};
    for (int i = 0; i < 8; i++)
        if (!strcasecmp(s, names[i]))
            return i + 1;
    bad("OMP_ALLOCATOR", s, "a predefined allocator: omp_default_mem_alloc, "
                            "omp_large_cap_mem_alloc, omp_const_mem_alloc, omp_high_bw_mem_alloc, "
                            "omp_low_lat_mem_alloc, omp_cgroup_mem_alloc, omp_pteam_mem_alloc, "
                            "omp_thread_mem_alloc");
    return 0;
}

static int parse_bool(const char *var, const char *s) {
    if (!strcasecmp(s, "true") || !strcmp(s, "1"))
        return 1;
    if (!strcasecmp(s, "false") || !strcmp(s, "0"))
        return 0;
    bad(var, s, "true, false");
    return 0;
}

/* OMP_SCHEDULE: [modifier:]kind[,chunk]. */
static void parse_schedule(const char *s, omp_icv *icv) {
    const char *forms = "[monotonic:|nonmonotonic:]static|dynamic|guided|auto[,chunk>=1]";
    const char *p = s;
    int mono = 0;
    if (!strncasecmp(p, "monotonic:", 10)) {
        mono = 1;
        p += 10;
    } else if (!strncasecmp(p, "nonmonotonic:", 13)) {
        p += 13;
    }
    size_t len = strcspn(p, ",");
    static const struct { const char *name; int kind; } kinds[] = {
        {"static", OMP_SCHED_STATIC}, {"dynamic", OMP_SCHED_DYNAMIC},
        {"guided", OMP_SCHED_GUIDED}, {"auto", OMP_SCHED_AUTO}};
    int kind = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strlen(kinds[i].name) == len && !strncasecmp(p, kinds[i].name, len))
            kind = kinds[i].kind;
    if (!kind)
        bad("OMP_SCHEDULE", s, forms);
    icv->run_sched = kind | (mono ? (int)OMP_SCHED_MONOTONIC : 0);
    icv->run_chunk = p[len] == ',' ? parse_long("OMP_SCHEDULE", p + len + 1, 1, forms) : 0;
}

/* OMP_PROC_BIND (first value) -> omp_proc_bind_t, and herd's HERD_BIND. */
static int parse_bind(const char *s, const char **herd_bind) {
    char first[32];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(s, ","), s);
    static const struct { const char *name; int v; const char *herd; } binds[] = {
        {"false", 0, "none"}, {"true", 1, "compact"},   {"primary", 2, "compact"},
        {"master", 2, "compact"}, {"close", 3, "compact"}, {"spread", 4, "scatter"}};
    for (size_t i = 0; i < sizeof binds / sizeof binds[0]; i++)
        if (!strcasecmp(first, binds[i].name)) {
            *herd_bind = binds[i].herd;
            return binds[i].v;
        }
    bad("OMP_PROC_BIND", s, "true, false, primary, master, close, spread (comma lists: first value)");
    return 0;
}

static size_t parse_stacksize(const char *s) {
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    size_t mult = 1024; /* no suffix: kilobytes, as the standard says */
    if (*end == 'B' || *end == 'b')
        mult = 1, end++;
    else if (*end == 'K' || *end == 'k')
        mult = 1024, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1024 * 1024, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1024ull * 1024 * 1024, end++;
    if (end == s || *end)
        bad("OMP_STACKSIZE", s, "a size with an optional unit B, K, M, G (default K)");
    return (size_t)v * mult;
}

static char herd_bind_env[16];

/* HERD_OMP_THROTTLE (task.c, "Creation throttle"): off, or 1..1000000. */
#define THROTTLE_DEFAULT 4
static int parse_throttle(const char *s) {
    const char *forms = "off, or an integer from 1 to 1000000";
    if (!strcasecmp(s, "off"))
        return 0;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || errno || v < 1 || v > 1000000)
        bad("HERD_OMP_THROTTLE", s, forms);
    return (int)v;
}

void herd__omp_init(void) {
    omp_global *g = &herd__omp_g;
    omp_icv *icv = &g->icv;
    icv->dynamic = 0;
    icv->max_active = 1;
    icv->run_sched = OMP_SCHED_DYNAMIC;
    icv->run_chunk = 1;
    icv->bind = 0;
    const char *s;
    long pus = sysconf(_SC_NPROCESSORS_ONLN);
    g->workers = 0;
    if ((s = getenv("HERD_WORKERS")) && *s)
        g->workers = (int)parse_long("HERD_WORKERS", s, 1, "an integer >= 1");
    g->throttle = THROTTLE_DEFAULT;
    if ((s = getenv("HERD_OMP_THROTTLE")) && *s)
        g->throttle = parse_throttle(s);
    icv->nthreads = 0;
    if ((s = getenv("OMP_NUM_THREADS")) && *s)
        icv->nthreads = (int)parse_long("OMP_NUM_THREADS", s, 1, "integers >= 1, comma-separated");
    if (!g->workers)
        g->workers = icv->nthreads ? icv->nthreads : (int)(pus > 0 ? pus : 1);
    if (!icv->nthreads)
        icv->nthreads = g->workers;
    if ((s = getenv("OMP_DYNAMIC")) && *s)
        icv->dynamic = parse_bool("OMP_DYNAMIC", s);
    int nested_set = 0;
    if ((s = getenv("OMP_NESTED")) && *s) {
        icv->max_active = parse_bool("OMP_NESTED", s) ? 64 : 1;
        nested_set = 1;
    }
    if ((s = getenv("OMP_MAX_ACTIVE_LEVELS")) && *s)
        icv->max_active = (int)parse_long("OMP_MAX_ACTIVE_LEVELS", s, 0, "an integer >= 0");
    else if (!nested_set && (s = getenv("OMP_NUM_THREADS")) && strchr(s, ','))
        icv->max_active = 64; /* a list asks for nesting (OpenMP 5.0) */
    if ((s = getenv("OMP_SCHEDULE")) && *s)
        parse_schedule(s, icv);
    const char *hb = NULL;
    if ((s = getenv("OMP_PROC_BIND")) && *s)
        icv->bind = parse_bind(s, &hb);
    /* herd's own setting wins; otherwise OMP_PROC_BIND picks the binding. */
    if (hb && !getenv("HERD_BIND")) {
        snprintf(herd_bind_env, sizeof herd_bind_env, "%s", hb);
        setenv("HERD_BIND", herd_bind_env, 0);
    }
    if ((s = getenv("OMP_PLACES")) && *s) {
        /* Abstract names map onto herd's placement (one worker per PU of
         * the cpuset); explicit place lists are not interpreted. */
        if (strcasecmp(s, "threads") && strcasecmp(s, "cores") && strcasecmp(s, "sockets") &&
            strcasecmp(s, "ll_caches") && strcasecmp(s, "numa_domains"))
            bad("OMP_PLACES", s, "threads, cores, sockets, ll_caches, numa_domains "
                                 "(explicit place lists are not supported by herd)");
    }
    if ((s = getenv("OMP_STACKSIZE")) && *s)
        g->stacksize = parse_stacksize(s);
    if ((s = getenv("OMP_WAIT_POLICY")) && *s) {
        if (!strcasecmp(s, "active"))
            g->wait_active = 1;
        else if (strcasecmp(s, "passive"))
            bad("OMP_WAIT_POLICY", s, "active, passive");
    }
    if ((s = getenv("OMP_NUM_TEAMS")) && *s)
        g->nteams = (int)parse_long("OMP_NUM_TEAMS", s, 1, "an integer >= 1");
    g->thread_limit = INT_MAX; /* unset: no limit (libgomp's UINT_MAX, as an int) */
    if ((s = getenv("OMP_THREAD_LIMIT")) && *s) {
        long v = parse_long("OMP_THREAD_LIMIT", s, 1, "an integer >= 1");
        g->thread_limit = v < INT_MAX ? (int)v : INT_MAX;
    }
    if ((s = getenv("OMP_TEAMS_THREAD_LIMIT")) && *s)
        g->teams_thread_limit =
            (int)parse_long("OMP_TEAMS_THREAD_LIMIT", s, 1, "an integer >= 1");
    if ((s = getenv("OMP_DISPLAY_AFFINITY")) && *s)
        g->display_affinity = parse_bool("OMP_DISPLAY_AFFINITY", s);
    if ((s = getenv("OMP_AFFINITY_FORMAT")))
        g->affinity_format = s;
    if ((s = getenv("OMP_ALLOCATOR")) && *s)
        g->def_allocator = parse_allocator(s);
    if ((s = getenv("OMP_CANCELLATION")) && *s)
        g->cancellation = parse_bool("OMP_CANCELLATION", s);
    if ((s = getenv("OMP_MAX_TASK_PRIORITY")) && *s)
        g->max_task_priority = (int)parse_long("OMP_MAX_TASK_PRIORITY", s, 0, "an integer >= 0");
    if ((s = getenv("OMP_DISPLAY_ENV")) && *s) {
        if (!strcasecmp(s, "verbose"))
            g->display_env = 2;
        else
            g->display_env = parse_bool("OMP_DISPLAY_ENV", s);
    }
    if (g->display_env)
        herd__omp_display_env(g->display_env == 2);
}

void herd__omp_display_env(int verbose) {
    const omp_global *g = &herd__omp_g;
    const omp_icv *i = &g->icv;
    static const char *kinds[] = {"RUNTIME", "STATIC", "DYNAMIC", "GUIDED", "AUTO"};
    static const char *binds[] = {"FALSE", "TRUE", "PRIMARY", "PRIMARY", "CLOSE", "SPREAD"};
    const char *hb = getenv("HERD_BIND");
    fprintf(stderr, "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n");
    fprintf(stderr, "  _OPENMP = '201511'\n");
    fprintf(stderr, "  OMP_DYNAMIC = '%s'\n", i->dynamic ? "TRUE" : "FALSE");
    fprintf(stderr, "  OMP_NESTED = '%s'\n", i->max_active > 1 ? "TRUE" : "FALSE");
    fprintf(stderr, "  OMP_NUM_THREADS = '%d'\n", i->nthreads);
    fprintf(stderr, "  OMP_SCHEDULE = '%s%s,%ld'\n",
            (i->run_sched & (int)OMP_SCHED_MONOTONIC) ? "MONOTONIC:" : "",
            kinds[i->run_sched & 7], i->run_chunk);
    fprintf(stderr, "  OMP_PROC_BIND = '%s'\n", binds[i->bind > 4 ? 0 : i->bind + (i->bind > 2)]);
    fprintf(stderr, "  OMP_PLACES = '%s'\n", getenv("OMP_PLACES") ? getenv("OMP_PLACES") : "");
    fprintf(stderr, "  OMP_STACKSIZE = '%zu'\n", g->stacksize);
    fprintf(stderr, "  OMP_WAIT_POLICY = '%s'\n", g->wait_active ? "ACTIVE" : "PASSIVE");
    fprintf(stderr, "  OMP_THREAD_LIMIT = '%d'\n", g->thread_limit);
    fprintf(stderr, "  OMP_MAX_ACTIVE_LEVELS = '%d'\n", i->max_active);
    fprintf(stderr, "  OMP_CANCELLATION = '%s'\n", g->cancellation ? "TRUE" : "FALSE");
    fprintf(stderr, "  OMP_DEFAULT_DEVICE = '0'\n");
    fprintf(stderr, "  OMP_MAX_TASK_PRIORITY = '%d'\n", g->max_task_priority);
    fprintf(stderr, "  OMP_NUM_TEAMS = '%d'\n", g->nteams);
    fprintf(stderr, "  OMP_ALLOCATOR = '%d'\n", g->def_allocator ? g->def_allocator : 1);
    fprintf(stderr, "  OMP_DISPLAY_AFFINITY = '%s'\n", g->display_affinity ? "TRUE" : "FALSE");
    fprintf(stderr, "  OMP_AFFINITY_FORMAT = '%s'\n",
            g->affinity_format ? g->affinity_format : "level %L thread %i affinity %A");
    fprintf(stderr, "  OMP_TEAMS_THREAD_LIMIT = '%d'\n", g->teams_thread_limit);
    if (verbose) {
        fprintf(stderr, "  HERD_WORKERS = '%d'\n", g->workers);
        fprintf(stderr, "  HERD_SCHED = '%s'\n", getenv("HERD_SCHED") ? getenv("HERD_SCHED") : "auto");
        fprintf(stderr, "  HERD_BIND = '%s'\n", hb ? hb : "(herd default)");
    }
    fprintf(stderr, "OPENMP DISPLAY ENVIRONMENT END\n");
}

void herd__omp_fatal(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "herd-omp: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}
