/* libomp's atomic entry points (__kmpc_atomic_TYPE_OP[_cpt][_rev], _rd,
 * _wr, _swp, the mixed-type forms TYPE_OP_float8 and cmplx4_OP_cmplx8, the
 * generic __kmpc_atomic_N, and OpenMP 5.1's compare forms _cas), with
 * libomp's names and signatures exactly (x86-64, no _Quad): what older compilers
 * and hand-written code call for `atomic` on types the hardware cannot
 * update in one instruction (clang today emits instructions or libatomic
 * calls instead). Up to 8 bytes, a compare-and-swap loop; wider types
 * (long double, complex) under one process-wide lock word of the layer
 * (lock.c), as GOMP_atomic_start serves GCC's code. */
#include "omp/kmp/kmp.h"

#include <complex.h>
#include <stdbool.h>

static _Atomic uint32_t wide_lock;

KMP_API void __kmpc_atomic_start(void) {
    herd__omp_word_lock(&wide_lock);
}
KMP_API void __kmpc_atomic_end(void) {
    herd__omp_word_unlock(&wide_lock);
}

/* x = EXPR(o, r) atomically; o the value replaced, n the value stored.
 * ORDER: seq_cst on success (an atomic construct's flush), relaxed reload
 * on failure (the next attempt rereads it). */
#define UPDATE(T, x, r, EXPR, o, n)                                                                \
    do {                                                                                           \
        if (sizeof(T) <= 8) {                                                                      \
            __atomic_load(x, &o, __ATOMIC_RELAXED);                                                \
            do                                                                                     \
                n = (T)(EXPR);                                                                     \
            while (                                                                                \
                !__atomic_compare_exchange(x, &o, &n, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)); \
        } else {                                                                                   \
            herd__omp_word_lock(&wide_lock);                                                       \
            o = *x;                                                                                \
            n = (T)(EXPR);                                                                         \
            *x = n;                                                                                \
            herd__omp_word_unlock(&wide_lock);                                                     \
        }                                                                                          \
    } while (0)

/* x = x ON rhs, and its capture (_cpt: flag ? the new value : the old). */
#define OP(TN, T, ON, EXPR)                                                                        \
    KMP_API void __kmpc_atomic_##TN##_##ON(ident_t *id, int gtid, T *lhs, T rhs) {                 \
        (void)id, (void)gtid;                                                                      \
        T o, n;                                                                                    \
        UPDATE(T, lhs, rhs, EXPR, o, n);                                                           \
    }                                                                                              \
    KMP_API T __kmpc_atomic_##TN##_##ON##_cpt(ident_t *id, int gtid, T *lhs, T rhs, int flag) {    \
        (void)id, (void)gtid;                                                                      \
        T o, n;                                                                                    \
        UPDATE(T, lhs, rhs, EXPR, o, n);                                                           \
        return flag ? n : o;                                                                       \
    }

/* x = rhs ON x (OpenMP 4.0's reversed operands): _rev, and its capture
 * _cpt_rev (libomp's order of the suffixes). */
#define REV(TN, T, ON, EXPR)                                                                       \
    KMP_API void __kmpc_atomic_##TN##_##ON##_rev(ident_t *id, int gtid, T *lhs, T rhs) {           \
        (void)id, (void)gtid;                                                                      \
        T o, n;                                                                                    \
        UPDATE(T, lhs, rhs, EXPR, o, n);                                                           \
    }                                                                                              \
    KMP_API T __kmpc_atomic_##TN##_##ON##_cpt_rev(ident_t *id, int gtid, T *lhs, T rhs,            \
                                                  int flag) {                                      \
        (void)id, (void)gtid;                                                                      \
        T o, n;                                                                                    \
        UPDATE(T, lhs, rhs, EXPR, o, n);                                                           \
        return flag ? n : o;                                                                       \
    }

/* Read and write; swap (capture-write) returns the old value. */
#define RW(TN, T)                                                                                  \
    KMP_API T __kmpc_atomic_##TN##_rd(ident_t *id, int gtid, T *loc) {                             \
        (void)id, (void)gtid;                                                                      \
        T o, n;                                                                                    \
        UPDATE(T, loc, 0, o, o, n);                                                                \
        return o;                                                                                  \
    }                                                                                              \
    KMP_API void __kmpc_atomic_##TN##_wr(ident_t *id, int gtid, T *lhs, T rhs) {                   \
        (void)id, (void)gtid;                                                                      \
        T o, n;                                                                                    \
        UPDATE(T, lhs, rhs, rhs, o, n);                                                            \
    }
#define RWS(TN, T)                                                                                 \
    RW(TN, T)                                                                                      \
    KMP_API T __kmpc_atomic_##TN##_swp(ident_t *id, int gtid, T *lhs, T rhs) {                     \
        (void)id, (void)gtid;                                                                      \
        T o, n;                                                                                    \
        UPDATE(T, lhs, rhs, rhs, o, n);                                                            \
        return o;                                                                                  \
    }

