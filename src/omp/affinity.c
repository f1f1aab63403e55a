/* Affinity display (OpenMP 5.0): omp_display_affinity,
 * omp_capture_affinity, the affinity-format-var (OMP_AFFINITY_FORMAT,
 * omp_set_affinity_format) and OMP_DISPLAY_AFFINITY, which prints each
 * thread's line when it starts a region's member with something new to
 * say (docs/design/openmp.md, "Affinity display").
 *
 * A format is text with fields %[0][.][width]X or %[0][.][width]{name}:
 *   t team_num  T num_teams  L nesting_level  n thread_num
 *   N num_threads  a ancestor_tnum  H host  P process_id
 *   i native_thread_id  A thread_affinity (the CPUs the thread may run on,
 *   as ranges: 0-3,6); "%%" is a percent sign. A field is left-justified
 *   in its width unless "." asks for right, "0." pads numbers with zeros.
 * A field the format does not name stops the program (as in libgomp). */
#include "omp/omp.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DEFAULT_FORMAT "level %L thread %i affinity %A"

static pthread_mutex_t format_lock = PTHREAD_MUTEX_INITIALIZER;
static char *format_var; /* NULL: OMP_AFFINITY_FORMAT's, else DEFAULT_FORMAT */

int omp_get_num_teams(void);
int omp_get_team_num(void);
int omp_get_level(void);
int omp_get_ancestor_thread_num(int level);
int omp_get_num_threads(void);

/* A growing string. */
typedef struct out {
    char *s;
    size_t len, cap;
} out;

static void put(out *o, const char *s, size_t n) {
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 128;
        while (cap < o->len + n + 1)
            cap *= 2;
        char *g = realloc(o->s, cap);
        if (!g)
            herd__omp_fatal("out of memory for an affinity display");
        o->s = g;
        o->cap = cap;
    }
    memcpy(o->s + o->len, s, n);
    o->len += n;
    o->s[o->len] = '\0';
}

static void affinity_list(char *buf, size_t size) {
    cpu_set_t set;
    buf[0] = '\0';
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return;
    size_t used = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &set))
            e++;
        int w = e > c ? snprintf(buf + used, size - used, "%s%d-%d", used ? "," : "", c, e)
                      : snprintf(buf + used, size - used, "%s%d", used ? "," : "", c);
        if (w < 0 || (size_t)w >= size - used)
            break;
        used += (size_t)w;
        c = e;
    }
}

static const struct {
    char code;
    const char *name;
} fields[] = {{'t', "team_num"},       {'T', "num_teams"},   {'L', "nesting_level"},
              {'n', "thread_num"},     {'N', "num_threads"}, {'a', "ancestor_tnum"},
              {'H', "host"},           {'P', "process_id"},  {'i', "native_thread_id"},
              {'A', "thread_affinity"}};

/* The value of field code: a number (*num, returns 1) or text in buf. */
static int field(char code, long *num, char *buf, size_t size) {
    switch (code) {
    case 't':
        *num = omp_get_team_num();
        return 1;
    case 'T':
        *num = omp_get_num_teams();
        return 1;
    case 'L':
        *num = omp_get_level();
        return 1;
    case 'n':
        *num = herd__omp_task()->thread_num;
        return 1;
    case 'N':
        *num = omp_get_num_threads();
        return 1;
    case 'a':
        *num = omp_get_ancestor_thread_num(omp_get_level() - 1);
        return 1;
    case 'P':
        *num = (long)getpid();
        return 1;
    case 'i':
        *num = (long)syscall(SYS_gettid);
        return 1;
    case 'H':
        if (gethostname(buf, size) != 0)
            buf[0] = '\0';
        buf[size - 1] = '\0';
        return 0;
    default: /* 'A' */
        affinity_list(buf, size);
        return 0;
    }
}

/* Expand fmt into o. */
static void expand(out *o, const char *fmt) {
    for (const char *p = fmt; *p;) {
        if (*p != '%') {
            const char *q = strchr(p, '%');
            size_t n = q ? (size_t)(q - p) : strlen(p);
            put(o, p, n);
            p += n;
            continue;
        }
        const char *start = p++;
        if (*p == '%') {
            put(o, "%", 1);
            p++;
            continue;
        }
        int zero = 0, right = 0;
        if (*p == '0') {
            zero = 1;
            p++;
        }
        if (*p == '.') {
            right = 1;
            p++;
        }
        int width = 0;
        while (*p >= '0' && *p <= '9')
            width = width * 10 + (*p++ - '0');
        char code = 0;
        if (*p == '{') {
            const char *close = strchr(p, '}');
            for (size_t k = 0; close && k < sizeof fields / sizeof fields[0]; k++)
                if (strlen(fields[k].name) == (size_t)(close - p - 1) &&
                    !strncmp(p + 1, fields[k].name, (size_t)(close - p - 1)))
                    code = fields[k].code;
            p = code ? close + 1 : p;
        } else {
            for (size_t k = 0; *p && k < sizeof fields / sizeof fields[0]; k++)
                if (fields[k].code == *p)
                    code = *p;
            p += code ? 1 : 0;
        }
        /* ORDER: relaxed; the program's own flag (kmp/kmp.h) */
        if (!code && atomic_load_explicit(&herd__omp_g.llvm_abi, memory_order_relaxed)) {
            /* as libomp: an unknown field reads "undefined" */
            if (*p == '{')
                p = strchr(p, '}') ? strchr(p, '}') + 1 : p + strlen(p);
            else if (*p)
                p++;
            put(o, "undefined", 9);
            continue;
        }
        if (!code) /* as the system libgomp: a format error stops */
            herd__omp_fatal("affinity format \"%s\": \"%.*s\" is not a field (fields: t T L n N "
                            "a H P i A, or their {names})",
                            fmt, (int)strcspn(start + 1, "%") + 1, start);
        char text[1024], cell[1100];
        long num;
        if (field(code, &num, text, sizeof text))
            snprintf(cell, sizeof cell,
                     zero && right ? "%0*ld"
                     : right       ? "%*ld"
                                   : "%-*ld",
                     width, num);
        else
            snprintf(cell, sizeof cell, right ? "%*s" : "%-*s", width, text);
        put(o, cell, strlen(cell));
    }
}

