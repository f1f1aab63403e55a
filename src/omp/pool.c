/* The pool of a team with guests: its explicit tasks, where the team's
 * guests can take them (docs/design/openmp.md, "Guests and tasks").
 *
 * A guest is no herd worker (guest.c): it cannot take a herd task from a
 * deque. Before the pool, a guest ran its own tasks at once and took none
 * of the others', so a program whose thread waits, spinning, for another
 * thread of the team to start a task it created (LLVM's
 * taskdep_if0_2.c, omp50_taskwait_depend.c) hung when the only other
 * thread was a guest; under libgomp any thread of the team runs it.
 *
 * In a team with guests every deferred task is a record here, reachable
 * two ways, and whoever claims it first (a CAS from QUEUED) runs it:
 *  - a herd task, its stub: a child of the creating herd task (or in its
 *    taskgroup's or dependence group), so that every herd wait that covers
 *    the task covers the stub. On a guest, which has no herd task, the stub
 *    goes to herd's injector (herd__inject_group) and the record is counted
 *    in its creator's `gkids`, which the creator's waits wait for;
 *  - the team's pool, a list under the team's mix_lock, that the guests
 *    take from while they wait: at a barrier and at the end of their
 *    member (until every member's body has ended and no pooled task is
 *    left, as libgomp's threads run the team's tasks at the region's end)
 *    any task of the team; in a taskwait, at a task's end or for an
 *    undeferred task's predecessors only the waiting task's children, and
 *    at a taskgroup's end only its tasks (as libgomp's waits run them): a
 *    task that waits, spinning, for what its creator does after the wait
 *    must not run on the waiter's stack (test_tasks's taskgroup case).
 * A stub that finds its record claimed by a guest waits for it to
 * complete (its group or frame counts the task until then); a stub of a
 * guest's record does not (the creator's gkids counts it).
 *
 * Record states, one word (R1..R3):
 *  R1 QUEUED -> RUNNING: the claim (CAS, acquire: the creator's writes).
 *  R2 RUNNING -> WAITED: the stub that lost the claim spins, then stores
 *     itself as the waiter and CASes (release); a failed CAS (DONE)
 *     readies itself (herd__omp_word_wait).
 *  R3 -> DONE: the runner's exchange (acq_rel: publishes the task's writes;
 *     sees the waiter), which readies a WAITED stub (a homed task: tied
 *     mode, any thread may ready it; herd__omp_word_set).
 * A record has two references, the pool's (dropped by whoever pops it, or
 * by the region's end) and the stub's; the last frees it.
 *
 * Waiting guests sleep on one process-wide event word (a guest of any
 * team is woken by any change: pooled tasks are few, teams with guests
 * rare). */
#include "omp/omp.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum { POOL_QUEUED, POOL_RUNNING, POOL_WAITED, POOL_DONE };

typedef struct omp_pooled {
    struct omp_pooled *next; /* in the team's pool, under mix_lock */
    omp_team *team;
    omp_task *creator; /* created outside herd: the task whose gkids counts it; else NULL */
    omp_taskgroup *tg; /* ... and the taskgroup whose gkids counts it too, or NULL */
    herd__ult *waiter; /* WAITED: the stub that waits for the guest running it */
    _Atomic int state; /* POOL_* (R1..R3) */
    _Atomic int refs;
    void (*fn)(void *);
    _Alignas(16) unsigned char arg[];
} omp_pooled;

/* The guests' event word and how many sleep on it. */
static struct {
    _Alignas(64) _Atomic uint32_t ev;
    _Atomic int sleepers;
} wake_word;

void herd__omp_pool_wake(void) {
    /* ORDER: seq_cst fence, then the count; pairs with the fence in
     * herd__omp_pool_wait (store buffering): either its test after its
     * fence sees our change (made before this fence), or our load sees it
     * counted and the increment below moves the word its futex wait
     * compares. */
    atomic_thread_fence(memory_order_seq_cst);
    atomic_fetch_add_explicit(&wake_word.ev, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&wake_word.sleepers, memory_order_seq_cst))
        herd__futex_wake(&wake_word.ev, INT_MAX);
}

static void unref(omp_pooled *r) {
    /* ORDER: acq_rel; the last one sees every other holder's accesses. */
    if (atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) == 1)
        free(r);
}

