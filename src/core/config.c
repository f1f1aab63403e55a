/* Start-up settings: herd_config, then the HERD_* environment, then defaults.
 *
 * Why so strict. A tuning knob that is silently ignored -- a misspelt
 * variable name, "64k " with a trailing space, a scheduler this build does
 * not have -- yields measurements of something other than what the user
 * asked for, and nobody notices until the numbers are in a paper. So every
 * value is parsed to its last character, every HERD_* name in the
 * environment must be one this file knows, and the first problem stops
 * start-up with one line on stderr that names the setting, the value and the
 * forms that would have been accepted.
 *
 * Precedence, field by field: a non-zero / non-NULL herd_config field wins,
 * and then the matching variable is not read at all (a program that sets a
 * field on purpose is not stopped by a stale variable it overrides);
 * otherwise the variable; otherwise the default. The check for unknown
 * HERD_* names runs whatever the config says, since a typo is never
 * intended.
 *
 * Names (schedulers, policies, levels, on/off) are matched ignoring case, as
 * herd__topo_level_parse() does, and stored in their one lower-case
 * spelling, the one the documentation and the stats output use. Variable
 * names are matched exactly, as the environment itself does.
 *
 * Rejected alternative: reporting every problem at once (the first one is
 * usually the only one, and one line is easier to read in a batch log).
 * HERD_WORKERS=auto is not "every PU" (leaving the variable unset is): it
 * is the PUs that are free now by XLL's view (src/place/mapper.h).
 */
#include "core/config.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

#define WORKERS_MAX HERD__WORKERS_MAX
#define STACK_MIN ((size_t)16 << 10)
#define STACK_MAX ((size_t)1 << 30)
#define STACK_DEFAULT ((size_t)128 << 10)

/* ------------------------------------------------------------- variables */

/* The one list of HERD_* names. The environment reference (docs/reference/environment.md)
 * mirrors this table. */
static const char *const known_vars[] = {
    "HERD_WORKERS",
    "HERD_SCHED",
    "HERD_BIND",
    "HERD_TOPOLOGY",
    "HERD_SHEPHERD",
    "HERD_STACK",
    "HERD_STACK_GUARD",
    "HERD_IDLE",
    "HERD_STATS",
    "HERD_TRACE",
    "HERD_SPAWN",
    "HERD_STEAL",
    "HERD_REGISTRY",
    "HERD_WATCHDOG",
    /* read by libherd-omp (src/omp/icv.c), which checks its value */
    "HERD_OMP_THROTTLE",
    /* read by libherd-pool (src/dist/pool.c), which checks their values */
    "HERD_POOL_LOCK",
    "HERD_POOL_STEAL",
    "HERD_POOL_QUEUE",
    "HERD_POOL_ARG_MAX",
    "HERD_POOL_RELEASE",
    "HERD_POOL_HYBRID",
    "HERD_POOL_STATS",
};
#define NKNOWN (sizeof known_vars / sizeof known_vars[0])

/* A named choice. value 0 marks a name that is planned but not in this
 * build: it gets "not available" instead of "unknown", so that a user who
 * read about it in the design notes learns it is coming, not misspelt. */
typedef struct choice {
    const char *name;
    int value;
    const char *canonical; /* the name stored in the settings (schedulers only) */
} choice;

static const choice bind_choices[] = {
    {"none", HERD__BIND_NONE, NULL},       {"compact", HERD__BIND_COMPACT, NULL},
    {"scatter", HERD__BIND_SCATTER, NULL}, {"numa-priority", HERD__BIND_NUMA_PRIORITY, NULL},
    {"static", HERD__BIND_STATIC, NULL},   {"bll", HERD__BIND_BLL, NULL},
    {"xll", HERD__BIND_XLL, NULL},
};

/* Whether a scheduler supports a spawn policy or a steal amount is checked
 * by herd_start, which knows the scheduler (src/sched/registry.c). */
static const choice spawn_choices[] = {
    {"help-first", HERD__SPAWN_HELP_FIRST, NULL},
    {"work-first", HERD__SPAWN_WORK_FIRST, NULL},
};

static const choice steal_choices[] = {
    {"one", HERD__TAKE_ONE, NULL},
    {"half", HERD__TAKE_HALF, NULL},
};
#define STEAL_FORMS "one, half, chunk:N (N from 1 to 65536)"
#define STEAL_CHUNK_MAX 65536

