/* bench/omp/alignment.c -- all-pairs protein sequence alignment by dynamic
 * programming (the BOTS Alignment shape) with OpenMP tasks, two ways of
 * making them, and its sequential twin.
 *
 *   omp_alignment [--input small|medium|large] [--variant single|for] [--seq]
 *                 [--n SEQUENCES] [--cutoff LENGTH] [--reps R]
 *
 * N sequences over the 20 amino acids, of lengths between L/2 and L, drawn
 * from a seeded generator. Every pair (i < j) gets its global alignment
 * score with affine gaps (Gotoh's three-state recurrence: gap open 10,
 * extend 1) and a symmetric substitution table made up here -- one task per
 * pair, O(len_i len_j) each, no task waits inside.
 * `single`: one thread creates all pair tasks; `for`: the team shares the
 * outer loop (dynamic schedule) and each thread creates the tasks of its
 * rows. Verification: 24 sampled pairs recomputed sequentially, and the sum
 * of all scores equals the twin's (a table for the standard inputs,
 * otherwise the twin runs first). */
#include "omp_bench.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static const char usage[] = "omp_alignment [--input small|medium|large] [--variant single|for] "
                            "[--seq] [--n SEQUENCES] [--cutoff LENGTH] [--reps R]";
static const char *const variants[] = {"single", "for", NULL};

static const int nseq_of[3] = {20, 100, 100};
static const int len_of[3] = {200, 400, 1000};
/* The twin's score sums for the standard inputs (seed 1); 0: not recorded,
 * the twin runs first. */
static const long long expected[3] = {-15422, -752197, 0};

enum { GAP_OPEN = 10, GAP_EXTEND = 1, NEG = INT_MIN / 4 };

static int subst[20][20];

static void make_subst(void) {
    for (int a = 0; a < 20; a++)
        for (int b = 0; b <= a; b++) {
            int s = a == b ? 4 + a % 5 : -1 - (a * 7 + b * 3) % 4 + ((a ^ b) % 5 == 0) * 3;
            subst[a][b] = subst[b][a] = s;
        }
}

typedef struct seqs {
    int n;
    int *len;
    unsigned char **s;
} seqs;

static seqs make_seqs(int n, int maxlen, uint64_t seed) {
    seqs q = {n, omp_bench_alloc((size_t)n * sizeof(int)),
              omp_bench_alloc((size_t)n * sizeof(unsigned char *))};
    uint64_t st = seed * 7919;
    for (int i = 0; i < n; i++) {
        q.len[i] = maxlen / 2 + (int)(omp_bench_rand(&st) % (uint64_t)(maxlen / 2 + 1));
        q.s[i] = omp_bench_alloc((size_t)q.len[i]);
        for (int k = 0; k < q.len[i]; k++)
            q.s[i][k] = (unsigned char)(omp_bench_rand(&st) % 20);
    }
    return q;
}

static int max2(int a, int b) { return a > b ? a : b; }

/* Gotoh: H best ending anywhere, E ending with a gap in x, F in y. */
static int align(const unsigned char *x, int nx, const unsigned char *y, int ny) {
    int *H = omp_bench_alloc((size_t)(ny + 1) * sizeof(int));
    int *E = omp_bench_alloc((size_t)(ny + 1) * sizeof(int));
    H[0] = 0;
    E[0] = NEG;
    for (int j = 1; j <= ny; j++) {
        H[j] = -GAP_OPEN - (j - 1) * GAP_EXTEND;
        E[j] = NEG;
    }
    for (int i = 1; i <= nx; i++) {
        int diag = H[0];
        H[0] = -GAP_OPEN - (i - 1) * GAP_EXTEND;
        int F = NEG;
        const int *row = subst[x[i - 1]];
        for (int j = 1; j <= ny; j++) {
            E[j] = max2(E[j] - GAP_EXTEND, H[j] - GAP_OPEN);
            F = max2(F - GAP_EXTEND, H[j - 1] - GAP_OPEN);
            int h = max2(diag + row[y[j - 1]], max2(E[j], F));
            diag = H[j];
            H[j] = h;
        }
    }
    int score = H[ny];
    free(H);
    free(E);
    return score;
}

static void pairs_seq(const seqs *q, int *score) {
    for (int i = 0; i < q->n; i++)
        for (int j = i + 1; j < q->n; j++)
            score[i * q->n + j] = align(q->s[i], q->len[i], q->s[j], q->len[j]);
}

static void pairs_single(const seqs *q, int *score) {
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < q->n; i++)
        for (int j = i + 1; j < q->n; j++) {
#pragma omp task firstprivate(i, j)
            score[i * q->n + j] = align(q->s[i], q->len[i], q->s[j], q->len[j]);
        }
}

static void pairs_for(const seqs *q, int *score) {
#pragma omp parallel
#pragma omp for schedule(dynamic)
    for (int i = 0; i < q->n; i++)
        for (int j = i + 1; j < q->n; j++) {
#pragma omp task firstprivate(i, j)
            score[i * q->n + j] = align(q->s[i], q->len[i], q->s[j], q->len[j]);
        }
}

int main(int argc, char **argv) {
    omp_opts o = {.kernel = "alignment"};
    omp_bench_parse(argc, argv, &o, usage, variants);
    int n = o.n > 1 ? (int)o.n : nseq_of[o.input_index];
    int len = o.cutoff > 1 ? (int)o.cutoff : len_of[o.input_index];
    make_subst();
    seqs q = make_seqs(n, len, (uint64_t)o.seed);
    int *score = omp_bench_alloc((size_t)n * n * sizeof(int));
    double times[o.reps];
    int verified = 1;
    long long total = 0, total_seq = 0;
    for (int r = 0; r < o.reps; r++) {
        memset(score, 0, (size_t)n * n * sizeof(int));
        double t0 = bench_now();
        if (o.seq)
            pairs_seq(&q, score);
        else if (!strcmp(o.variant, "single"))
            pairs_single(&q, score);
        else
            pairs_for(&q, score);
        times[r] = bench_now() - t0;
        total = 0;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                total += score[i * n + j];
        uint64_t st = 4242;
        for (int k = 0; k < 24; k++) {
            int i = (int)(omp_bench_rand(&st) % (uint64_t)n), j = (int)(omp_bench_rand(&st) % (uint64_t)n);
            if (i == j)
                continue;
            if (i > j) {
                int t = i;
                i = j;
                j = t;
            }
            int want = align(q.s[i], q.len[i], q.s[j], q.len[j]);
            if (score[i * n + j] != want) {
                fprintf(stderr, "alignment: pair (%d,%d) scored %d, expected %d\n", i, j,
                        score[i * n + j], want);
                verified = 0;
            }
        }
    }
    total_seq = o.n <= 1 && o.cutoff <= 1 && o.seed == 1 ? expected[o.input_index] : 0;
    if (!total_seq) {
        int *ref = omp_bench_alloc((size_t)n * n * sizeof(int));
        pairs_seq(&q, ref);
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                total_seq += ref[i * n + j];
        free(ref);
    }
    if (total_seq != total) {
        fprintf(stderr, "alignment: score sum %lld, the twin's %lld\n", total, total_seq);
        verified = 0;
    }
    char fig[160];
    snprintf(fig, sizeof fig, "\"sequences\":%d,\"max_length\":%d,\"pairs\":%d,\"score_sum\":%lld",
             n, len, n * (n - 1) / 2, total);
    omp_bench_result(&o, times, o.reps, verified, fig);
    return verified ? 0 : 1;
}
