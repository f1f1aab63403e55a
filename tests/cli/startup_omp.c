/* An unmodified OpenMP program (gcc -fopenmp, the system libgomp's ABI),
 * run under herd's libgomp by the start-up tests (tests/cli/CMakeLists.txt,
 * startup_omp.*): a bad setting must end it with herd's message and exit
 * status 1, never a signal. */
#include <omp.h>
#include <stdio.h>

int main(void) {
    int n = 0;
#pragma omp parallel
    {
#pragma omp atomic
        n++;
    }
    printf("startup_omp: ok, %d threads\n", n);
    return 0;
}
