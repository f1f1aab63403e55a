/* libomp's atomic entry points that clang leaves to the runtime's library
 * and older or other compilers (icc, ifort) call, called directly by a
 * clang program (clang build only: libgomp has none of them), under the
 * system libomp and herd's libomp.so.5, from every thread of a team at
 * once, each case with a result that only holds if every update was
 * atomic:
 * - the reversed captures (x = rhs OP x; v = x), named _cpt_rev as libomp
 *   names them: x alternates between two values, so after an even number
 *   of updates it is back, and half of the captures saw each value;
 * - float _Complex's capture and swap, which return through a pointer;
 * - the mixed-type forms (an integer or float operand, a double rhs);
 * - the generic __kmpc_atomic_N, which calls the compiler's function.
 * kmp_exports.sh --exact (omp.kmp_atomic.exports) checks that herd exports libomp's set exactly. */
#include "check_omp.h"

#include <complex.h>
#include <stdint.h>

typedef struct {
    int32_t reserved_1, flags, reserved_2, reserved_3;
    const char *psource;
} ident_t;
static ident_t loc = {0, 2, 0, 0, ";test_kmp_atomic.c;main;0;0;;"};

int __kmpc_global_thread_num(ident_t *);
int32_t __kmpc_atomic_fixed4_sub_cpt_rev(ident_t *, int, int32_t *, int32_t, int);
double __kmpc_atomic_float8_div_cpt_rev(ident_t *, int, double *, double, int);
signed char __kmpc_atomic_fixed1_shl_cpt_rev(ident_t *, int, signed char *, signed char, int);
void __kmpc_atomic_fixed4u_div_rev(ident_t *, int, uint32_t *, uint32_t);
uint64_t __kmpc_atomic_fixed8u_shr_cpt(ident_t *, int, uint64_t *, uint64_t, int);
void __kmpc_atomic_cmplx4_add_cpt(ident_t *, int, float _Complex *, float _Complex,
                                  float _Complex *, int);
void __kmpc_atomic_cmplx4_sub_cpt_rev(ident_t *, int, float _Complex *, float _Complex,
                                      float _Complex *, int);
void __kmpc_atomic_cmplx4_swp(ident_t *, int, float _Complex *, float _Complex, float _Complex *);
double _Complex __kmpc_atomic_cmplx8_sub_cpt_rev(ident_t *, int, double _Complex *, double _Complex,
                                                 int);
void __kmpc_atomic_fixed4_mul_float8(ident_t *, int, int32_t *, double);
void __kmpc_atomic_fixed8_div_float8(ident_t *, int, int64_t *, double);
void __kmpc_atomic_float4_add_float8(ident_t *, int, float *, double);
void __kmpc_atomic_cmplx4_mul_cmplx8(ident_t *, int, float _Complex *, double _Complex);
void __kmpc_atomic_4(ident_t *, int, void *, void *, void (*)(void *, void *, void *));
void __kmpc_atomic_16(ident_t *, int, void *, void *, void (*)(void *, void *, void *));

#define THREADS 4
#define EACH 500 /* updates per thread: THREADS * EACH is even */
#define TOTAL (THREADS * EACH)

static void add_i32(void *out, void *a, void *b) {
    *(int32_t *)out = *(int32_t *)a + *(int32_t *)b;
}

typedef struct {
    int64_t a, b;
} pair;
static void add_pair(void *out, void *x, void *y) {
    pair r = {((pair *)x)->a + ((pair *)y)->a, ((pair *)x)->b + ((pair *)y)->b};
    *(pair *)out = r;
}

/* x = 7 - x from 100: the captured new values alternate -93, 100. */
static void reversed(void) {
    int32_t x = 100;
    double d = 4.0;
    signed char c = 1;
    uint32_t u = 3;
    long neg = 0, quarter = 0, shifted = 0, bad = 0;
#pragma omp parallel num_threads(THREADS) reduction(+ : neg, quarter, shifted, bad)
    {
        int g = __kmpc_global_thread_num(&loc);
        for (int i = 0; i < EACH; i++) {
            int32_t v = __kmpc_atomic_fixed4_sub_cpt_rev(&loc, g, &x, 7, 1);
            neg += v == -93;
            bad += v != -93 && v != 100;
            double o = __kmpc_atomic_float8_div_cpt_rev(&loc, g, &d, 1.0, 0); /* the old */
            quarter += o == 0.25;
            bad += o != 0.25 && o != 4.0;
            /* c = 0 << c: 0 (the operands the other way round, c << 0,
             * would keep the 1 it starts with). */
            signed char s = __kmpc_atomic_fixed1_shl_cpt_rev(&loc, g, &c, 0, 1);
            shifted += s == 0;
            __kmpc_atomic_fixed4u_div_rev(&loc, g, &u, 12); /* 3 <-> 4 */
        }
    }
    CHECK(bad == 0);
    CHECK(x == 100 && neg == TOTAL / 2);
    CHECK(d == 4.0 && quarter == TOTAL / 2);
    CHECK(c == 0 && shifted == TOTAL);
    CHECK(u == 3);
    /* An unsigned shift, captured: 2^63 >> 1 per update, then 0 stays 0. */
    uint64_t big = UINT64_C(1) << 63;
    uint64_t last = __kmpc_atomic_fixed8u_shr_cpt(&loc, __kmpc_global_thread_num(&loc), &big, 1, 1);
    CHECK(last == UINT64_C(1) << 62 && big == last);
}

