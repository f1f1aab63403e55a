/* herd: the command-line tool.
 *
 *   herd topo [flags]               the machine, its shepherds, and where each worker goes
 *   herd run [flags] -- PROGRAM ... run PROGRAM under the given settings
 *   herd bench ... | report ...    the benchmark harness (python3 -m herd_bench);
 *   herd bench multiprog ...       its multiprogramming scenarios
 *   herd version | help
 *
 * Every flag is a spelling of one HERD_* environment variable. The tool sets
 * the variable and then resolves the settings exactly as herd_start() does
 * (herd__settings_resolve), so `herd topo` shows what a program would get and
 * `herd run` passes the settings to PROGRAM through its environment. Keeping
 * the environment as the single channel means there is one parser and one set
 * of error messages for both. */
#include "herd/herd.h"
#include "core/seam_tools.h"
#include "place/mapper.h"
#include "topo/topo.h"

#include <hwloc.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    EXIT_USAGE = 2,     /* unknown command or flag, malformed value */
    EXIT_NOEXEC = 126,  /* PROGRAM exists but cannot be executed (shell convention) */
    EXIT_NOTFOUND = 127 /* PROGRAM not found (shell convention) */
};

/* Which subcommands accept a flag. */
enum { CMD_TOPO = 1 << 0, CMD_RUN = 1 << 1 };

typedef struct flag {
    const char *name; /* "--workers" */
    const char *env;  /* the variable it sets */
    const char *arg;  /* placeholder in the usage text */
    int cmds;         /* CMD_* mask */
    const char *help;
} flag;

static const flag flags[] = {
    {"--sched", "HERD_SCHED", "S", CMD_TOPO | CMD_RUN, NULL /* the scheduler table's names */},
    {"--spawn", "HERD_SPAWN", "P", CMD_TOPO | CMD_RUN, "help-first, work-first"},
    {"--steal", "HERD_STEAL", "A", CMD_TOPO | CMD_RUN, "steal amount: one, half, chunk:N"},
    {"--workers", "HERD_WORKERS", "N", CMD_TOPO | CMD_RUN,
     "number of workers, or auto (the PUs free now; default: one per PU of the cpuset)"},
    {"--bind", "HERD_BIND", "B", CMD_TOPO | CMD_RUN,
     "worker placement: none, compact, scatter, numa-priority, static, bll, xll"},
    {"--registry", "HERD_REGISTRY", "PATH", CMD_TOPO | CMD_RUN,
     "machine-wide registry file (static, bll, xll, auto)"},
    {"--topology", "HERD_TOPOLOGY", "T", CMD_TOPO | CMD_RUN,
     "hwloc synthetic description (\"pack:2 core:4 pu:2\") or XML file"},
    {"--shepherd", "HERD_SHEPHERD", "L", CMD_TOPO | CMD_RUN,
     "shepherd level: pu, core, l2, l3, numa, package, machine"},
    {"--stack", "HERD_STACK", "SIZE", CMD_RUN, "task stack size: 65536, 64K, 1M, ..."},
    {"--stats", "HERD_STATS", "X", CMD_RUN, "1: a per-worker table at exit; a path: JSON there"},
    {"--idle", "HERD_IDLE", "P", CMD_RUN, "idle policy: spin, sleep, adaptive"},
    {"--trace", "HERD_TRACE", "PATH", CMD_RUN, "write a timeline there (Chrome trace JSON)"},
};
#define NFLAGS (sizeof flags / sizeof flags[0])

static void usage(FILE *out) {
    fprintf(out,
            "usage: herd <command> [flags]\n"
            "\n"
            "commands:\n"
            "  topo [flags]                 show the topology, the shepherds and the placement\n"
            "                               of each worker under the current settings\n"
            "  run [flags] -- PROGRAM ARGS  run PROGRAM with the flags' settings in its\n"
            "                               environment\n"
            "  version                      print herd's version\n"
            "  help, --help                 print this text\n"
            "  bench [ARGS]                 run the benchmark suite (--help for its flags)\n"
            "  bench multiprog [ARGS]       paper 003's multiprogramming scenarios: turnaround\n"
            "                               under each HERD_BIND policy (--help)\n"
            "  report [RESULTS | --trace F] tables, figures and report.md from results;\n"
            "                               a HERD_TRACE timeline PNG\n"
            "\n"
            "flags (each sets the HERD_* variable shown, overriding the environment;\n"
            "FLAG VALUE and FLAG=VALUE are both accepted):\n");
    char scheds[256];
    herd__sched_names_joined(scheds, sizeof scheds, 0);
    for (size_t i = 0; i < NFLAGS; i++) {
        char left[32];
        snprintf(left, sizeof left, "%s %s", flags[i].name, flags[i].arg);
        fprintf(out, "  %-16s %-14s %s%s\n", left, flags[i].env,
                flags[i].help ? flags[i].help : scheds,
                flags[i].cmds & CMD_TOPO ? "" : " (run only)");
    }
}

static int usage_error(const char *fmt, const char *what) {
    fprintf(stderr, "herd: ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\n\n");
    usage(stderr);
    return -1;
}

