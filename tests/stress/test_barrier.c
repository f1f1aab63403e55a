/* Barriers under load: several barrier objects in use at once, each shared
 * by more tasks than there are workers, over many phases.
 *
 * Per phase, every task of a team writes its slot, waits, reads every slot
 * of its team (all must hold this phase's value: the barrier orders the
 * writes before the reads), and waits again before the next phase's write.
 * Also checked: nobody leaves a phase before the whole team arrived, exactly
 * one serial return per team per phase, and the teams' phases do not mix.
 * Some tasks spawn children between phases and wait for them (a task that
 * waits for children may resume on another worker before its next arrival). */
// herd-test-matrix: stress
// herd-test-env: HERD_WORKERS=1
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=4 HERD_IDLE=sleep
// herd-test-env: HERD_WORKERS=3 HERD_IDLE=spin HERD_STACK=64K
// herd-test-timeout: 300
#include "../common/check.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define NTEAMS 4
static const int team_size[NTEAMS] = {2, 64, 257, CHECK_SIZE(1000, 300)};
static const int team_phases[NTEAMS] = {CHECK_SIZE(20000, 200), CHECK_SIZE(2000, 20),
                                        CHECK_SIZE(500, 8), CHECK_SIZE(200, 5)};

typedef struct team {
    herd_barrier bar;
    _Atomic uint64_t *slots; /* slot i: the last phase task i wrote */
    _Atomic long *arrivals;  /* per phase: tasks that arrived */
    _Atomic long *serials;   /* per phase: serial returns */
    _Atomic long children_done;
} team;

static team teams[NTEAMS];

typedef struct member_arg {
    int team;
    int index;
} member_arg;

static void child(void *p) {
    team *t = *(team **)p;
    atomic_fetch_add_explicit(&t->children_done, 1, memory_order_relaxed);
}

static void wait_counted(team *t, int phase) {
    int rc = herd_barrier_wait(&t->bar);
    CHECK(rc == 0 || rc == 1);
    if (rc == 1)
        atomic_fetch_add(&t->serials[phase], 1);
}

static void member(void *p) {
    member_arg a = *(member_arg *)p;
    team *t = &teams[a.team];
    int n = team_size[a.team];
    for (int ph = 0; ph < team_phases[a.team]; ph++) {
        /* Phase ph's first half: publish. Nobody is still reading ph-1
         * (the second wait of ph-1 is behind everyone). */
        atomic_store_explicit(&t->slots[a.index], (uint64_t)ph + 1, memory_order_relaxed);
        atomic_fetch_add(&t->arrivals[2 * ph], 1);
        wait_counted(t, 2 * ph);
        CHECK_EQ(atomic_load(&t->arrivals[2 * ph]), n);
        /* Second half: every slot holds this phase's value. Relaxed loads:
         * the barrier itself must order the writes before these reads. */
        int from = (a.index * 7) % n, count = n < 16 ? n : 16;
        for (int k = 0; k < count; k++) {
            int j = (from + k) % n;
            CHECK_EQ(atomic_load_explicit(&t->slots[j], memory_order_relaxed), (uint64_t)ph + 1);
        }
        if ((a.index + ph) % 13 == 0) {
            CHECK_OK(herd_spawn(child, &t, sizeof t));
            CHECK_OK(herd_spawn(child, &t, sizeof t));
            CHECK_OK(herd_wait());
        } else if ((a.index + ph) % 7 == 0) {
            CHECK_OK(herd_yield());
        }
        atomic_fetch_add(&t->arrivals[2 * ph + 1], 1);
        wait_counted(t, 2 * ph + 1);
        CHECK_EQ(atomic_load(&t->arrivals[2 * ph + 1]), n);
    }
}

static long expected_children(int k) {
    long c = 0;
    for (int ph = 0; ph < team_phases[k]; ph++)
        for (int i = 0; i < team_size[k]; i++)
            c += (i + ph) % 13 == 0 ? 2 : 0;
    return c;
}

static void root(void *p) {
    (void)p;
    /* Interleave the teams' spawns so that their tasks share workers. */
    int maxn = 0;
    for (int k = 0; k < NTEAMS; k++)
        maxn = team_size[k] > maxn ? team_size[k] : maxn;
    for (int i = 0; i < maxn; i++)
        for (int k = 0; k < NTEAMS; k++)
            if (i < team_size[k]) {
                member_arg a = {k, i};
                CHECK_OK(herd_spawn(member, &a, sizeof a));
            }
    CHECK_OK(herd_wait());
}

int main(void) {
    CHECK_OK(herd_start(NULL));
    for (int k = 0; k < NTEAMS; k++) {
        team *t = &teams[k];
        CHECK_OK(herd_barrier_init(&t->bar, team_size[k]));
        t->slots = calloc((size_t)team_size[k], sizeof *t->slots);
        t->arrivals = calloc(2 * (size_t)team_phases[k], sizeof *t->arrivals);
        t->serials = calloc(2 * (size_t)team_phases[k], sizeof *t->serials);
        CHECK(t->slots && t->arrivals && t->serials);
        atomic_init(&t->children_done, 0);
    }
    STEP("%d teams (2, 64, 257, %d tasks) on %d workers", NTEAMS, team_size[NTEAMS - 1],
         herd_num_workers());
    CHECK_OK(herd_run(root, NULL, 0));
    for (int k = 0; k < NTEAMS; k++) {
        team *t = &teams[k];
        for (int ph = 0; ph < 2 * team_phases[k]; ph++) {
            CHECK_EQ(atomic_load(&t->arrivals[ph]), team_size[k]);
            CHECK_EQ(atomic_load(&t->serials[ph]), 1);
        }
        CHECK_EQ(atomic_load(&t->children_done), expected_children(k));
        herd_barrier_destroy(&t->bar);
        free(t->slots);
        free(t->arrivals);
        free(t->serials);
    }
    CHECK_OK(herd_stop());
    STEP("ok");
    return 0;
}