/* float _Complex through *out: the k-th addition of 1+2i captures k+2ki,
 * so the captured real parts sum to 1 + 2 + ... + TOTAL. */
static void complex4(void) {
    float _Complex x = 0, s = 0;
    double sum = 0, swapped = 0;
    double _Complex y = 5.0 + 1.0 * I;
    long bad = 0;
#pragma omp parallel num_threads(THREADS) reduction(+ : sum, swapped, bad)
    {
        int g = __kmpc_global_thread_num(&loc);
        int me = omp_get_thread_num();
        for (int i = 0; i < EACH; i++) {
            float _Complex out = -1;
            __kmpc_atomic_cmplx4_add_cpt(&loc, g, &x, 1.0f + 2.0f * I, &out, 1);
            sum += crealf(out);
            bad += cimagf(out) != 2 * crealf(out);
            float _Complex old = -1;
            __kmpc_atomic_cmplx4_swp(&loc, g, &s, (float)(me * EACH + i + 1), &old);
            swapped += crealf(old);
            double _Complex v = __kmpc_atomic_cmplx8_sub_cpt_rev(&loc, g, &y, 10.0 + 2.0 * I, 1);
            bad += v != 5.0 + 1.0 * I; /* (10+2i) - (5+i): y stays 5+i */
        }
    }
    CHECK(bad == 0);
    CHECK(crealf(x) == TOTAL && cimagf(x) == 2 * TOTAL);
    CHECK(sum == (double)TOTAL * (TOTAL + 1) / 2);
    /* Every value swapped in came out once, but the last, which stayed. */
    CHECK(swapped + crealf(s) == (double)TOTAL * (TOTAL + 1) / 2);
    CHECK(y == 5.0 + 1.0 * I);
    float _Complex z = 2.0f, out = 0;
    __kmpc_atomic_cmplx4_sub_cpt_rev(&loc, __kmpc_global_thread_num(&loc), &z, 10.0f, &out, 0);
    CHECK(z == 8.0f && out == 2.0f);
}

/* Mixed types, each update the same function of x: the order does not
 * matter, only that none is lost. */
static void mixed(void) {
    int32_t i4 = 1;
    int64_t i8 = INT64_C(1) << 40;
    float f4 = 0;
    float _Complex c4 = 1;
#pragma omp parallel num_threads(THREADS)
    {
        int g = __kmpc_global_thread_num(&loc);
        for (int i = 0; i < 5; i++) { /* 20 doublings in all */
            __kmpc_atomic_fixed4_mul_float8(&loc, g, &i4, 2.0);
            __kmpc_atomic_fixed8_div_float8(&loc, g, &i8, 2.0);
        }
        for (int i = 0; i < EACH; i++) {
            __kmpc_atomic_float4_add_float8(&loc, g, &f4, 0.5);
            __kmpc_atomic_cmplx4_mul_cmplx8(&loc, g, &c4, 1.0 * I); /* a quarter turn */
        }
    }
    CHECK(i4 == 1 << 20);
    CHECK(i8 == INT64_C(1) << 20);
    CHECK(f4 == TOTAL * 0.5f);
    CHECK(c4 == 1.0f); /* TOTAL quarter turns, a multiple of 4 */
}

/* The generic forms: a CAS loop around the compiler's function (4 bytes)
 * and the lock (16 bytes). */
static void generic(void) {
    int32_t n = 0;
    pair p = {0, 0};
#pragma omp parallel num_threads(THREADS)
    {
        int g = __kmpc_global_thread_num(&loc);
        int32_t one = 1;
        pair step = {1, 2};
        for (int i = 0; i < EACH; i++) {
            __kmpc_atomic_4(&loc, g, &n, &one, add_i32);
            __kmpc_atomic_16(&loc, g, &p, &step, add_pair);
        }
    }
    CHECK(n == TOTAL);
    CHECK(p.a == TOTAL && p.b == 2 * TOTAL);
}

int main(void) {
    reversed();
    complex4();
    mixed();
    generic();
    printf("omp kmp_atomic: ok\n");
    return 0;
}
