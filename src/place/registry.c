/* The machine-wide registry of pinned herd workers (docs/design/registry.md).
 *
 * Shape. One regular file per user, /dev/shm/herd-registry-<euid> by
 * default, holding one fixed-size record (registry.h): a header with magic,
 * version, sizes, the boot id and a checksum; per-PU pinned counts and
 * XLL's last loads; holder entries {pid, start time, PU}. Every use is
 * lock, read the whole record into a private copy, check it, change the
 * copy, write it back whole, unlock (R2..R5). The record is ~90 KiB; a
 * worker start reads and writes it once.
 *
 * Why a file with flock() and whole-record pread/pwrite:
 *  - flock() locks are dropped by the kernel when the last descriptor of the
 *    open file goes, so a holder killed by SIGKILL never leaves the lock
 *    taken. A process-shared pthread mutex in shared memory would stay
 *    locked (robust mutexes fix that, but the record behind them may be half
 *    written and would still need the checksum below).
 *  - A private copy written back whole means a crash mid-update leaves at
 *    worst a record whose checksum does not match, which the next process
 *    rebuilds (R3), never a record that looks right and is wrong. mmap would
 *    also expose us to SIGBUS if another program truncated the file.
 *  - The same file works in /dev/shm, in $XDG_RUNTIME_DIR or at any path
 *    (HERD_REGISTRY), with nothing to clean up by hand: deleting the file
 *    resets the registry.
 * Rejected: System V shared memory (ids leak, no owner-only creation
 * without extra checks, no kernel-released lock); POSIX named semaphores
 * (stay taken when the holder dies).
 *
 * Locking inside a process. flock() excludes open file descriptions, not
 * threads: two workers of one process would share the lock. A process-wide
 * mutex is therefore taken first (lock order: reg_mutex, then the flock). */
#include "place/registry.h"

#include "herd/herd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct herd__reg {
    int fd;
    int pid;        /* getpid() at open: our holder entries carry it */
    uint64_t start; /* our own start time, the other half of our identity */
    int dirty;      /* the lock repaired the record: write it back at unlock */
    int locked;
    herd__reg_rec *rec; /* the private copy, valid between lock and unlock */
    char path[PATH_MAX];
};

/* Excludes the threads of this process from each other (see the top). */
static pthread_mutex_t reg_mutex = PTHREAD_MUTEX_INITIALIZER;

#define fail herd__place_fail

int herd__place_fail(char *err, size_t errlen, int code, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* ------------------------------------------------------------ processes */

int herd__reg_proc_start(int pid, uint64_t *start) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int saved = errno;
    close(fd);
    if (n <= 0) {
        errno = n == 0 ? ESRCH : saved;
        return -1;
    }
    buf[n] = '\0';
    /* The command name (field 2) is in parentheses and may hold spaces and
     * parentheses itself: the fields resume after the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p) {
        errno = EPROTO;
        return -1;
    }
    p++;
    for (int field = 3; field < 22; field++) { /* skip fields 3..21 */
        while (*p == ' ')
            p++;
        while (*p && *p != ' ')
            p++;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p || errno) {
        errno = EPROTO;
        return -1;
    }
    *start = v;
    return 0;
}

int herd__reg_alive(int pid, uint64_t start) {
    uint64_t now;
    if (pid <= 0)
        return 0;
    if (herd__reg_proc_start(pid, &now) != 0)
        return errno == ENOENT || errno == ESRCH ? 0 : -1;
    return now == start;
}

static void read_boot_id(char out[40]) {
    memset(out, 0, 40);
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, 39);
    close(fd);
    if (n <= 0) {
        memset(out, 0, 40);
        return;
    }
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
}

/* ----------------------------------------------------------- the record */

uint64_t herd__reg_checksum(const herd__reg_rec *rec) {
    const unsigned char *p = (const unsigned char *)rec;
    size_t at = offsetof(herd__reg_rec, h.checksum), n = sizeof *rec;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = i >= at && i < at + sizeof rec->h.checksum ? 0 : p[i];
        h = (h ^ c) * 0x100000001b3ull;
    }
    return h;
}

static void init_record(herd__reg_rec *rec) {
    memset(rec, 0, sizeof *rec);
    rec->h.magic = HERD__REG_MAGIC;
    rec->h.version = HERD__REG_VERSION;
    rec->h.header_size = sizeof rec->h;
    rec->h.total_size = sizeof *rec;
    rec->h.npu = HERD__REG_MAXPU;
    rec->h.nholder = HERD__REG_MAXHOLD;
    read_boot_id(rec->h.boot_id);
}