/* The format to use for fmt (NULL or empty: affinity-format-var), copied. */
static char *format_of(const char *fmt) {
    if (fmt && *fmt)
        return strdup(fmt);
    pthread_mutex_lock(&format_lock);
    const char *v = format_var                    ? format_var
                    : herd__omp_g.affinity_format ? herd__omp_g.affinity_format
                                                  : DEFAULT_FORMAT;
    char *c = strdup(v);
    pthread_mutex_unlock(&format_lock);
    return c;
}

/* format (NULL or empty: affinity-format-var) expanded, then end. */
static out expanded(const char *format, const char *end) {
    char *f = format_of(format);
    if (!f)
        herd__omp_fatal("out of memory for an affinity format");
    out o = {0};
    put(&o, "", 0);
    expand(&o, f);
    put(&o, end, strlen(end));
    free(f);
    return o;
}

OMP_API size_t omp_capture_affinity(char *buffer, size_t size, const char *format) {
    out o = expanded(format, "");
    if (buffer && size) {
        size_t n = o.len < size - 1 ? o.len : size - 1;
        memcpy(buffer, o.s, n);
        buffer[n] = '\0';
    }
    size_t len = o.len;
    free(o.s);
    return len;
}

OMP_API void omp_display_affinity(const char *format) {
    out o = expanded(format, "\n");
    /* One call: lines of several threads do not mix. The stream is the
     * program's own runtime's: libgomp's stderr, libomp's stdout. */
    /* ORDER: relaxed; the program's own flag (kmp/kmp.h) */
    fputs(o.s, atomic_load_explicit(&herd__omp_g.llvm_abi, memory_order_relaxed) ? stdout : stderr);
    free(o.s);
}

OMP_API void omp_set_affinity_format(const char *format) {
    char *c = strdup(format ? format : "");
    if (!c)
        herd__omp_fatal("out of memory for an affinity format");
    pthread_mutex_lock(&format_lock);
    free(format_var);
    format_var = c;
    pthread_mutex_unlock(&format_lock);
}

OMP_API size_t omp_get_affinity_format(char *buffer, size_t size) {
    char *f = format_of(NULL);
    if (!f)
        herd__omp_fatal("out of memory for an affinity format");
    size_t len = strlen(f);
    if (buffer && size) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(buffer, f, n);
        buffer[n] = '\0';
    }
    free(f);
    return len;
}

/* OMP_DISPLAY_AFFINITY: at a member's start, its line if `all` or if the
 * thread has not shown this level, thread number, team size and place yet
 * (or has shown other ones since). */
void herd__omp_affinity_member(int all) {
    static __thread long shown = -1;
    omp_task *t = herd__omp_task();
    long key = ((long)omp_get_level() << 40) ^ ((long)t->thread_num << 20) ^
               (long)omp_get_num_threads() ^ ((long)(herd__omp_bound_place() + 1) << 52);
    if (key == shown && !all)
        return;
    shown = key;
    omp_display_affinity(NULL);
}

/* The specification asks for every thread's line on any change: a team
 * placed by its policy (bind.c) whose size or members' places differ from
 * the last one this thread started at the same level shows them all (as
 * libgomp and libomp do), even the members whose own place stayed. */
int herd__omp_affinity_team(const omp_team *team) {
    static __thread unsigned long last[8];
    unsigned long h = 14695981039346656037ul ^ (unsigned long)team->nthreads; /* FNV-1a */
    for (int i = 0; i < team->nthreads; i++) {
        omp_placement m = herd__omp_place_member(team->place_bind, team->place_lo, team->place_len,
                                                 team->place_p, team->nthreads, i);
        h = (h ^ (unsigned long)m.place) * 1099511628211ul;
    }
    int l = team->level < 8 ? team->level : 7;
    int changed = h != last[l];
    last[l] = h;
    return changed;
}

/* The same routines under the LLVM ABI's version (kmp/, omp.h). */
OMP_LLVM_ALIAS(omp_capture_affinity, "OMP_5.0");
OMP_LLVM_ALIAS(omp_display_affinity, "OMP_5.0");
OMP_LLVM_ALIAS(omp_set_affinity_format, "OMP_5.0");
OMP_LLVM_ALIAS(omp_get_affinity_format, "OMP_5.0");
