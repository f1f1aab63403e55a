/* target constructs on the host, the only device (docs/design/openmp.md,
 * "Target regions").
 *
 * A target region is executed by the initial task of a new device data
 * environment (the specification's words): a task of its own whose team is
 * a team of one at level 0, outside any league (omp_get_num_teams() is 1),
 * with the initial ICVs (herd__omp_g.icv), not its encountering task's.
 * Mapping is the identity, except `firstprivate` (GOMP_MAP_FIRSTPRIVATE):
 * the region gets copies, made when the construct is met. The region is a
 * task (the target task) for `depend` and `nowait`: with nowait a deferred
 * task, else an undeferred one (if(0)), which waits for its dependences
 * first; both through GOMP_task. */
#include "omp/omp.h"

#include <stdlib.h>
#include <string.h>

/* GCC's values (gomp-constants.h) */
enum { MAP_FIRSTPRIVATE = 12 };
#define TARGET_FLAG_NOWAIT 1u
#define ARG_DEVICE_MASK ((1 << 7) - 1)
#define ARG_SUBSEQUENT (1 << 7)
#define ARG_ID_MASK (((1 << 8) - 1) << 8)
#define ARG_THREAD_LIMIT (2 << 8)
#define ARG_VALUE_SHIFT 16

#define NOT_COPIED SIZE_MAX

/* A target task's data, one block: the header, then mapnum entries, then
 * the firstprivate copies at `copies` (offsets from the block's start,
 * so the block may move, as task data in a deque slot does). */
typedef struct tgt_hdr {
    void (*fn)(void *);
    size_t mapnum;
    size_t copies;
    int limit; /* thread_limit clause, 0: none */
} tgt_hdr;

typedef struct tgt_map {
    void *host; /* the address the region gets, unless copied */
    size_t off; /* its copy's offset from the copies, NOT_COPIED: none */
} tgt_map;

/* The thread_limit clause among GCC's target arguments, 0: none. */
static int thread_limit_of(void **args) {
    while (args && *args) {
        intptr_t id = (intptr_t)*args++, val;
        if (id & ARG_SUBSEQUENT)
            val = (intptr_t)*args++;
        else
            val = id >> ARG_VALUE_SHIFT;
        if ((id & ARG_DEVICE_MASK) != 0 || (id & ARG_ID_MASK) != ARG_THREAD_LIMIT)
            continue;
        /* It lowers thread-limit-var (OMP_THREAD_LIMIT, else no limit). */
        if (val > 0 && val < herd__omp_g.thread_limit)
            return (int)val;
        return 0;
    }
    return 0;
}

typedef struct initial_arg {
    void (*fn)(void *);
    void *addrs;
    int limit;
} initial_arg;

static void initial_entry(void *p) {
    initial_arg a;
    memcpy(&a, p, sizeof a);
    omp_task *prev = herd__omp_cur;
    omp_task me;
    memset(&me, 0, sizeof me);
    me.icv_base = herd__omp_g.icv; /* the device's initial ICVs */
    herd__omp_icv_root(&me);
    me.frame_mode = OMP_FRAME_HERD; /* herd__call_task opened its frame */
    me.league_limit = a.limit;
    me.ch_lo = me.ch_hi = -1;
    herd__omp_cur = &me;
    a.fn(a.addrs);
    if (herd__self())
        herd__omp_wait_tasks(&me); /* the region's end: its tasks */
    herd__omp_deps_free(&me);
    herd__omp_icv_end(&me);
    herd__omp_cur = prev;
}

/* Run fn(addrs) as the initial task of a new data environment. */
static void run_initial(void (*fn)(void *), void *addrs, int limit) {
    initial_arg a = {fn, addrs, limit};
    OMP_SAVE();
    if (herd__self())
        herd__call_task(initial_entry, &a); /* a frame of its own: waits for its tasks */
    else
        initial_entry(&a); /* outside herd its tasks ran undeferred */
    OMP_RESTORE();
}

static void target_task(void *p) {
    tgt_hdr *h = p;
    tgt_map *m = (tgt_map *)(h + 1);
    char *copies = (char *)p + h->copies;
    void *addrs[h->mapnum ? h->mapnum : 1];
    for (size_t i = 0; i < h->mapnum; i++)
        addrs[i] = m[i].off == NOT_COPIED ? m[i].host : copies + m[i].off;
    run_initial(h->fn, addrs, h->limit);
}

