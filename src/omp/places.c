/* OMP_PLACES (docs/design/openmp.md, "Environment"): the specification's
 * grammar, checked whole at start-up, and the places API.
 *
 *   abstract:  threads | cores | sockets | ll_caches | numa_domains, with an
 *              optional count: cores(2)
 *   explicit:  a list of place intervals: {res-list} [: len [: stride]] or
 *              !{res-list}; a res-list is resource intervals: num [: len
 *              [: stride]] or !num; stride may be negative; spaces allowed.
 *
 * Both kinds are kept as places (sets of CPUs, restricted to those the
 * process may run on), answered by omp_get_num_places /
 * omp_get_place_num_procs / omp_get_place_proc_ids. An abstract name's
 * places are the machine's PUs, cores, packages, L3 caches or NUMA nodes
 * (core/places.c, hwloc), the first `count` of them when a count is given,
 * computed at the first question. herd places its workers by its own
 * rule (HERD_BIND; none with an explicit list) until a team's members are
 * placed by the proc_bind policy (bind.c), which binds each member's thread
 * to its place. omp_get_place_num() answers the place a member's placement
 * bound the calling thread to, else the place that holds every CPU the
 * thread may run on, -1 when none does ("not bound to a place"); the place
 * partition is the current task's (bind.c). A malformed value stops the
 * program with a message naming it. */
#include "omp/omp.h"

#include <ctype.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_PLACES 4096

static cpu_set_t *places; /* the places, NULL: none (yet) */
static int nplaces;
/* An abstract name, its places computed at the first question (places_now):
 * the name ("" none) and the count (0: all). */
static char abstract_name[16];
static long abstract_count;
static pthread_once_t abstract_once = PTHREAD_ONCE_INIT;

typedef struct parser {
    const char *s, *all;
} parser;

static void fail(const parser *p, const char *why) {
    herd__omp_fatal("OMP_PLACES=%s: not understood (%s at \"%.20s\"); accepted: threads, cores, "
                    "sockets, ll_caches, numa_domains, each with an optional (count), or a "
                    "list of places such as {0,1},{2,3} or {0:4}:4:4 (intervals num:len:stride, "
                    "! excludes)",
                    p->all, why, p->s);
}

static void blanks(parser *p) {
    while (isspace((unsigned char)*p->s))
        p->s++;
}

static int eat(parser *p, char c) {
    blanks(p);
    if (*p->s != c)
        return 0;
    p->s++;
    return 1;
}

/* An integer; sign: a leading minus allowed (strides). */
static long number(parser *p, int sign) {
    blanks(p);
    const char *b = p->s;
    if (sign && *p->s == '-')
        p->s++;
    if (!isdigit((unsigned char)*p->s))
        fail(p, "a number expected");
    long v = strtol(b, (char **)&p->s, 10);
    if (v > 1000000 || v < -1000000)
        fail(p, "a number out of range");
    return v;
}

/* [: len [: stride]] after a start; defaults 1 and 1. */
static void interval(parser *p, long *len, long *stride) {
    *len = 1, *stride = 1;
    if (!eat(p, ':'))
        return;
    *len = number(p, 0);
    if (*len < 1)
        fail(p, "an interval's length must be at least 1");
    if (eat(p, ':'))
        *stride = number(p, 1);
}

static void add_cpu(parser *p, cpu_set_t *set, long cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        fail(p, "a CPU number out of range");
    CPU_SET((int)cpu, set);
}

/* {res-list}: the named CPUs less the excluded ones, wherever they come
 * in the list (as libgomp reads it). */
static void place(parser *p, cpu_set_t *set) {
    cpu_set_t out;
    CPU_ZERO(set);
    CPU_ZERO(&out);
    if (!eat(p, '{'))
        fail(p, "'{' expected");
    do {
        int excl = eat(p, '!');
        long start = number(p, 0), len = 1, stride = 1;
        if (!excl)
            interval(p, &len, &stride);
        for (long k = 0; k < len; k++)
            add_cpu(p, excl ? &out : set, start + k * stride);
    } while (eat(p, ','));
    if (!eat(p, '}'))
        fail(p, "'}' expected");
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &out))
            CPU_CLR(c, set);
    if (CPU_COUNT(set) == 0)
        fail(p, "an empty place");
}

static void push(parser *p, const cpu_set_t *set) {
    if (nplaces == MAX_PLACES)
        fail(p, "more than 4096 places");
    places[nplaces++] = *set;
}

static void drop(const cpu_set_t *set) {
    for (int i = 0; i < nplaces; i++)
        if (CPU_EQUAL(&places[i], set)) {
            memmove(&places[i], &places[i + 1], (size_t)(nplaces - i - 1) * sizeof *places);
            nplaces--;
            i--;
        }
}

