/* The machine-wide registry (src/place/registry.c, docs/design/registry.md):
 * owner-only creation whatever the umask; refusal of symbolic links, other
 * file types, loose modes, extra hard links and (as root) another user's
 * file, which is never opened; corrupt and incompatible records rebuilt with
 * a warning; holders of a SIGKILLed process reclaimed, and its lock
 * released by the kernel; pid reuse detected by start time; 20 processes
 * starting at once under bll and xll get distinct PUs.
 *
 * Every case uses a registry in a fresh private directory (HERD_REGISTRY),
 * never the user's real one. The 20-process case runs herd_start on a
 * modelled 32-PU machine (HERD_TOPOLOGY), so it needs no more than the 2
 * real cores: nothing is pinned on a modelled machine, but the choices are
 * made and recorded exactly as on a real one. */
// herd-test-timeout: 120
#include "../common/check.h"
#include "core/runtime.h"
#include "place/registry.h"
#include "place/testing.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];
static char path[128];
static int serial;

/* A fresh registry path in the private directory. */
static const char *fresh_path(void) {
    snprintf(path, sizeof path, "%s/reg%d", dir, serial++);
    return path;
}

/* ------------------------------------------------------ stderr capture */

static char captured[4096];
static int saved_fd = -1;
static FILE *cap;

static void capture_begin(void) {
    fflush(stderr);
    cap = tmpfile();
    CHECK(cap != NULL);
    saved_fd = dup(2);
    dup2(fileno(cap), 2);
}

static void capture_end(void) {
    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    rewind(cap);
    size_t n = fread(captured, 1, sizeof captured - 1, cap);
    captured[n] = '\0';
    fclose(cap);
}

static int holders(const herd__reg_rec *rec) {
    int n = 0;
    for (int i = 0; i < HERD__REG_MAXHOLD; i++)
        n += rec->holder[i].pid != 0;
    return n;
}

/* ---------------------------------------------------------------- cases */

static void test_create_owner_only(void) {
    STEP("created 0600 and ours whatever the umask");
    herd__reg *r;
    char err[512];
    mode_t old = umask(0277); /* would leave 0400 */
    CHECK_OK(herd__reg_open(&r, fresh_path(), err, sizeof err));
    umask(old);
    struct stat st;
    CHECK(lstat(path, &st) == 0);
    CHECK_EQ(st.st_mode & 07777, 0600);
    CHECK_EQ(st.st_uid, geteuid());
    capture_begin();
    herd__reg_rec *rec = herd__reg_lock(r, err, sizeof err);
    capture_end();
    CHECK(rec != NULL);
    CHECK_EQ(captured[0], '\0'); /* a new file is not news */
    CHECK_EQ_U64(rec->h.magic, HERD__REG_MAGIC);
    CHECK_OK(herd__reg_unlock(r, 1, err, sizeof err));
    CHECK(stat(path, &st) == 0);
    CHECK_EQ(st.st_size, sizeof(herd__reg_rec));
    herd__reg_close(r);
    old = umask(0);
    CHECK_OK(herd__reg_open(&r, fresh_path(), err, sizeof err));
    umask(old);
    CHECK(lstat(path, &st) == 0);
    CHECK_EQ(st.st_mode & 07777, 0600);
    herd__reg_close(r);
}

static void expect_refused(const char *p, const char *words) {
    herd__reg *r = NULL;
    char err[512] = "";
    CHECK_RC(herd__reg_open(&r, p, err, sizeof err), HERD_ESYS);
    CHECK(r == NULL);
    if (!strstr(err, words)) {
        fprintf(stderr, "expected \"%s\" in: %s\n", words, err);
        CHECK(!"refusal message");
    }
}