/* x = (T)(x ON rhs) with rhs of a wider type RN (libomp's mixed forms:
 * the arithmetic in the wider type). No capture forms. */
#define MIXED(TN, T, ON, RTN, RT, EXPR)                                                            \
    KMP_API void __kmpc_atomic_##TN##_##ON##_##RTN(ident_t *id, int gtid, T *lhs, RT rhs) {        \
        (void)id, (void)gtid;                                                                      \
        T o, n;                                                                                    \
        UPDATE(T, lhs, rhs, EXPR, o, n);                                                           \
    }

#define ARITH(TN, T)                                                                               \
    OP(TN, T, add, o + rhs)                                                                        \
    OP(TN, T, sub, o - rhs)                                                                        \
    OP(TN, T, mul, o *rhs)                                                                         \
    OP(TN, T, div, o / rhs)                                                                        \
    REV(TN, T, sub, rhs - o)                                                                       \
    REV(TN, T, div, rhs / o)                                                                       \
    RWS(TN, T)

#define ORDERED(TN, T)                                                                             \
    OP(TN, T, max, o < rhs ? rhs : o)                                                              \
    OP(TN, T, min, rhs < o ? rhs : o)

#define INTEGER(TN, T)                                                                             \
    ARITH(TN, T)                                                                                   \
    ORDERED(TN, T)                                                                                 \
    OP(TN, T, andb, o &rhs)                                                                        \
    OP(TN, T, orb, o | rhs)                                                                        \
    OP(TN, T, xor, o ^ rhs)                                                                        \
    OP(TN, T, shl, o << rhs)                                                                       \
    OP(TN, T, shr, o >> rhs)                                                                       \
    REV(TN, T, shl, rhs << o)                                                                      \
    REV(TN, T, shr, rhs >> o)                                                                      \
    OP(TN, T, andl, o &&rhs)                                                                       \
    OP(TN, T, orl, o || rhs)                                                                       \
    OP(TN, T, eqv, ~(o ^ rhs))                                                                     \
    OP(TN, T, neqv, o ^ rhs)                                                                       \
    MIXED(TN, T, mul, float8, double, o *rhs)                                                      \
    MIXED(TN, T, div, float8, double, o / rhs)

/* Unsigned: only the operations whose result differs from the signed
 * one's (division and right shift), as libomp has them. */
#define UNSIGNED(TN, T)                                                                            \
    OP(TN, T, div, o / rhs)                                                                        \
    OP(TN, T, shr, o >> rhs)                                                                       \
    REV(TN, T, div, rhs / o)                                                                       \
    REV(TN, T, shr, rhs >> o)

INTEGER(fixed1, signed char)
UNSIGNED(fixed1u, unsigned char)
INTEGER(fixed2, short)
UNSIGNED(fixed2u, unsigned short)
INTEGER(fixed4, kmp_int32)
UNSIGNED(fixed4u, kmp_uint32)
INTEGER(fixed8, kmp_int64)
UNSIGNED(fixed8u, kmp_uint64)
ARITH(float4, float)
ORDERED(float4, float)
MIXED(float4, float, add, float8, double, o + rhs)
MIXED(float4, float, sub, float8, double, o - rhs)
MIXED(float4, float, mul, float8, double, o *rhs)
MIXED(float4, float, div, float8, double, o / rhs)
ARITH(float8, double)
ORDERED(float8, double)
ARITH(float10, long double)
ORDERED(float10, long double)
ARITH(cmplx8, double _Complex)
ARITH(cmplx10, long double _Complex)

/* float _Complex: libomp's captures and swap return through *out (a
 * workaround for returning it on some targets, kept on all). */
#define OP4(ON, EXPR, SUFFIX)                                                                      \
    KMP_API void __kmpc_atomic_cmplx4_##ON##SUFFIX(ident_t *id, int gtid, float _Complex *lhs,     \
                                                   float _Complex rhs, float _Complex *out,        \
                                                   int flag) {                                     \
        (void)id, (void)gtid;                                                                      \
        float _Complex o, n;                                                                       \
        UPDATE(float _Complex, lhs, rhs, EXPR, o, n);                                              \
        *out = flag ? n : o;                                                                       \
    }
#define UPD4(ON, EXPR)                                                                             \
    KMP_API void __kmpc_atomic_cmplx4_##ON(ident_t *id, int gtid, float _Complex *lhs,             \
                                           float _Complex rhs) {                                   \
        (void)id, (void)gtid;                                                                      \
        float _Complex o, n;                                                                       \
        UPDATE(float _Complex, lhs, rhs, EXPR, o, n);                                              \
    }