static void explicit_list(parser *p) {
    places = malloc(MAX_PLACES * sizeof *places);
    if (!places)
        herd__omp_fatal("out of memory for OMP_PLACES");
    do {
        int excl = eat(p, '!');
        cpu_set_t base, one;
        place(p, &base);
        if (excl) {
            drop(&base);
            continue;
        }
        long len = 1, stride = 1;
        interval(p, &len, &stride);
        for (long k = 0; k < len; k++) {
            CPU_ZERO(&one);
            for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &base))
                    add_cpu(p, &one, c + k * stride);
            push(p, &one);
        }
    } while (eat(p, ','));
    blanks(p);
    if (*p->s)
        fail(p, "',' or the end expected");
    /* Only the CPUs the process may run on (as libgomp): a place with none
     * of them is dropped, with a warning. */
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return;
    int n = 0, before = nplaces;
    for (int i = 0; i < nplaces; i++) {
        CPU_AND(&places[i], &places[i], &allowed);
        if (CPU_COUNT(&places[i]))
            places[n++] = places[i];
    }
    nplaces = n;
    if (n < before)
        fprintf(stderr,
                "herd-omp: OMP_PLACES=%s: %d of its %d places have none of the CPUs this "
                "process may run on; %d left\n",
                p->all, before - n, before, n);
}

void herd__omp_places_forget(void) {
    free(places);
    places = NULL;
    nplaces = 0;
    abstract_name[0] = '\0';
    abstract_count = 0;
    abstract_once = (pthread_once_t)PTHREAD_ONCE_INIT;
}

/* 1: an abstract name (herd's placement applies), 0: an explicit list. */
int herd__omp_parse_places(const char *s) {
    parser p = {s, s};
    blanks(&p);
    static const char *const names[] = {"threads", "cores", "sockets", "ll_caches", "numa_domains"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        size_t n = strlen(names[i]);
        if (strncasecmp(p.s, names[i], n) || isalnum((unsigned char)p.s[n]) || p.s[n] == '_')
            continue;
        p.s += n;
        long count = 0;
        if (eat(&p, '(')) {
            if ((count = number(&p, 0)) < 1)
                fail(&p, "a count of places must be at least 1");
            if (!eat(&p, ')'))
                fail(&p, "')' expected");
        }
        blanks(&p);
        if (*p.s)
            fail(&p, "the end expected");
        snprintf(abstract_name, sizeof abstract_name, "%s", names[i]);
        abstract_count = count;
        return 1;
    }
    explicit_list(&p);
    return 0;
}

static void compute_abstract(void) {
    if (!abstract_name[0])
        return;
    cpu_set_t *all = malloc(MAX_PLACES * sizeof *all);
    if (!all)
        herd__omp_fatal("out of memory for OMP_PLACES");
    char err[256];
    int n = herd__machine_places(abstract_name, all, MAX_PLACES, err, sizeof err);
    if (n < 0)
        herd__omp_fatal("OMP_PLACES=%s: cannot read the machine's topology: %s", abstract_name,
                        err);
    if (abstract_count && n > abstract_count)
        n = (int)abstract_count;
    nplaces = n;
    /* ORDER: the once's own synchronisation publishes both to every caller */
    places = all;
}

/* The places, computed once for an abstract name. */
static void places_now(void) {
    pthread_once(&abstract_once, compute_abstract);
}

int herd__omp_num_places(void) {
    places_now();
    return nplaces;
}

const cpu_set_t *herd__omp_place_set(int i) {
    return &places[i];
}

int herd__omp_place_of_thread(void) {
    places_now();
    cpu_set_t mine;
    if (!nplaces || pthread_getaffinity_np(pthread_self(), sizeof mine, &mine) != 0)
        return -1;
    for (int i = 0; i < nplaces; i++) {
        cpu_set_t both;
        CPU_AND(&both, &mine, &places[i]);
        if (CPU_EQUAL(&both, &mine))
            return i;
    }
    return -1;
}

OMP_API int omp_get_num_places(void) {
    return herd__omp_num_places();
}

OMP_API int omp_get_place_num_procs(int place) {
    places_now();
    return place >= 0 && place < nplaces ? CPU_COUNT(&places[place]) : 0;
}

OMP_API void omp_get_place_proc_ids(int place, int *ids) {
    places_now();
    if (place < 0 || place >= nplaces)
        return;
    for (int c = 0, k = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &places[place]))
            ids[k++] = c;
}

/* The place a member's placement bound this thread to (several places may
 * hold the same CPUs), else the one its CPUs lie in. */
OMP_API int omp_get_place_num(void) {
    int p = herd__omp_bound_place();
    return p >= 0 ? p : herd__omp_place_of_thread();
}

/* The current task's place partition (bind.c). */
OMP_API int omp_get_partition_num_places(void) {
    places_now();
    const omp_icv *icv = herd__omp_task()->icv;
    return icv->part_len ? icv->part_len : nplaces;
}
OMP_API void omp_get_partition_place_nums(int *p) {
    places_now();
    const omp_icv *icv = herd__omp_task()->icv;
    int n = icv->part_len ? icv->part_len : nplaces;
    for (int i = 0; i < n; i++)
        p[i] = icv->part_lo + i;
}

/* The same routines under the LLVM ABI's version (kmp/, omp.h). */
OMP_LLVM_ALIAS(omp_get_num_places, "OMP_4.5");
OMP_LLVM_ALIAS(omp_get_place_num_procs, "OMP_4.5");
OMP_LLVM_ALIAS(omp_get_place_proc_ids, "OMP_4.5");
OMP_LLVM_ALIAS(omp_get_place_num, "OMP_4.5");
OMP_LLVM_ALIAS(omp_get_partition_num_places, "OMP_4.5");
OMP_LLVM_ALIAS(omp_get_partition_place_nums, "OMP_4.5");
