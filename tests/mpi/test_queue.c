/* The split queue on one rank, step by step (docs/design/pool.md Q1-Q5):
 * push, lockless release, steal-half/two/one from the public part (this
 * rank is its own victim), reacquire, LIFO pops, full ring wrap-around. */
#include "../common/check.h"
#include "dist/pool_internal.h"

#include <string.h>

static int T;
static void nop(herd_pool *p, void *arg, size_t size) {}

static void push(herd_pool *p, int v) {
    int *a = herd_pool_task_alloc(p, T, sizeof v);
    CHECK(a != NULL);
    *a = v;
    CHECK_OK(herd_pool_task_commit(p));
}

static int pop(herd_pool *p) {
    if (!herd__pool_pop(p, p->exec_buf))
        return -1;
    pool_slot_hdr h;
    memcpy(&h, p->exec_buf, sizeof h);
    CHECK_EQ(h.cls, T);
    CHECK_EQ(h.size, sizeof(int));
    int v;
    memcpy(&v, p->exec_buf + sizeof h, sizeof v);
    return v;
}

static herd_pool *make(herd_pool_split split, herd_pool_lock lock, int release_min) {
    herd_pool_config cfg;
    herd_pool_config_init(&cfg);
    cfg.queue_capacity = 16;
    cfg.split = split;
    cfg.lock = lock;
    cfg.release_min = release_min;
    cfg.stats = -1;
    herd_pool *p;
    CHECK_OK(herd_pool_create(MPI_COMM_SELF, &cfg, &p));
    CHECK_OK(herd_pool_register(p, "t", nop, &T));
    return p;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    for (int lock = HERD_POOL_LOCK_TICKET; lock <= HERD_POOL_LOCK_ABORTING; lock++) {
        STEP("release policy and steal-half, lock %s", herd_pool_lock_name((herd_pool_lock)lock));
        herd_pool *p = make(HERD_POOL_SPLIT_HALF, (herd_pool_lock)lock, 4);
        /* Q1/Q2: the 4th push finds the public part empty: 2 tasks released. */
        for (int i = 0; i < 3; i++)
            push(p, i);
        CHECK_EQ(p->split, 0);
        push(p, 3);
        CHECK_EQ(p->split, 2);
        CHECK_EQ(herd__pool_nlocal(p), 2);
        /* the public part now holds tasks: the next pushes keep them private */
        for (int i = 4; i < 10; i++)
            push(p, i);
        CHECK_EQ(p->split, 2);
        CHECK_EQ(herd__pool_nlocal(p), 8);
        /* Q5 against ourselves: steal-half of 2 public takes 1, the oldest (0),
         * which lands on top of our private part; our 1 left public stays. */
        CHECK_EQ(herd__pool_steal(p, 0), 1);
        CHECK_EQ(herd__pool_read_tail(p), 1);
        CHECK_EQ(p->st.steals, 1);
        CHECK_EQ(pop(p), 0);
        /* Q3: LIFO */
        for (int i = 9; i >= 2; i--)
            CHECK_EQ(pop(p), i);
        CHECK_EQ(pop(p), -1);
        /* Q4: public task 1 comes back */
        CHECK_EQ(herd__pool_reacquire(p), 1);
        CHECK_EQ(pop(p), 1);
        CHECK_EQ(herd__pool_reacquire(p), 0);
        /* A dry victim: an aborted steal, lock untouched. */
        CHECK_EQ(herd__pool_steal(p, 0), 0);
        CHECK_EQ(p->st.steals_aborted, 1);
        CHECK_OK(herd_pool_destroy(p));
    }

    STEP("steal-one and steal-two; reacquire takes half the public part");
    for (int split = HERD_POOL_SPLIT_ONE; split <= HERD_POOL_SPLIT_HALF; split++) {
        herd_pool *p = make((herd_pool_split)split, HERD_POOL_LOCK_ABORTING, 65536);
        for (int i = 0; i < 8; i++)
            push(p, i);
        CHECK_EQ(p->split, 0); /* release_min 65536: nothing released */
        herd__pool_release(p, 6);
        CHECK_EQ(p->split, 6);
        int64_t want = split == HERD_POOL_SPLIT_ONE ? 1 : split == HERD_POOL_SPLIT_TWO ? 2 : 3;
        CHECK_EQ(herd__pool_steal(p, 0), want);
        CHECK_EQ(herd__pool_read_tail(p), want);
        /* the stolen ones (0..want-1) now sit on top, oldest deepest */
        for (int64_t i = want - 1; i >= 0; i--)
            CHECK_EQ(pop(p), (int)i);
        CHECK_EQ(pop(p), 7);
        CHECK_EQ(pop(p), 6);
        CHECK_EQ(pop(p), -1);
        int64_t pub = 6 - want;
        CHECK_EQ(herd__pool_reacquire(p), (pub + 1) / 2);
        CHECK_EQ(p->split, 6 - (pub + 1) / 2);
        CHECK_OK(herd_pool_destroy(p));
    }

    STEP("the ring wraps around: 5 x 12 tasks through 16 slots");
    {
        herd_pool *p = make(HERD_POOL_SPLIT_HALF, HERD_POOL_LOCK_TICKET, 2);
        int next = 0;
        uint64_t seen = 0, want = 0;
        for (int round = 0; round < 5; round++) {
            for (int i = 0; i < 12; i++) {
                want += check_mix64((uint64_t)next);
                push(p, next++);
            }
            herd__pool_release(p, herd__pool_nlocal(p)); /* all public */
            /* drain: steal what is public (onto the top: head moves on),
             * else pop one, else reacquire, until empty */
            for (;;) {
                if (herd__pool_steal(p, 0) > 0)
                    continue;
                int v = pop(p);
                if (v >= 0) {
                    seen += check_mix64((uint64_t)v);
                    continue;
                }
                if (herd__pool_reacquire(p) > 0)
                    continue;
                break;
            }
        }
        CHECK_EQ_U64(seen, want);
        CHECK(p->head > 16); /* indices went past the ring: it wrapped */
        CHECK_OK(herd_pool_destroy(p));
    }
    MPI_Finalize();
    return 0;
}
