/* A sentinel mapping for the stack overflow tests: a shared memory file
 * (memfd) filled with a pattern, mapped by the child at the address right
 * below the guard region of the stack it runs on (where a frame that jumps
 * the guard would land first), and read back by the parent after the child
 * died, so that "no write outside the stack" is checked on real memory.
 * Header-only; no herd dependency (the OpenMP tests use it too). */
#ifndef HERD_TESTS_SENTINEL_H
#define HERD_TESTS_SENTINEL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SENTINEL_BYTE 0x5a
/* A child's exit status: no room for the sentinel below its stack this time
 * (another mapping sits there); the parent runs the case again. */
#define SENTINEL_NO_ROOM 4
#define SENTINEL_TRIES 20

/* Parent: a memfd of `size` bytes, every byte SENTINEL_BYTE; -1 on error.
 * Inherited across exec (no close-on-exec). */
static inline int sentinel_create(size_t size) {
    int fd = memfd_create("herd-sentinel", 0);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0)
        return -1;
    unsigned char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return -1;
    memset(p, SENTINEL_BYTE, size);
    munmap(p, size);
    return fd;
}

/* Parent: the number of bytes that differ from the pattern (-1: unreadable). */
static inline long sentinel_damage(int fd, size_t size) {
    const unsigned char *p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return -1;
    long bad = 0;
    for (size_t i = 0; i < size; i++)
        bad += p[i] != SENTINEL_BYTE;
    munmap((void *)p, size);
    return bad;
}

/* Child, on the stack under test: map the sentinel right below the stack's
 * guard region (the PROT_NONE area just below the mapping that holds this
 * frame; the mapping itself when there is none), as much of `size` as the
 * free space there allows (a stack with a small guard may sit in a gap
 * between libraries). Prints where and how much to stderr. 0, or -1 with
 * the reason printed. */
static inline int sentinel_place_once(int fd, size_t size, int quiet) {
    volatile char here = 0;
    uintptr_t sp = (uintptr_t)&here;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    enum { MAXV = 8192 };
    static uintptr_t vlo[MAXV], vhi[MAXV];
    static char vnone[MAXV];
    int n = 0, at = -1;
    char line[512], perm[8];
    while (n < MAXV && fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) != 3)
            continue;
        vlo[n] = a;
        vhi[n] = b;
        vnone[n] = strcmp(perm, "---p") == 0;
        if (sp >= a && sp < b)
            at = n;
        n++;
    }
    fclose(f);
    if (at < 0) {
        fprintf(stderr, "sentinel: no mapping holds the stack pointer\n");
        return -1;
    }
    int g = at > 0 && vhi[at - 1] == vlo[at] && vnone[at - 1] ? at - 1 : at;
    uintptr_t below = vlo[g];
    uintptr_t floor_ = g > 0 ? vhi[g - 1] : 0;
    size_t room = (size_t)(below - floor_);
    size_t take = size < room ? size : room;
    take &= ~(size_t)4095;
    if (take == 0) {
        fprintf(stderr, "sentinel: no free space below the guard at %#lx\n", (unsigned long)below);
        return -1;
    }
    void *want = (void *)(below - take);
    void *p = mmap(want, take, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd,
                   (off_t)(size - take));
    if (p != want) {
        if (p != MAP_FAILED)
            munmap(p, take);
        if (!quiet)
            fprintf(stderr, "sentinel: cannot map %zu bytes at %p\n", take, want);
        return -1;
    }
    fprintf(stderr,
            "sentinel mapped: %zu of %zu bytes at %p, below a guard of %zu bytes under "
            "the stack at %#lx-%#lx\n",
            take, size, p, (size_t)(vlo[at] - below), (unsigned long)vlo[at],
            (unsigned long)vhi[at]);
    return 0;
}

/* Another thread (a worker mapping a stack) may take the space between
 * reading the maps and mapping: try again a few times. */
static inline int sentinel_place(int fd, size_t size) {
    for (int i = 0; i < 20; i++)
        if (sentinel_place_once(fd, size, 1) == 0)
            return 0;
    return sentinel_place_once(fd, size, 0);
}

#endif
