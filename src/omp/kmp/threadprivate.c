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

typedef struct tp_reg {
    void *data;
    tp_ctor ctor;
    tp_cctor cctor;
    tp_dtor dtor;
    struct tp_reg *next;
} tp_reg;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static tp_reg *regs;

typedef struct tp_copy {
    void *data, *copy;
    tp_dtor dtor;
    struct tp_copy *next;
} tp_copy;

static __thread tp_copy *copies;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *p) {
    for (tp_copy *c = p, *next; c; c = next) {
        next = c->next;
        if (c->copy != c->data) { /* not the initial thread's variable itself */
            if (c->dtor)
                c->dtor(c->copy);
            free(c->copy);
        }
        free(c);
    }
}
static void make_key(void) {
    pthread_key_create(&exit_key, thread_exit);
}

KMP_API void __kmpc_threadprivate_register(ident_t *loc, void *data, tp_ctor ctor, tp_cctor cctor,
                                           tp_dtor dtor) {
    (void)loc;
    tp_reg *r = malloc(sizeof *r);
    if (!r)
        herd__omp_fatal("out of memory registering a threadprivate variable");
    *r = (tp_reg){data, ctor, cctor, dtor, NULL};
    pthread_mutex_lock(&reg_lock);
    r->next = regs;
    regs = r;
    pthread_mutex_unlock(&reg_lock);
}

static const tp_reg *find_reg(void *data) {
    pthread_mutex_lock(&reg_lock);
    const tp_reg *r = regs;
    while (r && r->data != data)
        r = r->next;
    pthread_mutex_unlock(&reg_lock);
    return r;
}

/* A variable's bytes at its first access (plain data's copies start from
 * them), kept for the process's life. */
typedef struct tp_var {
    void *data, *init;
    size_t size;
    struct tp_var *next;
} tp_var;
static tp_var *vars; /* under reg_lock */

static const tp_var *var_of(void *data, size_t size) {
    pthread_mutex_lock(&reg_lock);
    tp_var *v = vars;
    while (v && v->data != data)
        v = v->next;
    if (!v) {
        v = malloc(sizeof *v);
        void *init = malloc(size ? size : 1);
        if (!v || !init)
            herd__omp_fatal("out of memory for a threadprivate variable (%zu bytes)", size);
        memcpy(init, data, size);
        *v = (tp_var){data, init, size, vars};
        vars = v;
    }
    pthread_mutex_unlock(&reg_lock);
    return v;
}

static void remember(void *data, void *copy, tp_dtor dtor) {
    tp_copy *c = malloc(sizeof *c);
    if (!c)
        herd__omp_fatal("out of memory for a threadprivate copy");
    *c = (tp_copy){data, copy, dtor, copies};
    copies = c;
    pthread_once(&key_once, make_key);
    pthread_setspecific(exit_key, copies);
}

/* The calling thread's copy of data (size bytes). The initial thread's is
 * the variable itself, remembered like a copy (no destructor) once its
 * first access has kept the initial bytes. */
KMP_API void *__kmpc_threadprivate(ident_t *loc, kmp_int32 gtid, void *data, size_t size) {
    (void)loc, (void)gtid;
    for (tp_copy *c = copies; c; c = c->next)
        if (c->data == data)
            return c->copy;
    const tp_var *v = var_of(data, size);
    if (gettid() == getpid()) { /* the initial thread */
        remember(data, data, NULL);
        return data;
    }
    const tp_reg *r = find_reg(data);
    void *copy = malloc(size ? size : 1);
    if (!copy)
        herd__omp_fatal("out of memory for a threadprivate copy (%zu bytes)", size);
    if (r && r->cctor)
        r->cctor(copy, data);
    else if (r && r->ctor)
        r->ctor(copy);
    else
        memcpy(copy, v->init, size < v->size ? size : v->size);
    remember(data, copy, r ? r->dtor : NULL);
    return copy;
}

/* The cached form: *cache is the compiler's per-variable cache, which herd
 * leaves unused (the thread's list is searched each time: programs with
 * many threadprivate variables and no TLS are rare). */
KMP_API void *__kmpc_threadprivate_cached(ident_t *loc, kmp_int32 gtid, void *data, size_t size,
                                          void ***cache) {
    (void)cache;
    return __kmpc_threadprivate(loc, gtid, data, size);
}
