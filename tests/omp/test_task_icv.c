/* A task's data environment ICVs (nthreads-var, dyn-var, run-sched-var,
 * max-active-levels-var) are its creator's when the task construct was
 * met, not when the task starts: a creator's omp_set_* after the creation
 * does not reach the task, on whichever thread it starts and however late;
 * a task's own omp_set_* reaches neither its creator nor its siblings, only
 * the tasks it creates afterwards. libgomp and libomp copy them at
 * creation. (def-allocator-var is left out: both keep it per thread, not
 * per task.) */
#include "check_omp.h"

#include <stdatomic.h>

enum { ROUNDS = 64 };

typedef struct seen {
    int nthreads, dynamic, levels, chunk, kid_nthreads, dep_nthreads;
    omp_sched_t kind;
} seen;

/* The ICVs of round r's creator when it creates round r's task: round
 * r - 1 set them (round 0: set before the loop). */
static int want_nthreads(int r) {
    return 100 + r;
}
static int want_levels(int r) {
    return 1 + r % 3;
}
static int want_chunk(int r) {
    return 1 + r;
}

static void set_round(int r) {
    omp_set_num_threads(want_nthreads(r));
    omp_set_dynamic(r % 2);
    omp_set_max_active_levels(want_levels(r));
    omp_set_schedule(r % 2 ? omp_sched_dynamic : omp_sched_guided, want_chunk(r));
}

static void record(seen *s) {
    s->nthreads = omp_get_max_threads();
    s->dynamic = omp_get_dynamic();
    s->levels = omp_get_max_active_levels();
    omp_get_schedule(&s->kind, &s->chunk);
}

static void check_round(const seen *s, int r) {
    CHECK_EQ(s->nthreads, want_nthreads(r));
    CHECK_EQ(s->dynamic, r % 2);
    CHECK_EQ(s->levels, want_levels(r));
    CHECK_EQ((int)s->kind, (int)(r % 2 ? omp_sched_dynamic : omp_sched_guided));
    CHECK_EQ(s->chunk, want_chunk(r));
}

/* One creator: round r's task, then the ICVs of round r + 1. Each task
 * also creates a child after changing its own nthreads-var, then changes
 * it again: the child sees the first change. A task with a dependence
 * (released by its predecessor, later) is one more of round r's. */
static void rounds(seen *out) {
    int chain = 0;
    set_round(0);
    for (int r = 0; r < ROUNDS; r++) {
#pragma omp task depend(inout : chain) firstprivate(r) shared(out, chain)
        {
            out[r].dep_nthreads = omp_get_max_threads();
            chain++;
        }
#pragma omp task firstprivate(r) shared(out)
        {
            record(&out[r]);
            omp_set_num_threads(7);
#pragma omp task shared(out) firstprivate(r)
            out[r].kid_nthreads = omp_get_max_threads();
            omp_set_num_threads(9);
#pragma omp taskwait
        }
        set_round(r + 1);
    }
#pragma omp taskwait
    CHECK_EQ(chain, ROUNDS);
    /* The tasks' own settings stayed theirs. */
    CHECK_EQ(omp_get_max_threads(), want_nthreads(ROUNDS));
    for (int r = 0; r < ROUNDS; r++) {
        check_round(&out[r], r);
        CHECK_EQ(out[r].kid_nthreads, 7);
        CHECK_EQ(out[r].dep_nthreads, want_nthreads(r));
    }
}

int main(void) {
    static seen by_member[4][ROUNDS];
    int members = 0;
#pragma omp parallel num_threads(4) reduction(+ : members)
    {
        /* every implicit task a creator (the others, at its taskwaits and
         * at the barrier, run its tasks too) */
        rounds(by_member[omp_get_thread_num()]);
        members++;
    }
    CHECK(members >= 1);
    /* A single creator whose tasks the others start. */
    static seen by_single[ROUNDS];
#pragma omp parallel num_threads(4)
#pragma omp single
    rounds(by_single);
    puts("task_icv: ok");
    return 0;
}
