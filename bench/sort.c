/* bench/sort.c -- parallel mergesort on herd (the BOTS "Sort" shape), and its
 * sequential twin.
 *
 *   bench_sort [--n N] [--seed S] [--cutoff C] [--merge-cutoff M]
 *              [--workers W] [--reps R] [--seq] [--stack BYTES]
 *
 * Sorts N 32-bit integers (default 32M = 33554432) drawn from a seeded
 * PRNG (splitmix64). The structure is the classic cilksort one that BOTS
 * Sort uses -- written here from the description, not copied:
 *
 *   sort(A, T, n)   n < cutoff: sequential quicksort (insertion sort below
 *                   16 elements). Otherwise split A into four quarters, sort
 *                   them as four tasks (three spawned, the last one called),
 *                   wait; merge quarters 1+2 into T and 3+4 into T as two
 *                   tasks, wait; merge the two halves of T back into A.
 *   merge(a, b, d)  na + nb < merge cutoff: sequential merge. Otherwise
 *                   take the middle element of the longer input, find where
 *                   it falls in the shorter one (binary search), store it at
 *                   its final place in d, and merge the two lower parts and
 *                   the two upper parts as two tasks.
 *
 * Quarters (not halves) as in cilksort: each level moves the data A -> T ->
 * A, so the result ends where it started and T is scratch of the same size.
 * Both cut-offs default to 32K elements, the "manual cutoff of 32K
 * integers" of the MTS paper's Sort runs. Every task's argument block is a
 * few pointers and sizes (sort 24 bytes, merge 40): inline in a queue slot.
 *
 * The sequential twin --seq runs the very same functions with the spawns
 * turned into plain calls and the waits removed (a global flag read at each
 * fork point, i.e. once per >= 32K elements), so the ratio of the two is
 * what the runtime adds, not a different algorithm.
 *
 * Verification: the output must be sorted and a permutation of the input:
 * the element count, the wrapping sum of the values and the wrapping sum of
 * a 64-bit mix of each value (an order-independent multiset hash) must all
 * match those of the input.
 *
 * Data placement: the input is generated and the scratch array zeroed by
 * the main thread before timing (page faults are not timed). On a NUMA
 * machine that puts all pages on the main thread's node -- which is the
 * locality question this kernel is for: tasks that run near their data do
 * better.
 *
 * The last line on stdout is one JSON object (see tools/bench_table.py). */
#include "common.h"

#include <herd/herd.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "bench_sort [--n N] [--seed S] [--cutoff C] [--merge-cutoff M] [--workers W] [--reps R]"
    " [--seq] [--stack BYTES]";

typedef int32_t elem;

/* Set before a run, read-only while tasks run. */
static size_t sort_cutoff = 32768, merge_cutoff = 32768;
static int serial; /* 1: the sequential twin, forks are calls */

/* Children that could not be queued (queue full) and ran inline instead. */
static uint64_t spawn_fallbacks;

/* A fork point: a task in the parallel version, a call in the twin. */
static void fork_task(herd_fn fn, void *arg, size_t size) {
    if (serial) {
        fn(arg);
    } else if (herd_spawn(fn, arg, size) != HERD_OK) {
        __atomic_fetch_add(&spawn_fallbacks, 1, __ATOMIC_RELAXED);
        fn(arg);
    }
}

static void join(void) {
    if (!serial) herd_wait();
}

/* ------------------------------------------------------ sequential pieces */

static void insertion_sort(elem *a, size_t n) {
    for (size_t i = 1; i < n; i++) {
        elem v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

static inline void swap_elem(elem *x, elem *y) {
    elem t = *x;
    *x = *y;
    *y = t;
}

/* Quicksort, median of three, Hoare-style partition; recurses into the
 * smaller side and loops on the larger, so the depth stays O(log n). */
static void quick_sort(elem *a, size_t n) {
    while (n > 16) {
        size_t mid = n / 2;
        if (a[mid] < a[0]) swap_elem(&a[mid], &a[0]);
        if (a[n - 1] < a[0]) swap_elem(&a[n - 1], &a[0]);
        if (a[n - 1] < a[mid]) swap_elem(&a[n - 1], &a[mid]);
        elem pivot = a[mid];
        size_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i >= j) break;
            swap_elem(&a[i], &a[j]);
            i++;
            j--;
        }
        /* [0, j] <= pivot <= [j + 1, n) */
        size_t left = j + 1;
        if (left < n - left) {
            quick_sort(a, left);
            a += left;
            n -= left;
        } else {
            quick_sort(a + left, n - left);
            n = left;
        }
    }
    insertion_sort(a, n);
}

