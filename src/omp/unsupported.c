/* Constructs herd does not run, and the host fallback of target regions.
 *
 * An unsupported entry point stops the program at its first use with a
 * message naming the construct and the caller (dladdr, else the address):
 * never a silent wrong result (target regions run on the host: target.c).
 * The stubs at the end cover every other
 * GOMP_ and omp_ symbol of the system libgomp, so any gcc-built binary loads;
 * it fails only if it reaches one. */
#include "omp/omp.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void herd__omp_unsupported(const char *what, void *caller) {
    Dl_info info;
    char where[512];
    if (caller && dladdr(caller, &info) && info.dli_fname) {
        if (info.dli_sname)
            snprintf(where, sizeof where, "%s (%s+%#lx)", info.dli_fname, info.dli_sname,
                     (unsigned long)((char *)caller - (char *)info.dli_saddr));
        else
            snprintf(where, sizeof where, "%s+%#lx (addr2line -f -e %s %#lx names it)",
                     info.dli_fname, (unsigned long)((char *)caller - (char *)info.dli_fbase),
                     info.dli_fname, (unsigned long)((char *)caller - (char *)info.dli_fbase));
    } else {
        snprintf(where, sizeof where, "%p", caller);
    }
    fprintf(stderr,
            "herd-omp: %s is not supported by herd's OpenMP library; called from %s. "
            "Run the program with the system libgomp instead.\n",
            what, where);
    abort();
}

#define UNSUPPORTED(sym, what)                                                                     \
    OMP_API void sym(void) {                                                                       \
        herd__omp_unsupported(what, __builtin_return_address(0));                                  \
    }
#include "omp/unsupported.def"
