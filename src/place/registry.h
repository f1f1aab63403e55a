/* The machine-wide registry: one small file per user that every herd
 * process mapping its workers with HERD_BIND=static/bll/xll (or sizing
 * itself with HERD_WORKERS=auto) reads and updates under a lock. It holds,
 * per PU (by OS index), the number of herd workers pinned there and the
 * user time XLL saw at its last look, and one holder entry per pinned
 * worker: {pid, process start time, PU}. The protocol (R1..R6) is
 * docs/design/registry.md; this header is the mapper layer's view of it. */
#ifndef HERD_PLACE_REGISTRY_H
#define HERD_PLACE_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#define HERD__REG_MAGIC 0x3147455244524548ull /* "HERDREG1", little-endian */
#define HERD__REG_VERSION 1u
#define HERD__REG_MAXPU 1024   /* PU slots, by OS index */
#define HERD__REG_MAXHOLD 4096 /* holder entries: pinned workers machine-wide */

/* One PU. `pinned` always equals the number of holders on it (checked at
 * every lock, R3). `load` is Algorithm 1's Cores[i].load: the user time
 * (USER_HZ ticks) of the PU at XLL's last look, plus 10 (step 6); valid
 * once `seen` is 1. */
typedef struct herd__reg_pu {
    uint32_t pinned;
    uint32_t seen;
    int64_t load;
} herd__reg_pu;

/* A pinned worker. pid 0 marks a free entry. `start` is field 22 of
 * /proc/<pid>/stat (start time in ticks since boot): a pid reused by
 * another process has another start time. */
typedef struct herd__reg_holder {
    int32_t pid;
    int32_t pu; /* OS index */
    uint64_t start;
    int32_t worker; /* the worker's id in its process, for display */
    int32_t pad;
} herd__reg_holder;

typedef struct herd__reg_header {
    uint64_t magic;
    uint32_t version;
    uint32_t header_size; /* sizeof(herd__reg_header) */
    uint64_t total_size;  /* sizeof(herd__reg_rec) */
    uint32_t npu;         /* HERD__REG_MAXPU */
    uint32_t nholder;     /* HERD__REG_MAXHOLD */
    char boot_id[40];     /* /proc/sys/kernel/random/boot_id: holders die with the boot */
    uint64_t updates;     /* committed updates, for display */
    uint64_t checksum;    /* FNV-1a 64 of the record with this field zero */
} herd__reg_header;

/* The whole record, as stored in the file. */
typedef struct herd__reg_rec {
    herd__reg_header h;
    herd__reg_pu pu[HERD__REG_MAXPU];
    herd__reg_holder holder[HERD__REG_MAXHOLD];
} herd__reg_rec;

typedef struct herd__reg herd__reg;

/* Open (creating when absent) the registry at path, or at the default place
 * when path is NULL or "" (herd__reg_default_path). Refuses, with a sentence
 * in err, anything but a regular file owned by this user with no group or
 * other permission bits, a symbolic link included; another user's file is
 * refused before it is opened (R1). Returns 0, HERD_ESYS or HERD_ENOMEM. */
int herd__reg_open(herd__reg **out, const char *path, char *err, size_t errlen);
void herd__reg_close(herd__reg *r);
const char *herd__reg_path(const herd__reg *r);

/* The default path: /dev/shm/herd-registry-<euid>, or, when /dev/shm is not
 * a directory, $XDG_RUNTIME_DIR/herd-registry. Returns 0, or HERD_ESYS with
 * err when neither exists. */
int herd__reg_default_path(char *buf, size_t len, char *err, size_t errlen);

/* Take the lock (R2), read and check the record, rebuilding it with a
 * warning on stderr when it is corrupt or incompatible (R3), and drop the
 * holders whose process is gone (R4). Returns the caller's private copy of
 * the record, valid until herd__reg_unlock, or NULL with err. */
herd__reg_rec *herd__reg_lock(herd__reg *r, char *err, size_t errlen);
/* Write the copy back when commit is 1 (or when the lock found something to
 * repair), then release the lock (R5). Returns 0 or HERD_ESYS with err; the
 * lock is released either way. */
int herd__reg_unlock(herd__reg *r, int commit, char *err, size_t errlen);

/* Record a pinned worker of this process on PU os_pu: a holder entry and
 * pinned + 1. Returns 0, or HERD_ENOMEM when every entry is taken. */
int herd__reg_hold(herd__reg *r, herd__reg_rec *rec, int os_pu, int worker);
/* Drop every holder entry of this process. Returns how many. */
int herd__reg_drop_mine(herd__reg *r, herd__reg_rec *rec);

/* Liveness of pid: 1 when /proc/<pid>/stat shows the start time `start`,
 * 0 when the process is gone or its pid now names another process, -1 when
 * /proc cannot tell (the holder is then kept). */
int herd__reg_alive(int pid, uint64_t start);
/* The start time of pid (field 22 of /proc/<pid>/stat). 0 or -1. */
int herd__reg_proc_start(int pid, uint64_t *start);

/* Write a sentence into err (when there is room) and return code: the
 * place layer's error paths read `return fail(...)`. */
int herd__place_fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* FNV-1a 64 of rec with the checksum field taken as zero. */
uint64_t herd__reg_checksum(const herd__reg_rec *rec);

#endif