static const choice idle_choices[] = {
    {"spin", HERD__IDLE_SPIN, NULL},
    {"sleep", HERD__IDLE_SLEEP, NULL},
    {"adaptive", HERD__IDLE_ADAPTIVE, NULL},
};

#define NCHOICES(t) (sizeof(t) / sizeof((t)[0]))

#define WORKERS_FORMS                                                                              \
    "an integer from 1 to 4096, or auto (the PUs free now by XLL's view); unset: one worker "      \
    "per PU"
#define STACK_FORMS                                                                                \
    "a byte count, or a number with a K, M or G suffix (powers of 1024), from 16K to 1G"
#define GUARD_FORMS                                                                                \
    "1, on, 0, off, or the guard's size: a byte count, or a number with a K, M or G suffix, from " \
    "4K to 64G"
#define GUARD_SIZE_MIN ((size_t)4 << 10)
#define GUARD_SIZE_MAX ((size_t)64 << 30)
#define GUARD_CFG_FORMS "1 (on), -1 (off), 0 (from HERD_STACK_GUARD)"

/* ------------------------------------------------------------- messages */

/* Where a value came from, so that a message names what the user wrote:
 * "HERD_STACK" or "config.stack_size". num holds a config number as text. */
typedef struct origin {
    char label[32];
    const char *value;
    char num[32];
} origin;

static void from_env(origin *o, const char *var) {
    snprintf(o->label, sizeof o->label, "%s", var);
    o->value = getenv(var);
}

static void from_cfg_string(origin *o, const char *field, const char *value) {
    snprintf(o->label, sizeof o->label, "config.%s", field);
    o->value = value;
}

static void from_cfg_int(origin *o, const char *field, int value) {
    snprintf(o->label, sizeof o->label, "config.%s", field);
    snprintf(o->num, sizeof o->num, "%d", value);
    o->value = o->num;
}

static void from_cfg_size(origin *o, const char *field, size_t value) {
    snprintf(o->label, sizeof o->label, "config.%s", field);
    snprintf(o->num, sizeof o->num, "%zu", value);
    o->value = o->num;
}

/* Copy s for display, escaping control characters so the message stays on
 * one line, and cutting very long values (a pasted XML file) short. */
static void show_value(const char *s, char *buf, size_t len) {
    size_t o = 0;
    if (s[0] == '\0') {
        snprintf(buf, len, "\"\"");
        return;
    }
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '\n')
            snprintf(esc, sizeof esc, "\\n");
        else if (c == '\t')
            snprintf(esc, sizeof esc, "\\t");
        else if (c < 0x20 || c == 0x7f)
            snprintf(esc, sizeof esc, "\\x%02x", c);
        else {
            esc[0] = (char)c;
            esc[1] = '\0';
        }
        size_t n = strlen(esc);
        if (o + n + 4 > len) { /* room for "..." and the terminator */
            memcpy(buf + o, "...", 3);
            o += 3;
            break;
        }
        memcpy(buf + o, esc, n);
        o += n;
    }
    buf[o] = '\0';
}

/* Print the one-line complaint and return HERD_EINVAL. `label` is
 * "accepted" for a malformed value, "available" for a planned name. */
static int complain(const origin *o, const char *problem, const char *label, const char *forms) {
    char shown[256];
    show_value(o->value, shown, sizeof shown);
    fprintf(stderr, "herd: %s=%s: %s; %s: %s\n", o->label, shown, problem, label, forms);
    return HERD_EINVAL;
}

/* --------------------------------------------------------------- parsers */

/* Each scanner returns NULL when s is well formed, else what is wrong with
 * it, in words fit for the message. */

static const char *scan_long(const char *s, long min, long max, long *out) {
    const char *p = s;
    if (*p == '\0')
        return "empty value";
    if (*p == '+' || *p == '-')
        p++;
    /* strtol would skip leading blanks and accept "0x10"; insist on digits. */
    if (*p < '0' || *p > '9')
        return "not a decimal integer";
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end != '\0')
        return "not a decimal integer (trailing characters)";
    if (errno == ERANGE || v < min || v > max)
        return "out of range";
    *out = v;
    return NULL;
}

