/* OMP_PLACES with explicit place lists: the places the program sees
 * (omp_get_num_places, omp_get_place_num_procs, omp_get_place_proc_ids)
 * are those the specification's grammar gives, restricted to the CPUs the
 * process may run on. Each case runs this program again (the library reads
 * OMP_PLACES when it loads) with the list built on the first two allowed
 * CPUs a and b, and compares what the child prints. A malformed list is
 * checked by omp.places.malformed (tests/omp/CMakeLists.txt). LLVM's
 * libomp 14 does not take the exclusion operator ! (OMP_PLACES={0,!1,1}
 * is a syntax error there, {0},{1},!{0} gives three places), so those two
 * cases are not run there.
 * The abstract names (threads, cores, sockets, ll_caches, numa_domains,
 * with a count or not) give the machine's places, which the child checks
 * itself (`abstract`): disjoint non-empty sets of allowed CPUs covering
 * all of them (without a count), one per CPU for threads, the whole list
 * as the initial partition, and, with OMP_PROC_BIND=true, members of a
 * team no larger than the places each bound within one place. Also the
 * default list (`default`: OMP_PROC_BIND=true, no OMP_PLACES), and a list
 * OMP_PROC_BIND=false makes the runtime ignore (`ignored`). */
#include "check_omp.h"

#include <sched.h>
#include <sys/wait.h>

static void show(void) {
    int n = omp_get_num_places();
    printf("%d:", n);
    for (int i = 0; i < n; i++) {
        int k = omp_get_place_num_procs(i), ids[CPU_SETSIZE];
        omp_get_place_proc_ids(i, ids);
        printf(" {");
        for (int j = 0; j < k; j++)
            printf("%s%d", j ? "," : "", ids[j]);
        printf("}");
    }
    printf("\n");
}

/* allowed_list: the CPUs the process may run on, as the parent saw them
 * (a runtime may bind the initial thread at start: libgomp does). */
static void check_abstract(const char *name, const char *allowed_list) {
    cpu_set_t allowed, seen;
    CPU_ZERO(&allowed);
    for (const char *p = allowed_list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ','))
        CPU_SET(atoi(p), &allowed);
    CPU_ZERO(&seen);
    int n = omp_get_num_places(), counted = strchr(name, '(') != NULL;
    CHECK(n >= 1);
    if (counted) { /* at most the count; for threads exactly, up to the CPUs */
        int c = atoi(strchr(name, '(') + 1), cpus = CPU_COUNT(&allowed);
        CHECK(n <= c);
        if (!strncmp(name, "threads", 7))
            CHECK_EQ(n, c < cpus ? c : cpus);
    }
    for (int i = 0; i < n; i++) {
        int k = omp_get_place_num_procs(i), ids[CPU_SETSIZE];
        CHECK(k >= 1);
        if (!strncmp(name, "threads", 7))
            CHECK_EQ(k, 1);
        omp_get_place_proc_ids(i, ids);
        for (int j = 0; j < k; j++) {
            CHECK(ids[j] >= 0 && ids[j] < CPU_SETSIZE && CPU_ISSET(ids[j], &allowed));
            CHECK(!CPU_ISSET(ids[j], &seen)); /* places are disjoint */
            CPU_SET(ids[j], &seen);
        }
    }
    if (!counted) {
        CHECK(CPU_EQUAL(&seen, &allowed));
        if (!strcmp(name, "threads"))
            CHECK_EQ(n, CPU_COUNT(&allowed));
    }
    CHECK_EQ(omp_get_partition_num_places(), n);
    int nums[CPU_SETSIZE];
    omp_get_partition_place_nums(nums);
    for (int i = 0; i < n; i++)
        CHECK_EQ(nums[i], i);
    int bad = 0;
#pragma omp parallel num_threads(n < 2 ? n : 2) reduction(+ : bad)
    {
        int p = omp_get_place_num();
        bad += p < 0 || p >= n;
    }
    CHECK_EQ(bad, 0);
}

