/* The lock entry points of the Intel compilers (`__kmpc_init_lock` and the
 * rest: icc and icx may lower omp_set_lock() and its kin to these), each
 * given the address of the program's lock variable (`void **user_lock`:
 * libomp's omp_lock_t and omp_nest_lock_t are one pointer, 8 bytes).
 *
 * The variable is held exactly as herd's omp_*_lock routines at LLVM's
 * version hold it (lock.c, "The same routines under the LLVM ABI's
 * version"), so a program may init with one and set with the other, as
 * under libomp: a simple lock is the layer's 4-byte lock word, which fits
 * in the variable; a nest lock (16 bytes: word, count, owner) does not, so
 * the variable holds a pointer to one allocated at init and freed at
 * destroy, as libomp does with a lock too large for the user's word. Hints
 * change nothing in herd's locks. */
#include "omp/kmp/kmp.h"

/* lock.c's routines: the simple lock in the variable, the nest lock by
 * pointer. */
void omp_init_lock_30(void *l);
void omp_set_lock_30(void *l);
void omp_unset_lock_30(void *l);
int omp_test_lock_30(void *l);
void omp_init_nest_lock__30(void **l);
void omp_destroy_nest_lock__30(void **l);
void omp_set_nest_lock__30(void **l);
void omp_unset_nest_lock__30(void **l);
int omp_test_nest_lock__30(void **l);

KMP_API void __kmpc_init_lock(ident_t *loc, kmp_int32 gtid, void **user_lock) {
    (void)loc, (void)gtid;
    omp_init_lock_30(user_lock);
}
KMP_API void __kmpc_init_lock_with_hint(ident_t *loc, kmp_int32 gtid, void **user_lock,
                                        uintptr_t hint) {
    (void)hint;
    __kmpc_init_lock(loc, gtid, user_lock);
}
/* Nothing to free: the word is the variable. */
KMP_API void __kmpc_destroy_lock(ident_t *loc, kmp_int32 gtid, void **user_lock) {
    (void)loc, (void)gtid, (void)user_lock;
}
KMP_API void __kmpc_set_lock(ident_t *loc, kmp_int32 gtid, void **user_lock) {
    (void)loc, (void)gtid;
    omp_set_lock_30(user_lock);
}
KMP_API void __kmpc_unset_lock(ident_t *loc, kmp_int32 gtid, void **user_lock) {
    (void)loc, (void)gtid;
    omp_unset_lock_30(user_lock);
}
KMP_API int __kmpc_test_lock(ident_t *loc, kmp_int32 gtid, void **user_lock) {
    (void)loc, (void)gtid;
    return omp_test_lock_30(user_lock);
}

KMP_API void __kmpc_init_nest_lock(ident_t *loc, kmp_int32 gtid, void **user_lock) {
    (void)loc, (void)gtid;
    omp_init_nest_lock__30(user_lock);
}
KMP_API void __kmpc_init_nest_lock_with_hint(ident_t *loc, kmp_int32 gtid, void **user_lock,
                                             uintptr_t hint) {
    (void)hint;
    __kmpc_init_nest_lock(loc, gtid, user_lock);
}
KMP_API void __kmpc_destroy_nest_lock(ident_t *loc, kmp_int32 gtid, void **user_lock) {
    (void)loc, (void)gtid;
    omp_destroy_nest_lock__30(user_lock);
}
KMP_API void __kmpc_set_nest_lock(ident_t *loc, kmp_int32 gtid, void **user_lock) {
    (void)loc, (void)gtid;
    omp_set_nest_lock__30(user_lock);
}
KMP_API void __kmpc_unset_nest_lock(ident_t *loc, kmp_int32 gtid, void **user_lock) {
    (void)loc, (void)gtid;
    omp_unset_nest_lock__30(user_lock);
}
/* The nesting count after the set, 0 when another task holds it. */
KMP_API int __kmpc_test_nest_lock(ident_t *loc, kmp_int32 gtid, void **user_lock) {
    (void)loc, (void)gtid;
    return omp_test_nest_lock__30(user_lock);
}
