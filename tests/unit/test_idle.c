/* Idle workers really sleep (HERD_IDLE=adaptive, the default, and sleep):
 * after a burst of tasks, while the program does something else for a
 * while, herd's workers use almost no CPU.
 *
 * Measured through getrusage (process CPU time, every thread) over a window
 * of WINDOW_MS of the main thread sleeping outside herd, after a settle of
 * SETTLE_MS in which an adaptive worker ends its spin (a few ms). The bound
 * is generous: workers that kept spinning would use a whole core each (the
 * window's length times the workers, or whatever the machine gives them),
 * sleeping ones use close to none; the test allows a tenth of one core. The
 * mutation that makes adaptive workers never sleep fails it. */
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=2 HERD_IDLE=sleep
// herd-test-env: HERD_WORKERS=4 HERD_IDLE=adaptive
// herd-test-timeout: 60
#include "../common/check.h"

#include <sys/resource.h>
#include <time.h>

#define SETTLE_MS 200
#define WINDOW_MS 500
#define BURSTS 2

static double cpu_seconds(void) {
    struct rusage ru;
    CHECK(getrusage(RUSAGE_SELF, &ru) == 0);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void leaf(void *arg) {
    (void)arg;
}

static void burst(void *arg) {
    (void)arg;
    for (int i = 0; i < 10000; i++)
        CHECK_OK(herd_spawn(leaf, NULL, 0));
    CHECK_OK(herd_wait());
}

int main(void) {
    CHECK_OK(herd_start(NULL));
    for (int b = 0; b < BURSTS; b++) {
        CHECK_OK(herd_run(burst, NULL, 0));
        sleep_ms(SETTLE_MS);
        double before = cpu_seconds();
        sleep_ms(WINDOW_MS);
        double used = cpu_seconds() - before;
        STEP("burst %d: %.1f ms of CPU in %d ms idle (%d workers)", b, used * 1e3, WINDOW_MS,
             herd_num_workers());
        CHECK(used < 0.1 * WINDOW_MS / 1e3);
    }
    CHECK_OK(herd_stop());
    return 0;
}
