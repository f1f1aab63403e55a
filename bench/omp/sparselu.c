/* bench/omp/sparselu.c -- LU factorisation of a sparse block matrix (the BOTS
 * SparseLU shape) with OpenMP tasks, two ways of making them, and its twin.
 *
 *   omp_sparselu [--input small|medium|large] [--variant single|for] [--seq]
 *                [--n BLOCKS] [--cutoff BLOCKSIZE] [--reps R]
 *
 * The matrix is NB x NB blocks of BS x BS floats; a block is either absent
 * (all zero, NULL) or stored. For each diagonal step kk:
 *   lu0   factor the diagonal block in place (no pivoting);
 *   fwd   each stored block right of it: solve with the unit lower factor;
 *   bdiv  each stored block below it: solve with the upper factor;
 *   bmod  each pair (ii, jj) of those: A[ii][jj] -= A[ii][kk] * A[kk][jj],
 *         allocating A[ii][jj] if it was absent (fill-in).
 * `single`: one thread creates every task (fwd and bdiv, wait, bmod, wait).
 * `for`: the whole team creates them from work-shared loops, the loops'
 * barriers being the waits.
 *
 * The pattern and the values are generated from the block indices, and the
 * diagonal dominates each row, so the factorisation is stable without
 * pivoting. Verification: (L U)[i][j] == A[i][j] for 512 sampled elements
 * (double accumulation, relative tolerance 1e-3), which catches a missing
 * or duplicated update; and the stored-block count after fill-in. */
#include "omp_bench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char usage[] = "omp_sparselu [--input small|medium|large] [--variant single|for] "
                            "[--seq] [--n BLOCKS] [--cutoff BLOCKSIZE] [--reps R]";
static const char *const variants[] = {"single", "for", NULL};

static const int nb_of[3] = {20, 40, 100};
static const int bs_of[3] = {32, 64, 100};

static int NB, BS;

static int present(int ii, int jj) {
    return ii == jj || ii == jj + 1 || jj == ii + 1 || (ii * 7 + jj * 13) % 5 == 0;
}

static float *new_block(int zero) {
    float *b = omp_bench_alloc((size_t)BS * BS * sizeof *b);
    if (zero)
        memset(b, 0, (size_t)BS * BS * sizeof *b);
    return b;
}

static float value(int i, int j) { /* the element at global (i, j) */
    uint64_t s = (uint64_t)i * 0x100000001b3ULL ^ ((uint64_t)j << 21) ^ 0xabcdefULL;
    double v = omp_bench_unit(&s) * 2.0 - 1.0;
    return (float)(i == j ? v + (double)NB * BS : v);
}

static float **genmat(void) {
    float **A = omp_bench_alloc((size_t)NB * NB * sizeof *A);
    for (int ii = 0; ii < NB; ii++)
        for (int jj = 0; jj < NB; jj++) {
            A[ii * NB + jj] = NULL;
            if (!present(ii, jj))
                continue;
            float *b = new_block(0);
            for (int i = 0; i < BS; i++)
                for (int j = 0; j < BS; j++)
                    b[i * BS + j] = value(ii * BS + i, jj * BS + j);
            A[ii * NB + jj] = b;
        }
    return A;
}

static void lu0(float *d) {
    for (int k = 0; k < BS; k++)
        for (int i = k + 1; i < BS; i++) {
            d[i * BS + k] /= d[k * BS + k];
            float l = d[i * BS + k];
            for (int j = k + 1; j < BS; j++)
                d[i * BS + j] -= l * d[k * BS + j];
        }
}

static void fwd(const float *d, float *c) {
    for (int k = 0; k < BS; k++)
        for (int i = k + 1; i < BS; i++) {
            float l = d[i * BS + k];
            for (int j = 0; j < BS; j++)
                c[i * BS + j] -= l * c[k * BS + j];
        }
}

