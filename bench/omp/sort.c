/* bench/omp/sort.c -- parallel mergesort with parallel merge (the BOTS Sort
 * shape), with OpenMP tasks, and its sequential twin.
 *
 *   omp_sort [--input small|medium|large] [--seq] [--n N] [--cutoff C]
 *            [--seed S] [--reps R]
 *
 *   sort(A, T, n)   n < cutoff (32K): sequential quicksort, insertion sort
 *                   below 20 elements. Otherwise sort the four quarters of
 *                   A as tasks, wait; merge quarters 1+2 and 3+4 into T as
 *                   two tasks, wait; merge the halves of T back into A.
 *   merge(a, b, d)  fewer than the merge cut-off (32K) elements: sequential
 *                   merge. Otherwise split the longer input at its middle,
 *                   binary-search that value in the shorter one, and merge
 *                   the two lower parts and the two upper parts as tasks.
 *
 * The twin runs the same functions with tasks turned into calls (the `par`
 * flag). Verification: sorted, and the same multiset as the input (count,
 * wrapping sum, wrapping sum of a 64-bit mix of each value). */
#include "omp_bench.h"

#include <stdio.h>
#include <string.h>

static const char usage[] = "omp_sort [--input small|medium|large] [--seq] [--n N] "
                            "[--cutoff C] [--seed S] [--reps R]";
static const char *const variants[] = {"mergesort", NULL};

static const long sizes[3] = {1L << 20, 16L << 20, 128L << 20};

typedef int32_t elem;

static long sort_cutoff = 32768, merge_cutoff = 32768;
enum { INSERTION = 20 };