static void expect(const char *self, const char *places, const char *want) {
    int fd[2];
    CHECK_EQ(pipe(fd), 0);
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(fd[1], 1);
        setenv("OMP_PLACES", places, 1);
        execl(self, self, "show", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char got[512] = "";
    size_t len = 0;
    ssize_t r;
    while (len < sizeof got - 1 && (r = read(fd[0], got + len, sizeof got - 1 - len)) > 0)
        len += (size_t)r;
    got[len] = '\0';
    close(fd[0]);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (strcmp(got, want)) {
        fprintf(stderr, "OMP_PLACES=%s: got \"%s\", want \"%s\"\n", places, got, want);
        _exit(1);
    }
}

/* OMP_PLACES with OMP_PROC_BIND=false: the list is ignored, no places (as
 * in libgomp; libomp answers one place of every CPU instead). */
static void check_ignored(void) {
    CHECK_EQ(omp_get_num_places(), 0);
    int bad = 0;
#pragma omp parallel num_threads(2) reduction(+ : bad)
    bad += omp_get_place_num() != -1;
    CHECK_EQ(bad, 0);
}

/* Run this program as `abstract NAME CPUS` with OMP_PLACES=NAME, or with
 * NAME "default": OMP_PROC_BIND=true and no OMP_PLACES, the runtime's
 * default list (libgomp's and herd's a place per hardware thread, libomp's
 * a place per core). */
static void expect_abstract(const char *name, const cpu_set_t *allowed) {
    char list[4096] = "";
    for (int c = 0, len = 0; c < CPU_SETSIZE && len < (int)sizeof list - 8; c++)
        if (CPU_ISSET(c, allowed))
            len += snprintf(list + len, sizeof list - (size_t)len, "%s%d", len ? "," : "", c);
    char places[64] = "OMP_PLACES"; /* no '=': unset */
    if (strcmp(name, "default"))
        snprintf(places, sizeof places, "OMP_PLACES=%s", name);
    const char *env[] = {places, "OMP_PROC_BIND=true", NULL};
    if (!omp_test_rerun(env, "abstract", name, list)) {
        fprintf(stderr, "OMP_PLACES=%s: the child's checks failed\n", name);
        _exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "show")) {
        show();
        return 0;
    }
    if (argc > 3 && !strcmp(argv[1], "abstract")) {
        const char *name = argv[2];
        if (!strcmp(name, "default"))
            name = omp_test_on_llvm_libomp() ? "cores" : "threads";
        check_abstract(name, argv[3]);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "ignored")) {
        check_ignored();
        return 0;
    }
    cpu_set_t allowed;
    CHECK_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    int a = -1, b = -1;
    for (int c = 0; c < CPU_SETSIZE && b < 0; c++)
        if (CPU_ISSET(c, &allowed))
            *(a < 0 ? &a : &b) = c;
    CHECK(a >= 0);
    char self[4096], pl[128], want[128];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(n > 0);
    self[n] = '\0';
    snprintf(pl, sizeof pl, "{%d}", a);
    snprintf(want, sizeof want, "1: {%d}\n", a);
    expect(self, pl, want);
    snprintf(pl, sizeof pl, " { %d : 1 } ", a); /* spaces, an interval of one */
    expect(self, pl, want);
    if (b >= 0) {
        snprintf(pl, sizeof pl, "{%d},{%d}", a, b);
        snprintf(want, sizeof want, "2: {%d} {%d}\n", a, b);
        expect(self, pl, want);
        snprintf(pl, sizeof pl, "{%d}:2:%d", a, b - a); /* place interval */
        expect(self, pl, want);
        snprintf(pl, sizeof pl, "{%d}:2:-%d", b, b - a); /* negative stride */
        snprintf(want, sizeof want, "2: {%d} {%d}\n", b, a);
        expect(self, pl, want);
        snprintf(pl, sizeof pl, "{%d:2:%d}", a, b - a); /* resource interval */
        snprintf(want, sizeof want, "1: {%d,%d}\n", a, b);
        expect(self, pl, want);
    }
    if (b >= 0 && !omp_test_on_llvm_libomp()) {
        snprintf(pl, sizeof pl, "{%d,!%d,%d}", a, b, b); /* excluded, wherever it comes */
        snprintf(want, sizeof want, "1: {%d}\n", a);
        expect(self, pl, want);
        snprintf(pl, sizeof pl, "{%d},{%d},!{%d}", a, b, a); /* an excluded place */
        snprintf(want, sizeof want, "1: {%d}\n", b);
        expect(self, pl, want);
    }
    static const char *const abstract[] = {"threads",      "cores",    "sockets",   "ll_caches",
                                           "numa_domains", "cores(1)", "threads(2)"};
    for (size_t i = 0; i < sizeof abstract / sizeof abstract[0]; i++)
        expect_abstract(abstract[i], &allowed);
    expect_abstract("default", &allowed);
    const char *ignored[] = {"OMP_PLACES=cores", "OMP_PROC_BIND=false", NULL};
    if (!omp_test_on_llvm_libomp() && !omp_test_rerun(ignored, "ignored", NULL, NULL)) {
        fprintf(stderr, "OMP_PLACES=cores OMP_PROC_BIND=false: the child's checks failed\n");
        _exit(1);
    }
    puts("places: ok");
    return 0;
}
