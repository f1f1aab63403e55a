/* Forks and their joins (herd__fork, herd__fork_join; src/core/runtime.h,
 * F1..F5): the OpenMP layer's way to start a team.
 * - each fork runs exactly one task on each worker of its range and none
 *   elsewhere, with the fork's own argument, whatever ranges came before;
 * - the join returns only after every task ended, and sees their plain
 *   writes (checked without atomics: TSan builds see a missing order);
 * - tasks that block (yield, a mutex held across a yield, children, a
 *   sleep) make the join wait suspended (F5) rather than spinning: on the
 *   oversubscribed variant every join suspends;
 * - bad calls: no range, a range off the workers, first = 0, an argument
 *   too large, a call outside a task.
 * Checks are on exact counts and values, never on timing. The scheduler
 * matrix runs it under every scheduler (the idle loops that find the fork
 * differ) at a tenth of its rounds. */
// herd-test-matrix: unit
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=4 HERD_IDLE=sleep
// herd-test-env: HERD_WORKERS=3 HERD_IDLE=spin
// herd-test-env: HERD_WORKERS=8
// herd-test-env: HERD_WORKERS=1
// herd-test-timeout: 120
#include "../common/check.h"
#include "core/runtime.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define MAX_WORKERS 64

typedef struct fork_arg {
    long round;
    int how; /* what the task does besides recording itself */
} fork_arg;

static _Atomic int hits[MAX_WORKERS]; /* tasks run on each worker this round */
static long seen[MAX_WORKERS];        /* plain: the round each task saw */
static _Atomic int bad;               /* a task started off its worker */
static herd_mutex mtx;
static long guarded;

static void child(void *p) {
    (void)p;
    CHECK_OK(herd_mutex_lock(&mtx));
    guarded++;
    CHECK_OK(herd_mutex_unlock(&mtx));
}

static void forked(void *p) {
    fork_arg a;
    memcpy(&a, p, sizeof a);
    int id = herd_worker_id();
    if (id < 1 || id >= MAX_WORKERS) {
        atomic_fetch_add(&bad, 1);
        return;
    }
    atomic_fetch_add(&hits[id], 1);
    switch (a.how) {
    case 1:
        CHECK_OK(herd_yield());
        break;
    case 2:
        CHECK_OK(herd_mutex_lock(&mtx));
        guarded++;
        CHECK_OK(herd_yield()); /* suspended holding it: others queue */
        CHECK_OK(herd_mutex_unlock(&mtx));
        break;
    case 3:
        for (int i = 0; i < 3; i++)
            CHECK_OK(herd_spawn(child, NULL, 0));
        CHECK_OK(herd_wait());
        break;
    case 4: {
        struct timespec ts = {0, 200 * 1000}; /* the join gives up spinning or not */
        nanosleep(&ts, NULL);
        break;
    }
    default:
        break;
    }
    seen[herd_worker_id()] = a.round; /* tied: still on its worker */
}

static void bad_calls(int n) {
    fork_arg a = {0, 0};
    CHECK_RC(herd__fork(1, 0, forked, &a, sizeof a), HERD_EINVAL);
    CHECK_RC(herd__fork(0, 1, forked, &a, sizeof a), HERD_EINVAL);
    CHECK_RC(herd__fork(1, n, forked, &a, sizeof a), HERD_EINVAL); /* one too many */
    CHECK_RC(herd__fork(1, 1, NULL, &a, sizeof a), HERD_EINVAL);
    char big[32] = {0};
    CHECK_RC(herd__fork(1, 1, forked, big, sizeof big), HERD_EINVAL);
}

int main(void) {
    fork_arg a0 = {0, 0};
    CHECK_RC(herd__fork(1, 1, forked, &a0, sizeof a0), HERD_ENOTASK);
    herd_mutex_init(&mtx);
    CHECK_OK(herd__start_ex(NULL, HERD__START_ADOPT | HERD__START_TIED, NULL));
    int n = herd_num_workers();
    CHECK(n <= MAX_WORKERS);
    herd__frame fr;
    CHECK_OK(herd__adopt_enter(&fr));
    bad_calls(n);
    long rounds = CHECK_SCALED(CHECK_SIZE(3000, 600)), blocked = 0;
    for (long r = 1; n > 1 && r <= rounds; r++) {
        /* Ranges that grow, shrink and move: first 1..n-1, any count. */
        int first = 1 + (int)(r % (n - 1));
        int count = 1 + (int)((r / 7) % (n - first));
        fork_arg a = {r, (int)(r % 5)};
        blocked += a.how != 0;
        for (int i = 0; i < n; i++)
            atomic_store(&hits[i], 0);
        CHECK_OK(herd__fork(first, count, forked, &a, sizeof a));
        herd__fork_join();
        for (int i = 0; i < n; i++) {
            int in = i >= first && i < first + count;
            CHECK_EQ(atomic_load(&hits[i]), in);
            if (in)
                CHECK_EQ(seen[i], r);
        }
    }
    CHECK_EQ(atomic_load(&bad), 0);
    herd__adopt_leave(&fr);
    CHECK_OK(herd_stop());
    /* Per blocking round: one guarded step per task for how == 2, three
     * per task for how == 3. */
    long want = 0;
    for (long r = 1; n > 1 && r <= rounds; r++) {
        int first = 1 + (int)(r % (n - 1));
        int count = 1 + (int)((r / 7) % (n - first));
        want += (r % 5 == 2) ? count : (r % 5 == 3) ? 3L * count : 0;
    }
    CHECK_EQ(guarded, want);
    printf("fork: ok (%d workers, %ld rounds, %ld with blocking tasks)\n", n, n > 1 ? rounds : 0,
           blocked);
    return 0;
}
