/* Internal control variables from the OMP_* environment, and what they set
 * in herd (docs/design/openmp.md, "Environment"). A malformed value stops
 * the program with a message naming the variable, the value and the
 * accepted forms, as HERD_* values do. */
#include "omp/omp.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

omp_global herd__omp_g;

static void bad(const char *var, const char *val, const char *forms) {
    herd__omp_fatal("%s=%s: not understood; accepted: %s", var, val, forms);
}

/* A decimal integer in [min, max], blanks allowed around it (as libgomp
 * allows), nothing else: no plus sign, no hex, no trailing characters, no
 * value that overflows a long (strtol would clamp it to LONG_MAX, and the
 * int it was cast to wrapped around). Returns what is wrong, or NULL. */
static const char *scan_long(const char *s, long min, long max, long *out) {
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    const char *digits = *p == '-' ? p + 1 : p;
    if (*digits < '0' || *digits > '9')
        return "not understood";
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return "not understood";
    if (errno == ERANGE || v < min || v > max)
        return "out of range";
    *out = v;
    return NULL;
}

/* scan_long, or stop naming var and its whole value. */
static long parse_long_in(const char *var, const char *value, const char *s, long min, long max,
                          const char *forms) {
    long v = 0;
    const char *why = scan_long(s, min, max, &v);
    if (why)
        herd__omp_fatal("%s=%s: %s; accepted: %s", var, value, why, forms);
    return v;
}

static long parse_long(const char *var, const char *s, long min, long max, const char *forms) {
    return parse_long_in(var, s, s, min, max, forms);
}

/* A list ICV's levels (omp_levels): room for the items of s, one per comma;
 * a single value keeps no list. */
static void levels_init(omp_levels *l, const char *s) {
    int n = 1;
    for (const char *p = s; *p; p++)
        n += *p == ',';
    l->n = 0;
    l->v = NULL;
    if (n > 1 && !(l->v = malloc((size_t)n * sizeof *l->v)))
        herd__omp_fatal("out of memory for the %d items of an OMP_* list", n);
}

/* The first item of comma-separated list p, into item (truncated: a longer
 * item is out of range or garbage anyway); returns the rest of the list
 * after it, NULL at its end. */
static const char *list_item(const char *p, char *item, size_t size) {
    size_t n = strcspn(p, ",");
    size_t c = n < size ? n : size - 1;
    memcpy(item, p, c);
    item[c] = '\0';
    return p[n] ? p + n + 1 : NULL;
}

/* OMP_NUM_THREADS: a comma-separated list, one team size per nesting level
 * (levels); every item is checked, the first is the nthreads-var. */
#define NUM_THREADS_FORMS "integers from 1 to 4096, comma-separated (herd's bound on workers)"
static int parse_num_threads(const char *s, omp_levels *levels) {
    char item[64];
    levels_init(levels, s);
    int first = 0, k = 0;
    for (const char *p = s; p; k++) {
        p = list_item(p, item, sizeof item);
        long v = parse_long_in("OMP_NUM_THREADS", s, item, 1, HERD__WORKERS_MAX, NUM_THREADS_FORMS);
        if (k == 0)
            first = (int)v;
        if (levels->v)
            levels->v[levels->n++] = (int)v;
    }
    return first;
}

/* OMP_ALLOCATOR: a predefined allocator's name (handles 1..8, omp.h), or
 * OpenMP 5.1's memspace[:trait=value,...] (alloc.c makes that allocator). */
