/* threadprivate without TLS (flang, always; clang -fno-openmp-use-tls, and
 * code built for targets without it): the runtime keeps each thread's copy
 * of a variable. The initial thread (the process's first) uses the variable
 * itself; every other thread gets a copy on its first access, made by the
 * registered constructor (copy-constructor from the original, or
 * constructor) or, for plain data, from the variable's initial bytes: those
 * it held at its first access by any thread, before the initial thread
 * could change it (flang's threadprivate common blocks with DATA: every
 * thread starts from the DATA values, GCC's pr81841.f90, as under libomp).
 * Copies live as long as their thread (a destructor, if registered, runs at
 * the thread's exit). */
#include "omp/kmp/kmp.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void *(*tp_ctor)(void *);
typedef void *(*tp_cctor)(void *, void *);
typedef void (*tp_dtor)(void *);
/* The vector forms (C++ arrays of objects): the same with the length. */
typedef void *(*tp_ctorv)(void *, size_t);
typedef void *(*tp_cctorv)(void *, void *, size_t);
typedef void (*tp_dtorv)(void *, size_t);

/* A registration, kept for the process's life. vec_len 0: ctor, cctor,
 * dtor are the plain forms; else the vector forms, for vec_len objects. */
typedef struct tp_reg {
    void *data;
    void (*ctor)(void), (*cctor)(void), (*dtor)(void);
    size_t vec_len;
    struct tp_reg *next;
} tp_reg;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static tp_reg *regs;

/* A thread's copy of a variable. It begins as libomp's record of one
 * (struct private_common: next, link, gbl_addr, par_addr, cmn_size),
 * which kmp_threadprivate_insert returns. */
typedef struct tp_copy {
    struct tp_copy *next, *link; /* the thread's list (both) */
    void *data, *copy;
    size_t size;
    const tp_reg *reg; /* its registration (destructor), NULL: none */
} tp_copy;

static __thread tp_copy *copies;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void destroy(const tp_reg *r, void *copy) {
    if (r && r->dtor && r->vec_len)
        ((tp_dtorv)r->dtor)(copy, r->vec_len);
    else if (r && r->dtor)
        ((tp_dtor)r->dtor)(copy);
}

static void thread_exit(void *p) {
    for (tp_copy *c = p, *next; c; c = next) {
        next = c->next;
        if (c->copy != c->data) { /* not the initial thread's variable itself */
            destroy(c->reg, c->copy);
            free(c->copy);
        }
        free(c);
    }
}
static void make_key(void) {
    pthread_key_create(&exit_key, thread_exit);
}

static void add_reg(void *data, void (*ctor)(void), void (*cctor)(void), void (*dtor)(void),
                    size_t vec_len) {
    tp_reg *r = malloc(sizeof *r);
    if (!r)
        herd__omp_fatal("out of memory registering a threadprivate variable");
    *r = (tp_reg){data, ctor, cctor, dtor, vec_len, NULL};
    pthread_mutex_lock(&reg_lock);
    r->next = regs;
    regs = r;
    pthread_mutex_unlock(&reg_lock);
}

KMP_API void __kmpc_threadprivate_register(ident_t *loc, void *data, tp_ctor ctor, tp_cctor cctor,
                                           tp_dtor dtor) {
    (void)loc;
    add_reg(data, (void (*)(void))ctor, (void (*)(void))cctor, (void (*)(void))dtor, 0);
}
/* An array of vec_len C++ objects (the Intel compilers' form). */
KMP_API void __kmpc_threadprivate_register_vec(ident_t *loc, void *data, tp_ctorv ctor,
                                               tp_cctorv cctor, tp_dtorv dtor, size_t vec_len) {
    (void)loc;
    if (vec_len == 0) /* no objects: nothing to construct or destroy */
        add_reg(data, NULL, NULL, NULL, 0);
    else
        add_reg(data, (void (*)(void))ctor, (void (*)(void))cctor, (void (*)(void))dtor, vec_len);
}

static const tp_reg *find_reg(void *data) {
    pthread_mutex_lock(&reg_lock);
    const tp_reg *r = regs;
    while (r && r->data != data)
        r = r->next;
    pthread_mutex_unlock(&reg_lock);
    return r;
}

/* A variable's initial bytes (plain data's copies start from them): from
 * from (size bytes) at its first access, kept for the process's life. */