static const flag *find_flag(const char *arg, size_t len) {
    for (size_t i = 0; i < NFLAGS; i++)
        if (strlen(flags[i].name) == len && strncmp(flags[i].name, arg, len) == 0)
            return &flags[i];
    return NULL;
}

/* Apply one flag at argv[*i] (with its value, inline or in the next word);
 * advances *i past what it used. Returns 0, or -1 after printing why. */
static int apply_flag(int cmd, int argc, char **argv, int *i) {
    const char *arg = argv[*i];
    const char *eq = strchr(arg, '=');
    const flag *f = find_flag(arg, eq != NULL ? (size_t)(eq - arg) : strlen(arg));
    if (f == NULL || !(f->cmds & cmd))
        return usage_error(f == NULL ? "unknown flag '%s'" : "flag '%s' is only for herd run", arg);
    const char *value = eq != NULL ? eq + 1 : NULL;
    if (value == NULL) {
        if (*i + 1 >= argc)
            return usage_error("flag '%s' needs a value", arg);
        value = argv[++*i];
    }
    if (setenv(f->env, value, 1) != 0) {
        fprintf(stderr, "herd: cannot set %s: %s\n", f->env, strerror(errno));
        return -1;
    }
    ++*i;
    return 0;
}

/* Apply the flags from argv[2] on. Returns the index of the first word after
 * them (after "--" when present), or -1 after printing the error. */
static int parse_flags(int cmd, int argc, char **argv) {
    int i = 2;
    while (i < argc) {
        if (strcmp(argv[i], "--") == 0)
            return i + 1;
        if (argv[i][0] != '-')
            return i;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            exit(0);
        }
        if (apply_flag(cmd, argc, argv, &i) != 0)
            return -1;
    }
    return i;
}

/* ------------------------------------------------------------------ topo */

/* The scheduler's view: shepherds, and where each worker looks for work. */
static void print_scheduler(const struct herd__rt *rt, const herd__plan *p) {
    printf("scheduler: %s\n", p->sched);
    printf("shepherds (%s level): %d\n", herd__topo_level_name(p->shepherd_level), p->nshepherds);
    for (int s = 0; s < p->nshepherds; s++) {
        printf("  shepherd %d: workers", s);
        for (int k = 0; k < p->shepherds[s].nworkers; k++)
            printf(" %d", p->shepherds[s].workers[k]);
        printf("\n");
    }
    printf("victim order (%s; '|' separates classes of equally near victims):\n", p->sched);
    for (int w = 0; w < p->nworkers; w++) {
        char line[1024];
        herd__plan_victims(rt, w, line, sizeof line);
        printf("  worker %d: %s\n", w, line);
    }
}

/* Which herd processes hold which PUs machine-wide, and the loads XLL sees
 * (src/place/). A modelled machine shows its own registry only. */
static void print_occupancy(const herd__plan *p) {
    char err[512];
    herd__reg *reg = p->reg;
    if (reg == NULL && p->topo->synthetic && p->set->registry[0] == '\0') {
        printf("machine-wide occupancy: not shown for a modelled machine (set HERD_REGISTRY to "
               "see a registry of its own)\n");
        return;
    }
    if (reg == NULL && herd__reg_open(&reg, p->set->registry, err, sizeof err) != 0) {
        printf("machine-wide occupancy: unavailable: %s\n", err);
        return;
    }
    herd__map_print(reg, p->topo->npus, p->topo->os_index, stdout);
    if (reg != p->reg)
        herd__reg_close(reg);
}

static int show_topology(void) {
    struct herd__rt *rt;
    herd__plan p;
    int rc = herd__plan_build(&rt, &p); /* prints what is wrong */
    if (rc == 0) {
        herd__topo_print(p.topo, stdout, p.shepherd_level, p.nworkers, p.pu_of_worker, p.set->bind);
        print_scheduler(rt, &p);
        print_occupancy(&p);
        herd__plan_free(rt);
    }
    return rc == 0 ? 0 : rc == HERD_EINVAL ? EXIT_USAGE : 1;
}

static int cmd_topo(int argc, char **argv) {
    int i = parse_flags(CMD_TOPO, argc, argv);
    if (i < 0)
        return EXIT_USAGE;
    if (i < argc) {
        usage_error("herd topo takes no argument: '%s'", argv[i]);
        return EXIT_USAGE;
    }
    return show_topology();
}

/* ------------------------------------------------------------------- run */

/* Check the settings before exec, so that a typo is reported by herd rather
 * than by herd_start() somewhere inside PROGRAM. */
static int check_settings(void) {
    herd__settings s;
    if (herd__settings_resolve(NULL, &s) != 0)
        return -1;
    if (s.topology[0] == '\0')
        return 0; /* the real machine always loads; do not pay for it twice */
    herd__topo t;
    char err[512];
    if (herd__topo_load(&t, s.topology, err, sizeof err) != 0) {
        fprintf(stderr, "herd: HERD_TOPOLOGY: %s\n", err);
        return -1;
    }
    herd__topo_free(&t);
    return 0;
}