static const char *scan_size(const char *s, size_t *out) {
    if (*s == '\0')
        return "empty value";
    if (*s < '0' || *s > '9')
        return "not a size";
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return "too large";
        v = v * 10 + d;
    }
    unsigned shift = 0;
    switch (*p) {
    case '\0':
        break;
    case 'k':
    case 'K':
        shift = 10;
        p++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        p++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        p++;
        break;
    default:
        return "not a size (unknown suffix or trailing characters)";
    }
    if (*p != '\0')
        return "not a size (trailing characters after the suffix)";
    if (shift && v > (UINT64_MAX >> shift))
        return "too large";
    v <<= shift;
    if (v > SIZE_MAX)
        return "too large";
    *out = (size_t)v;
    return NULL;
}

const char herd__workers_forms[] = WORKERS_FORMS;

const char *herd__workers_scan(const char *value, int *workers) {
    if (strcasecmp(value, "auto") == 0) {
        *workers = 0; /* counted by herd_start (herd__map_auto_workers) */
        return NULL;
    }
    long v;
    const char *why = scan_long(value, 1, WORKERS_MAX, &v);
    if (!why)
        *workers = (int)v;
    return why;
}

int herd__parse_int(const char *s, long min, long max, long *out) {
    if (!s || !out)
        return HERD_EINVAL;
    return scan_long(s, min, max, out) ? HERD_EINVAL : 0;
}

int herd__parse_size(const char *s, size_t *out) {
    if (!s || !out)
        return HERD_EINVAL;
    return scan_size(s, out) ? HERD_EINVAL : 0;
}

/* ------------------------------------------------------- named choices */

/* The names a user may give today, comma-separated, in table order. */
static void join_available(const choice *c, size_t n, char *buf, size_t len) {
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (!c[i].value)
            continue;
        int w = snprintf(buf + o, len - o, "%s%s", o ? ", " : "", c[i].name);
        if (w < 0 || (size_t)w >= len - o)
            break;
        o += (size_t)w;
    }
}

static int pick_choice(const origin *o, const choice *c, size_t n, const char *what,
                       const choice **found) {
    char forms[256], problem[96];
    join_available(c, n, forms, sizeof forms);
    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(c[i].name, o->value) != 0)
            continue;
        if (!c[i].value) {
            snprintf(problem, sizeof problem, "%s not available in this build", what);
            return complain(o, problem, "available", forms);
        }
        *found = &c[i];
        return 0;
    }
    if (o->value[0] == '\0')
        return complain(o, "empty value", "accepted", forms);
    snprintf(problem, sizeof problem, "unknown %s", what);
    return complain(o, problem, "accepted", forms);
}

/* Choose the origin of a string field: the config when it set the field,
 * else the variable (value NULL when that is unset too). */
static void origin_of(origin *o, const herd_config *cfg, const char *cfg_value, const char *field,
                      const char *var) {
    if (cfg && cfg_value)
        from_cfg_string(o, field, cfg_value);
    else
        from_env(o, var);
}

/* ------------------------------------------------------------ variables */

/* Optimal-string-alignment distance, enough to catch the usual typos
 * (a dropped, doubled or swapped letter) for a "did you mean" hint. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb) {
    enum { MAXLEN = 32 };
    size_t d[MAXLEN + 1][MAXLEN + 1];
    if (la > MAXLEN || lb > MAXLEN)
        return SIZE_MAX;
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

static int unknown_variable(const char *name, size_t len) {
    char known[512], hint[64] = "";
    size_t o = 0, best = 3; /* suggest only within two edits */
    for (size_t i = 0; i < NKNOWN; i++) {
        int w = snprintf(known + o, sizeof known - o, "%s%s", i ? ", " : "", known_vars[i]);
        if (w > 0 && (size_t)w < sizeof known - o)
            o += (size_t)w;
        size_t dist = edit_distance(name, len, known_vars[i], strlen(known_vars[i]));
        if (dist < best) {
            best = dist;
            snprintf(hint, sizeof hint, " (did you mean %s?)", known_vars[i]);
        }
    }
    char shown[256];
    char *copy = strndup(name, len);
    show_value(copy ? copy : "HERD_?", shown, sizeof shown);
    free(copy);
    fprintf(stderr, "herd: unknown variable %s%s; known: %s\n", shown, hint, known);
    return HERD_EINVAL;
}

