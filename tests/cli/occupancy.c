/* cli.topo_occupancy: `herd topo` shows which processes hold which PUs.
 * usage: cli_occupancy HERD_CLI REGISTRY_PATH
 * This process starts herd with HERD_BIND=static and a registry of its own,
 * runs `herd topo` while its workers hold their PUs (its pid must be listed,
 * each PU pinned once), and again after herd_stop (nobody listed). No
 * timing: the holder is this process itself. */
#include "../common/check.h"
#include "herd/herd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void topo_output(const char *cli, const char *reg, char *out, size_t cap) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' topo --registry '%s'", cli, reg);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    CHECK_EQ(pclose(p), 0);
}

int main(int argc, char **argv) {
    CHECK(argc == 3);
    unlink(argv[2]);
    CHECK(setenv("HERD_REGISTRY", argv[2], 1) == 0);
    CHECK(setenv("HERD_BIND", "static", 1) == 0);
    CHECK(setenv("HERD_WORKERS", "2", 1) == 0);
    CHECK(unsetenv("HERD_TOPOLOGY") == 0);
    static char out[1 << 16];
    CHECK_OK(herd_start(NULL));
    topo_output(argv[1], argv[2], out, sizeof out);
    char want[128];
    snprintf(want, sizeof want, "  pid %d (", (int)getpid());
    /* Its line lists both workers, in the order they registered. */
    const char *line = strstr(out, want);
    const char *pus = line ? strstr(line, "worker/OS PU") : NULL;
    const char *end = line ? strchr(line, '\n') : NULL;
    int listed = 0;
    for (const char *q = pus; q && end && (q = strchr(q, '/')) && q < end; q++)
        listed++;
    if (listed != 1 + 2) { /* the '/' of "worker/OS", then one per worker */
        fprintf(stderr, "while holding, herd topo printed:\n%s", out);
        CHECK(!"this process listed as the holder of 2 PUs");
    }
    CHECK(strstr(line, " 0/") && strstr(line, " 1/"));
    CHECK(strstr(out, "(no herd process holds a PU)") == NULL);
    CHECK_OK(herd_stop());
    topo_output(argv[1], argv[2], out, sizeof out);
    if (strstr(out, want) || !strstr(out, "(no herd process holds a PU)")) {
        fprintf(stderr, "after herd_stop, herd topo printed:\n%s", out);
        CHECK(!"no holder after herd_stop");
    }
    unlink(argv[2]);
    printf("topo occupancy: ok\n");
    return 0;
}
