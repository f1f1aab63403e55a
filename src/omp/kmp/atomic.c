/* libomp's atomic entry points (__kmpc_atomic_TYPE_OP[_cpt][_rev], _rd,
 * _wr, _swp, and OpenMP 5.1's compare forms _cas): what older compilers
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

/* Read, write, swap. */
#define RWS(TN, T)                                                                                 \
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
    }                                                                                              \
    KMP_API T __kmpc_atomic_##TN##_swp(ident_t *id, int gtid, T *lhs, T rhs) {                     \
        (void)id, (void)gtid;                                                                      \
        T o, n;                                                                                    \
        UPDATE(T, lhs, rhs, rhs, o, n);                                                            \
        return o;                                                                                  \
    }

#define ARITH(TN, T)                                                                               \
    OP(TN, T, add, o + rhs)                                                                        \
    OP(TN, T, sub, o - rhs)                                                                        \
    OP(TN, T, mul, o *rhs)                                                                         \
    OP(TN, T, div, o / rhs)                                                                        \
    OP(TN, T, sub_rev, rhs - o)                                                                    \
    OP(TN, T, div_rev, rhs / o)                                                                    \
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
    OP(TN, T, shl_rev, rhs << o)                                                                   \
    OP(TN, T, shr_rev, rhs >> o)                                                                   \
    OP(TN, T, andl, o &&rhs)                                                                       \
    OP(TN, T, orl, o || rhs)                                                                       \
    OP(TN, T, eqv, ~(o ^ rhs))                                                                     \
    OP(TN, T, neqv, o ^ rhs)

INTEGER(fixed1, signed char)
INTEGER(fixed1u, unsigned char)
INTEGER(fixed2, short)
INTEGER(fixed2u, unsigned short)
INTEGER(fixed4, kmp_int32)
INTEGER(fixed4u, kmp_uint32)
INTEGER(fixed8, kmp_int64)
INTEGER(fixed8u, kmp_uint64)
ARITH(float4, float)
ORDERED(float4, float)
ARITH(float8, double)
ORDERED(float8, double)
ARITH(float10, long double)
ORDERED(float10, long double)
ARITH(cmplx4, float _Complex)
ARITH(cmplx8, double _Complex)
ARITH(cmplx10, long double _Complex)

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