/* R3: what is wrong with the record read from the file, or NULL. */
static const char *check_record(const herd__reg_rec *rec, size_t got, char *buf, size_t len) {
    const herd__reg_header *h = &rec->h;
    if (got != sizeof *rec) {
        snprintf(buf, len, "size %zu bytes, expected %zu", got, sizeof *rec);
        return buf;
    }
    if (h->magic != HERD__REG_MAGIC)
        return "not a herd registry (bad magic number)";
    if (h->version != HERD__REG_VERSION) {
        snprintf(buf, len, "version %u, this herd writes version %u", h->version,
                 HERD__REG_VERSION);
        return buf;
    }
    if (h->header_size != sizeof *h || h->total_size != sizeof *rec || h->npu != HERD__REG_MAXPU ||
        h->nholder != HERD__REG_MAXHOLD)
        return "incompatible layout (header, PU or holder counts differ)";
    if (h->checksum != herd__reg_checksum(rec))
        return "checksum mismatch (a writer died mid-update, or the file was changed)";
    /* The checksum vouches for the bytes; this vouches for the meaning. */
    uint32_t count[HERD__REG_MAXPU] = {0};
    for (int i = 0; i < HERD__REG_MAXHOLD; i++) {
        const herd__reg_holder *e = &rec->holder[i];
        if (e->pid == 0)
            continue;
        if (e->pid < 0 || e->pu < 0 || e->pu >= HERD__REG_MAXPU)
            return "a holder entry names an impossible pid or PU";
        count[e->pu]++;
    }
    for (int p = 0; p < HERD__REG_MAXPU; p++)
        if (count[p] != rec->pu[p].pinned) {
            snprintf(buf, len, "PU %d: pinned count %u but %u holders", p, rec->pu[p].pinned,
                     count[p]);
            return buf;
        }
    return NULL;
}

static int all_zero(const void *p, size_t n) {
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        if (c[i])
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- paths */

int herd__reg_default_path(char *buf, size_t len, char *err, size_t errlen) {
    struct stat st;
    if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(buf, len, "/dev/shm/herd-registry-%u", (unsigned)geteuid());
        return 0;
    }
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (xdg && xdg[0] == '/' && stat(xdg, &st) == 0 && S_ISDIR(st.st_mode)) {
        if ((size_t)snprintf(buf, len, "%s/herd-registry", xdg) >= len)
            return fail(err, errlen, HERD_ESYS, "XDG_RUNTIME_DIR is too long");
        return 0;
    }
    return fail(err, errlen, HERD_ESYS,
                "no place for the machine-wide registry: /dev/shm is not a directory and "
                "XDG_RUNTIME_DIR is not set to one; set HERD_REGISTRY to the path of a file");
}

/* R1: a file we may trust: regular, ours, no group/other bits, one link. */
static int check_owner(const struct stat *st, const char *path, char *err, size_t errlen) {
    if (S_ISLNK(st->st_mode))
        return fail(err, errlen, HERD_ESYS, "%s is a symbolic link; refusing to follow it", path);
    if (!S_ISREG(st->st_mode))
        return fail(err, errlen, HERD_ESYS, "%s is not a regular file", path);
    if (st->st_uid != geteuid())
        return fail(err, errlen, HERD_ESYS,
                    "%s is owned by uid %u, not by this user (uid %u); refusing to use "
                    "another user's registry",
                    path, (unsigned)st->st_uid, (unsigned)geteuid());
    if (st->st_mode & 077)
        return fail(err, errlen, HERD_ESYS,
                    "%s has mode %04o: group or others may access it; a registry must be 0600 "
                    "(remove the file and herd recreates it)",
                    path, (unsigned)(st->st_mode & 07777));
    if (st->st_nlink != 1)
        return fail(err, errlen, HERD_ESYS, "%s has %lu hard links; a registry must have one", path,
                    (unsigned long)st->st_nlink);
    return 0;
}

/* Open path for reading and writing, creating it owner-only when absent.
 * Returns the descriptor, or -1 with err. */