static void bdiv(const float *d, float *r) {
    for (int i = 0; i < BS; i++)
        for (int k = 0; k < BS; k++) {
            r[i * BS + k] /= d[k * BS + k];
            float l = r[i * BS + k];
            for (int j = k + 1; j < BS; j++)
                r[i * BS + j] -= l * d[k * BS + j];
        }
}

static void bmod(const float *r, const float *c, float *x) {
    for (int i = 0; i < BS; i++)
        for (int k = 0; k < BS; k++) {
            float l = r[i * BS + k];
            for (int j = 0; j < BS; j++)
                x[i * BS + j] -= l * c[k * BS + j];
        }
}

#define BLK(ii, jj) A[(ii) * NB + (jj)]

static void lu_seq(float **A) {
    for (int kk = 0; kk < NB; kk++) {
        lu0(BLK(kk, kk));
        for (int jj = kk + 1; jj < NB; jj++)
            if (BLK(kk, jj))
                fwd(BLK(kk, kk), BLK(kk, jj));
        for (int ii = kk + 1; ii < NB; ii++)
            if (BLK(ii, kk))
                bdiv(BLK(kk, kk), BLK(ii, kk));
        for (int ii = kk + 1; ii < NB; ii++)
            if (BLK(ii, kk))
                for (int jj = kk + 1; jj < NB; jj++)
                    if (BLK(kk, jj)) {
                        if (!BLK(ii, jj))
                            BLK(ii, jj) = new_block(1);
                        bmod(BLK(ii, kk), BLK(kk, jj), BLK(ii, jj));
                    }
    }
}

static void lu_single(float **A) {
#pragma omp parallel
#pragma omp single
    for (int kk = 0; kk < NB; kk++) {
        lu0(BLK(kk, kk));
        for (int jj = kk + 1; jj < NB; jj++)
            if (BLK(kk, jj)) {
#pragma omp task firstprivate(kk, jj)
                fwd(BLK(kk, kk), BLK(kk, jj));
            }
        for (int ii = kk + 1; ii < NB; ii++)
            if (BLK(ii, kk)) {
#pragma omp task firstprivate(kk, ii)
                bdiv(BLK(kk, kk), BLK(ii, kk));
            }
#pragma omp taskwait
        for (int ii = kk + 1; ii < NB; ii++)
            if (BLK(ii, kk))
                for (int jj = kk + 1; jj < NB; jj++)
                    if (BLK(kk, jj)) {
                        if (!BLK(ii, jj))
                            BLK(ii, jj) = new_block(1);
#pragma omp task firstprivate(kk, ii, jj)
                        bmod(BLK(ii, kk), BLK(kk, jj), BLK(ii, jj));
                    }
#pragma omp taskwait
    }
}

static void lu_for(float **A) {
#pragma omp parallel
    for (int kk = 0; kk < NB; kk++) {
#pragma omp single
        lu0(BLK(kk, kk));
        /* The single's barrier: every thread sees the factored diagonal. */
#pragma omp for nowait
        for (int jj = kk + 1; jj < NB; jj++)
            if (BLK(kk, jj)) {
#pragma omp task firstprivate(kk, jj)
                fwd(BLK(kk, kk), BLK(kk, jj));
            }
#pragma omp for
        for (int ii = kk + 1; ii < NB; ii++)
            if (BLK(ii, kk)) {
#pragma omp task firstprivate(kk, ii)
                bdiv(BLK(kk, kk), BLK(ii, kk));
            }
        /* That loop's barrier also completes every task created before it. */
#pragma omp for
        for (int ii = kk + 1; ii < NB; ii++)
            if (BLK(ii, kk))
                for (int jj = kk + 1; jj < NB; jj++)
                    if (BLK(kk, jj)) {
                        if (!BLK(ii, jj)) /* row ii belongs to this thread alone */
                            BLK(ii, jj) = new_block(1);
#pragma omp task firstprivate(kk, ii, jj)
                        bmod(BLK(ii, kk), BLK(kk, jj), BLK(ii, jj));
                    }
    }
}

