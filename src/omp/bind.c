/* Member placement by the proc_bind policy (OpenMP 5.1, 2.6.2;
 * docs/design/openmp.md, "Places and binding").
 *
 * When a place list exists (OMP_PLACES) and a team's binding policy is not
 * false, each member gets a place and a place partition (place-partition-
 * var, part_lo/part_len in its ICVs: a run of consecutive places of the
 * encountering task's partition), and the kernel thread that runs the
 * member is bound to that place's CPUs when the member starts. A thread is
 * rebound only when its place's CPUs change, so a team that keeps its
 * places costs one comparison per member and no system call.
 *
 * The policies, for a team of T threads whose primary thread is at place p
 * of a partition of P places:
 *   primary  every member at p; the partitions are the encountering one's.
 *   close    (true acts as close, as in libgomp) T <= P: member i at the
 *            i-th place after p (wrapping in the partition); T > P: the
 *            members in P groups of consecutive thread numbers, the first
 *            T mod P groups one larger, group k at the k-th place after p.
 *   spread   T <= P: the partition split into T runs of consecutive places,
 *            the first P mod T runs one place longer; the primary keeps p and
 *            the run that holds it, member i takes the i-th run after it, at
 *            its first place, and that run is its partition. T > P: placed
 *            as close, each member's partition its one place.
 * Which runs or groups are the longer ones is the implementation's choice
 * in the specification; these are libgomp's for spread and libomp's for
 * close (the specification's consecutive groups). */
#include "omp/omp.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

/* The place this thread was bound to by a member's placement, -1: none
 * (herd's own placement of its workers, or unbound). */
static __thread int bound_place = -1;

/* Where run j of a partition of len places split into n runs starts (the
 * first len % n runs have one place more), relative to the partition. */
static int run_start(int len, int n, int j) {
    int q = len / n, r = len % n;
    return j * q + (j < r ? j : r);
}

/* The run of n (as run_start) that holds offset off. */
static int run_of(int len, int n, int off) {
    int q = len / n, r = len % n;
    return off < r * (q + 1) ? off / (q + 1) : r + (off - r * (q + 1)) / q;
}

omp_placement herd__omp_place_member(int bind, int lo, int len, int p, int n, int i) {
    omp_placement m = {p, lo, len};
    int off = p - lo;
    if (bind == OMP_BIND_PRIMARY)
        return m;
    if (bind == OMP_BIND_SPREAD && n <= len) {
        int j = (run_of(len, n, off) + i) % n;
        m.part_lo = lo + run_start(len, n, j);
        m.part_len = run_start(len, n, j + 1) - run_start(len, n, j);
        m.place = i == 0 ? p : m.part_lo;
        return m;
    }
    /* close, true, and spread with more threads than places: group k of
     * consecutive members (run_of over the members) at the k-th place. */
    int k = n <= len ? i : run_of(n, len, i);
    m.place = lo + (off + k) % len;
    if (bind == OMP_BIND_SPREAD)
        m.part_lo = m.place, m.part_len = 1;
    return m;
}

/* A thread no placement has bound yet (the initial thread, an application
 * thread) starts at the partition's first place, as libgomp binds its
 * initial thread to the first place. */
int herd__omp_primary_place(const omp_icv *icv) {
    int lo = icv->part_lo, len = icv->part_len ? icv->part_len : herd__omp_num_places();
    return bound_place >= lo && bound_place < lo + len ? bound_place : lo;
}

int herd__omp_bound_place(void) {
    return bound_place;
}
void herd__omp_unbind_place(void) {
    bound_place = -1;
}

void herd__omp_bind_thread(int place) {
    if (place == bound_place)
        return;
    const cpu_set_t *set = herd__omp_place_set(place);
    if (bound_place >= 0 && CPU_EQUAL(set, herd__omp_place_set(bound_place))) {
        bound_place = place; /* the same CPUs: nothing to ask the kernel */
        return;
    }
    int e = pthread_setaffinity_np(pthread_self(), sizeof *set, set);
    if (e) {
        /* Not fatal: the member runs correctly anywhere. Said once. */
        static _Atomic int said;
        /* ORDER: relaxed; only who prints the warning hangs on it. */
        if (!atomic_exchange_explicit(&said, 1, memory_order_relaxed))
            fprintf(stderr,
                    "herd-omp: cannot bind a thread to place %d of OMP_PLACES: %s; "
                    "threads stay where they are\n",
                    place, strerror(e));
        return;
    }
    bound_place = place;
}

void herd__omp_bind_initial(void) {
    herd__omp_save_start_mask(); /* the process's CPUs, before this binding */
    if (herd__omp_g.icv.bind == OMP_BIND_FALSE || herd__omp_num_places() == 0)
        return;
    herd__omp_bind_thread(0); /* the first place of the initial partition, all of them */
}

int herd__omp_unbind_thread(void) {
    int p = bound_place;
    if (p < 0)
        return -1;
    const cpu_set_t *all = herd__omp_start_mask();
    if (pthread_setaffinity_np(pthread_self(), sizeof *all, all) != 0)
        return -1; /* stays bound: herd then sees the place's CPUs only */
    bound_place = -1;
    return p;
}