UPD4(add, o + rhs)
UPD4(sub, o - rhs)
UPD4(mul, o *rhs)
UPD4(div, o / rhs)
UPD4(sub_rev, rhs - o)
UPD4(div_rev, rhs / o)
OP4(add, o + rhs, _cpt)
OP4(sub, o - rhs, _cpt)
OP4(mul, o *rhs, _cpt)
OP4(div, o / rhs, _cpt)
OP4(sub, rhs - o, _cpt_rev)
OP4(div, rhs / o, _cpt_rev)
RW(cmplx4, float _Complex)
KMP_API void __kmpc_atomic_cmplx4_swp(ident_t *id, int gtid, float _Complex *lhs,
                                      float _Complex rhs, float _Complex *out) {
    (void)id, (void)gtid;
    float _Complex o, n;
    UPDATE(float _Complex, lhs, rhs, rhs, o, n);
    *out = o;
}
MIXED(cmplx4, float _Complex, add, cmplx8, double _Complex, o + rhs)
MIXED(cmplx4, float _Complex, sub, cmplx8, double _Complex, o - rhs)
MIXED(cmplx4, float _Complex, mul, cmplx8, double _Complex, o *rhs)
MIXED(cmplx4, float _Complex, div, cmplx8, double _Complex, o / rhs)

/* The generic forms: *lhs = f(*lhs, *rhs) for an operand of N bytes, f
 * writing its result through its first argument. Up to 8 bytes a
 * compare-and-swap loop that calls f on copies (as libomp does: f may run
 * more than once); wider under the lock word. ORDER: as UPDATE. */
#define GENERIC_CAS(N, T)                                                                          \
    KMP_API void __kmpc_atomic_##N(ident_t *id, int gtid, void *lhs, void *rhs,                    \
                                   void (*f)(void *, void *, void *)) {                            \
        (void)id, (void)gtid;                                                                      \
        T o, n;                                                                                    \
        __atomic_load((T *)lhs, &o, __ATOMIC_RELAXED);                                             \
        do                                                                                         \
            f(&n, &o, rhs);                                                                        \
        while (!__atomic_compare_exchange((T *)lhs, &o, &n, false, __ATOMIC_SEQ_CST,               \
                                          __ATOMIC_RELAXED));                                      \
    }
GENERIC_CAS(1, uint8_t)
GENERIC_CAS(2, uint16_t)
GENERIC_CAS(4, uint32_t)
GENERIC_CAS(8, uint64_t)
#define GENERIC_LOCKED(N)                                                                          \
    KMP_API void __kmpc_atomic_##N(ident_t *id, int gtid, void *lhs, void *rhs,                    \
                                   void (*f)(void *, void *, void *)) {                            \
        (void)id, (void)gtid;                                                                      \
        herd__omp_word_lock(&wide_lock);                                                           \
        f(lhs, lhs, rhs);                                                                          \
        herd__omp_word_unlock(&wide_lock);                                                         \
    }
GENERIC_LOCKED(10)
GENERIC_LOCKED(16)
GENERIC_LOCKED(20)
GENERIC_LOCKED(32)

/* ORDER (all four): seq_cst, as an atomic construct with a flush; the
 * failure order seq_cst too, since the old value read is the answer.
 * OpenMP 5.1 atomic compare: bool_N_cas answers whether x was e (and is now
 * d); val_N_cas answers x's old value; the _cpt forms also capture into *pv
 * the old value on failure (bool) or x's value after (val). */
#define CAS(N, T)                                                                                  \
    KMP_API bool __kmpc_atomic_bool_##N##_cas(ident_t *loc, int gtid, T *x, T e, T d) {            \
        (void)loc, (void)gtid;                                                                     \
        return __atomic_compare_exchange_n(x, &e, d, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);   \
    }                                                                                              \
    KMP_API T __kmpc_atomic_val_##N##_cas(ident_t *loc, int gtid, T *x, T e, T d) {                \
        (void)loc, (void)gtid;                                                                     \
        __atomic_compare_exchange_n(x, &e, d, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);          \
        return e; /* the old value either way */                                                   \
    }                                                                                              \
    KMP_API bool __kmpc_atomic_bool_##N##_cas_cpt(ident_t *loc, int gtid, T *x, T e, T d, T *pv) { \
        (void)loc, (void)gtid;                                                                     \
        if (__atomic_compare_exchange_n(x, &e, d, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))      \
            return true;                                                                           \
        *pv = e;                                                                                   \
        return false;                                                                              \
    }                                                                                              \
    KMP_API T __kmpc_atomic_val_##N##_cas_cpt(ident_t *loc, int gtid, T *x, T e, T d, T *pv) {     \
        (void)loc, (void)gtid;                                                                     \
        bool ok =                                                                                  \
            __atomic_compare_exchange_n(x, &e, d, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);      \
        *pv = ok ? d : e;                                                                          \
        return e;                                                                                  \
    }
CAS(1, char)
CAS(2, short)
CAS(4, kmp_int32)
CAS(8, kmp_int64)