/* Every HERD_* name in the environment must be known. */
static int check_variable_names(void) {
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "HERD_", 5) != 0)
            continue;
        size_t len = strcspn(*e, "=");
        int known = 0;
        for (size_t i = 0; i < NKNOWN && !known; i++)
            known = strlen(known_vars[i]) == len && memcmp(known_vars[i], *e, len) == 0;
        if (!known)
            return unknown_variable(*e, len);
    }
    return 0;
}

/* ------------------------------------------------------ one per setting */

static int resolve_workers(const herd_config *cfg, herd__settings *out) {
    origin o;
    if (cfg && cfg->workers != 0) {
        from_cfg_int(&o, "workers", cfg->workers);
        if (cfg->workers < 1 || cfg->workers > WORKERS_MAX)
            return complain(&o, "out of range", "accepted", WORKERS_FORMS);
        out->workers = cfg->workers;
        return 0;
    }
    from_env(&o, "HERD_WORKERS");
    if (!o.value) {
        out->workers = 0; /* the runtime takes every PU of the topology */
        return 0;
    }
    const char *why = herd__workers_scan(o.value, &out->workers);
    if (why)
        return complain(&o, why, "accepted", WORKERS_FORMS);
    out->workers_auto = out->workers == 0;
    return 0;
}

static int resolve_sched(const herd_config *cfg, herd__settings *out) {
    origin o;
    const choice *c;
    origin_of(&o, cfg, cfg ? cfg->sched : NULL, "sched", "HERD_SCHED");
    if (!o.value)
        o.value = "auto";
    /* The names come from the scheduler table; "auto" is resolved by
     * herd_start once the topology is known (src/sched/registry.c). */
    const char *names[HERD__SCHED_MAX];
    choice sched_choices[HERD__SCHED_MAX];
    int n = herd__sched_names(names, HERD__SCHED_MAX, 0);
    for (int i = 0; i < n; i++)
        sched_choices[i] = (choice){names[i], 1, names[i]};
    if (pick_choice(&o, sched_choices, (size_t)n, "scheduler", &c))
        return HERD_EINVAL;
    snprintf(out->sched, sizeof out->sched, "%s", c->canonical); /* "AUTO" -> "ws" */
    return 0;
}

static int resolve_bind(const herd_config *cfg, herd__settings *out) {
    origin o;
    const choice *c;
    origin_of(&o, cfg, cfg ? cfg->bind : NULL, "bind", "HERD_BIND");
    /* compact keeps a shepherd's workers on neighbouring PUs, which is what
     * shepherd-local queues assume. With a synthetic topology nothing is
     * pinned whatever this says (see topo.h). */
    if (!o.value)
        o.value = "compact";
    if (pick_choice(&o, bind_choices, NCHOICES(bind_choices), "binding policy", &c))
        return HERD_EINVAL;
    out->bind = (herd__bind)c->value;
    return 0;
}

static int resolve_topology(const herd_config *cfg, herd__settings *out) {
    origin o;
    static const char forms[] = "an hwloc synthetic description (e.g. \"pack:2 core:4 pu:1\") "
                                "or the path of an hwloc XML file";
    origin_of(&o, cfg, cfg ? cfg->topology : NULL, "topology", "HERD_TOPOLOGY");
    out->topology[0] = '\0'; /* the real machine */
    if (!o.value)
        return 0;
    /* The content is checked when the topology is loaded, where hwloc can
     * say what is wrong with it; here only what would not fit. */
    if (o.value[0] == '\0')
        return complain(&o, "empty value", "accepted", forms);
    if (strlen(o.value) >= sizeof out->topology)
        return complain(&o, "too long (at most 1023 characters)", "accepted", forms);
    memcpy(out->topology, o.value, strlen(o.value) + 1);
    return 0;
}