static uintptr_t parse_allocator(const char *s) {
    static const char *names[] = {"omp_default_mem_alloc", "omp_large_cap_mem_alloc",
                                  "omp_const_mem_alloc",   "omp_high_bw_mem_alloc",
                                  "omp_low_lat_mem_alloc", "omp_cgroup_mem_alloc",
                                  "omp_pteam_mem_alloc",   "omp_thread_mem_alloc"};
    for (int i = 0; i < 8; i++)
        if (!strcasecmp(s, names[i]))
            return (uintptr_t)i + 1;
    uintptr_t a = herd__omp_allocator_from_env(s);
    if (a)
        return a;
    bad("OMP_ALLOCATOR", s,
        "a predefined allocator: omp_default_mem_alloc, "
        "omp_large_cap_mem_alloc, omp_const_mem_alloc, omp_high_bw_mem_alloc, "
        "omp_low_lat_mem_alloc, omp_cgroup_mem_alloc, omp_pteam_mem_alloc, "
        "omp_thread_mem_alloc; or a memory space (omp_default_mem_space, "
        "omp_large_cap_mem_space, omp_const_mem_space, omp_high_bw_mem_space, "
        "omp_low_lat_mem_space) with optional valid traits, e.g. "
        "omp_default_mem_space:alignment=64,pool_size=1048576,fallback=null_fb");
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
    const char *forms = "[monotonic:|nonmonotonic:]static|dynamic|guided|auto|trapezoidal|"
                        "static_steal[,chunk from 1 to 2147483647]";
    const char *p = s;
    int mono = 0;
    if (!strncasecmp(p, "monotonic:", 10)) {
        mono = 1;
        p += 10;
    } else if (!strncasecmp(p, "nonmonotonic:", 13)) {
        p += 13;
    }
    size_t len = strcspn(p, ",");
    static const struct {
        const char *name;
        int kind;
    } kinds[] = {{"static", OMP_SCHED_STATIC},
                 {"dynamic", OMP_SCHED_DYNAMIC},
                 {"guided", OMP_SCHED_GUIDED},
                 {"auto", OMP_SCHED_AUTO},
                 /* libomp's own kinds, as libomp reports them: trapezoidal
                  * its kind 101 (run as guided), static_steal dynamic */
                 {"trapezoidal", OMP_SCHED_TRAPEZOIDAL},
                 {"static_steal", OMP_SCHED_DYNAMIC}};
    int kind = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strlen(kinds[i].name) == len && !strncasecmp(p, kinds[i].name, len))
            kind = kinds[i].kind;
    if (!kind)
        bad("OMP_SCHEDULE", s, forms);
    icv->run_sched = kind | (mono ? (int)OMP_SCHED_MONOTONIC : 0);
    /* no chunk: 0 for static (its one block per thread), 1 for the others,
     * as omp_get_schedule reports it under libgomp and libomp */
    icv->run_chunk = p[len] == ','
                         ? parse_long_in("OMP_SCHEDULE", s, p + len + 1, 1, INT_MAX, forms)
                         : kind != OMP_SCHED_STATIC;
}

/* OMP_PROC_BIND -> omp_proc_bind_t, one per nesting level (levels), and
 * herd's HERD_BIND for the first. A list holds primary, master, close and
 * spread only (false and true stand alone, as in libgomp). */
static int parse_bind(const char *s, const char **herd_bind, omp_levels *levels) {
    static const struct {
        const char *name;
        int v;
        const char *herd;
    } binds[] = {{"false", 0, "none"},     {"true", 1, "compact"},  {"primary", 2, "compact"},
                 {"master", 2, "compact"}, {"close", 3, "compact"}, {"spread", 4, "scatter"}};
    static const char forms[] = "true, false, or a comma-separated list of primary, master, close "
                                "and spread (one per nesting level)";
    char item[32];
    levels_init(levels, s);
    int first = 0, k = 0;
    for (const char *p = s; p; k++) {
        p = list_item(p, item, sizeof item);
        size_t i = 0;
        while (i < sizeof binds / sizeof binds[0] && strcasecmp(item, binds[i].name))
            i++;
        if (i == sizeof binds / sizeof binds[0] || (levels->v && binds[i].v < 2))
            bad("OMP_PROC_BIND", s, forms);
        if (k == 0) {
            first = binds[i].v;
            *herd_bind = binds[i].herd;
        }
        if (levels->v)
            levels->v[levels->n++] = binds[i].v;
    }
    return first;
}