static void seq_merge(const elem *a, size_t na, const elem *b, size_t nb, elem *d) {
    const elem *ea = a + na, *eb = b + nb;
    while (a < ea && b < eb)
        *d++ = (*b < *a) ? *b++ : *a++;
    while (a < ea)
        *d++ = *a++;
    while (b < eb)
        *d++ = *b++;
}

/* Number of elements of b[0, n) that are < v (b sorted). */
static size_t lower_bound(const elem *b, size_t n, elem v) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ------------------------------------------------------------ the tasks */

typedef struct merge_arg {
    const elem *a, *b;
    size_t na, nb;
    elem *d; /* na + nb slots, disjoint from a and b */
} merge_arg;

typedef struct sort_arg {
    elem *a;   /* n elements, sorted in place */
    elem *tmp; /* n elements of scratch */
    size_t n;
} sort_arg;

_Static_assert(sizeof(merge_arg) <= 40, "argument block must stay inline in a queue slot");
_Static_assert(sizeof(sort_arg) <= 40, "argument block must stay inline in a queue slot");

static void merge_task(void *p) {
    merge_arg m = *(const merge_arg *)p;
    if (m.na < m.nb) { /* split the longer input */
        const elem *t = m.a;
        m.a = m.b;
        m.b = t;
        size_t tn = m.na;
        m.na = m.nb;
        m.nb = tn;
    }
    if (m.na + m.nb < merge_cutoff || m.nb == 0) {
        seq_merge(m.a, m.na, m.b, m.nb, m.d);
        return;
    }
    size_t ma = m.na / 2;
    elem pivot = m.a[ma];
    size_t mb = lower_bound(m.b, m.nb, pivot);
    /* a[0, ma) <= pivot, b[0, mb) < pivot: all of them go before it. */
    m.d[ma + mb] = pivot;
    merge_arg lo = {m.a, m.b, ma, mb, m.d};
    merge_arg hi = {m.a + ma + 1, m.b + mb, m.na - ma - 1, m.nb - mb, m.d + ma + mb + 1};
    fork_task(merge_task, &lo, sizeof lo);
    merge_task(&hi);
    join();
}

static void sort_task(void *p) {
    const sort_arg *s = p;
    elem *a = s->a, *t = s->tmp;
    size_t n = s->n;
    if (n < sort_cutoff || n < 4) {
        quick_sort(a, n);
        return;
    }
    size_t q = n / 4;
    sort_arg part[4] = {
        {a, t, q}, {a + q, t + q, q}, {a + 2 * q, t + 2 * q, q}, {a + 3 * q, t + 3 * q, n - 3 * q}};
    for (int k = 0; k < 3; k++)
        fork_task(sort_task, &part[k], sizeof part[k]);
    sort_task(&part[3]);
    join();

    merge_arg m12 = {a, a + q, q, q, t};
    merge_arg m34 = {a + 2 * q, a + 3 * q, q, n - 3 * q, t + 2 * q};
    fork_task(merge_task, &m12, sizeof m12);
    merge_task(&m34);
    join();

    merge_arg all = {t, t + 2 * q, 2 * q, n - 2 * q, a};
    merge_task(&all);
}