static int resolve_shepherd(const herd_config *cfg, herd__settings *out) {
    origin o;
    char forms[128];
    size_t n = 0;
    origin_of(&o, cfg, cfg ? cfg->shepherd : NULL, "shepherd", "HERD_SHEPHERD");
    /* L3 by default: the workers that share a last-level cache are the ones
     * for which sharing a queue is cheap (paper 000's chip-level shepherd). */
    if (!o.value) {
        out->shepherd = HERD__LVL_L3;
        return 0;
    }
    herd__level l = o.value[0] ? herd__topo_level_parse(o.value) : (herd__level)0;
    if (l >= HERD__LVL_MACHINE && l <= HERD__LVL_PU) {
        out->shepherd = l;
        out->shepherd_set = 1;
        return 0;
    }
    /* The level names live in topo.c; list them innermost first. */
    forms[0] = '\0';
    for (int i = HERD__LVL_PU; i >= HERD__LVL_MACHINE; i--) {
        const char *name = herd__topo_level_name((herd__level)i);
        int w = snprintf(forms + n, sizeof forms - n, "%s%s", n ? ", " : "", name ? name : "?");
        if (w > 0 && (size_t)w < sizeof forms - n)
            n += (size_t)w;
    }
    return complain(&o, o.value[0] ? "unknown level" : "empty value", "accepted", forms);
}

static int resolve_stack(const herd_config *cfg, herd__settings *out) {
    origin o;
    size_t v = STACK_DEFAULT;
    if (cfg && cfg->stack_size != 0) {
        from_cfg_size(&o, "stack_size", cfg->stack_size);
        v = cfg->stack_size;
    } else {
        from_env(&o, "HERD_STACK");
        if (o.value) {
            const char *why = scan_size(o.value, &v);
            if (why)
                return complain(&o, why, "accepted", STACK_FORMS);
        }
    }
    if (v < STACK_MIN)
        return complain(&o, "below the minimum of 16K", "accepted", STACK_FORMS);
    if (v > STACK_MAX)
        return complain(&o, "above the maximum of 1G", "accepted", STACK_FORMS);
    /* Stacks are mapped whole pages (with a guard page below); rounding here
     * makes the reported size the size a task really gets. The bounds are
     * page multiples, so rounding cannot leave them. */
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096;
    out->stack_size = (v + page - 1) / page * page;
    return 0;
}

static int resolve_spawn(const herd_config *cfg, herd__settings *out) {
    origin o;
    const choice *c;
    origin_of(&o, cfg, cfg ? cfg->spawn : NULL, "spawn", "HERD_SPAWN");
    out->spawn = HERD__SPAWN_HELP_FIRST;
    if (!o.value)
        return 0;
    if (pick_choice(&o, spawn_choices, NCHOICES(spawn_choices), "spawn policy", &c))
        return HERD_EINVAL;
    out->spawn = (herd__spawn_policy)c->value;
    return 0;
}

/* One of the choices c, or "<prefix>N" with N from 1 to max ("chunk:4",
 * "adaptive:250"): *number is N for the second form, 0 for the first. */
static int pick_choice_or_number(const origin *o, const choice *c, size_t n, const char *prefix,
                                 long max, const char *what, const char *forms, int *value,
                                 long *number) {
    size_t plen = strlen(prefix);
    *number = 0;
    if (strncasecmp(o->value, prefix, plen) == 0) {
        const char *why = scan_long(o->value + plen, 1, max, number);
        return why ? complain(o, why, "accepted", forms) : 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(c[i].name, o->value) == 0) {
            *value = c[i].value;
            return 0;
        }
    }
    char problem[96];
    snprintf(problem, sizeof problem, "unknown %s", what);
    return complain(o, o->value[0] ? problem : "empty value", "accepted", forms);
}

static int resolve_steal(const herd_config *cfg, herd__settings *out) {
    origin o;
    origin_of(&o, cfg, cfg ? cfg->steal : NULL, "steal", "HERD_STEAL");
    out->steal = HERD__TAKE_DEFAULT;
    if (!o.value)
        return 0;
    int value;
    long chunk;
    if (pick_choice_or_number(&o, steal_choices, NCHOICES(steal_choices), "chunk:", STEAL_CHUNK_MAX,
                              "steal amount", STEAL_FORMS, &value, &chunk))
        return HERD_EINVAL;
    out->steal = chunk ? HERD__TAKE_CHUNK : (herd__steal_amount)value;
    out->steal_chunk = (int)chunk;
    return 0;
}

#define IDLE_FORMS "spin, sleep, adaptive, adaptive:US (US from 1 to 1000000 microseconds)"
#define SPIN_US_MAX 1000000

