/* bench/omp/forkjoin.c -- where an empty parallel region's time goes: the
 * hand-out of the team (how long until each member runs) and the join (from
 * the last member's start until the encountering thread is back).
 *
 *   omp_forkjoin [--regions N] [--rounds R]
 *
 * Each round runs N empty regions (default 20000) at the default team size
 * (OMP_NUM_THREADS). In each, the encountering thread reads the clock before
 * the region (t0) and after it (t1); every member reads it once as it
 * starts (s[i], on a cache line of its own). Per region:
 *
 *   total        t1 - t0
 *   first, last  the earliest and the latest start of members 1..n-1, - t0
 *   join         t1 - the latest start of any member
 *   start[i]     s[i] - t0 per member: a hand-out one member at a time
 *                shows as a slope in i, a tree as steps
 *
 * It prints the medians over all regions of the round with the median
 * total (the round least disturbed), and one JSON line. The clock is
 * CLOCK_MONOTONIC (vDSO, about 20 ns a read, consistent across CPUs): the
 * figures include a read or two, the same for every runtime. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 256

static inline int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct {
    _Alignas(64) int64_t t;
} slot;

static slot start[MAX_THREADS];

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t median64(int64_t *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp64);
    return v[n / 2];
}

typedef struct {
    int64_t total, first, last, join;
    int64_t at[MAX_THREADS];
} figures;

/* One round of n regions: the medians of each figure. */
static void round_of(int n, int threads, int64_t *buf, figures *f) {
    int64_t *tot = buf, *first = buf + n, *last = buf + 2 * n, *join = buf + 3 * n;
    int64_t *at = buf + 4 * n; /* n per member */
    for (int r = 0; r < n; r++) {
        int64_t t0 = now_ns();
#pragma omp parallel
        start[omp_get_thread_num()].t = now_ns();
        int64_t t1 = now_ns();
        int64_t lo = INT64_MAX, hi = INT64_MIN, any = start[0].t;
        for (int i = 1; i < threads; i++) {
            int64_t s = start[i].t;
            lo = s < lo ? s : lo;
            hi = s > hi ? s : hi;
            any = s > any ? s : any;
        }
        for (int i = 0; i < threads; i++)
            at[(size_t)i * n + r] = start[i].t - t0;
        tot[r] = t1 - t0;
        first[r] = threads > 1 ? lo - t0 : 0;
        last[r] = threads > 1 ? hi - t0 : 0;
        join[r] = t1 - any;
    }
    f->total = median64(tot, n);
    f->first = median64(first, n);
    f->last = median64(last, n);
    f->join = median64(join, n);
    for (int i = 0; i < threads; i++)
        f->at[i] = median64(at + (size_t)i * n, n);
}

int main(int argc, char **argv) {
    int n = 20000, rounds = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--regions") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: omp_forkjoin [--regions N] [--rounds R]\n");
            return 2;
        }
    }
    if (n < 1 || n > 10000000 || rounds < 1 || rounds > 1000) {
        fprintf(stderr, "omp_forkjoin: --regions 1..10000000, --rounds 1..1000\n");
        return 2;
    }
    int threads = omp_get_max_threads();
    if (threads > MAX_THREADS) {
        fprintf(stderr, "omp_forkjoin: at most %d threads\n", MAX_THREADS);
        return 2;
    }
    int64_t *buf = malloc(sizeof(int64_t) * (size_t)n * (4 + (size_t)threads));
    figures *f = malloc(sizeof(figures) * (size_t)rounds);
    if (!buf || !f)
        return 1;
#pragma omp parallel
    {
#pragma omp single
        threads = omp_get_num_threads(); /* the team the runtime gives */
    }
    for (int r = 0; r < rounds; r++)
        round_of(n, threads, buf, &f[r]);
    /* The round of the median total. */
    int64_t tot[1000];
    for (int r = 0; r < rounds; r++)
        tot[r] = f[r].total;
    int64_t mid = median64(tot, rounds);
    const figures *m = f;
    for (int r = 0; r < rounds; r++)
        if (f[r].total == mid)
            m = &f[r];
    printf("threads %d: region %.3f us; members start %.3f..%.3f us after t0; join %.3f us "
           "(medians of %d regions, the median of %d rounds)\n",
           threads, m->total / 1e3, m->first / 1e3, m->last / 1e3, m->join / 1e3, n, rounds);
    printf("start by member (us):");
    for (int i = 0; i < threads; i++)
        printf(" %.3f", m->at[i] / 1e3);
    printf("\n{\"threads\": %d, \"region_us\": %.4f, \"first_us\": %.4f, \"last_us\": %.4f, "
           "\"join_us\": %.4f, \"start_us\": [",
           threads, m->total / 1e3, m->first / 1e3, m->last / 1e3, m->join / 1e3);
    for (int i = 0; i < threads; i++)
        printf("%s%.4f", i ? ", " : "", m->at[i] / 1e3);
    printf("], \"regions\": %d, \"rounds\": %d}\n", n, rounds);
    free(buf);
    free(f);
    return 0;
}
