/* bench/omp/strassen.c -- dense matrix multiply by Strassen's method with
 * OpenMP tasks, and its sequential twin.
 *
 *   omp_strassen [--input small|medium|large] [--seq] [--n N] [--cutoff C]
 *                [--reps R]
 *
 * C = A B for n x n doubles (n a power of two). Above the cut-off (64) each
 * level forms the seven Strassen products, each a task with its own
 * temporaries:
 *   M1 = (A11 + A22)(B11 + B22)   M5 = (A11 + A12) B22
 *   M2 = (A21 + A22) B11          M6 = (A21 - A11)(B11 + B12)
 *   M3 = A11 (B12 - B22)          M7 = (A12 - A22)(B21 + B22)
 *   M4 = A22 (B21 - B11)
 * waits, and combines C11 = M1 + M4 - M5 + M7, C12 = M3 + M5,
 * C21 = M2 + M4, C22 = M1 - M2 + M3 + M6. At the cut-off a plain i-k-j
 * loop multiplies. The twin runs the same recursion without tasks.
 * Verification: 256 sampled elements against a direct dot product
 * (relative tolerance 1e-9 of the sum of |terms|). */
#include "omp_bench.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "omp_strassen [--input small|medium|large] [--seq] [--n N] [--cutoff C] [--reps R]";
static const char *const variants[] = {"tasks", NULL};

static const long sizes[3] = {256, 2048, 8192};
static long cutoff = 64;

/* An n x n view with leading dimension ld. */
typedef struct mat {
    double *p;
    long ld;
} mat;

static mat sub(mat m, long n, int r, int c) {
    return (mat){m.p + (long)r * (n / 2) * m.ld + (long)c * (n / 2), m.ld};
}

static mat fresh(long n) { return (mat){omp_bench_alloc((size_t)(n * n) * sizeof(double)), n}; }

/* d = a + s b, elementwise (s = +1 or -1). */
static void add(mat d, mat a, mat b, double s, long n) {
    for (long i = 0; i < n; i++)
        for (long j = 0; j < n; j++)
            d.p[i * d.ld + j] = a.p[i * a.ld + j] + s * b.p[i * b.ld + j];
}

static void base(mat c, mat a, mat b, long n) {
    for (long i = 0; i < n; i++) {
        double *ci = c.p + i * c.ld;
        for (long j = 0; j < n; j++)
            ci[j] = 0;
        for (long k = 0; k < n; k++) {
            double aik = a.p[i * a.ld + k];
            const double *bk = b.p + k * b.ld;
            for (long j = 0; j < n; j++)
                ci[j] += aik * bk[j];
        }
    }
}

static void strassen(mat c, mat a, mat b, long n, int par);

/* M = (x + sx y)(u + su v); y or v may be absent (p == NULL). */
static void product(mat m, mat x, mat y, double sx, mat u, mat v, double su, long h, int par) {
    mat l = x, r = u;
    if (y.p) {
        l = fresh(h);
        add(l, x, y, sx, h);
    }
    if (v.p) {
        r = fresh(h);
        add(r, u, v, su, h);
    }
    strassen(m, l, r, h, par);
    if (y.p)
        free(l.p);
    if (v.p)
        free(r.p);
}