static int resolve_idle(const herd_config *cfg, herd__settings *out) {
    origin o;
    origin_of(&o, cfg, cfg ? cfg->idle : NULL, "idle", "HERD_IDLE");
    if (!o.value)
        o.value = "adaptive";
    int value;
    long us;
    if (pick_choice_or_number(&o, idle_choices, NCHOICES(idle_choices), "adaptive:", SPIN_US_MAX,
                              "idle policy", IDLE_FORMS, &value, &us))
        return HERD_EINVAL;
    out->idle = us ? HERD__IDLE_ADAPTIVE : (herd__idle)value;
    out->spin_us = (uint32_t)us;
    return 0;
}

static int resolve_stats(const herd_config *cfg, herd__settings *out) {
    origin o;
    origin_of(&o, cfg, cfg ? cfg->stats : NULL, "stats", "HERD_STATS");
    out->stats = HERD__STATS_OFF;
    out->stats_path[0] = '\0';
    /* "" is off rather than malformed: `HERD_STATS= prog` is the natural
     * way to switch it off for one run. */
    if (!o.value || strcmp(o.value, "") == 0 || strcmp(o.value, "0") == 0)
        return 0;
    if (strcmp(o.value, "1") == 0) {
        out->stats = HERD__STATS_TABLE;
        return 0;
    }
    if (strlen(o.value) >= sizeof out->stats_path)
        return complain(&o, "path too long (at most 1023 characters)", "accepted",
                        "\"\" or 0 (off), 1 (table on stderr), or the path of a JSON file");
    out->stats = HERD__STATS_JSON;
    memcpy(out->stats_path, o.value, strlen(o.value) + 1);
    return 0;
}

/* HERD_TRACE: the file is written at herd_stop(), so a path that cannot
 * work is refused now, before the run rather than after it. Only what can
 * be seen at start-up is checked (the directory exists and may be written);
 * a full disk, or a directory removed meanwhile, still shows at stop. */
#define TRACE_FORMS "the path of a file to write, in an existing directory"

static const char *trace_path_problem(const char *path, char *buf, size_t len) {
    struct stat st;
    char dir[1024], shown[256];
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return "is a directory";
        if (access(path, W_OK) != 0) {
            snprintf(buf, len, "file not writable (%s)", strerror(errno));
            return buf;
        }
        return NULL;
    }
    if (errno != ENOENT) {
        snprintf(buf, len, "cannot use the path (%s)", strerror(errno));
        return buf;
    }
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    show_value(dir, shown, sizeof shown);
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT)
            snprintf(buf, len, "directory %s does not exist", shown);
        else
            snprintf(buf, len, "directory %s: %s", shown, strerror(errno));
        return buf;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(buf, len, "%s is not a directory", shown);
        return buf;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(buf, len, "directory %s not writable (%s)", shown, strerror(errno));
        return buf;
    }
    return NULL;
}

static int resolve_trace(const herd_config *cfg, herd__settings *out) {
    origin o;
    char problem[512];
    origin_of(&o, cfg, cfg ? cfg->trace : NULL, "trace", "HERD_TRACE");
    out->trace_path[0] = '\0';
    if (!o.value)
        return 0;
    if (o.value[0] == '\0')
        return complain(&o, "empty value", "accepted", TRACE_FORMS);
    if (strlen(o.value) >= sizeof out->trace_path)
        return complain(&o, "path too long (at most 1023 characters)", "accepted", TRACE_FORMS);
    const char *why = trace_path_problem(o.value, problem, sizeof problem);
    if (why)
        return complain(&o, why, "accepted", TRACE_FORMS);
    memcpy(out->trace_path, o.value, strlen(o.value) + 1);
    return 0;
}

/* HERD_REGISTRY: only the form is checked here; ownership and mode are
 * checked when the file is opened (src/place/registry.c), which is also
 * where a missing directory shows. Environment only: herd_config has no
 * field for it. */
#define REGISTRY_FORMS "the path of the registry file (default /dev/shm/herd-registry-<uid>)"