static int open_checked(const char *path, char *err, size_t errlen) {
    const int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
    for (int attempt = 0; attempt < 2; attempt++) {
        struct stat st;
        if (lstat(path, &st) == 0) {
            /* Refused before open(): another user's file is never opened. */
            if (check_owner(&st, path, err, errlen))
                return -1;
            int fd = open(path, flags);
            if (fd < 0) {
                if (errno == ENOENT)
                    continue; /* removed meanwhile: create it */
                fail(err, errlen, HERD_ESYS, "cannot open %s: %s", path, strerror(errno));
                return -1;
            }
            return fd;
        }
        if (errno != ENOENT) {
            fail(err, errlen, HERD_ESYS, "cannot use %s: %s", path, strerror(errno));
            return -1;
        }
        int fd = open(path, flags | O_CREAT | O_EXCL, 0600);
        if (fd >= 0) {
            /* The umask may have removed bits the owner needs; set exactly
             * 0600 (it can only have removed bits, never added some). */
            if (fchmod(fd, 0600) != 0) {
                fail(err, errlen, HERD_ESYS, "cannot set mode 0600 on %s: %s", path,
                     strerror(errno));
                close(fd);
                return -1;
            }
            return fd;
        }
        if (errno != EEXIST) {
            fail(err, errlen, HERD_ESYS, "cannot create %s: %s", path, strerror(errno));
            return -1;
        }
        /* Another process created it between our lstat and open: look again. */
    }
    fail(err, errlen, HERD_ESYS, "cannot open %s: it keeps appearing and disappearing", path);
    return -1;
}