typedef struct tp_var {
    void *data, *init;
    size_t size;
    struct tp_var *next;
} tp_var;
static tp_var *vars; /* under reg_lock */

static const tp_var *var_of(void *data, const void *from, size_t size) {
    pthread_mutex_lock(&reg_lock);
    tp_var *v = vars;
    while (v && v->data != data)
        v = v->next;
    if (!v) {
        v = malloc(sizeof *v);
        void *init = malloc(size ? size : 1);
        if (!v || !init)
            herd__omp_fatal("out of memory for a threadprivate variable (%zu bytes)", size);
        memcpy(init, from, size);
        *v = (tp_var){data, init, size, vars};
        vars = v;
    }
    pthread_mutex_unlock(&reg_lock);
    return v;
}

static tp_copy *remember(void *data, void *copy, size_t size, const tp_reg *reg) {
    tp_copy *c = malloc(sizeof *c);
    if (!c)
        herd__omp_fatal("out of memory for a threadprivate copy");
    *c = (tp_copy){copies, copies, data, copy, size, reg};
    copies = c;
    pthread_once(&key_once, make_key);
    pthread_setspecific(exit_key, copies);
    return c;
}

static tp_copy *find_copy(void *data) {
    tp_copy *c = copies;
    while (c && c->data != data)
        c = c->next;
    return c;
}

/* The calling thread's copy of data (size bytes), made now if it has none;
 * from: the variable's initial bytes if they are not kept yet. The initial
 * thread's is the variable itself, remembered like a copy (no destructor)
 * once its first access has kept the initial bytes. */
static tp_copy *copy_of(void *data, const void *from, size_t size) {
    tp_copy *c = find_copy(data);
    if (c)
        return c;
    const tp_var *v = var_of(data, from, size);
    if (gettid() == getpid()) /* the initial thread */
        return remember(data, data, size, NULL);
    const tp_reg *r = find_reg(data);
    void *copy = malloc(size ? size : 1);
    if (!copy)
        herd__omp_fatal("out of memory for a threadprivate copy (%zu bytes)", size);
    if (r && r->cctor && r->vec_len)
        ((tp_cctorv)r->cctor)(copy, data, r->vec_len);
    else if (r && r->cctor)
        ((tp_cctor)r->cctor)(copy, data);
    else if (r && r->ctor && r->vec_len)
        ((tp_ctorv)r->ctor)(copy, r->vec_len);
    else if (r && r->ctor)
        ((tp_ctor)r->ctor)(copy);
    else
        memcpy(copy, v->init, size < v->size ? size : v->size);
    return remember(data, copy, size, r);
}

KMP_API void *__kmpc_threadprivate(ident_t *loc, kmp_int32 gtid, void *data, size_t size) {
    (void)loc, (void)gtid;
    return copy_of(data, data, size)->copy;
}

/* libomp's helpers of the above, which it exports (its kmp_* names): keep
 * data_addr's bytes as the initial ones of the variable at pc_addr (the
 * serial part's first access), and make thread gtid's copy of it (herd
 * keeps copies per thread: gtid must be the caller's), answered with its
 * record in libomp's layout (tp_copy). */
KMP_API void kmp_threadprivate_insert_private_data(int gtid, void *pc_addr, void *data_addr,
                                                   size_t pc_size) {
    (void)gtid;
    (void)var_of(pc_addr, data_addr, pc_size);
}
KMP_API void *kmp_threadprivate_insert(int gtid, void *pc_addr, void *data_addr, size_t pc_size) {
    if (gtid != herd__kmp_gtid())
        herd__omp_fatal("kmp_threadprivate_insert for thread %d from thread %d: herd makes a "
                        "thread's threadprivate copies on that thread only",
                        gtid, herd__kmp_gtid());
    return copy_of(pc_addr, data_addr, pc_size);
}

/* The cached form: *cache is the compiler's per-variable cache, which herd
 * leaves unused (the thread's list is searched each time: programs with
 * many threadprivate variables and no TLS are rare). */
KMP_API void *__kmpc_threadprivate_cached(ident_t *loc, kmp_int32 gtid, void *data, size_t size,
                                          void ***cache) {
    (void)cache;
    return __kmpc_threadprivate(loc, gtid, data, size);
}