static int resolve_registry(const herd_config *cfg, herd__settings *out) {
    origin o;
    from_env(&o, "HERD_REGISTRY");
    out->registry[0] = '\0';
    if (!o.value)
        return 0;
    if (o.value[0] == '\0')
        return complain(&o, "empty value", "accepted", REGISTRY_FORMS);
    if (strlen(o.value) >= sizeof out->registry)
        return complain(&o, "path too long (at most 1023 characters)", "accepted", REGISTRY_FORMS);
    memcpy(out->registry, o.value, strlen(o.value) + 1);
    return 0;
}

/* HERD_WATCHDOG (core/watchdog.c). Environment only. */
#define WATCHDOG_MAX 86400
#define WATCHDOG_FORMS                                                                             \
    "SECONDS (1 to 86400: report the blocked tasks and abort), SECONDS,report (report and go "     \
    "on), 0 or \"\" (no watchdog; SIGQUIT still dumps), off (no watchdog, no SIGQUIT dump)"

static int resolve_watchdog(const herd_config *cfg, herd__settings *out) {
    (void)cfg;
    origin o;
    from_env(&o, "HERD_WATCHDOG");
    if (!o.value || o.value[0] == '\0' || strcmp(o.value, "0") == 0)
        return 0;
    if (strcasecmp(o.value, "off") == 0) {
        out->watchdog_off = 1;
        return 0;
    }
    char num[32];
    const char *comma = strchr(o.value, ',');
    size_t len = comma ? (size_t)(comma - o.value) : strlen(o.value);
    if (comma && strcasecmp(comma + 1, "report") == 0)
        out->watchdog_report = 1;
    else if (comma && strcasecmp(comma + 1, "abort") != 0)
        return complain(&o, "unknown mode after the comma", "accepted", WATCHDOG_FORMS);
    long secs;
    if (len == 0 || len >= sizeof num)
        return complain(&o, "not a number of seconds", "accepted", WATCHDOG_FORMS);
    memcpy(num, o.value, len);
    num[len] = '\0';
    const char *why = scan_long(num, 1, WATCHDOG_MAX, &secs);
    if (why)
        return complain(&o, why, "accepted", WATCHDOG_FORMS);
    out->watchdog_s = (unsigned)secs;
    return 0;
}

static int resolve_stack_guard(const herd_config *cfg, herd__settings *out) {
    origin o;
    if (cfg && cfg->stack_guard != 0) {
        from_cfg_int(&o, "stack_guard", cfg->stack_guard);
        if (cfg->stack_guard != 1 && cfg->stack_guard != -1)
            return complain(&o, "out of range", "accepted", GUARD_CFG_FORMS);
        out->stack_guard = cfg->stack_guard == 1;
        return 0;
    }
    from_env(&o, "HERD_STACK_GUARD");
    /* On by default: an overflow that faults at once is far cheaper to
     * debug than one that silently corrupts the neighbouring stack. */
    if (!o.value || strcmp(o.value, "1") == 0 || strcasecmp(o.value, "on") == 0) {
        out->stack_guard = 1;
        return 0;
    }
    if (strcmp(o.value, "0") == 0 || strcasecmp(o.value, "off") == 0) {
        out->stack_guard = 0;
        return 0;
    }
    /* A size: the guard region below each stack (docs/design/stacks.md). */
    size_t g;
    if (o.value[0] >= '0' && o.value[0] <= '9') {
        const char *why = scan_size(o.value, &g);
        if (why)
            return complain(&o, why, "accepted", GUARD_FORMS);
        if (g < GUARD_SIZE_MIN || g > GUARD_SIZE_MAX)
            return complain(&o, "out of range", "accepted", GUARD_FORMS);
        out->stack_guard = 1;
        out->stack_guard_size = g;
        return 0;
    }
    return complain(&o, o.value[0] ? "unknown value" : "empty value", "accepted", GUARD_FORMS);
}

int herd__settings_resolve(const herd_config *cfg, herd__settings *out) {
    static int (*const steps[])(const herd_config *, herd__settings *) = {
        resolve_workers, resolve_sched, resolve_bind,     resolve_topology,    resolve_shepherd,
        resolve_stack,   resolve_idle,  resolve_stats,    resolve_stack_guard, resolve_spawn,
        resolve_steal,   resolve_trace, resolve_registry, resolve_watchdog,
    };
    memset(out, 0, sizeof *out);
    if (check_variable_names())
        return HERD_EINVAL;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i](cfg, out))
            return HERD_EINVAL;
    return 0;
}