int herd__reg_open(herd__reg **out, const char *path, char *err, size_t errlen) {
    *out = NULL;
    herd__reg *r = calloc(1, sizeof *r);
    if (!r)
        return fail(err, errlen, HERD_ENOMEM, "no memory for the registry");
    r->fd = -1;
    int rc = 0;
    if (path && path[0]) {
        if (strlen(path) >= sizeof r->path)
            rc = fail(err, errlen, HERD_ESYS, "registry path too long");
        else
            snprintf(r->path, sizeof r->path, "%s", path);
    } else {
        rc = herd__reg_default_path(r->path, sizeof r->path, err, errlen);
    }
    if (rc == 0) {
        r->rec = malloc(sizeof *r->rec);
        if (!r->rec)
            rc = fail(err, errlen, HERD_ENOMEM, "no memory for the registry record");
    }
    if (rc == 0) {
        r->fd = open_checked(r->path, err, errlen);
        if (r->fd < 0)
            rc = HERD_ESYS;
    }
    struct stat st;
    if (rc == 0 && fstat(r->fd, &st) != 0)
        rc = fail(err, errlen, HERD_ESYS, "cannot stat %s: %s", r->path, strerror(errno));
    if (rc == 0)
        rc = check_owner(&st, r->path, err, errlen); /* what we opened, not just what we saw */
    if (rc == 0) {
        r->pid = (int)getpid();
        if (herd__reg_proc_start(r->pid, &r->start) != 0)
            rc = fail(err, errlen, HERD_ESYS, "cannot read /proc/self/stat: %s", strerror(errno));
    }
    if (rc) {
        herd__reg_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

void herd__reg_close(herd__reg *r) {
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r->rec);
    free(r);
}

const char *herd__reg_path(const herd__reg *r) {
    return r->path;
}

/* ----------------------------------------------------------- lock, unlock */

/* R4: drop the holders whose process is gone. Each pid's /proc entry is
 * read once per sweep; entries of one pid may still differ in start time
 * (one of them is then a reused pid). Returns how many entries were dropped. */
static int reclaim(herd__reg *r, herd__reg_rec *rec) {
    enum { CACHE = 64 };
    struct {
        int pid, state; /* state: 1 found (start below), 0 gone, -1 /proc cannot tell */
        uint64_t start;
    } cache[CACHE];
    int nc = 0, dropped = 0;
    for (int i = 0; i < HERD__REG_MAXHOLD; i++) {
        herd__reg_holder *e = &rec->holder[i];
        if (e->pid == 0)
            continue;
        int state = -2;
        uint64_t start = 0;
        if (e->pid == r->pid) { /* ourselves */
            state = 1;
            start = r->start;
        }
        for (int k = 0; k < nc && state == -2; k++)
            if (cache[k].pid == e->pid) {
                state = cache[k].state;
                start = cache[k].start;
            }
        if (state == -2) {
            if (herd__reg_proc_start(e->pid, &start) == 0)
                state = 1;
            else
                state = errno == ENOENT || errno == ESRCH ? 0 : -1;
            if (nc < CACHE) {
                cache[nc].pid = e->pid;
                cache[nc].state = state;
                cache[nc++].start = start;
            }
        }
        if (state == -1 || (state == 1 && start == e->start))
            continue; /* alive, or /proc cannot tell: keep it */
        rec->pu[e->pu].pinned--;
        memset(e, 0, sizeof *e);
        dropped++;
    }
    return dropped;
}

static void unlock_raw(herd__reg *r) {
    flock(r->fd, LOCK_UN);
    r->locked = 0;
    pthread_mutex_unlock(&reg_mutex);
}

herd__reg_rec *herd__reg_lock(herd__reg *r, char *err, size_t errlen) {
    pthread_mutex_lock(&reg_mutex);
    /* R2: blocks until every other process is out. */
    while (flock(r->fd, LOCK_EX) != 0) {
        if (errno == EINTR)
            continue;
        fail(err, errlen, HERD_ESYS, "cannot lock %s: %s", r->path, strerror(errno));
        pthread_mutex_unlock(&reg_mutex);
        return NULL;
    }
    r->locked = 1;
    r->dirty = 0;
    herd__reg_rec *rec = r->rec;
    size_t got = 0;
    struct stat st;
    if (fstat(r->fd, &st) != 0) {
        fail(err, errlen, HERD_ESYS, "cannot stat %s: %s", r->path, strerror(errno));
        unlock_raw(r);
        return NULL;
    }
    memset(rec, 0, sizeof *rec);
    while (got < sizeof *rec) {
        ssize_t n = pread(r->fd, (char *)rec + got, sizeof *rec - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fail(err, errlen, HERD_ESYS, "cannot read %s: %s", r->path, strerror(errno));
            unlock_raw(r);
            return NULL;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    if ((size_t)st.st_size > got)
        got = (size_t)st.st_size; /* longer than a record: reported as a size mismatch */
    char why_buf[160];
    const char *why = check_record(rec, got, why_buf, sizeof why_buf);
    if (why) {
        /* A new file (empty, or created but not yet written) is not news. */
        if (!(got == 0 || all_zero(rec, sizeof *rec)))
            fprintf(stderr,
                    "herd: warning: registry %s: %s; rebuilt empty (herd processes running now "
                    "are forgotten: their PUs count as free until they stop)\n",
                    r->path, why);
        init_record(rec);
        r->dirty = 1;
    } else {
        char boot[40];
        read_boot_id(boot);
        if (memcmp(boot, rec->h.boot_id, sizeof boot) != 0) {
            /* Written before a reboot: no holder can be alive, and the loads
             * were counted from another boot. Not a fault: start over. */
            init_record(rec);
            r->dirty = 1;
        }
    }
    if (reclaim(r, rec))
        r->dirty = 1;
    return rec;
}

int herd__reg_unlock(herd__reg *r, int commit, char *err, size_t errlen) {
    int rc = 0;
    if (commit || r->dirty) {
        herd__reg_rec *rec = r->rec;
        rec->h.updates++;
        rec->h.checksum = herd__reg_checksum(rec);
        size_t done = 0;
        while (done < sizeof *rec && rc == 0) {
            ssize_t n = pwrite(r->fd, (char *)rec + done, sizeof *rec - done, (off_t)done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                rc = fail(err, errlen, HERD_ESYS, "cannot write %s: %s", r->path,
                          n < 0 ? strerror(errno) : "no space");
            else
                done += (size_t)n;
        }
        /* A longer file (another layout) is cut to one record. */
        if (rc == 0 && ftruncate(r->fd, (off_t)sizeof *rec) != 0)
            rc = fail(err, errlen, HERD_ESYS, "cannot resize %s: %s", r->path, strerror(errno));
    }
    unlock_raw(r);
    return rc;
}

/* ---------------------------------------------------------------- holders */

int herd__reg_hold(herd__reg *r, herd__reg_rec *rec, int os_pu, int worker) {
    if (os_pu < 0 || os_pu >= HERD__REG_MAXPU)
        return HERD_EINVAL;
    for (int i = 0; i < HERD__REG_MAXHOLD; i++) {
        herd__reg_holder *e = &rec->holder[i];
        if (e->pid != 0)
            continue;
        *e = (herd__reg_holder){.pid = r->pid, .pu = os_pu, .start = r->start, .worker = worker};
        rec->pu[os_pu].pinned++;
        return 0;
    }
    return HERD_ENOMEM;
}

int herd__reg_drop_mine(herd__reg *r, herd__reg_rec *rec) {
    int n = 0;
    for (int i = 0; i < HERD__REG_MAXHOLD; i++) {
        herd__reg_holder *e = &rec->holder[i];
        if (e->pid != r->pid || e->start != r->start)
            continue;
        rec->pu[e->pu].pinned--;
        memset(e, 0, sizeof *e);
        n++;
    }
    return n;
}