/* OMP_STACKSIZE: a size with an optional unit B, K, M or G (either case; no
 * unit: K), blanks around the number and the unit allowed, as libgomp
 * allows them. Refused: a sign, anything after the unit, a value that does
 * not fit 64 bits, and sizes outside herd's range for a task stack (core's
 * HERD_STACK bounds). */
#define STACKSIZE_FORMS "a size with an optional unit B, K, M, G (default K), from 16K to 1G"
#define STACKSIZE_MIN ((uint64_t)16 << 10)
#define STACKSIZE_MAX ((uint64_t)1 << 30)

static size_t parse_stacksize(const char *s) {
    const char *p = s;
    while (isspace((unsigned char)*p))
        p++;
    if (*p < '0' || *p > '9')
        bad("OMP_STACKSIZE", s, STACKSIZE_FORMS);
    uint64_t v = 0;
    int too_large = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            too_large = 1;
        else
            v = v * 10 + d;
    }
    while (isspace((unsigned char)*p))
        p++;
    unsigned shift = 10;
    switch (*p) {
    case 'b':
    case 'B':
        shift = 0, p++;
        break;
    case 'k':
    case 'K':
        shift = 10, p++;
        break;
    case 'm':
    case 'M':
        shift = 20, p++;
        break;
    case 'g':
    case 'G':
        shift = 30, p++;
        break;
    default:
        break;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p)
        bad("OMP_STACKSIZE", s, STACKSIZE_FORMS);
    if (too_large || v > (UINT64_MAX >> shift))
        herd__omp_fatal("OMP_STACKSIZE=%s: too large (past 2^64 bytes); accepted: %s", s,
                        STACKSIZE_FORMS);
    v <<= shift;
    if (v < STACKSIZE_MIN || v > STACKSIZE_MAX)
        herd__omp_fatal("OMP_STACKSIZE=%s: out of range; accepted: %s", s, STACKSIZE_FORMS);
    return (size_t)v;
}

/* Without OMP_STACKSIZE, a task gets what a libgomp thread gets: glibc's
 * default thread stack, the RLIMIT_STACK soft limit (ulimit -s), or 2 MiB
 * when that is unlimited (glibc's default on x86-64 and AArch64), within
 * herd's range. Reserved address space; only touched pages cost memory. */
#define STACKSIZE_UNLIMITED ((size_t)2 << 20)

size_t herd__omp_stack_size(void) {
    if (herd__omp_g.stacksize)
        return herd__omp_g.stacksize;
    struct rlimit rl;
    if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return STACKSIZE_UNLIMITED;
    if (rl.rlim_cur < STACKSIZE_MIN)
        return (size_t)STACKSIZE_MIN;
    if (rl.rlim_cur > STACKSIZE_MAX)
        return (size_t)STACKSIZE_MAX;
    return (size_t)rl.rlim_cur;
}

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

int herd__omp_offload_kind(const char *v) {
    if (!v || !strcasecmp(v, "default"))
        return 1;
    if (!strcasecmp(v, "disabled"))
        return 0;
    if (!strcasecmp(v, "mandatory"))
        return 2;
    return -1;
}

/* Every setting read from the environment back to unset (the ones
 * read_env sets only when their variable is set). */
static void env_unset(omp_global *g) {
    free(g->nthreads_levels.v);
    free(g->bind_levels.v);
    g->nthreads_levels = g->bind_levels = (omp_levels){0, NULL};
    memset(&g->icv, 0, sizeof g->icv);
    g->bind = NULL;
    g->display_env = g->wait_active = g->max_task_priority = 0;
    g->stacksize = 0;
    g->nteams = g->teams_thread_limit = 0;
    g->def_allocator = 0;
    g->display_affinity = g->cancellation = 0;
    g->affinity_format = NULL;
}