static int claim(omp_pooled *r) {
    int q = POOL_QUEUED;
    /* R1. ORDER: acquire; the creator's writes (the record and what the
     * task reads) were published by the pool's lock or the stub's queueing,
     * and again here for a claim that came the other way. */
    return atomic_compare_exchange_strong_explicit(&r->state, &q, POOL_RUNNING,
                                                   memory_order_acquire, memory_order_relaxed);
}

/* The claimed task r has run: R3, then the counts. */
static void finish(omp_pooled *r) {
    omp_team *team = r->team;
    omp_task *creator = r->creator;
    omp_taskgroup *tg = r->tg;
    /* ORDER: release; the task's writes before the linger's acquire load
     * that sees the count at zero. The team outlives this: the runner is a
     * member, or a herd task of the region, or (creator set) the creator
     * has not returned while its gkids counts r. */
    atomic_fetch_sub_explicit(&team->pool_live, 1, memory_order_release);
    herd__omp_word_set(&r->state, POOL_WAITED, POOL_DONE, &r->waiter); /* R3 */
    /* ORDER: release both; the task's writes before the creator's acquire
     * load of a zero count. The creator first: its taskgroup, which it must
     * end before it ends, outlives that; the taskgroup's count last, our
     * last access to creator, taskgroup and team (its end may return and
     * the creator end at once). */
    if (creator)
        atomic_fetch_sub_explicit(&creator->gkids, 1, memory_order_release);
    if (tg)
        atomic_fetch_sub_explicit(&tg->gkids, 1, memory_order_release);
    herd__omp_pool_wake();
}

/* ---------------------------------------------- a herd task's word wait */

typedef struct word_wait {
    _Atomic int *word;
    int waiting, blocked, done;
    herd__ult **ult;
} word_wait;

static int word_done(void *p) {
    const word_wait *a = p;
    /* ORDER: relaxed; herd__omp_word_wait's acquire load follows. */
    return atomic_load_explicit(a->word, memory_order_relaxed) == a->done;
}

static void arm_word(herd__worker *w, herd__ult *u, void *p) {
    (void)w;
    const word_wait *a = p; /* on u's stack: read before u can run */
    _Atomic int *word = a->word;
    int s = a->waiting, blocked = a->blocked;
    *a->ult = u;
    /* ORDER: release publishes *ult to the setter's exchange; acquire on
     * failure (done): the setter's writes. */
    if (!atomic_compare_exchange_strong_explicit(word, &s, blocked, memory_order_acq_rel,
                                                 memory_order_acquire))
        herd__ult_ready(u); /* done meanwhile: nobody else readies u */
}

void herd__omp_word_wait(_Atomic int *word, int waiting, int blocked, int done, herd__ult **ult) {
    word_wait a = {word, waiting, blocked, done, ult};
    if (!herd__spin_wait(herd__self(), word_done, &a)) {
        /* As OMP_SAVE/OMP_RESTORE, but a stub may run where no task record
         * is current yet (NULL), and must not make one. */
        omp_task *saved = herd__omp_cur;
        herd__block(arm_word, &a);
        herd__omp_cur = saved;
    }
    /* ORDER: acquire; pairs with herd__omp_word_set's release: its writes. */
    (void)atomic_load_explicit(word, memory_order_acquire);
}

void herd__omp_word_set(_Atomic int *word, int blocked, int done, herd__ult **ult) {
    /* ORDER: acq_rel; release: the setter's writes before the waiter's
     * acquire; acquire: the arm's store of *ult (the waiter stays suspended
     * until the ready below, so *ult may still be read). */
    if (atomic_exchange_explicit(word, done, memory_order_acq_rel) == blocked)
        herd__ult_ready(*ult); /* a homed task: tied mode, any thread may */
}

static void stub(void *p) {
    omp_pooled *r;
    memcpy(&r, p, sizeof r);
    if (claim(r)) {
        r->fn(r->arg);
        finish(r);
    } else if (!r->creator) {
        /* R2: its group or frame counts it until it is done */
        herd__omp_word_wait(&r->state, POOL_RUNNING, POOL_WAITED, POOL_DONE, &r->waiter);
    }
    unref(r);
}