static void insertion(elem *a, long n) {
    for (long i = 1; i < n; i++) {
        elem v = a[i];
        long j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

static elem median3(elem x, elem y, elem z) {
    if (x < y)
        return y < z ? y : (x < z ? z : x);
    return x < z ? x : (y < z ? z : y);
}

static void quick(elem *a, long n) {
    while (n >= INSERTION) {
        elem p = median3(a[0], a[n / 2], a[n - 1]);
        long i = 0, j = n - 1;
        for (;;) { /* Hoare partition */
            while (a[i] < p)
                i++;
            while (a[j] > p)
                j--;
            if (i >= j)
                break;
            elem t = a[i];
            a[i++] = a[j];
            a[j--] = t;
        }
        /* Recurse into the smaller side, loop on the larger. */
        if (j + 1 < n - j - 1) {
            quick(a, j + 1);
            a += j + 1;
            n -= j + 1;
        } else {
            quick(a + j + 1, n - j - 1);
            n = j + 1;
        }
    }
    insertion(a, n);
}

static void merge_seq(const elem *a, long na, const elem *b, long nb, elem *d) {
    long i = 0, j = 0, k = 0;
    while (i < na && j < nb)
        d[k++] = b[j] < a[i] ? b[j++] : a[i++];
    while (i < na)
        d[k++] = a[i++];
    while (j < nb)
        d[k++] = b[j++];
}

/* First index in b[0..nb) whose value is >= v. */
static long lower_bound(const elem *b, long nb, elem v) {
    long lo = 0, hi = nb;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (b[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void merge(const elem *a, long na, const elem *b, long nb, elem *d, int par) {
    if (na < nb) { /* a is the longer input */
        const elem *t = a;
        a = b;
        b = t;
        long tn = na;
        na = nb;
        nb = tn;
    }
    if (na + nb < merge_cutoff || nb == 0) {
        merge_seq(a, na, b, nb, d);
        return;
    }
    long ma = na / 2;
    long mb = lower_bound(b, nb, a[ma]);
    d[ma + mb] = a[ma];
    if (par) {
#pragma omp task
        merge(a, ma, b, mb, d, 1);
#pragma omp task
        merge(a + ma + 1, na - ma - 1, b + mb, nb - mb, d + ma + mb + 1, 1);
#pragma omp taskwait
    } else {
        merge(a, ma, b, mb, d, 0);
        merge(a + ma + 1, na - ma - 1, b + mb, nb - mb, d + ma + mb + 1, 0);
    }
}

static void sort(elem *a, elem *t, long n, int par) {
    if (n < sort_cutoff) {
        quick(a, n);
        return;
    }
    long q = n / 4;
    elem *a1 = a, *a2 = a + q, *a3 = a + 2 * q, *a4 = a + 3 * q;
    elem *t1 = t, *t2 = t + q, *t3 = t + 2 * q, *t4 = t + 3 * q;
    long n4 = n - 3 * q;
    if (par) {
#pragma omp task
        sort(a1, t1, q, 1);
#pragma omp task
        sort(a2, t2, q, 1);
#pragma omp task
        sort(a3, t3, q, 1);
#pragma omp task
        sort(a4, t4, n4, 1);
#pragma omp taskwait
#pragma omp task
        merge(a1, q, a2, q, t1, 1);
#pragma omp task
        merge(a3, q, a4, n4, t3, 1);
#pragma omp taskwait
    } else {
        sort(a1, t1, q, 0);
        sort(a2, t2, q, 0);
        sort(a3, t3, q, 0);
        sort(a4, t4, n4, 0);
        merge(a1, q, a2, q, t1, 0);
        merge(a3, q, a4, n4, t3, 0);
    }
    merge(t1, 2 * q, t3, n - 2 * q, a, par);
}

static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static void fingerprint(const elem *a, long n, uint64_t *sum, uint64_t *hash) {
    uint64_t s = 0, h = 0;
    for (long i = 0; i < n; i++) {
        s += (uint64_t)(uint32_t)a[i];
        h += mix((uint64_t)(uint32_t)a[i]);
    }
    *sum = s;
    *hash = h;
}

int main(int argc, char **argv) {
    char inputs[160];
    snprintf(inputs, sizeof inputs, "{\"mergesort\":{\"n\":[%ld,%ld,%ld],\"cutoff\":%ld}}",
             sizes[0], sizes[1], sizes[2], sort_cutoff);
    omp_opts o = {.kernel = "sort", .inputs = inputs};
    omp_bench_parse(argc, argv, &o, usage, variants);
    long n = o.n > 0 ? o.n : sizes[o.input_index];
    if (o.cutoff > 0)
        sort_cutoff = merge_cutoff = o.cutoff;
    if (sort_cutoff < 4)
        sort_cutoff = 4; /* four non-empty quarters */
    elem *a = omp_bench_alloc((size_t)n * sizeof *a), *t = omp_bench_alloc((size_t)n * sizeof *t);
    double times[o.reps];
    int verified = 1;
    for (int r = 0; r < o.reps; r++) {
        uint64_t st = (uint64_t)o.seed * 0x2545F4914F6CDD1DULL + (uint64_t)r;
        for (long i = 0; i < n; i++)
            a[i] = (elem)(uint32_t)omp_bench_rand(&st);
        memset(t, 0, (size_t)n * sizeof *t);
        uint64_t sum0, hash0, sum1, hash1;
        fingerprint(a, n, &sum0, &hash0);
        double t0 = bench_now();
        if (o.seq) {
            sort(a, t, n, 0);
        } else {
#pragma omp parallel
#pragma omp single
            sort(a, t, n, 1);
        }
        times[r] = bench_now() - t0;
        fingerprint(a, n, &sum1, &hash1);
        long bad = 0;
        for (long i = 1; i < n; i++)
            bad += a[i - 1] > a[i];
        if (bad || sum0 != sum1 || hash0 != hash1) {
            fprintf(stderr, "sort: %ld out of order, multiset %s\n", bad,
                    sum0 == sum1 && hash0 == hash1 ? "kept" : "CHANGED");
            verified = 0;
        }
    }
    char fig[128];
    snprintf(fig, sizeof fig, "\"n\":%ld,\"cutoff\":%ld,\"merge_cutoff\":%ld", n, sort_cutoff,
             merge_cutoff);
    omp_bench_result(&o, times, o.reps, verified, fig);
    free(a);
    free(t);
    return verified ? 0 : 1;
}