static void strassen(mat c, mat a, mat b, long n, int par) {
    if (n <= cutoff) {
        base(c, a, b, n);
        return;
    }
    long h = n / 2;
    mat a11 = sub(a, n, 0, 0), a12 = sub(a, n, 0, 1), a21 = sub(a, n, 1, 0), a22 = sub(a, n, 1, 1);
    mat b11 = sub(b, n, 0, 0), b12 = sub(b, n, 0, 1), b21 = sub(b, n, 1, 0), b22 = sub(b, n, 1, 1);
    mat m[7], none = {NULL, 0};
    for (int k = 0; k < 7; k++)
        m[k] = fresh(h);
    if (par) {
#pragma omp task
        product(m[0], a11, a22, 1, b11, b22, 1, h, 1);
#pragma omp task
        product(m[1], a21, a22, 1, b11, none, 1, h, 1);
#pragma omp task
        product(m[2], a11, none, 1, b12, b22, -1, h, 1);
#pragma omp task
        product(m[3], a22, none, 1, b21, b11, -1, h, 1);
#pragma omp task
        product(m[4], a11, a12, 1, b22, none, 1, h, 1);
#pragma omp task
        product(m[5], a21, a11, -1, b11, b12, 1, h, 1);
#pragma omp task
        product(m[6], a12, a22, -1, b21, b22, 1, h, 1);
#pragma omp taskwait
    } else {
        product(m[0], a11, a22, 1, b11, b22, 1, h, 0);
        product(m[1], a21, a22, 1, b11, none, 1, h, 0);
        product(m[2], a11, none, 1, b12, b22, -1, h, 0);
        product(m[3], a22, none, 1, b21, b11, -1, h, 0);
        product(m[4], a11, a12, 1, b22, none, 1, h, 0);
        product(m[5], a21, a11, -1, b11, b12, 1, h, 0);
        product(m[6], a12, a22, -1, b21, b22, 1, h, 0);
    }
    mat c11 = sub(c, n, 0, 0), c12 = sub(c, n, 0, 1), c21 = sub(c, n, 1, 0), c22 = sub(c, n, 1, 1);
    for (long i = 0; i < h; i++)
        for (long j = 0; j < h; j++) {
            long k = i * h + j;
            double m1 = m[0].p[k], m2 = m[1].p[k], m3 = m[2].p[k], m4 = m[3].p[k];
            double m5 = m[4].p[k], m6 = m[5].p[k], m7 = m[6].p[k];
            c11.p[i * c.ld + j] = m1 + m4 - m5 + m7;
            c12.p[i * c.ld + j] = m3 + m5;
            c21.p[i * c.ld + j] = m2 + m4;
            c22.p[i * c.ld + j] = m1 - m2 + m3 + m6;
        }
    for (int k = 0; k < 7; k++)
        free(m[k].p);
}

int main(int argc, char **argv) {
    omp_opts o = {.kernel = "strassen"};
    omp_bench_parse(argc, argv, &o, usage, variants);
    long n = o.n > 0 ? o.n : sizes[o.input_index];
    if (o.cutoff > 0)
        cutoff = o.cutoff;
    if (n & (n - 1))
        bench_usage_error(usage, "--n must be a power of two", NULL);
    mat a = fresh(n), b = fresh(n), c = fresh(n);
    uint64_t st = (uint64_t)o.seed;
    for (long i = 0; i < n * n; i++) {
        a.p[i] = omp_bench_unit(&st) * 2 - 1;
        b.p[i] = omp_bench_unit(&st) * 2 - 1;
    }
    double times[o.reps];
    int verified = 1;
    double worst = 0;
    for (int r = 0; r < o.reps; r++) {
        memset(c.p, 0, (size_t)(n * n) * sizeof(double));
        double t0 = bench_now();
        if (o.seq) {
            strassen(c, a, b, n, 0);
        } else {
#pragma omp parallel
#pragma omp single
            strassen(c, a, b, n, 1);
        }
        times[r] = bench_now() - t0;
        uint64_t vs = 99;
        for (int k = 0; k < 256; k++) {
            long i = (long)(omp_bench_rand(&vs) % (uint64_t)n);
            long j = (long)(omp_bench_rand(&vs) % (uint64_t)n);
            double s = 0, mag = 0;
            for (long q = 0; q < n; q++) {
                s += a.p[i * n + q] * b.p[q * n + j];
                mag += fabs(a.p[i * n + q] * b.p[q * n + j]);
            }
            double err = fabs(s - c.p[i * n + j]) / (mag + 1e-300);
            if (err > worst)
                worst = err;
            if (err > 1e-9) {
                fprintf(stderr, "strassen: C[%ld][%ld] = %.17g, expected %.17g\n", i, j,
                        c.p[i * n + j], s);
                verified = 0;
                break;
            }
        }
    }
    char fig[128];
    snprintf(fig, sizeof fig, "\"n\":%ld,\"cutoff\":%ld,\"max_rel_error\":%.3g", n, cutoff, worst);
    omp_bench_result(&o, times, o.reps, verified, fig);
    free(a.p);
    free(b.p);
    free(c.p);
    return verified ? 0 : 1;
}
