/* bench/idle.c -- what a started runtime with no work costs.
 *
 *   bench_idle [--workers W] [--seconds S]
 *
 * Starts herd, runs one tiny root so every worker has been active, then
 * sleeps S seconds and reports the process's CPU time over that interval as
 * a percentage of one core. Workers spin briefly after the root (HERD_IDLE
 * adaptive), then sleep on a futex; the figure shows what the sleeping costs.
 * One final JSON line on stdout. */
#include <herd/herd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static void nothing(void *arg) { (void)arg; }

int main(int argc, char **argv) {
    int workers = 0;
    double seconds = 2.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--workers") && i + 1 < argc)
            workers = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_idle [--workers W] [--seconds S]\n");
            return 2;
        }
    }
    herd_config cfg = {.workers = workers};
    int rc = herd_start(&cfg);
    if (rc) {
        fprintf(stderr, "bench_idle: herd_start: %s\n", herd_strerror(rc));
        return 1;
    }
    herd_run(nothing, NULL, 0);
    struct timespec pause = {0, 100 * 1000 * 1000}; /* let the spinning phase end */
    nanosleep(&pause, NULL);
    double c0 = cpu_seconds();
    struct timespec t = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&t, NULL);
    double used = cpu_seconds() - c0;
    printf("{\"kernel\":\"idle\",\"params\":{\"seconds\":%.1f},\"workers\":%d,"
           "\"cpu_seconds\":%.6f,\"percent_of_core\":%.4f,\"verified\":true}\n",
           seconds, herd_num_workers(), used, 100.0 * used / seconds);
    herd_stop();
    return 0;
}