static void nothing(void *p) {
    (void)p;
}

OMP_API void GOMP_target_ext(int device, void (*fn)(void *), size_t mapnum, void **hostaddrs,
                             size_t *sizes, unsigned short *kinds, unsigned flags, void **depend,
                             void **args) {
    (void)device; /* every device is the host */
    size_t align = _Alignof(tgt_hdr), copies = 0;
    for (size_t i = 0; i < mapnum; i++)
        if ((kinds[i] & 0xff) == MAP_FIRSTPRIVATE && hostaddrs[i]) {
            size_t a = (size_t)1 << (kinds[i] >> 8);
            if (a > align)
                align = a;
            copies = ((copies + a - 1) & ~(a - 1)) + sizes[i];
        }
    size_t head = sizeof(tgt_hdr) + mapnum * sizeof(tgt_map);
    head = (head + align - 1) & ~(align - 1);
    size_t size = head + copies;
    tgt_hdr *h = aligned_alloc(align, (size + align - 1) & ~(align - 1));
    if (!h)
        herd__omp_fatal("out of memory for a target region's data (%zu bytes)", size);
    h->fn = fn;
    h->mapnum = mapnum;
    h->copies = head;
    h->limit = thread_limit_of(args);
    tgt_map *m = (tgt_map *)(h + 1);
    size_t off = 0;
    for (size_t i = 0; i < mapnum; i++) {
        m[i].host = hostaddrs[i];
        m[i].off = NOT_COPIED;
        if ((kinds[i] & 0xff) == MAP_FIRSTPRIVATE && hostaddrs[i]) {
            size_t a = (size_t)1 << (kinds[i] >> 8);
            off = (off + a - 1) & ~(a - 1);
            memcpy((char *)h + head + off, hostaddrs[i], sizes[i]);
            m[i].off = off;
            off += sizes[i];
        }
    }
    bool nowait = flags & TARGET_FLAG_NOWAIT;
    GOMP_task(target_task, h, NULL, (long)size, (long)align, nowait, depend ? OMP_TASK_DEPEND : 0,
              depend, 0, NULL);
    free(h); /* a deferred task has its own copy */
}

/* GCC < 5: no firstprivate map kinds, no dependences. */
OMP_API void GOMP_target(int device, void (*fn)(void *), const void *unused, size_t mapnum,
                         void **hostaddrs, size_t *sizes, unsigned char *kinds) {
    (void)device, (void)unused, (void)mapnum, (void)sizes, (void)kinds;
    run_initial(fn, hostaddrs, 0);
}

/* Data movement on the host is the identity: update and enter/exit data do
 * nothing but their task's part, ordering with `depend` (an empty target
 * task; without nowait it is waited for, so the construct waits for its
 * dependences). */
static void empty_target_task(unsigned flags, void **depend) {
    if (depend)
        GOMP_task(nothing, NULL, NULL, 0, 1, flags & TARGET_FLAG_NOWAIT, OMP_TASK_DEPEND, depend, 0,
                  NULL);
}

OMP_API void GOMP_target_update_ext(int device, size_t mapnum, void **hostaddrs, size_t *sizes,
                                    unsigned short *kinds, unsigned flags, void **depend) {
    (void)device, (void)mapnum, (void)hostaddrs, (void)sizes, (void)kinds;
    empty_target_task(flags, depend);
}

OMP_API void GOMP_target_enter_exit_data(int device, size_t mapnum, void **hostaddrs, size_t *sizes,
                                         unsigned short *kinds, unsigned flags, void **depend) {
    (void)device, (void)mapnum, (void)hostaddrs, (void)sizes, (void)kinds;
    empty_target_task(flags, depend);
}

OMP_API void GOMP_target_data(void) {}
OMP_API void GOMP_target_data_ext(void) {}
OMP_API void GOMP_target_end_data(void) {}
OMP_API void GOMP_target_update(void) {}
OMP_API void GOMP_offload_register(void) {}
OMP_API void GOMP_offload_unregister(void) {}
OMP_API void GOMP_offload_register_ver(void) {}
OMP_API void GOMP_offload_unregister_ver(void) {}
