/* Adopt mode and tied mode (src/core/adopt.c, docs/design/openmp.md):
 * - the calling thread becomes worker 0 and runs as a task on its own stack;
 *   it may spawn, wait and block, and always comes back on its own thread;
 * - tied mode: a task that suspends resumes on the kernel thread that
 *   started it;
 * - herd__group_place_worker starts a task on the chosen worker (through
 *   its box or its queue);
 * - one adopter at a time: a second thread gets HERD_EBUSY; enter/leave
 *   repeat; herd_stop afterwards;
 * - the adopter is pinned to worker 0's PU from its first enter until
 *   herd_stop, which gives it back its own CPU mask (under HERD_BIND=none
 *   and on synthetic topologies its mask is never touched).
 * Checks are on thread identity and exact counts, never on timing. */
// herd-test-matrix: unit
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=4 HERD_IDLE=sleep
// herd-test-env: HERD_WORKERS=3 HERD_IDLE=spin
// herd-test-env: HERD_WORKERS=1
// herd-test-timeout: 120
#include "../common/check.h"
#include "core/runtime.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

static herd_mutex mtx;
static long guarded;
static _Atomic long moved; /* tied mode: must stay 0 */
static _Atomic long done;

/* Block in several ways and check we come back on our own thread. */
static void leaf(void *p) {
    (void)p;
    pthread_t me = pthread_self();
    int id = herd_worker_id();
    CHECK_OK(herd_yield());
    CHECK_OK(herd_mutex_lock(&mtx));
    guarded++;
    CHECK_OK(herd_yield()); /* suspended holding the mutex: others queue on it */
    CHECK_OK(herd_mutex_unlock(&mtx));
    if (!pthread_equal(me, pthread_self()) || id != herd_worker_id())
        atomic_fetch_add(&moved, 1);
    atomic_fetch_add(&done, 1);
}

static void tree(void *p) {
    int depth;
    memcpy(&depth, p, sizeof depth);
    pthread_t me = pthread_self();
    if (depth > 0) {
        int d = depth - 1;
        for (int i = 0; i < 3; i++)
            CHECK_OK(herd_spawn(tree, &d, sizeof d));
        CHECK_OK(herd_wait());
    } else {
        leaf(NULL);
    }
    if (!pthread_equal(me, pthread_self()))
        atomic_fetch_add(&moved, 1);
}

static _Atomic int placed_ok;
static void placed(void *p) {
    int want;
    memcpy(&want, p, sizeof want);
    if (herd_worker_id() == want)
        atomic_fetch_add(&placed_ok, 1);
    int d = 2;
    tree(&d);
    if (herd_worker_id() == want) /* tied: still there after the waits */
        atomic_fetch_add(&placed_ok, 1);
}

/* Several tasks placed on one worker at once: the first waits in the
 * worker's box, the others on its queue, and one is too large for the box;
 * each starts on that worker. */
typedef struct big_arg {
    int want;
    char pad[60];
} big_arg;
static _Atomic int many_ok;

static void placed_small(void *p) {
    int want;
    memcpy(&want, p, sizeof want);
    if (herd_worker_id() == want)
        atomic_fetch_add(&many_ok, 1);
}

static void placed_big(void *p) {
    big_arg a;
    memcpy(&a, p, sizeof a);
    if (herd_worker_id() == a.want && a.pad[59] == (char)(a.want + 1))
        atomic_fetch_add(&many_ok, 1);
}

static void place_many(herd_group *g, int nworkers) {
    for (int w = 0; w < nworkers; w++) {
        for (int k = 0; k < 3; k++)
            CHECK_OK(herd__group_place_worker(g, w, placed_small, &w, sizeof w));
        big_arg a = {w, {0}};
        a.pad[59] = (char)(w + 1);
        CHECK_OK(herd__group_place_worker(g, w, placed_big, &a, sizeof a));
    }
}

static void *second_adopter(void *p) {
    herd__frame fr;
    *(int *)p = herd__adopt_enter(&fr);
    if (*(int *)p == 0)
        herd__adopt_leave(&fr);
    return NULL;
}