static void test_refusals(void) {
    STEP("loose mode, symbolic link, directory, hard links refused");
    mode_t old = umask(0);
    const char *p = fresh_path();
    int fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0644);
    CHECK(fd >= 0);
    close(fd);
    umask(old);
    expect_refused(p, "mode 0644");

    char target[160], lnk[160];
    snprintf(target, sizeof target, "%s", fresh_path());
    herd__reg *r;
    char err[512];
    CHECK_OK(herd__reg_open(&r, target, err, sizeof err)); /* a good registry */
    herd__reg_close(r);
    snprintf(lnk, sizeof lnk, "%s", fresh_path());
    CHECK(symlink(target, lnk) == 0);
    expect_refused(lnk, "symbolic link");

    char sub[160];
    snprintf(sub, sizeof sub, "%s", fresh_path());
    CHECK(mkdir(sub, 0700) == 0);
    expect_refused(sub, "not a regular file");

    char hard[160];
    snprintf(hard, sizeof hard, "%s", fresh_path());
    CHECK(link(target, hard) == 0);
    expect_refused(target, "hard links");
    unlink(hard);
    CHECK_OK(herd__reg_open(&r, target, err, sizeof err)); /* one link again: fine */
    herd__reg_close(r);
}

static void test_other_user(void) {
    if (geteuid() != 0) {
        STEP("another user's registry: skipped (creating one needs root to chown)");
        return;
    }
    STEP("another user's registry is refused and never opened");
    const char *p = fresh_path();
    int fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0600);
    CHECK(fd >= 0);
    CHECK(write(fd, "not yours", 9) == 9);
    CHECK(fchown(fd, 65534, 65534) == 0);
    close(fd);
    /* inotify reports every open of the file: there must be none. */
    int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    CHECK(in >= 0);
    CHECK(inotify_add_watch(in, p, IN_OPEN | IN_ACCESS | IN_MODIFY) >= 0);
    expect_refused(p, "owned by uid 65534");
    char ev[4096];
    ssize_t n = read(in, ev, sizeof ev);
    CHECK(n < 0 && errno == EAGAIN); /* no event */
    close(in);
    struct stat after;
    CHECK(stat(p, &after) == 0);
    CHECK_EQ(after.st_size, 9); /* untouched: not truncated, not rebuilt */
}

/* Write a record that passes no check but `mutate`'s, lock, expect the
 * warning naming `words`, and an empty valid record afterwards. */
static void expect_rebuilt(const char *what, void (*mutate)(int fd), const char *words) {
    STEP("rebuilt with a warning: %s", what);
    herd__reg *r;
    char err[512];
    CHECK_OK(herd__reg_open(&r, fresh_path(), err, sizeof err));
    herd__reg_rec *rec = herd__reg_lock(r, err, sizeof err);
    CHECK(rec != NULL);
    CHECK_OK(herd__reg_hold(r, rec, 1, 0));
    CHECK_OK(herd__reg_unlock(r, 1, err, sizeof err));
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    mutate(fd);
    close(fd);
    capture_begin();
    rec = herd__reg_lock(r, err, sizeof err);
    capture_end();
    CHECK(rec != NULL);
    if (!strstr(captured, "warning: registry") || !strstr(captured, words) ||
        !strstr(captured, "rebuilt")) {
        fprintf(stderr, "expected a warning with \"%s\", got: %s\n", words, captured);
        CHECK(!"rebuild warning");
    }
    CHECK_EQ(holders(rec), 0);
    CHECK_EQ(rec->pu[1].pinned, 0);
    CHECK_OK(herd__reg_unlock(r, 0, err, sizeof err)); /* the repair is written anyway */
    capture_begin();
    rec = herd__reg_lock(r, err, sizeof err);
    capture_end();
    CHECK(rec != NULL);
    CHECK_EQ(captured[0], '\0'); /* valid now */
    CHECK_OK(herd__reg_unlock(r, 0, err, sizeof err));
    herd__reg_close(r);
}

static void flip_byte(int fd) {
    unsigned char c;
    off_t at = (off_t)sizeof(herd__reg_rec) / 2;
    CHECK(pread(fd, &c, 1, at) == 1);
    c ^= 0x40;
    CHECK(pwrite(fd, &c, 1, at) == 1);
}

static void truncate_short(int fd) {
    CHECK(ftruncate(fd, 100) == 0);
}

/* Valid checksum, wrong meaning: the checks behind the checksum. */
static void rewrite(int fd, void (*edit)(herd__reg_rec *)) {
    herd__reg_rec *rec = malloc(sizeof *rec);
    CHECK(rec != NULL);
    CHECK(pread(fd, rec, sizeof *rec, 0) == (ssize_t)sizeof *rec);
    edit(rec);
    rec->h.checksum = herd__reg_checksum(rec);
    CHECK(pwrite(fd, rec, sizeof *rec, 0) == (ssize_t)sizeof *rec);
    free(rec);
}

