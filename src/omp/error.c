/* The error directive (OpenMP 5.1): `#pragma omp error` with
 * at(execution) reaches GOMP_warning (severity(warning): print and go on)
 * or GOMP_error (severity(fatal): print and end the program with
 * EXIT_FAILURE). The lines are the system libgomp's, word for word, so
 * programs and test scripts that look for them find them. msglen
 * (size_t)-1: msg is NUL-terminated; NULL msg: no message clause. */
#include "omp/omp.h"

#include <stdio.h>
#include <stdlib.h>

static void print(const char *what, const char *msg, size_t msglen) {
    fprintf(stderr, "\nlibgomp: %serror directive encountered", what);
    if (msg) {
        fputs(": ", stderr);
        if (msglen == (size_t)-1)
            fputs(msg, stderr);
        else
            fwrite(msg, 1, msglen, stderr);
    }
    fputc('\n', stderr);
    fflush(stderr);
}

OMP_API void GOMP_warning(const char *msg, size_t msglen) {
    print("", msg, msglen);
}

OMP_API void GOMP_error(const char *msg, size_t msglen) {
    print("fatal error: ", msg, msglen);
    exit(EXIT_FAILURE);
}