/* One region: the caller adopts worker 0 and runs a task tree itself. */
static void region(int tied, int nworkers) {
    pthread_t me = pthread_self();
    herd__frame fr;
    CHECK_OK(herd__adopt_enter(&fr));
    CHECK_EQ(herd_worker_id(), 0);
    /* A second adopter is refused while we hold worker 0. */
    pthread_t t;
    int rc = -1;
    CHECK(pthread_create(&t, NULL, second_adopter, &rc) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK_EQ(rc, HERD_EBUSY);
    herd_group g;
    herd_group_init(&g);
    for (int w = 0; w < nworkers; w++)
        CHECK_OK(herd__group_place_worker(&g, w, placed, &w, sizeof w));
    atomic_store(&many_ok, 0);
    place_many(&g, nworkers);
    int d = CHECK_SIZE(5, 3);
    CHECK_OK(herd_spawn(tree, &d, sizeof d));
    leaf(NULL); /* the adopter itself blocks: its worker runs other tasks */
    CHECK_OK(herd_wait());
    CHECK_OK(herd_group_wait(&g));
    CHECK(pthread_equal(me, pthread_self()));
    CHECK_EQ(herd_worker_id(), 0);
    herd__adopt_leave(&fr);
    CHECK(herd__self() == NULL);
    CHECK_EQ(herd_worker_id(), -1);
    CHECK_EQ(atomic_load(&many_ok), 4 * nworkers);
    if (tied) {
        CHECK_EQ(atomic_load(&moved), 0);
        CHECK_EQ(atomic_load(&placed_ok), 2 * nworkers);
    } else {
        /* Started on the chosen worker; after a wait it may be elsewhere. */
        CHECK(atomic_load(&placed_ok) >= nworkers);
    }
}

static cpu_set_t own_mask; /* the thread's mask before any herd_start */

/* pinned: the caller has adopted worker 0 of the running runtime. */
static void check_mask(int pinned) {
    cpu_set_t now;
    CHECK(sched_getaffinity(0, sizeof now, &now) == 0);
    herd__rt *rt = herd__rt_global;
    if (pinned && rt->set.bind != HERD__BIND_NONE && !rt->topo.synthetic) {
        CHECK_EQ(CPU_COUNT(&now), 1);
        CHECK(CPU_ISSET(rt->topo.os_index[rt->pu_of_worker[0]], &now));
    } else {
        CHECK(CPU_EQUAL(&now, &own_mask));
    }
}

int main(void) {
    CHECK(sched_getaffinity(0, sizeof own_mask, &own_mask) == 0);
    for (int tied = 1; tied >= 0; tied--) {
        herd_mutex_init(&mtx);
        guarded = 0;
        atomic_store(&moved, 0);
        atomic_store(&done, 0);
        CHECK_OK(herd__start_ex(NULL, HERD__START_ADOPT | (tied ? HERD__START_TIED : 0), NULL));
        int n = herd_num_workers();
        herd__frame fr;
        check_mask(0);
        CHECK_RC(herd__adopt_enter(&fr), 0);
        check_mask(1);
        herd__adopt_leave(&fr);
        check_mask(1); /* kept between regions */
        for (int r = 0; r < 3; r++) {
            atomic_store(&placed_ok, 0);
            region(tied, n);
            check_mask(1);
        }
        /* Per region: 1 leaf, 3^d leaves of the tree, n placed trees of 9. */
        long per = 1 + 3 * 3 * 3 * 3 * 3 + 9L * n;
        if (CHECK_SIZE(5, 3) == 3)
            per = 1 + 27 + 9L * n;
        CHECK_EQ(atomic_load(&done), 3 * per);
        CHECK_EQ(guarded, 3 * per);
        CHECK_OK(herd_stop());
        check_mask(0); /* its own mask again */
        /* Not in adopt mode: enter is refused. */
        CHECK_OK(herd_start(NULL));
        CHECK_RC(herd__adopt_enter(&fr), HERD_ESTATE);
        CHECK_OK(herd_stop());
    }
    printf("adopt: ok\n");
    return 0;
}