static void edit_version(herd__reg_rec *rec) {
    rec->h.version = 99;
}
static void edit_pinned(herd__reg_rec *rec) {
    rec->pu[1].pinned = 5;
}
static void edit_magic(herd__reg_rec *rec) {
    rec->h.magic ^= 1;
}
static void future_version(int fd) {
    rewrite(fd, edit_version);
}
static void wrong_count(int fd) {
    rewrite(fd, edit_pinned);
}
static void bad_magic(int fd) {
    rewrite(fd, edit_magic);
}

static void test_corrupt(void) {
    expect_rebuilt("a flipped byte", flip_byte, "checksum mismatch");
    expect_rebuilt("a short file", truncate_short, "size 100 bytes");
    expect_rebuilt("another version", future_version, "version 99");
    expect_rebuilt("counts that disagree with the holders", wrong_count, "pinned count 5");
    expect_rebuilt("not a registry", bad_magic, "bad magic");
}

/* A child that holds PUs 0..2 and then the lock itself, until killed. */
static void test_sigkill(void) {
    STEP("a SIGKILLed holder: its lock is released and its PUs reclaimed");
    const char *p = fresh_path();
    int ready[2];
    CHECK(pipe(ready) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        herd__reg *r;
        char err[512];
        if (herd__reg_open(&r, p, err, sizeof err) != 0)
            _exit(2);
        herd__reg_rec *rec = herd__reg_lock(r, err, sizeof err);
        for (int pu = 0; pu < 3; pu++)
            if (!rec || herd__reg_hold(r, rec, pu, pu) != 0)
                _exit(3);
        if (herd__reg_unlock(r, 1, err, sizeof err) != 0 || !herd__reg_lock(r, err, sizeof err))
            _exit(4);
        if (write(ready[1], "x", 1) != 1) /* holding the lock now */
            _exit(5);
        for (;;)
            pause();
    }
    close(ready[1]);
    char c;
    CHECK(read(ready[0], &c, 1) == 1);
    close(ready[0]);
    herd__reg *r;
    char err[512];
    CHECK_OK(herd__reg_open(&r, p, err, sizeof err));
    CHECK(kill(child, SIGKILL) == 0);
    int status;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    herd__reg_rec *rec = herd__reg_lock(r, err, sizeof err); /* hangs if the lock leaked */
    CHECK(rec != NULL);
    CHECK_EQ(holders(rec), 0);
    for (int pu = 0; pu < 3; pu++)
        CHECK_EQ(rec->pu[pu].pinned, 0);
    CHECK_OK(herd__reg_unlock(r, 0, err, sizeof err));
    herd__reg_close(r);
}

static void put_holder(herd__reg_rec *rec, int slot, int pid, uint64_t start, int pu) {
    rec->holder[slot] = (herd__reg_holder){.pid = pid, .pu = pu, .start = start};
    rec->pu[pu].pinned++;
}

static void test_pid_reuse(void) {
    STEP("pid reuse: a live pid with another start time is a dead holder");
    herd__reg *r;
    char err[512];
    CHECK_OK(herd__reg_open(&r, fresh_path(), err, sizeof err));
    uint64_t parent_start;
    CHECK_OK(herd__reg_proc_start(getppid(), &parent_start));
    CHECK_EQ(herd__reg_alive(getppid(), parent_start), 1);
    CHECK_EQ(herd__reg_alive(getppid(), parent_start + 1), 0);
    herd__reg_rec *rec = herd__reg_lock(r, err, sizeof err);
    CHECK(rec != NULL);
    put_holder(rec, 10, getppid(), parent_start, 4);     /* alive */
    put_holder(rec, 11, getppid(), parent_start + 7, 5); /* the pid, reused */
    put_holder(rec, 12, getpid(), 1, 6);                 /* our pid, another process */
    CHECK_OK(herd__reg_unlock(r, 1, err, sizeof err));
    rec = herd__reg_lock(r, err, sizeof err);
    CHECK(rec != NULL);
    CHECK_EQ(holders(rec), 1);
    CHECK_EQ(rec->holder[10].pid, getppid());
    CHECK_EQ(rec->pu[4].pinned, 1);
    CHECK_EQ(rec->pu[5].pinned, 0);
    CHECK_EQ(rec->pu[6].pinned, 0);
    CHECK_OK(herd__reg_unlock(r, 0, err, sizeof err));
    herd__reg_close(r);
}