void herd__omp_pool_spawn(omp_team *team, omp_task *creator, herd_group *g, void (*fn)(void *),
                          const void *arg, size_t len) {
    omp_pooled *r = malloc(sizeof *r + len);
    if (!r)
        herd__omp_fatal("out of memory for a task");
    int outside = herd__self() == NULL;
    r->next = NULL;
    r->team = team;
    r->creator = creator;
    r->tg = creator ? creator->tg : NULL;
    r->waiter = NULL;
    r->fn = fn;
    memcpy(r->arg, arg, len);
    atomic_init(&r->state, POOL_QUEUED);
    atomic_init(&r->refs, 2);
    if (creator) {
        /* On a guest the task is never lazy again: its end waits (task.c).
         * Only its own thread changes its mode (a release from elsewhere
         * finds a task that created dependent ones: never lazy). */
        if (outside && creator->frame_mode == OMP_FRAME_LAZY) {
            creator->frame_mode = OMP_FRAME_OWN;
            atomic_init(&creator->gkids, 0); /* not set while it was lazy */
        }
        /* ORDER: relaxed; before this task can complete (finish's release
         * decrement): a release from another thread comes from a completing
         * predecessor that is counted until after this. */
        atomic_fetch_add_explicit(&creator->gkids, 1, memory_order_relaxed);
        if (r->tg) /* ORDER: relaxed, as above */
            atomic_fetch_add_explicit(&r->tg->gkids, 1, memory_order_relaxed);
    }
    /* ORDER: relaxed; the lock below publishes it before anyone can finish r. */
    atomic_fetch_add_explicit(&team->pool_live, 1, memory_order_relaxed);
    pthread_mutex_lock(&team->mix_lock);
    if (team->pool_tail)
        team->pool_tail->next = r;
    else
        /* ORDER: relaxed; a hint outside the lock, which the taker takes. */
        atomic_store_explicit(&team->pool_head, r, memory_order_relaxed);
    team->pool_tail = r;
    pthread_mutex_unlock(&team->mix_lock);
    /* Once the stub is queued, r may run, complete and be freed. */
    int rc;
    if (creator)
        rc = herd__inject_group(NULL, stub, &r, sizeof r);
    else if (!outside)
        rc = g ? herd_group_spawn(g, stub, &r, sizeof r) : herd_spawn(stub, &r, sizeof r);
    else
        rc = herd__inject_group(g, stub, &r, sizeof r);
    if (rc == HERD_ESTATE && creator)
        unref(r); /* herd is stopping: no stub, the guests alone run it */
    else if (rc)
        herd__omp_fatal("cannot queue a task: %s", herd_strerror(rc));
    herd__omp_pool_wake();
}

/* Which pooled tasks a wait may run: any (both NULL), or those that
 * kids_of created, or those of taskgroup in_tg. */
typedef struct pool_filter {
    const omp_task *kids_of;
    const omp_taskgroup *in_tg;
} pool_filter;

static int wanted(const omp_pooled *r, pool_filter f) {
    return (!f.kids_of || r->creator == f.kids_of) && (!f.in_tg || r->tg == f.in_tg);
}

/* Take the pool's oldest task that f allows, dropping the claimed ones met
 * on the way (their stubs ran them), and run it if nobody claimed it: 1
 * when one was taken. Context: a thread outside herd. */
static int run_one(omp_team *team, pool_filter f) {
    /* ORDER: relaxed; a hint, the lock orders the take. */
    if (!atomic_load_explicit(&team->pool_head, memory_order_relaxed))
        return 0;
    omp_pooled *dropped = NULL, *r;
    pthread_mutex_lock(&team->mix_lock);
    omp_pooled *prev = NULL;
    r = atomic_load_explicit(&team->pool_head, memory_order_relaxed);
    while (r) {
        omp_pooled *next = r->next;
        /* ORDER: relaxed; a claimed task stays claimed, the CAS below decides. */
        int gone = atomic_load_explicit(&r->state, memory_order_relaxed) != POOL_QUEUED;
        if (gone || wanted(r, f)) {
            if (prev)
                prev->next = next;
            else
                atomic_store_explicit(&team->pool_head, next, memory_order_relaxed);
            if (team->pool_tail == r)
                team->pool_tail = prev;
            if (!gone)
                break;
            r->next = dropped;
            dropped = r;
        } else {
            prev = r;
        }
        r = next;
    }
    pthread_mutex_unlock(&team->mix_lock);
    while (dropped) {
        omp_pooled *next = dropped->next;
        unref(dropped);
        dropped = next;
    }
    if (!r)
        return 0;
    if (claim(r)) {
        /* Its thread number is this thread's (task.c, thread_num_of); it
         * makes itself the current task and restores ours (run_as). */
        r->fn(r->arg);
        finish(r);
    }
    unref(r);
    return 1;
}

