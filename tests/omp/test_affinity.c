/* Affinity display: the format variable, every field, widths and
 * justification, truncation, and the display itself (its lines are on
 * stderr; this checks it runs). */
#include "check_omp.h"

#include <sched.h>
#include <strings.h>

#include <sys/types.h>

/* OMP_PROC_BIND=false (omp.affinity.unbound): every thread of a region may
 * run on every CPU the process started with (threads are not bound). herd
 * gets the binding as a value: the program's environment keeps no
 * HERD_BIND of herd's making (it once did, through setenv). */
static void check_unbound(void) {
    const char *b = getenv("OMP_PROC_BIND");
    if (!b || strcasecmp(b, "false"))
        return;
    cpu_set_t start;
    CHECK_EQ(sched_getaffinity(0, sizeof start, &start), 0);
    int bound = 0, members = 0;
#pragma omp parallel num_threads(2) reduction(+ : bound, members)
    {
        cpu_set_t mine;
        members++;
        if (sched_getaffinity(0, sizeof mine, &mine) != 0 || !CPU_EQUAL(&mine, &start))
            bound++;
    }
    CHECK_EQ(bound, 0);
    CHECK(members >= 1);
    CHECK(getenv("HERD_BIND") == NULL);
    CHECK_EQ(omp_get_proc_bind(), omp_proc_bind_false);
}

int main(void) {
    check_unbound();
    char buf[512];
    omp_set_affinity_format("T%n/%N L%L");
    CHECK_EQ(omp_get_affinity_format(buf, sizeof buf), 10);
    CHECK(!strcmp(buf, "T%n/%N L%L"));
    CHECK_EQ(omp_get_affinity_format(buf, 4), 10); /* truncated, full length answered */
    CHECK(!strcmp(buf, "T%n"));
    int bad = 0;
#pragma omp parallel num_threads(2) reduction(+ : bad)
    {
        char got[256], want[256];
        int n = omp_get_thread_num(), N = omp_get_num_threads();
        size_t k = omp_capture_affinity(
            got, sizeof got, "%n|%N|%L|%.5n|%0.5n|%5n|%{thread_num}|%%|%{num_threads}|%a|%t|%T");
        snprintf(want, sizeof want, "%d|%d|1|%5d|%05d|%-5d|%d|%%|%d|0|0|1", n, N, n, n, n, n, N);
        if (strcmp(got, want) || k != strlen(want))
            bad++;
        omp_capture_affinity(got, sizeof got, "%P %A");
        snprintf(want, sizeof want, "%ld ", (long)getpid());
        if (strncmp(got, want, strlen(want)) || strlen(got) == strlen(want))
            bad++; /* the process id, then a non-empty CPU list */
        omp_display_affinity(NULL);
    }
    CHECK_EQ(bad, 0);
    char host[256];
    CHECK_EQ(gethostname(host, sizeof host), 0);
    size_t k = omp_capture_affinity(buf, sizeof buf, "%H");
    CHECK_EQ(k, strlen(host));
    CHECK(!strcmp(buf, host));
    CHECK_EQ(omp_capture_affinity(buf, 3, "%H|%H"), 2 * strlen(host) + 1);
    CHECK_EQ(strlen(buf), 2);
    printf("omp affinity: ok\n");
    return 0;
}