/* ------------------------------------------------- 20 processes at once */

#define NPROC 20
#define NPU 32

static int flat_loads(void *ctx, int64_t *user, int n, char *err, size_t errlen) {
    for (int i = 0; i < n; i++)
        user[i] = i < NPU ? 1000 : -1; /* no CPU grows: XLL ranks by pinned */
    return 0;
}

/* Start NPROC processes together under policy; each reports the PU its one
 * worker chose, then stops when the parent closes `go`. */
static void test_concurrent(const char *policy) {
    STEP("%d processes start at once under %s", NPROC, policy);
    const char *p = fresh_path();
    setenv("HERD_REGISTRY", p, 1);
    setenv("HERD_BIND", policy, 1);
    setenv("HERD_WORKERS", "1", 1);
    setenv("HERD_TOPOLOGY", "pack:1 core:32 pu:1", 1);
    herd__map_testing_reader(flat_loads, NULL); /* inherited by the children */
    int report[2], go[2];
    CHECK(pipe(report) == 0 && pipe(go) == 0);
    pid_t kids[NPROC];
    for (int k = 0; k < NPROC; k++) {
        kids[k] = fork();
        CHECK(kids[k] >= 0);
        if (kids[k] == 0) {
            close(report[0]);
            close(go[1]);
            if (herd_start(NULL) != 0)
                _exit(2);
            int pu = herd__rt_global->pu_of_worker[0];
            if (write(report[1], &pu, sizeof pu) != sizeof pu)
                _exit(3);
            char c;
            (void)!read(go[0], &c, 1); /* returns 0 when the parent closes it */
            _exit(herd_stop() == 0 ? 0 : 4);
        }
    }
    close(report[1]);
    close(go[0]);
    int seen[NPU] = {0};
    for (int k = 0; k < NPROC; k++) {
        int pu;
        CHECK(read(report[0], &pu, sizeof pu) == sizeof pu);
        CHECK(pu >= 0 && pu < NPU);
        seen[pu]++;
    }
    close(report[0]);
    /* All are running: check the record while they hold their PUs. */
    herd__reg *r;
    char err[512];
    CHECK_OK(herd__reg_open(&r, p, err, sizeof err));
    herd__reg_rec *rec = herd__reg_lock(r, err, sizeof err);
    CHECK(rec != NULL);
    CHECK_EQ(holders(rec), NPROC);
    CHECK_OK(herd__reg_unlock(r, 0, err, sizeof err));
    close(go[1]);
    for (int k = 0; k < NPROC; k++) {
        int status;
        CHECK(waitpid(kids[k], &status, 0) == kids[k]);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    if (strcmp(policy, "static") == 0) {
        CHECK_EQ(seen[0], NPROC); /* worker 0 on PU 0, every time */
    } else {
        for (int pu = 0; pu < NPU; pu++)
            CHECK_EQ(seen[pu], pu < NPROC); /* distinct, and the first ones */
    }
    rec = herd__reg_lock(r, err, sizeof err); /* herd_stop returned every PU */
    CHECK(rec != NULL);
    CHECK_EQ(holders(rec), 0);
    CHECK_OK(herd__reg_unlock(r, 0, err, sizeof err));
    herd__reg_close(r);
    herd__map_testing_reader(NULL, NULL);
    unsetenv("HERD_REGISTRY");
    unsetenv("HERD_BIND");
    unsetenv("HERD_WORKERS");
    unsetenv("HERD_TOPOLOGY");
}

static void remove_tree(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/herd-registry-test-XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
    test_create_owner_only();
    test_refusals();
    test_other_user();
    test_corrupt();
    test_sigkill();
    test_pid_reuse();
    test_concurrent("bll");
    test_concurrent("xll");
    test_concurrent("static");
    remove_tree();
    printf("registry: all checks passed\n");
    return 0;
}
