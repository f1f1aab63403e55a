/* The error directive (OpenMP 5.1): `#pragma omp error` with
 * at(execution) prints its message; severity(warning) then goes on,
 * severity(fatal) ends the program with EXIT_FAILURE. GCC's front end
 * reaches GOMP_warning / GOMP_error, LLVM's __kmpc_error (kmp/sync.c):
 * each prints its own runtime's line, word for word (libgomp's here,
 * libomp's there), so programs and test scripts that look for them find
 * them; herd__omp_error_report writes either. msglen (size_t)-1: msg is
 * NUL-terminated; NULL msg: no message clause. */
#include "omp/omp.h"

#include <stdio.h>
#include <stdlib.h>

void herd__omp_error_report(const char *head, const char *msg, size_t msglen, const char *tail,
                            int fatal) {
    /* One line however many threads report at once: stderr is unbuffered,
     * so each piece would be a write of its own. */
    flockfile(stderr);
    fputs(head, stderr);
    if (msg) {
        fputs(": ", stderr);
        if (msglen == (size_t)-1)
            fputs(msg, stderr);
        else
            fwrite(msg, 1, msglen, stderr);
    }
    fputs(tail, stderr);
    fflush(stderr);
    funlockfile(stderr);
    if (fatal)
        exit(EXIT_FAILURE);
}

OMP_API void GOMP_warning(const char *msg, size_t msglen) {
    herd__omp_error_report("\nlibgomp: error directive encountered", msg, msglen, "\n", 0);
}

OMP_API void GOMP_error(const char *msg, size_t msglen) {
    herd__omp_error_report("\nlibgomp: fatal error: error directive encountered", msg, msglen, "\n",
                           1);
}
