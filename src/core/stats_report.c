/* The statistics report that HERD_STATS asks for at herd_stop(): an aligned
 * table on stderr for a person, or one JSON object in a file for the
 * benchmark harness.
 *
 * The JSON keys are the herd_worker_stats field names, so a consumer can map
 * them without a dictionary, and the settings travel with the counters so a
 * results file says what produced it. Strings (the topology description, a
 * path) come from the user, so they are escaped, and bytes that are not
 * UTF-8 become U+FFFD: the file must parse whatever the user typed.
 */
#include "core/config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* --------------------------------------------------------------- counters */

static void add_stats(herd_worker_stats *sum, const herd_worker_stats *w) {
    sum->spawned += w->spawned;
    sum->executed += w->executed;
    sum->inlined += w->inlined;
    sum->steals += w->steals;
    sum->steals_local += w->steals_local;
    sum->steals_remote += w->steals_remote;
    sum->stolen_tasks += w->stolen_tasks;
    if (w->max_chunk > sum->max_chunk)
        sum->max_chunk = w->max_chunk; /* a maximum, not a sum */
    sum->steal_attempts += w->steal_attempts;
    sum->failed_steals += w->failed_steals;
    sum->blocks += w->blocks;
    sum->stacks_allocated += w->stacks_allocated;
    sum->rescues += w->rescues;
    sum->busy_ns += w->busy_ns;
    sum->idle_ns += w->idle_ns;
}

static herd_worker_stats total_of(const herd_worker_stats *w, int n) {
    herd_worker_stats sum;
    memset(&sum, 0, sizeof sum);
    for (int i = 0; i < n; i++)
        add_stats(&sum, &w[i]);
    return sum;
}

/* ------------------------------------------------------------------ table */

enum { NCOUNTS = 13, NCOLS = NCOUNTS + 4, CELL = 32 };

/* "local" and "remote" split the steals by whether the victim shares the
 * thief's shepherd; "moved" counts the tasks those steals took; "rescues"
 * the pokes that made a spinning worker share its tasks (core/rescue.c). */
static const char *const headers[NCOLS] = {
    "worker", "shep",   "spawned", "executed", "inlined",  "steals",
    "local",  "remote", "moved",   "chunk",    "attempts", "failed",
    "blocks", "stacks", "rescues", "busy ms",  "idle ms",
};

/* One row as text; label is the worker number or "total" (shepherd -1). */
static void format_row(char cells[NCOLS][CELL], const char *label, const herd_worker_stats *st,
                       int shepherd) {
    const uint64_t counts[NCOUNTS] = {st->spawned,       st->executed,     st->inlined,
                                      st->steals,        st->steals_local, st->steals_remote,
                                      st->stolen_tasks,  st->max_chunk,    st->steal_attempts,
                                      st->failed_steals, st->blocks,       st->stacks_allocated,
                                      st->rescues};
    snprintf(cells[0], CELL, "%s", label);
    if (shepherd >= 0)
        snprintf(cells[1], CELL, "%d", shepherd);
    else
        snprintf(cells[1], CELL, "-");
    for (int c = 0; c < NCOUNTS; c++)
        snprintf(cells[c + 2], CELL, "%" PRIu64, counts[c]);
    snprintf(cells[NCOUNTS + 2], CELL, "%.1f", (double)st->busy_ns / 1e6);
    snprintf(cells[NCOUNTS + 3], CELL, "%.1f", (double)st->idle_ns / 1e6);
}

/* Row r of the table: -1 the headers, 0..n-1 the workers, n the total. */
static void row_cells(char cells[NCOLS][CELL], int r, const herd_worker_stats *w, int n,
                      const herd_worker_stats *total) {
    char label[CELL];
    if (r < 0) {
        for (int c = 0; c < NCOLS; c++)
            snprintf(cells[c], CELL, "%s", headers[c]);
    } else if (r < n) {
        snprintf(label, sizeof label, "%d", r);
        format_row(cells, label, &w[r], w[r].shepherd);
    } else {
        format_row(cells, "total", total, -1);
    }
}