static void read_env(void) {
    omp_global *g = &herd__omp_g;
    omp_icv *icv = &g->icv;
    icv->dynamic = 0;
    icv->max_active = 1;
    icv->run_sched = OMP_RUN_SCHED_DEFAULT;
    icv->run_chunk = 0;
    icv->bind = 0;
    const char *s;
    long pus = sysconf(_SC_NPROCESSORS_ONLN);
    g->workers = 0;
    g->workers_auto = 0;
    if ((s = getenv("HERD_WORKERS")) && *s) {
        /* core's grammar (one parser): a count, or auto, which herd counts
         * when it starts (team.c, adopt_auto_workers) */
        const char *why = herd__workers_scan(s, &g->workers);
        if (why)
            herd__omp_fatal("HERD_WORKERS=%s: %s; accepted: %s", s, why, herd__workers_forms);
        g->workers_auto = g->workers == 0;
    }
    g->throttle = THROTTLE_DEFAULT;
    if ((s = getenv("HERD_OMP_THROTTLE")) && *s) {
        g->throttle = parse_throttle(s);
    } else if ((s = getenv("KMP_ENABLE_TASK_THROTTLING")) && *s) {
        /* libomp's switch for the same thing (a program or job script
         * written for libomp): 0/false turns herd's throttle off */
        if (!strcmp(s, "0") || !strcasecmp(s, "false"))
            g->throttle = 0;
        else if (strcmp(s, "1") && strcasecmp(s, "true"))
            bad("KMP_ENABLE_TASK_THROTTLING", s, "0, 1, false, true");
    }
    icv->nthreads = 0;
    if ((s = getenv("OMP_NUM_THREADS")) && *s)
        icv->nthreads = parse_num_threads(s, &g->nthreads_levels);
    g->nthreads_set = icv->nthreads != 0;
    if (!g->workers && !g->workers_auto)
        g->workers = icv->nthreads ? icv->nthreads
                                   : (int)(pus < 1                   ? 1
                                           : pus > HERD__WORKERS_MAX ? HERD__WORKERS_MAX
                                                                     : pus);
    if (!icv->nthreads) /* HERD_WORKERS=auto: a stand-in until herd starts */
        icv->nthreads = g->workers ? g->workers : (int)(pus < 1 ? 1 : pus);
    /* thread-limit-var: the threads of all teams together (team.c counts
     * them as libgomp does); unset: no limit (libgomp's UINT_MAX, as an
     * int). More workers than that could never all serve a team. */
    g->thread_limit = INT_MAX;
    if ((s = getenv("OMP_THREAD_LIMIT")) && *s) {
        int limit =
            (int)parse_long("OMP_THREAD_LIMIT", s, 1, INT_MAX, "an integer from 1 to 2147483647");
        g->thread_limit = limit;
        if (g->workers > limit)
            g->workers = limit;
        if (icv->nthreads > limit)
            icv->nthreads = limit;
    }
    if ((s = getenv("OMP_DYNAMIC")) && *s)
        icv->dynamic = parse_bool("OMP_DYNAMIC", s);
    int nested_set = 0;
    if ((s = getenv("OMP_NESTED")) && *s) {
        icv->max_active = parse_bool("OMP_NESTED", s) ? 64 : 1;
        nested_set = 1;
    }
    if ((s = getenv("OMP_MAX_ACTIVE_LEVELS")) && *s)
        icv->max_active = (int)parse_long("OMP_MAX_ACTIVE_LEVELS", s, 0, INT_MAX,
                                          "an integer from 0 to 2147483647");
    else if (!nested_set &&
             (g->nthreads_levels.n > 1 || ((s = getenv("OMP_PROC_BIND")) && strchr(s, ','))))
        icv->max_active = 64; /* a list asks for nesting (OpenMP 5.0) */
    if ((s = getenv("OMP_SCHEDULE")) && *s)
        parse_schedule(s, icv);
    const char *hb = NULL;
    if ((s = getenv("OMP_PROC_BIND")) && *s)
        icv->bind = parse_bind(s, &hb, &g->bind_levels);
    /* herd's own setting wins; otherwise OMP_PROC_BIND picks the binding,
     * passed to herd_start as a value (team.c), not through the program's
     * environment. An explicit list of places leaves herd's workers
     * unbound: each member's thread is bound to its place (bind.c). */
    g->bind = NULL;
    if (hb && !getenv("HERD_BIND"))
        g->bind = hb;
    if ((s = getenv("OMP_PLACES")) && *s) {
        if (!herd__omp_parse_places(s) && !getenv("HERD_BIND"))
            g->bind = "none";
        /* Places without OMP_PROC_BIND: bind-var true, as in libgomp, so
         * members are placed (bind.c) */
        if (!hb)
            icv->bind = OMP_BIND_TRUE;
        /* OMP_PROC_BIND=false: the list is checked (a malformed one still
         * stops the program) and then ignored, no places, as in libgomp. */
        else if (icv->bind == OMP_BIND_FALSE)
            herd__omp_places_forget();
    } else if (hb && icv->bind != OMP_BIND_FALSE) {
        /* A binding policy without OMP_PLACES: one place per hardware
         * thread, libgomp's default list (libomp's is one per core). */
        (void)herd__omp_parse_places("threads");
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
        g->nteams =
            (int)parse_long("OMP_NUM_TEAMS", s, 1, INT_MAX, "an integer from 1 to 2147483647");
    if ((s = getenv("OMP_TEAMS_THREAD_LIMIT")) && *s)
        g->teams_thread_limit = (int)parse_long("OMP_TEAMS_THREAD_LIMIT", s, 1, INT_MAX,
                                                "an integer from 1 to 2147483647");
    if ((s = getenv("OMP_DISPLAY_AFFINITY")) && *s)
        g->display_affinity = parse_bool("OMP_DISPLAY_AFFINITY", s);
    if ((s = getenv("OMP_AFFINITY_FORMAT")))
        g->affinity_format = s;
    if ((s = getenv("OMP_ALLOCATOR")) && *s)
        g->def_allocator = parse_allocator(s);
    if ((s = getenv("OMP_CANCELLATION")) && *s)
        g->cancellation = parse_bool("OMP_CANCELLATION", s);
    /* target-offload-var: read where it is asked (kmp/api.c); checked
     * here, at start-up, as every setting is */
    if ((s = getenv("OMP_TARGET_OFFLOAD")) && *s && herd__omp_offload_kind(s) < 0)
        bad("OMP_TARGET_OFFLOAD", s, OMP_OFFLOAD_FORMS);
    if ((s = getenv("OMP_MAX_TASK_PRIORITY")) && *s)
        g->max_task_priority = (int)parse_long("OMP_MAX_TASK_PRIORITY", s, 0, INT_MAX,
                                               "an integer from 0 to 2147483647");
    if ((s = getenv("OMP_DISPLAY_ENV")) && *s) {
        if (!strcasecmp(s, "verbose"))
            g->display_env = 2;
        else
            g->display_env = parse_bool("OMP_DISPLAY_ENV", s);
    }
    if (g->display_env)
        herd__omp_display_env(g->display_env == 2);
}

/* The environment as it was read: its OMP_*, KMP_* and HERD_* entries,
 * sorted, one a line; and the ICVs read from it. env_lock orders reading
 * the environment again (herd__omp_env_again) with threads' first records
 * (herd__omp_initial_icv); `roots` counts those records. */
static char *env_read;
static omp_icv icv_read;
static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;
static int roots;

static int ours(const char *e) {
    return !strncmp(e, "OMP_", 4) || !strncmp(e, "KMP_", 4) || !strncmp(e, "HERD_", 5);
}
static int by_text(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}
static char *env_digest(void) {
    extern char **environ;
    size_t n = 0, bytes = 1;
    for (char **e = environ; e && *e; e++)
        if (ours(*e))
            n++, bytes += strlen(*e) + 1;
    char **v = malloc((n ? n : 1) * sizeof *v), *d = malloc(bytes);
    if (!v || !d)
        herd__omp_fatal("out of memory reading the environment");
    n = 0;
    for (char **e = environ; e && *e; e++)
        if (ours(*e))
            v[n++] = *e;
    qsort(v, n, sizeof *v, by_text);
    char *w = d;
    for (size_t i = 0; i < n; i++)
        w += sprintf(w, "%s\n", v[i]);
    *w = '\0';
    free(v);
    return d;
}

void herd__omp_init(void) {
    read_env();
    env_read = env_digest();
    icv_read = herd__omp_g.icv;
}

/* A task's ICVs. The data environment ICVs of a task are its creator's
 * when the task construct was met (libgomp and libomp copy them then),
 * but a deferred task's record is made when it starts, on whatever thread.
 * So a task reads its ICVs through a pointer (omp_task.icv) to a block
 * that no one writes while a task may read it: icv_src, the block it
 * started from (its creator's snapshot, its creator's icv_src, or, for an
 * implicit or initial task, its icv_base), until it changes them
 * (herd__omp_icv_change: a copy in its icv_own, which only it reads and
 * writes). A task that has not changed its ICVs (icv_snaps NULL, the
 * commonest) lends its icv_src: the tasks it creates carry nothing for
 * them and point at parent->icv_src when they start (task.c), which never
 * changes while they can start (a task ends after the tasks it created);
 * no task copies the block. Once it has changed them, each task it
 * creates carries a pointer to a snapshot of its ICVs as they are then
 * (herd__omp_icv_snapshot: a new one after each change, kept until the
 * task's end). A task run at once on its creator's stack points at its
 * creator's current ICVs: the creator does not run, so cannot change
 * them, until it returns. Before, each task copied its creator's live
 * ICVs when it started: a creator's omp_set_* after the creation reached
 * the task, and raced with the copy when the task started on another
 * thread. */
omp_icv_snap herd__omp_icv_end_mark;

void herd__omp_icv_root(omp_task *t) {
    t->icv = t->icv_src = &t->icv_base;
    t->icv_snaps = NULL;
}

omp_icv *herd__omp_icv_change(omp_task *t) {
    if (t->icv != &t->icv_own) {
        t->icv_own = *t->icv;
        t->icv = &t->icv_own;
    }
    if (!t->icv_snaps)
        t->icv_snaps = &herd__omp_icv_end_mark;
    t->icv_stale = 1;
    return &t->icv_own;
}

const omp_icv *herd__omp_icv_snapshot(omp_task *t) {
    if (t->icv_stale) {
        omp_icv_snap *s = malloc(sizeof *s);
        if (!s)
            herd__omp_fatal("out of memory for a task's ICVs");
        s->icv = *t->icv;
        s->next = t->icv_snaps;
        t->icv_snaps = s;
        t->icv_stale = 0;
    }
    return &t->icv_snaps->icv; /* stale whenever the list was empty */
}

void herd__omp_icv_end(omp_task *t) {
    omp_icv_snap *s = t->icv_snaps;
    if (!s)
        return;
    while (s != &herd__omp_icv_end_mark) {
        omp_icv_snap *next = s->next;
        free(s);
        s = next;
    }
    t->icv_snaps = NULL;
}

void herd__omp_initial_icv(omp_icv *icv) {
    pthread_mutex_lock(&env_lock);
    roots++;
    *icv = herd__omp_g.icv;
    pthread_mutex_unlock(&env_lock);
}

/* libgomp reads the environment when it loads, libomp at a program's
 * first call into it. herd reads it when it loads and, at the LLVM front
 * end's first call (kmp.h, herd__kmp_seen), again if the program changed it
 * since (a setenv in main before its first region), as libomp would see it.
 * Only while nothing has used what was read: herd has not started, no
 * other thread has its initial task record, and this thread is outside
 * any region with the ICVs it was given (no omp_set_* call); otherwise
 * what was read at load stands. The places routines read the place list
 * without a task record: one called by another thread during a program's
 * first region is the case this does not order. */
void herd__omp_env_again(void) {
    int rebind = 0;
    pthread_mutex_lock(&env_lock);
    omp_task *t = herd__omp_cur;
    int untouched = !herd__rt_started() && roots == (t != NULL) &&
                    (!t || (!t->team && !memcmp(t->icv, &icv_read, sizeof icv_read)));
    char *now = untouched ? env_digest() : NULL;
    if (now && strcmp(now, env_read)) {
        env_unset(&herd__omp_g);
        herd__omp_places_forget();
        read_env();
        free(env_read);
        env_read = now;
        icv_read = herd__omp_g.icv;
        if (t) {
            herd__omp_icv_end(t);
            t->icv_base = herd__omp_g.icv;
            herd__omp_icv_root(t);
        }
        rebind = 1;
    } else {
        free(now);
    }
    pthread_mutex_unlock(&env_lock);
    /* The binding of the initial thread, as the new settings say (libomp
     * binds it when it starts, at the program's first call). */
    if (rebind) {
        (void)herd__omp_unbind_thread();
        herd__omp_bind_initial();
    }
}

void herd__omp_display_env(int verbose) {
    const omp_global *g = &herd__omp_g;
    const omp_icv *i = &g->icv;
    static const char *kinds[] = {"RUNTIME", "STATIC", "DYNAMIC", "GUIDED", "AUTO"};
    static const char *binds[] = {"FALSE", "TRUE", "PRIMARY", "PRIMARY", "CLOSE", "SPREAD"};
    const char *hb = getenv("HERD_BIND");
    if (!hb)
        hb = g->bind;
    fprintf(stderr, "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n");
    fprintf(stderr, "  _OPENMP = '201511'\n");
    fprintf(stderr, "  OMP_DYNAMIC = '%s'\n", i->dynamic ? "TRUE" : "FALSE");
    fprintf(stderr, "  OMP_NESTED = '%s'\n", i->max_active > 1 ? "TRUE" : "FALSE");
    fprintf(stderr, "  OMP_NUM_THREADS = '%d'\n", i->nthreads);
    long chunk;
    int kind =
        herd__omp_run_sched(i->run_sched, i->run_chunk, 0, &chunk) & ~(int)OMP_SCHED_MONOTONIC;
    fprintf(stderr, "  OMP_SCHEDULE = '%s%s,%ld'\n",
            (i->run_sched & (int)OMP_SCHED_MONOTONIC) ? "MONOTONIC:" : "",
            kind == OMP_SCHED_TRAPEZOIDAL ? "TRAPEZOIDAL" : kinds[kind & 7], chunk);
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
    {
        const char *a = getenv("OMP_ALLOCATOR");
        fprintf(stderr, "  OMP_ALLOCATOR = '%s'\n", a && *a ? a : "omp_default_mem_alloc");
    }
    fprintf(stderr, "  OMP_DISPLAY_AFFINITY = '%s'\n", g->display_affinity ? "TRUE" : "FALSE");
    fprintf(stderr, "  OMP_AFFINITY_FORMAT = '%s'\n",
            g->affinity_format ? g->affinity_format : "level %L thread %i affinity %A");
    fprintf(stderr, "  OMP_TEAMS_THREAD_LIMIT = '%d'\n", g->teams_thread_limit);
    if (verbose) {
        if (g->workers_auto && !g->workers)
            fprintf(stderr, "  HERD_WORKERS = 'auto'\n");
        else
            fprintf(stderr, "  HERD_WORKERS = '%d'\n", g->workers);
        fprintf(stderr, "  HERD_SCHED = '%s'\n",
                getenv("HERD_SCHED") ? getenv("HERD_SCHED") : "auto");
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
