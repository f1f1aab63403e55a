/* fib(n) with one OpenMP task per call and no cut-off: the fine-grain case
 * (issue 4, benchmark 1). Prints the time of the parallel region and checks
 * the result against the sequential twin. Usage: fib_tasks [n] [reps]. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }
static long (*volatile seq_fn)(int) = fib_seq; /* not folded into a constant */

static long fib(int n) {
    if (n < 2)
        return n;
    long a, b;
#pragma omp task shared(a)
    a = fib(n - 1);
#pragma omp task shared(b)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 30;
    int reps = argc > 2 ? atoi(argv[2]) : 1;
    long want = seq_fn(n);
    for (int r = 0; r < reps; r++) {
        double t0 = omp_get_wtime();
        volatile long seq = seq_fn(n);
        double ts = omp_get_wtime() - t0;
        long got = seq;
        if (got != want)
            return 1;
        t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
        got = fib(n);
        double tp = omp_get_wtime() - t0;
        if (got != want) {
            fprintf(stderr, "fib(%d) = %ld, expected %ld\n", n, got, want);
            return 1;
        }
        printf("fib %d threads %d serial_s %.6f tasks_s %.6f\n", n, omp_get_max_threads(), ts, tp);
    }
    return 0;
}