void herd__stats_print_table(FILE *out, const herd_worker_stats *w, int n) {
    char cells[NCOLS][CELL];
    int width[NCOLS] = {0};
    if (!w || n < 0)
        n = 0;
    herd_worker_stats total = total_of(w, n);
    /* Two passes over the rows rather than a buffer of n rows: the widths
     * first, then the text. Formatting twice is cheap next to a run. */
    for (int r = -1; r <= n; r++) {
        row_cells(cells, r, w, n, &total);
        for (int c = 0; c < NCOLS; c++) {
            int len = (int)strlen(cells[c]);
            if (len > width[c])
                width[c] = len;
        }
    }
    for (int r = -1; r <= n; r++) {
        row_cells(cells, r, w, n, &total);
        /* The worker column reads left to right, the numbers right-aligned
         * so that their digits line up. */
        fprintf(out, "%-*s", width[0], cells[0]);
        for (int c = 1; c < NCOLS; c++)
            fprintf(out, "  %*s", width[c], cells[c]);
        fputc('\n', out);
    }
}

/* ------------------------------------------------------------------- JSON */

/* Length of the well-formed UTF-8 sequence at p, or 0 when it is not one
 * (stray continuation byte, overlong form, surrogate, beyond U+10FFFF). */
static size_t utf8_length(const unsigned char *p) {
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        n = 2;
    } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        n = 3;
        if (p[0] == 0xe0)
            lo = 0xa0; /* overlong */
        if (p[0] == 0xed)
            hi = 0x9f; /* UTF-16 surrogates */
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        n = 4;
        if (p[0] == 0xf0)
            lo = 0x90; /* overlong */
        if (p[0] == 0xf4)
            hi = 0x8f; /* above U+10FFFF */
    } else {
        return 0;
    }
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return n;
}

