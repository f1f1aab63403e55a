/* Thread mapping across processes: static, BLL and XLL (paper 003, section
 * 2), and HERD_WORKERS=auto. docs/design/registry.md, section M.
 *
 * Every choice is one critical section of the registry (R2..R5): lock,
 * reclaim dead holders, compute, pin, record the holder, unlock. A worker
 * pins itself inside the section, as Algorithm 1 does at step 13, so a
 * holder entry exists only for a pin that succeeded.
 *
 * Where herd departs from the paper, and why:
 *  - Cores[i].load before the first look. The paper does not say; zero
 *    would make the first look compare user time accumulated since boot.
 *    herd takes the first look as the baseline (load = CurrentLoad), so a
 *    fresh record ranks PUs by pinned count alone until a second look.
 *  - pinned counts go down when a process stops (herd_stop) or dies (R4).
 *    The paper never decrements them (its BLL "cannot use the recently
 *    freed cores" in scenario 1, which is what a count of every thread
 *    ever pinned does). herd's BLL counts workers pinned now, as the issue
 *    asks; docs/design/registry.md discusses what that changes.
 *  - BestTarget starts at the first PU and the comparison at step 9 is
 *    strict, so ties go to the first PU in tree order (the paper leaves
 *    BestTarget's initial value open). */
#include "place/mapper.h"
#include "place/testing.h"

#include "herd/herd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define fail herd__place_fail

const char *herd__map_policy_name(herd__map_policy p) {
    switch (p) {
    case HERD__MAP_STATIC:
        return "static";
    case HERD__MAP_BLL:
        return "bll";
    case HERD__MAP_XLL:
        return "xll";
    }
    return "?";
}

/* ------------------------------------------------------------- loads */

/* Set once before any worker starts (testing.h); read-only afterwards, so
 * pthread_create orders the write before every read. */
static herd__stat_reader test_reader;
static void *test_ctx;

void herd__map_testing_reader(herd__stat_reader reader, void *ctx) {
    test_reader = reader;
    test_ctx = ctx;
}

int herd__map_parse_stat(const char *text, int64_t *user, int n) {
    int found = 0;
    for (int i = 0; i < n; i++)
        user[i] = -1;
    for (const char *line = text; line && *line;) {
        const char *next = strchr(line, '\n');
        /* "cpu" alone is the machine total; "cpuN" is CPU N. */
        if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9') {
            char *end;
            long cpu = strtol(line + 3, &end, 10);
            long long u = strtoll(end, &end, 10); /* the first field is user */
            if (cpu >= 0 && cpu < n && u >= 0) {
                user[cpu] = u;
                found++;
            }
        }
        line = next ? next + 1 : NULL;
    }
    return found;
}

static int read_proc_stat(int64_t *user, int n, char *err, size_t errlen) {
    /* /proc/stat reports size 0: read until end of file. */
    size_t cap = 16384, len = 0;
    char *buf = malloc(cap);
    int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || !buf) {
        int e = errno;
        free(buf);
        if (fd >= 0)
            close(fd);
        return fail(err, errlen, HERD_ESYS, "cannot read /proc/stat: %s", strerror(e));
    }
    for (;;) {
        if (len + 1 >= cap) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                close(fd);
                return fail(err, errlen, HERD_ENOMEM, "no memory to read /proc/stat");
            }
            buf = b;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + len, cap - len - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return fail(err, errlen, HERD_ESYS, "cannot read /proc/stat: %s", strerror(e));
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    close(fd);
    buf[len] = '\0';
    herd__map_parse_stat(buf, user, n);
    free(buf);
    return 0;
}

int herd__map_read_loads(int64_t *user, int n, char *err, size_t errlen) {
    if (test_reader)
        return test_reader(test_ctx, user, n, err, errlen);
    return read_proc_stat(user, n, err, errlen);
}

/* The loads of the process's PUs, in tree order: cur[i] for os_index[i]. */
static int scan_loads(int npus, const int *os_index, int64_t *cur, char *err, size_t errlen) {
    /* On the heap, not in TLS: libherd-omp.so's static TLS must stay small
     * enough for dlopen after start-up (a Python extension built with
     * -fopenmp loads its OpenMP library that way). */
    int64_t *by_os = malloc(HERD__REG_MAXPU * sizeof *by_os);
    if (!by_os)
        return fail(err, errlen, HERD_ENOMEM, "out of memory reading the PUs' loads");
    int rc = herd__map_read_loads(by_os, HERD__REG_MAXPU, err, errlen);
    for (int i = 0; !rc && i < npus; i++) {
        if (by_os[os_index[i]] < 0)
            rc = fail(err, errlen, HERD_EINVAL,
                      "the load source (/proc/stat) has no line for cpu%d, PU %d of the "
                      "topology; xll needs the user time of every PU it may choose",
                      os_index[i], i);
        else
            cur[i] = by_os[os_index[i]];
    }
    free(by_os);
    return rc;
}

/* --------------------------------------------------------------- policies */