static double elem(float **A, int i, int j) {
    const float *b = BLK(i / BS, j / BS);
    return b ? b[(i % BS) * BS + (j % BS)] : 0.0;
}

/* (L U)[i][j], L unit lower and U upper, both stored in A. */
static double lu_product(float **A, int i, int j, double *mag) {
    double s = 0, m = 0;
    int kmax = i < j ? i : j;
    for (int k = 0; k <= kmax; k++) {
        double l = k == i ? 1.0 : elem(A, i, k);
        double u = elem(A, k, j);
        s += l * u;
        m += fabs(l * u);
    }
    *mag = m;
    return s;
}

static int verify(float **A, long *stored) {
    int n = NB * BS, bad = 0;
    uint64_t st = 12345;
    for (int k = 0; k < 512; k++) {
        int i = (int)(omp_bench_rand(&st) % (uint64_t)n), j = (int)(omp_bench_rand(&st) % (uint64_t)n);
        if (k < 8) /* the corners and the diagonal end, where errors pile up */
            i = (k & 1) ? n - 1 : k, j = (k & 2) ? n - 1 : k;
        double mag, p = lu_product(A, i, j, &mag);
        double want = present(i / BS, j / BS) ? value(i, j) : 0.0;
        if (fabs(p - want) > 1e-3 * (1.0 + mag)) {
            if (bad++ < 5)
                fprintf(stderr, "sparselu: (LU)[%d][%d] = %g, A = %g\n", i, j, p, want);
        }
    }
    long s = 0;
    for (int k = 0; k < NB * NB; k++)
        s += A[k] != NULL;
    *stored = s;
    return bad == 0;
}

int main(int argc, char **argv) {
    omp_opts o = {.kernel = "sparselu"};
    omp_bench_parse(argc, argv, &o, usage, variants);
    NB = o.n > 0 ? (int)o.n : nb_of[o.input_index];
    BS = o.cutoff > 0 ? (int)o.cutoff : bs_of[o.input_index];
    double times[o.reps];
    int verified = 1;
    long stored = 0, stored0 = 0, stored_seq = -1;
    for (int r = 0; r < o.reps; r++) {
        float **A = genmat();
        stored0 = 0;
        for (int k = 0; k < NB * NB; k++)
            stored0 += A[k] != NULL;
        double t0 = bench_now();
        if (o.seq)
            lu_seq(A);
        else if (!strcmp(o.variant, "single"))
            lu_single(A);
        else
            lu_for(A);
        times[r] = bench_now() - t0;
        if (!verify(A, &stored))
            verified = 0;
        if (stored_seq < 0) { /* fill-in depends only on the pattern: count it symbolically */
            char *p = omp_bench_alloc((size_t)NB * NB);
            for (int ii = 0; ii < NB; ii++)
                for (int jj = 0; jj < NB; jj++)
                    p[ii * NB + jj] = (char)present(ii, jj);
            for (int kk = 0; kk < NB; kk++)
                for (int ii = kk + 1; ii < NB; ii++)
                    for (int jj = kk + 1; jj < NB; jj++)
                        if (p[ii * NB + kk] && p[kk * NB + jj])
                            p[ii * NB + jj] = 1;
            stored_seq = 0;
            for (int k = 0; k < NB * NB; k++)
                stored_seq += p[k];
            free(p);
        }
        if (stored != stored_seq) {
            fprintf(stderr, "sparselu: %ld blocks after fill-in, expected %ld\n", stored,
                    stored_seq);
            verified = 0;
        }
        for (int k = 0; k < NB * NB; k++)
            free(A[k]);
        free(A);
    }
    char fig[160];
    snprintf(fig, sizeof fig, "\"blocks\":%d,\"block_size\":%d,\"stored_before\":%ld,"
             "\"stored_after\":%ld", NB, BS, stored0, stored);
    omp_bench_result(&o, times, o.reps, verified, fig);
    return verified ? 0 : 1;
}
