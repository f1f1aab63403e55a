/* The floor under any runtime behind libgomp's task ABI: GOMP_task runs the
 * task at once with nothing around it, GOMP_taskwait returns. Preloaded over
 * the system libgomp on one thread by fib_figure.sh, it shows what the
 * binary's own calls cost (the outlined function, its argument block, the
 * two calls a task makes) before any runtime does any work: the bound on
 * "a task's cost as a multiple of the serial call". Not a runtime: no
 * records, no final or if semantics, no thread. */
#include <stdbool.h>
#include <string.h>

/* Out of line, so that the common case below stays a bare tail call. */
static __attribute__((noinline)) void run_copied(void (*fn)(void *), void *data,
                                                 void (*cpyfn)(void *, void *), long arg_size,
                                                 long arg_align) {
    long a = arg_align < 1 ? 1 : arg_align;
    char buf[arg_size + a];
    char *d = (char *)(((unsigned long)buf + (unsigned long)a - 1) & ~((unsigned long)a - 1));
    cpyfn(d, data);
    fn(d);
}

void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
               long arg_align, bool if_clause, unsigned flags, void **depend, int priority,
               void *detach) {
    (void)if_clause, (void)flags, (void)depend, (void)priority, (void)detach;
    if (cpyfn)
        run_copied(fn, data, cpyfn, arg_size, arg_align);
    else
        fn(data); /* a tail call: the floor */
}

void GOMP_taskwait(void) {}