static int check_pus(int npus, const int *os_index, char *err, size_t errlen) {
    if (npus < 1)
        return fail(err, errlen, HERD_EINVAL, "no PU to choose from");
    for (int i = 0; i < npus; i++)
        if (os_index[i] < 0 || os_index[i] >= HERD__REG_MAXPU)
            return fail(err, errlen, HERD_EINVAL,
                        "PU %d has OS index %d; the registry holds OS indexes 0..%d", i,
                        os_index[i], HERD__REG_MAXPU - 1);
    return 0;
}

/* BLL: the fewest workers pinned now; ties to the first PU. */
static int pick_bll(const herd__reg_rec *rec, int npus, const int *os_index) {
    int best = 0;
    for (int i = 1; i < npus; i++)
        if (rec->pu[os_index[i]].pinned < rec->pu[os_index[best]].pinned)
            best = i;
    return best;
}

/* XLL, Algorithm 1 steps 3..12 (step 2, the lock, is the caller's). Updates
 * the record's loads, as step 6 does. Returns the PU or a negative error. */
static int pick_xll(herd__reg_rec *rec, int npus, const int *os_index, char *err, size_t errlen) {
    int64_t *cur = malloc((size_t)npus * sizeof *cur);
    int64_t *change = malloc((size_t)npus * sizeof *change);
    int rc = cur && change ? 0 : fail(err, errlen, HERD_ENOMEM, "no memory for %d loads", npus);
    if (rc == 0)
        rc = scan_loads(npus, os_index, cur, err, errlen); /* step 4: Scan(CurrentLoad[i]) */
    if (rc) {
        free(cur);
        free(change);
        return rc;
    }
    for (int i = 0; i < npus; i++) { /* step 3 */
        herd__reg_pu *c = &rec->pu[os_index[i]];
        if (!c->seen) { /* first look: the baseline (see the top) */
            c->load = cur[i];
            c->seen = 1;
        }
        change[i] = cur[i] - c->load + (int64_t)c->pinned; /* step 5 */
        c->load = cur[i] + 10;                             /* step 6 */
    }
    int best = 0;                     /* BestTarget: the first PU */
    for (int i = 0; i < npus; i++)    /* step 8 */
        if (change[i] < change[best]) /* step 9 */
            best = i;                 /* step 10 */
    free(cur);
    free(change);
    return best;
}

static int pick(herd__reg_rec *rec, herd__map_policy p, int npus, const int *os_index, int worker,
                char *err, size_t errlen) {
    switch (p) {
    case HERD__MAP_STATIC:
        return worker % npus;
    case HERD__MAP_BLL:
        return pick_bll(rec, npus, os_index);
    case HERD__MAP_XLL:
        return pick_xll(rec, npus, os_index, err, errlen);
    }
    return fail(err, errlen, HERD_EINVAL, "unknown mapping policy %d", (int)p);
}

int herd__map_choose(herd__reg *r, herd__map_policy p, int npus, const int *os_index, int worker,
                     herd__pin_fn pin, void *ctx, int *pu_out, char *err, size_t errlen) {
    int rc = check_pus(npus, os_index, err, errlen);
    if (rc)
        return rc;
    herd__reg_rec *rec = herd__reg_lock(r, err, errlen); /* step 2: GetTheLock */
    if (!rec)
        return HERD_ESYS;
    int best = pick(rec, p, npus, os_index, worker, err, errlen);
    if (best < 0) {
        herd__reg_unlock(r, 1, NULL, 0); /* keep what step 6 saw, and any repair */
        return best;
    }
    rc = pin ? pin(ctx, best, err, errlen) : 0;                         /* step 13: SetAffinity */
    if (rc == 0 && herd__reg_hold(r, rec, os_index[best], worker) != 0) /* step 14 */
        rc = fail(err, errlen, HERD_ENOMEM,
                  "registry %s is full: %d workers are pinned machine-wide", herd__reg_path(r),
                  HERD__REG_MAXHOLD);
    char uerr[256];
    int urc = herd__reg_unlock(r, 1, uerr, sizeof uerr); /* step 15: ReleaseTheLock */
    if (rc == 0 && urc) {
        snprintf(err, errlen, "%s", uerr);
        rc = urc;
    }
    if (rc == 0)
        *pu_out = best;
    return rc;
}

int herd__map_preview(herd__reg *r, herd__map_policy p, int npus, const int *os_index, int nworkers,
                      int *pu_out, char *err, size_t errlen) {
    int rc = check_pus(npus, os_index, err, errlen);
    if (rc)
        return rc;
    herd__reg_rec *rec = herd__reg_lock(r, err, errlen);
    if (!rec)
        return HERD_ESYS;
    /* Simulate the starts in a scratch copy, so that neither the simulated
     * holders nor step 6's loads reach the file; unlock writes back only
     * what the lock itself repaired. */
    herd__reg_rec *sim = malloc(sizeof *sim);
    if (!sim)
        rc = fail(err, errlen, HERD_ENOMEM, "no memory to preview the placement");
    else
        memcpy(sim, rec, sizeof *sim);
    for (int i = 0; i < nworkers && rc == 0; i++) {
        int best = pick(sim, p, npus, os_index, i, err, errlen);
        if (best < 0)
            rc = best;
        else if (herd__reg_hold(r, sim, os_index[best], i) != 0)
            rc = fail(err, errlen, HERD_ENOMEM, "registry %s is full", herd__reg_path(r));
        else
            pu_out[i] = best;
    }
    free(sim);
    herd__reg_unlock(r, 0, NULL, 0);
    return rc;
}

