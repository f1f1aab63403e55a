/* A native herd program as a user writes it: start, run one task, stop;
 * when herd_start fails, print herd's error and exit with status 1. The
 * start-up tests (tests/cli/CMakeLists.txt, startup.*) run it with a bad
 * setting and check the status, that no signal ended it, and the message. */
#include "herd/herd.h"

#include <stdio.h>

static void hello(void *p) {
    *(int *)*(int **)p = 1;
}

int main(void) {
    int rc = herd_start(NULL);
    if (rc != HERD_OK) {
        fprintf(stderr, "startup: herd_start: %s (%d)\n", herd_strerror(rc), rc);
        return 1;
    }
    int ran = 0, *p = &ran;
    rc = herd_run(hello, &p, sizeof p);
    int stop = herd_stop();
    if (rc != HERD_OK || stop != HERD_OK || !ran) {
        fprintf(stderr, "startup: run %d, stop %d, ran %d\n", rc, stop, ran);
        return 1;
    }
    printf("startup: ok\n");
    return 0;
}