/* s as a JSON string literal; NULL as null (config.h). */
void herd__json_string(FILE *out, const char *s) {
    if (!s) {
        fputs("null", out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        if (*p == '"' || *p == '\\') {
            fputc('\\', out);
            fputc(*p++, out);
        } else if (*p == '\n') {
            fputs("\\n", out);
            p++;
        } else if (*p == '\t') {
            fputs("\\t", out);
            p++;
        } else if (*p < 0x20) {
            fprintf(out, "\\u%04x", *p++);
        } else if (*p < 0x80) {
            fputc(*p++, out);
        } else {
            size_t n = utf8_length(p);
            if (n) {
                fwrite(p, 1, n, out);
                p += n;
            } else {
                fputs("\\ufffd", out);
                p++;
            }
        }
    }
    fputc('"', out);
}

static void json_counters(FILE *out, const herd_worker_stats *st) {
    fprintf(out,
            "\"spawned\": %" PRIu64 ", \"executed\": %" PRIu64 ", \"inlined\": %" PRIu64
            ", \"steals\": %" PRIu64 ", \"steals_local\": %" PRIu64 ", \"steals_remote\": %" PRIu64
            ", \"stolen_tasks\": %" PRIu64 ", \"max_chunk\": %" PRIu64
            ", \"steal_attempts\": %" PRIu64 ", \"failed_steals\": %" PRIu64
            ", \"blocks\": %" PRIu64 ", \"stacks_allocated\": %" PRIu64 ", \"rescues\": %" PRIu64
            ", \"busy_ns\": %" PRIu64 ", \"idle_ns\": %" PRIu64,
            st->spawned, st->executed, st->inlined, st->steals, st->steals_local, st->steals_remote,
            st->stolen_tasks, st->max_chunk, st->steal_attempts, st->failed_steals, st->blocks,
            st->stacks_allocated, st->rescues, st->busy_ns, st->idle_ns);
}

/* The HERD_IDLE form accepted in config.c; both files are updated when a
 * policy is added. (HERD_BIND's names: herd__bind_name.) */
static const char *idle_name(herd__idle i) {
    switch (i) {
    case HERD__IDLE_ADAPTIVE:
        return "adaptive";
    case HERD__IDLE_SPIN:
        return "spin";
    case HERD__IDLE_SLEEP:
        return "sleep";
    }
    return NULL;
}

/* The HERD_STEAL form; "default" when unset (the scheduler's own amount). */
static void steal_name(const herd__settings *s, char *buf, size_t len) {
    switch (s->steal) {
    case HERD__TAKE_ONE:
        snprintf(buf, len, "one");
        break;
    case HERD__TAKE_HALF:
        snprintf(buf, len, "half");
        break;
    case HERD__TAKE_CHUNK:
        snprintf(buf, len, "chunk:%d", s->steal_chunk);
        break;
    default:
        snprintf(buf, len, "default");
        break;
    }
}

static void json_settings(FILE *out, const herd__settings *s) {
    if (!s) {
        fputs("null", out);
        return;
    }
    fprintf(out, "{\"workers\": %d, \"sched\": ", s->workers);
    herd__json_string(out, s->sched);
    fputs(", \"bind\": ", out);
    herd__json_string(out, herd__bind_name(s->bind));
    fputs(", \"topology\": ", out);
    herd__json_string(out, s->topology);
    fputs(", \"shepherd\": ", out);
    herd__json_string(out, herd__topo_level_name(s->shepherd));
    fprintf(out, ", \"stack_size\": %zu, \"idle\": ", s->stack_size);
    herd__json_string(out, idle_name(s->idle));
    fprintf(out, ", \"stack_guard\": %s, \"spawn\": ", s->stack_guard ? "true" : "false");
    herd__json_string(out, s->spawn == HERD__SPAWN_WORK_FIRST ? "work-first" : "help-first");
    char steal[32];
    steal_name(s, steal, sizeof steal);
    fputs(", \"steal\": ", out);
    herd__json_string(out, steal);
    fputc('}', out);
}

void herd__stats_print_json(FILE *out, const herd__settings *s, const herd_worker_stats *w, int n) {
    if (!w || n < 0)
        n = 0;
    herd_worker_stats total = total_of(w, n);
    /* One worker per line: still one object, but a person can read and diff
     * it without a formatter. */
    fprintf(out, "{\"workers\": %d,\n \"settings\": ", n);
    json_settings(out, s);
    fputs(",\n \"per_worker\": [", out);
    for (int i = 0; i < n; i++) {
        fprintf(out, "%s\n  {\"worker\": %d, \"shepherd\": %d, ", i ? "," : "", i, w[i].shepherd);
        json_counters(out, &w[i]);
        fputc('}', out);
    }
    fputs(n ? "\n ],\n \"total\": {" : "],\n \"total\": {", out);
    json_counters(out, &total);
    fputs("}}\n", out);
}

/* ----------------------------------------------------------------- report */

static int cannot_write(const char *path, int err) {
    fprintf(stderr, "herd: HERD_STATS=%s: cannot write: %s\n", path, strerror(err));
    return HERD_ESYS;
}

static int write_json_file(const herd__settings *s, const herd_worker_stats *w, int n) {
    FILE *f = fopen(s->stats_path, "w");
    if (!f)
        return cannot_write(s->stats_path, errno);
    errno = 0;
    herd__stats_print_json(f, s, w, n);
    /* A full disk shows only when the buffer is flushed, so check the flush
     * and the close, not just the open. */
    int err = 0;
    if (fflush(f) != 0 || ferror(f))
        err = errno ? errno : EIO;
    if (fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    return err ? cannot_write(s->stats_path, err) : 0;
}

int herd__stats_report(const herd__settings *s, const herd_worker_stats *w, int n) {
    if (!s)
        return 0;
    switch (s->stats) {
    case HERD__STATS_TABLE:
        herd__stats_print_table(stderr, w, n);
        return 0;
    case HERD__STATS_JSON:
        return write_json_file(s, w, n);
    case HERD__STATS_OFF:
        break;
    }
    return 0;
}
