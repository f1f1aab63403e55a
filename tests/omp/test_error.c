/* The error directive at execution: severity(warning) prints its message
 * and the program goes on; severity(fatal) (with the argument "fatal")
 * prints and ends the program with EXIT_FAILURE. The lines themselves are
 * checked by omp.error.warning / omp.error.fatal (tests/omp/CMakeLists.txt). */
#include "check_omp.h"

int main(int argc, char **argv) {
    int after = 0;
#pragma omp error at(execution) severity(warning) message("going on")
    after++;
#pragma omp parallel num_threads(2) reduction(+ : after)
    {
#pragma omp masked
        {
#pragma omp error at(execution) severity(warning)
        } after++;
    }
    CHECK(after >= 2);
    if (argc > 1 && !strcmp(argv[1], "fatal")) {
        const char *msg = "stop here";
#pragma omp error at(execution) severity(fatal) message(msg)
        after = -1; /* not reached */
    }
    printf("error: ok (%d)\n", after);
    return 0;
}
