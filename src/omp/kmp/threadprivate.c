/* threadprivate without TLS (clang -fno-openmp-use-tls, and code built for
 * targets without it): the runtime keeps each thread's copy of a variable.
 * The initial thread (the process's first) uses the variable
 * itself; every other thread gets a copy on its first access, made by the
 * registered constructor (copy-constructor from the original, or
 * constructor) or, for plain data, from the original's bytes at that time.
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
        if (c->dtor)
            c->dtor(c->copy);
        free(c->copy);
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

/* The calling thread's copy of data (size bytes). */
KMP_API void *__kmpc_threadprivate(ident_t *loc, kmp_int32 gtid, void *data, size_t size) {
    (void)loc, (void)gtid;
    if (gettid() == getpid()) /* the initial thread */
        return data;
    for (tp_copy *c = copies; c; c = c->next)
        if (c->data == data)
            return c->copy;
    const tp_reg *r = find_reg(data);
    tp_copy *c = malloc(sizeof *c);
    void *copy = malloc(size ? size : 1);
    if (!c || !copy)
        herd__omp_fatal("out of memory for a threadprivate copy (%zu bytes)", size);
    if (r && r->cctor)
        r->cctor(copy, data);
    else if (r && r->ctor)
        r->ctor(copy);
    else
        memcpy(copy, data, size);
    *c = (tp_copy){data, copy, r ? r->dtor : NULL, copies};
    copies = c;
    pthread_once(&key_once, make_key);
    pthread_setspecific(exit_key, copies);
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