static void pool_wait(omp_team *team, int (*done)(void *), void *arg, pool_filter f) {
    omp_spin s = {0, 0, 0, 0};
    for (;;) {
        /* The word the futex compares, read before this round's looks at
         * done and at the pool: a change after it (a task queued, what done
         * tests) moves it. ORDER: acquire; pairs with herd__omp_pool_wake's
         * seq_cst increment: a change it announced is seen below. */
        uint32_t e = atomic_load_explicit(&wake_word.ev, memory_order_acquire);
        if (done(arg))
            return;
        if (run_one(team, f)) {
            s = (omp_spin){0, 0, 0, 0};
            continue;
        }
        if (herd__omp_spin_step(&s))
            continue;
        /* ORDER: the seq_cst add and fence pair with herd__omp_pool_wake's
         * fence (store buffering): it sees us counted, or our test below
         * sees its change. A pooled task this wait may not run does not
         * keep it awake. */
        atomic_fetch_add_explicit(&wake_word.sleepers, 1, memory_order_seq_cst);
        atomic_thread_fence(memory_order_seq_cst);
        if (!done(arg)) {
            herd__omp_guest_sleeps(1);
            herd__futex_wait(&wake_word.ev, e);
            herd__omp_guest_sleeps(0);
        }
        atomic_fetch_sub_explicit(&wake_word.sleepers, 1, memory_order_relaxed);
        s = (omp_spin){0, 0, 0, 0};
    }
}

void herd__omp_pool_wait(omp_team *team, int (*done)(void *), void *arg) {
    pool_wait(team, done, arg, (pool_filter){NULL, NULL});
}

void herd__omp_pool_wait_kids_of(omp_team *team, const omp_task *t, int (*done)(void *),
                                 void *arg) {
    pool_wait(team, done, arg, (pool_filter){t, NULL});
}

static int no_kids(void *p) {
    /* ORDER: acquire; pairs with finish()'s release decrement. */
    return atomic_load_explicit(&((omp_task *)p)->gkids, memory_order_acquire) == 0;
}

void herd__omp_pool_wait_kids(omp_task *t) {
    if (t->frame_mode != OMP_FRAME_LAZY && !no_kids(t)) /* a lazy task has none */
        pool_wait(t->team, no_kids, t, (pool_filter){t, NULL});
}

static int group_done(void *p) {
    /* ORDER: acquire; pairs with finish()'s release decrement. */
    return atomic_load_explicit(&((omp_taskgroup *)p)->gkids, memory_order_acquire) == 0;
}

void herd__omp_pool_wait_group(omp_team *team, omp_taskgroup *tg) {
    if (!group_done(tg))
        pool_wait(team, group_done, tg, (pool_filter){NULL, tg});
}

void herd__omp_pool_init(omp_team *team) {
    atomic_init(&team->pool_head, NULL);
    team->pool_tail = NULL;
    atomic_init(&team->pool_live, 0);
    atomic_init(&team->bodies_left, team->nthreads);
}

void herd__omp_pool_body_end(omp_team *team) {
    /* ORDER: release; the body's writes before the linger's acquire. */
    if (atomic_fetch_sub_explicit(&team->bodies_left, 1, memory_order_release) == 1)
        herd__omp_pool_wake();
}

static int team_idle(void *p) {
    omp_team *team = p;
    /* ORDER: acquire both; pair with the release decrements. */
    return atomic_load_explicit(&team->bodies_left, memory_order_acquire) == 0 &&
           atomic_load_explicit(&team->pool_live, memory_order_acquire) == 0;
}

void herd__omp_pool_linger(omp_team *team) {
    herd__omp_pool_wait(team, team_idle, team);
}

void herd__omp_pool_fini(omp_team *team) {
    /* Every member has ended and every pooled task completed: what is left
     * was claimed by its stub. */
    omp_pooled *r = atomic_load_explicit(&team->pool_head, memory_order_relaxed);
    while (r) {
        omp_pooled *next = r->next;
        HERD_ASSERT(atomic_load_explicit(&r->state, memory_order_relaxed) != POOL_QUEUED);
        unref(r);
        r = next;
    }
    atomic_store_explicit(&team->pool_head, NULL, memory_order_relaxed);
    team->pool_tail = NULL;
}