/* ------------------------------------------------------------- the data */

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A value's contribution to the multiset hash: a bijective 64-bit mix. */
static inline uint64_t mix(elem v) {
    uint64_t z = (uint64_t)(uint32_t)v + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef struct digest {
    uint64_t count, sum, hash;
} digest;

static digest digest_of(const elem *a, size_t n) {
    digest d = {n, 0, 0};
    for (size_t i = 0; i < n; i++) {
        d.sum += (uint64_t)(int64_t)a[i];
        d.hash += mix(a[i]);
    }
    return d;
}

static void fill(elem *a, size_t n, uint64_t seed) {
    uint64_t st = seed;
    for (size_t i = 0; i < n; i++)
        a[i] = (elem)(uint32_t)(splitmix64(&st) >> 32);
}

/* Index of the first element out of order, or n when sorted. */
static size_t first_unsorted(const elem *a, size_t n) {
    for (size_t i = 1; i < n; i++)
        if (a[i] < a[i - 1]) return i;
    return n;
}

/* ------------------------------------------------------------ the driver */

static void print_params(size_t n, uint64_t seed) {
    printf("{\"kernel\":\"sort\",\"params\":{\"n\":%zu,\"seed\":%" PRIu64
           ",\"cutoff\":%zu,\"merge_cutoff\":%zu,\"split\":\"quarters\"}",
           n, seed, sort_cutoff, merge_cutoff);
}

int main(int argc, char **argv) {
    long n = 33554432, workers = 0, reps = 1, stack = 0, seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n"))
            n = bench_int_arg(argc, argv, &i, 1, 1L << 34, usage);
        else if (!strcmp(argv[i], "--seed"))
            seed = bench_int_arg(argc, argv, &i, 0, INT64_MAX, usage);
        else if (!strcmp(argv[i], "--cutoff"))
            sort_cutoff = (size_t)bench_int_arg(argc, argv, &i, 4, 1L << 34, usage);
        else if (!strcmp(argv[i], "--merge-cutoff"))
            merge_cutoff = (size_t)bench_int_arg(argc, argv, &i, 2, 1L << 34, usage);
        else if (!strcmp(argv[i], "--workers"))
            workers = bench_int_arg(argc, argv, &i, 0, 4096, usage);
        else if (!strcmp(argv[i], "--reps"))
            reps = bench_int_arg(argc, argv, &i, 1, 100000, usage);
        else if (!strcmp(argv[i], "--stack"))
            stack = bench_int_arg(argc, argv, &i, 0, 1L << 30, usage);
        else if (!strcmp(argv[i], "--seq"))
            serial = 1;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            bench_help(usage);
        else
            bench_usage_error(usage, "unknown option", argv[i]);
    }

    if (!serial) {
        herd_config cfg = {.workers = (int)workers, .stack_size = (size_t)stack};
        int rc = herd_start(&cfg);
        if (rc != HERD_OK) {
            fprintf(stderr, "herd_start: %s\n", herd_strerror(rc));
            print_params((size_t)n, (uint64_t)seed);
            printf(",\"workers\":%ld,\"verified\":false,\"error\":\"herd_start: %s\"}\n", workers,
                   herd_strerror(rc));
            return 1;
        }
        workers = herd_num_workers();
    } else {
        workers = 0;
    }

    elem *a = malloc((size_t)n * sizeof *a);
    elem *tmp = malloc((size_t)n * sizeof *tmp);
    double *times = malloc((size_t)reps * sizeof *times);
    if (!a || !tmp || !times) {
        perror("malloc");
        return 1;
    }
    memset(tmp, 0, (size_t)n * sizeof *tmp); /* fault the scratch in, untimed */

    int verified = 1, done = 0;
    for (long r = 0; r < reps; r++) {
        fill(a, (size_t)n, (uint64_t)seed); /* every rep sorts the same input */
        digest in = digest_of(a, (size_t)n);
        sort_arg root = {a, tmp, (size_t)n};
        double t0 = bench_now();
        if (serial) {
            sort_task(&root);
        } else {
            int rc = herd_run(sort_task, &root, sizeof root);
            if (rc != HERD_OK) {
                fprintf(stderr, "herd_run: %s\n", herd_strerror(rc));
                verified = 0;
                break;
            }
        }
        times[r] = bench_now() - t0;
        done++;
        digest out = digest_of(a, (size_t)n);
        size_t bad = first_unsorted(a, (size_t)n);
        if (bad != (size_t)n) {
            fprintf(stderr,
                    "sort rep %ld: out of order at index %zu (%" PRId32 " after %" PRId32 ")\n", r,
                    bad, a[bad], a[bad - 1]);
            verified = 0;
        }
        if (out.count != in.count || out.sum != in.sum || out.hash != in.hash) {
            fprintf(stderr,
                    "sort rep %ld: output is not a permutation of the input "
                    "(sum %" PRIx64 " vs %" PRIx64 ", hash %" PRIx64 " vs %" PRIx64 ")\n",
                    r, out.sum, in.sum, out.hash, in.hash);
            verified = 0;
        }
        fprintf(stderr, "sort n=%ld %s w=%ld rep %ld: %.6f s\n", n, serial ? "seq" : "par", workers,
                r, times[r]);
    }
    if (spawn_fallbacks)
        fprintf(stderr, "note: %llu children ran inline (queue full)\n",
                (unsigned long long)spawn_fallbacks);
    if (!serial) herd_stop();

    double med = done ? bench_median(times, done) : 0.0;
    print_params((size_t)n, (uint64_t)seed);
    printf(",\"workers\":%ld,\"seconds\":%.9f,\"melems_per_s\":%.3f,\"verified\":%s,\"reps\":%ld,",
           workers, med, med > 0 ? (double)n / med / 1e6 : 0.0, verified ? "true" : "false", reps);
    bench_print_times(stdout, times, done);
    printf("}\n");
    free(times);
    free(tmp);
    free(a);
    return verified ? 0 : 1;
}
