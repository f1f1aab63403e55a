/* bench/omp/fft.c -- recursive radix-2 fast Fourier transform with OpenMP
 * tasks, and its sequential twin.
 *
 *   omp_fft [--input small|medium|large] [--seq] [--n N] [--cutoff C]
 *           [--reps R]
 *
 * X = DFT(x) for N complex doubles (N a power of two), out of place,
 * decimation in time: the transform of the even-indexed and of the
 * odd-indexed elements are two tasks, then the butterflies
 * X[k] = E[k] + w^k O[k], X[k + n/2] = E[k] - w^k O[k] run as tasks over
 * chunks of C elements. Below C elements (default 2048) everything is
 * sequential; the twiddle factors w^j = exp(-2 pi i j / N) come from one
 * table. The twin is the same recursion without tasks.
 * Verification: Parseval (sum |X|^2 = N sum |x|^2), X[0] = sum x, and four
 * bins computed directly as sum x[k] w^(f k), all to 1e-9 relative. */
#include "omp_bench.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "omp_fft [--input small|medium|large] [--seq] [--n N] [--cutoff C] [--reps R]";
static const char *const variants[] = {"recursive", NULL};

static const long sizes[3] = {1L << 18, 1L << 22, 1L << 25};
static long cutoff = 2048;

typedef double complex cplx;

static cplx *W;  /* W[j] = exp(-2 pi i j / N), j < N/2 */
static long N;

static void butterflies(cplx *out, long lo, long hi, long half, long step) {
    for (long k = lo; k < hi; k++) {
        cplx t = W[k * step] * out[k + half];
        out[k + half] = out[k] - t;
        out[k] += t;
    }
}

/* out[0..n) = DFT of in[0], in[s], ..., in[(n-1) s]. */
static void fft(const cplx *in, cplx *out, long n, long s, int par) {
    if (n == 1) {
        out[0] = in[0];
        return;
    }
    long half = n / 2, step = N / n;
    if (par && n > cutoff) {
#pragma omp task
        fft(in, out, half, 2 * s, 1);
#pragma omp task
        fft(in + s, out + half, half, 2 * s, 1);
#pragma omp taskwait
        for (long lo = 0; lo < half; lo += cutoff) {
            long hi = lo + cutoff < half ? lo + cutoff : half;
#pragma omp task
            butterflies(out, lo, hi, half, step);
        }
#pragma omp taskwait
    } else {
        fft(in, out, half, 2 * s, 0);
        fft(in + s, out + half, half, 2 * s, 0);
        butterflies(out, 0, half, half, step);
    }
}

int main(int argc, char **argv) {
    omp_opts o = {.kernel = "fft"};
    omp_bench_parse(argc, argv, &o, usage, variants);
    N = o.n > 0 ? o.n : sizes[o.input_index];
    if (o.cutoff > 0)
        cutoff = o.cutoff;
    if (N < 2 || (N & (N - 1)))
        bench_usage_error(usage, "--n must be a power of two, at least 2", NULL);
    cplx *x = omp_bench_alloc((size_t)N * sizeof *x), *X = omp_bench_alloc((size_t)N * sizeof *X);
    W = omp_bench_alloc((size_t)(N / 2) * sizeof *W);
    for (long j = 0; j < N / 2; j++) {
        double a = -2.0 * M_PI * (double)j / (double)N;
        W[j] = cos(a) + I * sin(a);
    }
    uint64_t st = (uint64_t)o.seed;
    long double e_in = 0;
    cplx sum = 0;
    for (long k = 0; k < N; k++) {
        double re = omp_bench_unit(&st) - 0.5, im = omp_bench_unit(&st) - 0.5;
        x[k] = re + I * im;
        e_in += (long double)re * re + (long double)im * im;
        sum += x[k];
    }
    double times[o.reps];
    int verified = 1;
    double worst = 0;
    for (int r = 0; r < o.reps; r++) {
        memset(X, 0, (size_t)N * sizeof *X);
        double t0 = bench_now();
        if (o.seq) {
            fft(x, X, N, 1, 0);
        } else {
#pragma omp parallel
#pragma omp single
            fft(x, X, N, 1, 1);
        }
        times[r] = bench_now() - t0;
        long double e_out = 0;
        for (long k = 0; k < N; k++)
            e_out += (long double)creal(X[k]) * creal(X[k]) + (long double)cimag(X[k]) * cimag(X[k]);
        double errs[6];
        errs[0] = (double)fabsl(e_out - (long double)N * e_in) / (double)((long double)N * e_in);
        errs[1] = cabs(X[0] - sum) / (cabs(sum) + sqrt((double)N));
        uint64_t bs = 77;
        for (int b = 0; b < 4; b++) {
            long f = (long)(omp_bench_rand(&bs) % (uint64_t)N);
            long double re = 0, im = 0;
            for (long k = 0, j = 0; k < N; k++, j = j + f >= N ? j + f - N : j + f) {
                /* j = f k mod N */
                cplx w = j < N / 2 ? W[j] : -W[j - N / 2];
                cplx t = x[k] * w;
                re += creal(t);
                im += cimag(t);
            }
            cplx direct = (double)re + I * (double)im;
            errs[2 + b] = cabs(X[f] - direct) / sqrt((double)N);
        }
        for (int k = 0; k < 6; k++) {
            if (errs[k] > worst)
                worst = errs[k];
            if (!(errs[k] <= 1e-9)) {
                fprintf(stderr, "fft: check %d off by %g (relative)\n", k, errs[k]);
                verified = 0;
            }
        }
    }
    char fig[128];
    snprintf(fig, sizeof fig, "\"n\":%ld,\"cutoff\":%ld,\"max_rel_error\":%.3g", N, cutoff, worst);
    omp_bench_result(&o, times, o.reps, verified, fig);
    free(x);
    free(X);
    free(W);
    return verified ? 0 : 1;
}