/* OpenMP binaries get herd's libgomp.so.1: prepend its folder to
 * LD_LIBRARY_PATH -- <prefix>/<libdir>/herd next to an installed herd, or
 * lib/herd in the build tree. Returns 0, or -1 when it is nowhere. */
static int set_omp_library_path(void) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    const char *cands[] = {"/../" HERD_INSTALL_LIBDIR "/herd", "/lib/herd"};
    for (size_t c = 0; c < sizeof cands / sizeof cands[0]; c++) {
        char dir[4200], lib[4300];
        snprintf(dir, sizeof dir, "%s%s", exe, cands[c]);
        snprintf(lib, sizeof lib, "%s/libgomp.so.1", dir);
        if (access(lib, R_OK) != 0)
            continue;
        const char *old = getenv("LD_LIBRARY_PATH");
        char path[8600];
        snprintf(path, sizeof path, "%s%s%s", dir, old && *old ? ":" : "", old ? old : "");
        return setenv("LD_LIBRARY_PATH", path, 1);
    }
    return -1;
}

static int cmd_run(int argc, char **argv) {
    int i = parse_flags(CMD_RUN, argc, argv);
    if (i < 0)
        return EXIT_USAGE;
    if (i >= argc) {
        usage_error("%s: no PROGRAM given (herd run [flags] -- PROGRAM ARGS)", "run");
        return EXIT_USAGE;
    }
    if (check_settings() != 0)
        return EXIT_USAGE;
    if (set_omp_library_path() != 0)
        fprintf(stderr, "herd run: herd's libgomp.so.1 not found next to this herd; OpenMP "
                        "programs would use the system libgomp, not herd\n");
    execvp(argv[i], argv + i);
    int e = errno;
    if (e == ENOENT) {
        fprintf(stderr, "herd run: %s: %s\n", argv[i],
                strchr(argv[i], '/') != NULL ? "no such file" : "command not found");
        return EXIT_NOTFOUND;
    }
    fprintf(stderr, "herd run: cannot execute %s: %s\n", argv[i], strerror(e));
    return EXIT_NOEXEC;
}

/* ------------------------------------------------------------------ main */

/* ------------------------------------------------------ bench and report */

/* The harness is the Python package herd_bench: installed beside the tool
 * (P/share/herd/python, see CMakeLists.txt), or in the source tree this
 * binary was built from (HERD_TOOLS_DIR). The folder that has it wins. */
static int find_harness(const char *exe, char *dir, size_t size) {
    char buf[4096], probe[4400];
    snprintf(buf, sizeof buf, "%s", exe);
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
    const char *candidates[2] = {NULL, HERD_TOOLS_DIR};
    char installed[4200];
    snprintf(installed, sizeof installed, "%s/../share/herd/python", buf);
    candidates[0] = installed;
    for (int i = 0; i < 2; i++) {
        snprintf(probe, sizeof probe, "%s/herd_bench/__main__.py", candidates[i]);
        if (access(probe, R_OK) == 0) {
            snprintf(dir, size, "%s", candidates[i]);
            return 0;
        }
    }
    return -1;
}

/* herd bench|report ARGS: python3 -m herd_bench bench|report --herd-exe SELF ARGS. */
static int cmd_harness(const char *cmd, int argc, char **argv) {
    char exe[4096], dir[4200];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr, "herd %s: cannot find this executable: %s\n", cmd, strerror(errno));
        return 1;
    }
    exe[n] = '\0';
    if (find_harness(exe, dir, sizeof dir) != 0) {
        fprintf(stderr,
                "herd %s: the benchmark harness (Python package herd_bench) is neither installed "
                "beside herd (share/herd/python) nor in %s\n",
                cmd, HERD_TOOLS_DIR);
        return 1;
    }
    const char *old = getenv("PYTHONPATH");
    char path[8400];
    snprintf(path, sizeof path, "%s%s%s", dir, old && *old ? ":" : "", old ? old : "");
    setenv("PYTHONPATH", path, 1);
    char **args = calloc((size_t)argc + 5, sizeof *args);
    if (!args) {
        fprintf(stderr, "herd %s: out of memory\n", cmd);
        return 1;
    }
    int k = 0;
    args[k++] = "python3";
    args[k++] = "-m";
    args[k++] = "herd_bench";
    args[k++] = (char *)cmd;
    args[k++] = "--herd-exe";
    args[k++] = exe;
    for (int i = 2; i < argc; i++)
        args[k++] = argv[i];
    args[k] = NULL;
    execvp("python3", args);
    fprintf(stderr, "herd %s: cannot run python3: %s\n", cmd, strerror(errno));
    free(args);
    return errno == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "topo") == 0)
        return cmd_topo(argc, argv);
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc, argv);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("herd %d.%d.%d (built with hwloc %s)\n", HERD_VERSION_MAJOR, HERD_VERSION_MINOR,
               HERD_VERSION_PATCH, HWLOC_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "bench") == 0 || strcmp(cmd, "report") == 0)
        return cmd_harness(cmd, argc, argv);
    usage_error("unknown command '%s'", cmd);
    return EXIT_USAGE;
}