int herd__map_release(herd__reg *r, char *err, size_t errlen) {
    herd__reg_rec *rec = herd__reg_lock(r, err, errlen);
    if (!rec)
        return HERD_ESYS;
    herd__reg_drop_mine(r, rec);
    return herd__reg_unlock(r, 1, err, errlen);
}

/* ------------------------------------------------------------------ auto */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int herd__map_auto_workers(herd__reg *r, int npus, const int *os_index, int *n_out, char *err,
                           size_t errlen) {
    int rc = check_pus(npus, os_index, err, errlen);
    int64_t *u0 = malloc((size_t)npus * sizeof *u0), *u1 = malloc((size_t)npus * sizeof *u1);
    if (rc == 0 && (!u0 || !u1))
        rc = fail(err, errlen, HERD_ENOMEM, "no memory for %d loads", npus);
    double t0 = now_s();
    if (rc == 0)
        rc = scan_loads(npus, os_index, u0, err, errlen);
    if (rc == 0) {
        struct timespec d = {0, HERD__MAP_AUTO_WINDOW_MS * 1000000L};
        while (nanosleep(&d, &d) != 0 && errno == EINTR)
            ;
        rc = scan_loads(npus, os_index, u1, err, errlen);
    }
    long hz = sysconf(_SC_CLK_TCK);
    double window = (now_s() - t0) * (double)(hz > 0 ? hz : 100); /* ticks */
    herd__reg_rec *rec = rc == 0 ? herd__reg_lock(r, err, errlen) : NULL;
    if (rc == 0 && !rec)
        rc = HERD_ESYS;
    if (rc == 0) {
        int n = 0;
        for (int i = 0; i < npus; i++)
            if (rec->pu[os_index[i]].pinned == 0 && (double)(u1[i] - u0[i]) * 2 <= window)
                n++;
        *n_out = n > 0 ? n : 1;
        herd__reg_unlock(r, 0, NULL, 0);
    }
    free(u0);
    free(u1);
    return rc;
}

/* -------------------------------------------------------------- printing */

static void comm_of(int pid, char *buf, size_t len) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    snprintf(buf, len, "?");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n <= 0) {
        snprintf(buf, len, "?");
        return;
    }
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
}

static void print_holders(const herd__reg_rec *rec, FILE *out) {
    int shown = 0;
    for (int i = 0; i < HERD__REG_MAXHOLD; i++) {
        int pid = rec->holder[i].pid;
        if (pid == 0)
            continue;
        int first = 1;
        for (int k = 0; k < i && first; k++)
            first = rec->holder[k].pid != pid;
        if (!first)
            continue;
        char comm[64];
        comm_of(pid, comm, sizeof comm);
        fprintf(out, "  pid %d (%s): worker/OS PU", pid, comm);
        for (int k = i; k < HERD__REG_MAXHOLD; k++)
            if (rec->holder[k].pid == pid)
                fprintf(out, " %d/%d", rec->holder[k].worker, rec->holder[k].pu);
        fputc('\n', out);
        shown++;
    }
    if (!shown)
        fprintf(out, "  (no herd process holds a PU)\n");
}

void herd__map_print(herd__reg *r, int npus, const int *os_index, FILE *out) {
    char err[512];
    herd__reg_rec *rec = herd__reg_lock(r, err, sizeof err);
    if (!rec) {
        fprintf(out, "machine-wide occupancy: unavailable: %s\n", err);
        return;
    }
    fprintf(out, "machine-wide occupancy (registry %s, %llu updates):\n", herd__reg_path(r),
            (unsigned long long)rec->h.updates);
    print_holders(rec, out);
    int64_t *cur = malloc((size_t)npus * sizeof *cur);
    int have = cur && check_pus(npus, os_index, err, sizeof err) == 0 &&
               scan_loads(npus, os_index, cur, err, sizeof err) == 0;
    fprintf(out, "%6s %6s %7s %14s %14s\n", "pu", "os", "pinned", "user ticks", "xll change");
    for (int i = 0; i < npus; i++) {
        int os = os_index[i];
        const herd__reg_pu *c = os >= 0 && os < HERD__REG_MAXPU ? &rec->pu[os] : NULL;
        fprintf(out, "%6d %6d %7u", i, os, c ? c->pinned : 0);
        if (have && c && c->seen) /* step 5 as the next start would compute it */
            fprintf(out, " %14lld %14lld\n", (long long)cur[i],
                    (long long)(cur[i] - c->load + (int64_t)c->pinned));
        else if (have)
            fprintf(out, " %14lld %14s\n", (long long)cur[i], "(no look yet)");
        else
            fprintf(out, " %14s %14s\n", "?", "?");
    }
    if (!have)
        fprintf(out, "loads unavailable: %s\n", err);
    free(cur);
    herd__reg_unlock(r, 0, NULL, 0); /* writes back only what reclaiming repaired */
}
