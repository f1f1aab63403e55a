/* Start-up settings: a herd_config merged with the HERD_* environment and the
 * built-in defaults, validated. Every malformed value is reported on stderr
 * with the variable, the value and the accepted forms. */
#ifndef HERD_CONFIG_H
#define HERD_CONFIG_H

#include "herd/herd.h"
#include "sched/sched.h" /* herd__steal_amount, the scheduler names */
#include "topo/topo.h"

#include <stddef.h>

typedef enum herd__idle {
    HERD__IDLE_ADAPTIVE = 1, /* spin a little, then sleep on a futex */
    HERD__IDLE_SPIN,         /* never sleep (lowest latency, burns the core) */
    HERD__IDLE_SLEEP,        /* sleep at once when no work is found */
} herd__idle;

typedef enum herd__stats_mode {
    HERD__STATS_OFF = 1,
    HERD__STATS_TABLE, /* HERD_STATS=1: table on stderr at herd_stop() */
    HERD__STATS_JSON,  /* HERD_STATS=<path>: JSON file written at herd_stop() */
} herd__stats_mode;

typedef enum herd__spawn_policy {
    HERD__SPAWN_HELP_FIRST = 1, /* queue the child, the parent goes on */
    HERD__SPAWN_WORK_FIRST,     /* run the child at once, the parent's continuation is queued */
} herd__spawn_policy;

/* The most workers a runtime may have (HERD_WORKERS, OMP_NUM_THREADS), and
 * so the most PUs a modelled machine (HERD_TOPOLOGY) may have. */
#define HERD__WORKERS_MAX 4096

typedef struct herd__settings {
    int workers;      /* >= 1; 0 before resolution means "all PUs of the topology" */
    int workers_auto; /* HERD_WORKERS=auto: the free PUs by XLL's view (src/place/) */
    char sched[32];   /* scheduler name; "auto" until herd_start picks one */
    herd__bind bind;
    char topology[1024];  /* "" = the real machine */
    herd__level shepherd; /* default HERD__LVL_L3 ... see config.c */
    int shepherd_set;     /* 1 when cfg or HERD_SHEPHERD named the level */
    size_t stack_size;    /* bytes, page-multiple, >= 16 KiB */
    herd__idle idle;
    uint32_t spin_us; /* adaptive: how long to search before sleeping; 0 = default */
    herd__stats_mode stats;
    char stats_path[1024];
    int stack_guard;         /* 1 on, 0 off */
    size_t stack_guard_size; /* HERD_STACK_GUARD=SIZE: the guard's bytes; 0: the default */
    herd__spawn_policy spawn;
    herd__steal_amount steal;
    int steal_chunk;       /* HERD__TAKE_CHUNK: tasks per steal, >= 1 */
    char trace_path[1024]; /* HERD_TRACE: file written at herd_stop(); "" = off */
    char registry[1024];   /* HERD_REGISTRY: the machine-wide registry; "" = the default */
    unsigned watchdog_s;   /* HERD_WATCHDOG: seconds without progress; 0 = no watchdog */
    int watchdog_report;   /* 1: report and go on; 0: report and abort */
    int watchdog_off;      /* HERD_WATCHDOG=off: no watchdog thread, no SIGQUIT dump */
} herd__settings;

/* Merge cfg (may be NULL), the environment and the defaults into out.
 * Returns 0 or HERD_EINVAL after printing "herd: HERD_X=value: ... accepted: ..."
 * to stderr. workers stays 0 when neither cfg nor HERD_WORKERS set it. */
int herd__settings_resolve(const herd_config *cfg, herd__settings *out);

/* HERD_WORKERS's one grammar, for the OpenMP layer too (omp/icv.c): NULL
 * when value is well formed, with *workers the count, or 0 for `auto`;
 * else what is wrong, in words; herd__workers_forms says what is accepted. */
const char *herd__workers_scan(const char *value, int *workers);
extern const char herd__workers_forms[];

/* Parsers, exposed for unit tests. Each returns 0 or HERD_EINVAL. */
int herd__parse_size(const char *s, size_t *out); /* "65536", "64K", "1M", "2G" (powers of 1024) */
int herd__parse_int(const char *s, long min, long max, long *out);

/* Report worker statistics as HERD_STATS asks (table to stderr, or JSON to
 * the path). Does nothing when stats are off. Returns 0 or HERD_ESYS. */
int herd__stats_report(const herd__settings *s, const herd_worker_stats *w, int n);
/* Write the table / JSON to a stream (exposed for tests). */
void herd__stats_print_table(FILE *out, const herd_worker_stats *w, int n);
void herd__stats_print_json(FILE *out, const herd__settings *s, const herd_worker_stats *w, int n);
/* s as a JSON string literal (escaped; bytes that are not UTF-8 become
 * U+FFFD), or null when s is NULL. Shared with the trace writer. */
void herd__json_string(FILE *out, const char *s);

#endif
