/* The deque battery: the same tests on every queue kind (STYLE.md, Tests).
 *
 * Each kind is reached through a small table of operations (deque_ops) whose
 * values are plain uint64_t, so one test body serves the Chase-Lev deque
 * (src/queue/chase_lev.h) and the split deque (src/queue/split_deque.h).
 * The calling thread of a test is the deque's owner; thieves are pthreads.
 *
 * What every concurrent run checks (run_mix()):
 * - every value produced is taken exactly once (a per-value atomic counter
 *   must end at 1, and the sum of the values taken must be the expected one);
 * - what the owner wrote before a push is visible to whoever takes the value
 *   (a plain side array `payload`, so ThreadSanitizer checks the publication);
 * - each thief's successive steals are strictly increasing: values are pushed
 *   in increasing order, the queue holds them sorted, and a steal takes the
 *   oldest, so FIFO order holds per thief even under contention;
 * - the run finishes before a deadline (a lost value would hang it).
 *
 * tests/stress/test_deque_stress.c includes this file with
 * DEQUE_BATTERY_NO_MAIN defined, to reuse the adapters and run_mix().
 */
// herd-test-timeout: 180

#include "queue/chase_lev.h"
#include "queue/split_deque.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ ops table */

typedef struct deque_ops {
    const char *name;
    /* Make an empty deque in *q. Returns 0 or HERD_ENOMEM. */
    int (*init)(void **q);
    void (*fini)(void *q);
    /* Owner only. Returns 0, or nonzero when the deque is full (the caller
     * then takes something out and tries again). */
    int (*push)(void *q, uint64_t v);
    /* Owner only: newest value. false when empty. */
    bool (*pop)(void *q, uint64_t *v);
    /* Any other thread: oldest value. */
    herd__steal_result (*steal)(void *q, uint64_t *v);
    /* Owner only, optional: make every queued value stealable now. */
    void (*publish_all)(void *q);
    /* Optional: nonzero when the storage has grown since init. */
    int (*grew)(void *q);
} deque_ops;

/* Adapters report a corrupted copy (wrong function or size) here. */
static _Atomic uint64_t adapter_errors;

/* --- Chase-Lev */

static int cl_init(void **q) {
    herd__cl *d = aligned_alloc(64, sizeof *d);
    if (!d)
        return HERD_ENOMEM;
    /* Four slots: every test that queues more than four values grows it. */
    if (herd__cl_init(d, 2) != 0) {
        free(d);
        return HERD_ENOMEM;
    }
    *q = d;
    return 0;
}

static void cl_fini(void *q) {
    herd__cl_fini(q);
    free(q);
}

static int cl_push(void *q, uint64_t v) {
    return herd__cl_push(q, (void *)(uintptr_t)v);
}

static bool cl_pop(void *q, uint64_t *v) {
    void *x;
    if (!herd__cl_pop(q, &x))
        return false;
    *v = (uint64_t)(uintptr_t)x;
    return true;
}

static herd__steal_result cl_steal(void *q, uint64_t *v) {
    void *x = NULL;
    herd__steal_result r = herd__cl_steal(q, &x);
    if (r == HERD__STEAL_OK)
        *v = (uint64_t)(uintptr_t)x;
    return r;
}

static int cl_grew(void *q) {
    return ((herd__cl *)q)->retired != NULL;
}

static const deque_ops chase_lev_ops = {
    .name = "chase_lev",
    .init = cl_init,
    .fini = cl_fini,
    .push = cl_push,
    .pop = cl_pop,
    .steal = cl_steal,
    .publish_all = NULL,
    .grew = cl_grew,
};

/* --- Split deque: the value travels in the 8-byte inline argument. */

#define SDQ_CAP (1u << 20)

static void sdq_marker_fn(void *arg) {
    (void)arg;
}

static int sdq_init_cap(void **q, uint32_t cap) {
    herd__sdq *d = aligned_alloc(64, sizeof *d);
    if (!d)
        return HERD_ENOMEM;
    if (herd__sdq_init(d, cap) != 0) {
        free(d);
        return HERD_ENOMEM;
    }
    herd__sdq_own(d); /* the calling thread is the owner (split_deque.h) */
    *q = d;
    return 0;
}

static int sdq_init(void **q) {
    return sdq_init_cap(q, SDQ_CAP);
}

static void sdq_fini(void *q) {
    herd__sdq_fini(q);
    free(q);
}

static int sdq_push(void *q, uint64_t v) {
    if (herd__sdq_push(q, sdq_marker_fn, NULL, 0, &v, sizeof v) != 0)
        return -1;
    /* Work becomes stealable only when the owner publishes (S3). */
    if (herd__sdq_wants_publish(q))
        herd__sdq_publish(q);
    return 0;
}

static bool sdq_check_copy(const herd__taskcopy *c, uint64_t *v) {
    if (c->fn != sdq_marker_fn || c->size != sizeof *v || c->parent != NULL) {
        atomic_fetch_add_explicit(&adapter_errors, 1, memory_order_relaxed);
        return false;
    }
    memcpy(v, c->arg, sizeof *v);
    return true;
}

static bool sdq_pop(void *q, uint64_t *v) {
    herd__taskcopy c;
    switch (herd__sdq_pop(q, 0, &c)) {
    case HERD__POP_OK:
        return sdq_check_copy(&c, v);
    case HERD__POP_STOLEN:
        herd__sdq_reset(q, 0);
        return false;
    default:
        return false;
    }
}

static herd__steal_result sdq_steal(void *q, uint64_t *v) {
    herd__taskcopy c;
    herd__steal_result r = herd__sdq_steal(q, &c);
    if (r == HERD__STEAL_OK && !sdq_check_copy(&c, v))
        return HERD__STEAL_RETRY; /* counted in adapter_errors */
    return r;
}

static void sdq_publish_all(void *q) {
    while (herd__sdq_publish(q) != 0)
        ;
}

static const deque_ops split_deque_ops = {
    .name = "split_deque",
    .init = sdq_init,
    .fini = sdq_fini,
    .push = sdq_push,
    .pop = sdq_pop,
    .steal = sdq_steal,
    .publish_all = sdq_publish_all,
    .grew = NULL,
};

/* --- Split deque of 128 slots, compacted when full (S8): the owner's pushes
 * reach the end of the slots at once, and move the queued values down over
 * the ones thieves took, under the thieves' steals. */

#define SDQ_SMALL_CAP 128u
static _Atomic uint64_t sdq_compactions;

static int sdq_small_init(void **q) {
    return sdq_init_cap(q, SDQ_SMALL_CAP);
}

static int sdq_small_push(void *q, uint64_t v) {
    if (herd__sdq_push(q, sdq_marker_fn, NULL, 0, &v, sizeof v) != 0) {
        if (herd__sdq_compact(q, 0, 1) == 0)
            return -1; /* nothing taken: really full */
        atomic_fetch_add_explicit(&sdq_compactions, 1, memory_order_relaxed);
        if (herd__sdq_push(q, sdq_marker_fn, NULL, 0, &v, sizeof v) != 0)
            return -1;
    }
    if (herd__sdq_wants_publish(q))
        herd__sdq_publish(q);
    return 0;
}

static const deque_ops split_deque_small_ops = {
    .name = "split_deque_128",
    .init = sdq_small_init,
    .fini = sdq_fini,
    .push = sdq_small_push,
    .pop = sdq_pop,
    .steal = sdq_steal,
    .publish_all = sdq_publish_all,
    .grew = NULL,
};

/* --- Split deque whose owner takes its public part back now and then (S9,
 * herd__sdq_retract, as a task that hands its children to the frame below
 * does: J6 in docs/design/tasks.md), under the thieves' steals: every value
 * must still be taken exactly once. */

static _Atomic uint64_t sdq_retracts;

static int sdq_retract_push(void *q, uint64_t v) {
    if (sdq_push(q, v) != 0)
        return -1;
    herd__sdq *d = q;
    if (v % 8 == 7) {
        uint32_t split = d->split;
        uint32_t tail = herd__sdq_retract(d, 0);
        /* Everything at or above the tail it saw is private now. */
        if (d->split > tail)
            atomic_fetch_add_explicit(&adapter_errors, 1, memory_order_relaxed);
        if (d->split < split) /* it took a public part back */
            atomic_fetch_add_explicit(&sdq_retracts, 1, memory_order_relaxed);
    }
    return 0;
}

static const deque_ops split_deque_retract_ops = {
    .name = "split_deque_retract",
    .init = sdq_init,
    .fini = sdq_fini,
    .push = sdq_retract_push,
    .pop = sdq_pop,
    .steal = sdq_steal,
    .publish_all = sdq_publish_all,
    .grew = NULL,
};

static const deque_ops *const all_kinds[] = {&chase_lev_ops, &split_deque_ops,
                                             &split_deque_small_ops, &split_deque_retract_ops};
#define NKINDS (sizeof all_kinds / sizeof all_kinds[0])

/* ------------------------------------------------------------ helpers */

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static uint64_t payload_of(uint64_t v) {
    return v * 0x9E3779B97F4A7C15ULL + 1;
}

/* ------------------------------------------------------------ run_mix */

#define MAX_THIEVES 16

typedef struct mix_params {
    const char *name;
    int nthieves;       /* 1..MAX_THIEVES */
    uint64_t nitems;    /* values 0..nitems-1, at most */
    unsigned burst_max; /* owner pushes 1..burst_max values in a row */
    unsigned pop_pct;   /* after a burst, chance (percent) that the owner pops */
    unsigned pop_max;   /* ... 1..pop_max values */
    unsigned yield_pct; /* randomised mode: chance per operation of a sched_yield (0 off) */
    bool stop_when_fed; /* owner stops producing once every thief has taken a value */
    bool light;         /* throughput mode: no per-value counter or payload, checks
                         * only the count, the sum and the FIFO order of steals */
    double time_cap_s;  /* owner stops producing after this long */
    double deadline_s;  /* the whole run must finish within this (else: failure) */
    uint64_t seed;
} mix_params;

typedef struct mix_result {
    uint64_t produced, owner_pops, steal_ok, steal_retry, steal_empty, push_full;
    uint64_t min_thief_taken; /* fewest values any one thief took */
    double elapsed_s;         /* producing + draining, thieves included */
    int grew;                 /* ops->grew() at the end (-1 when not known) */
} mix_result;

typedef struct thief_stats {
    _Alignas(64) _Atomic uint64_t taken; /* written by its thief only */
    uint64_t retry, empty;
} thief_stats;

typedef struct mix_shared {
    const deque_ops *ops;
    const mix_params *p;
    void *q;
    uint64_t *payload;      /* plain: written by the owner before the push */
    _Atomic uint32_t *seen; /* per value: how many times it was taken */
    _Atomic uint64_t sum;   /* of the values taken */
    _Atomic uint64_t dup, payload_err, order_err;
    _Atomic int stop;
    _Atomic int started; /* thieves running: the owner waits for all of them */
    thief_stats th[MAX_THIEVES];
} mix_shared;

typedef struct thief_arg {
    mix_shared *s;
    int id;
} thief_arg;

/* Record a value taken by the calling thread; *sum is the thread's own. */
static void take_value(mix_shared *s, uint64_t v, uint64_t *sum) {
    if (v >= s->p->nitems) {
        atomic_fetch_add_explicit(&s->dup, 1, memory_order_relaxed);
        return;
    }
    *sum += v;
    if (s->p->light)
        return;
    if (atomic_fetch_add_explicit(&s->seen[v], 1, memory_order_relaxed) != 0)
        atomic_fetch_add_explicit(&s->dup, 1, memory_order_relaxed);
    if (s->payload[v] != payload_of(v)) /* plain read: the deque must order it */
        atomic_fetch_add_explicit(&s->payload_err, 1, memory_order_relaxed);
}

static void maybe_yield(const mix_params *p, uint64_t *rng) {
    if (p->yield_pct && rng_next(rng) % 100 < p->yield_pct)
        sched_yield();
}

static void *thief_main(void *arg) {
    thief_arg *a = arg;
    mix_shared *s = a->s;
    thief_stats *st = &s->th[a->id];
    uint64_t rng = s->p->seed * 31 + (uint64_t)a->id + 1, taken = 0, last = 0, sum = 0;
    unsigned idle = 0;
    bool have_last = false;
    atomic_fetch_add_explicit(&s->started, 1, memory_order_relaxed);
    /* ORDER: relaxed; `stop` only ends the loop, the join synchronises. */
    while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
        uint64_t v;
        herd__steal_result r = s->ops->steal(s->q, &v);
        if (r == HERD__STEAL_OK) {
            take_value(s, v, &sum);
            if (have_last && v <= last) /* steals are FIFO: strictly increasing */
                atomic_fetch_add_explicit(&s->order_err, 1, memory_order_relaxed);
            last = v;
            have_last = true;
            /* ORDER: relaxed; read by the owner only to decide when to stop. */
            atomic_store_explicit(&st->taken, ++taken, memory_order_relaxed);
            idle = 0;
        } else if (r == HERD__STEAL_RETRY) {
            st->retry++;
        } else {
            st->empty++;
            /* More threads than cores is allowed: let the owner run. */
            if (++idle > 16) {
                sched_yield();
                idle = 0;
            }
        }
        maybe_yield(s->p, &rng);
    }
    atomic_fetch_add_explicit(&s->sum, sum, memory_order_relaxed);
    return NULL;
}

static uint64_t thieves_taken(mix_shared *s, uint64_t *min_out) {
    uint64_t total = 0, mn = UINT64_MAX;
    for (int i = 0; i < s->p->nthieves; i++) {
        uint64_t t = atomic_load_explicit(&s->th[i].taken, memory_order_relaxed);
        total += t;
        if (t < mn)
            mn = t;
    }
    if (min_out)
        *min_out = mn;
    return total;
}

/* Owner: pop up to n values. Returns how many it got. */
static uint64_t owner_pop(mix_shared *s, uint64_t n, uint64_t *sum) {
    uint64_t got = 0, v;
    while (got < n && s->ops->pop(s->q, &v)) {
        take_value(s, v, sum);
        got++;
    }
    return got;
}

/* Run one owner (the caller) against p->nthieves thieves. Returns 0 when
 * every check passed, -1 otherwise (after printing why). */
/* The owner leaves what is queued to the thieves for a moment: a split
 * deque's thieves see only what its owner published. */
static void offer_to_thieves(mix_shared *s) {
    if (s->ops->publish_all)
        s->ops->publish_all(s->q);
    sched_yield();
}

static int run_mix(const deque_ops *ops, const mix_params *p, mix_result *res) {
    mix_shared *s = aligned_alloc(64, (sizeof *s + 63) / 64 * 64);
    memset(s, 0, sizeof *s);
    s->ops = ops;
    s->p = p;
    if (!p->light) {
        s->payload = calloc(p->nitems, sizeof *s->payload);
        s->seen = calloc(p->nitems, sizeof *s->seen);
    }
    memset(res, 0, sizeof *res);
    if ((!p->light && (!s->payload || !s->seen)) || ops->init(&s->q) != 0) {
        fprintf(stderr, "FAIL %s/%s: out of memory\n", ops->name, p->name);
        free(s->payload);
        free(s->seen);
        free(s);
        return -1;
    }
    uint64_t before_err = atomic_load(&adapter_errors);
    pthread_t tid[MAX_THIEVES];
    thief_arg targ[MAX_THIEVES];
    double t0 = now_s();
    for (int i = 0; i < p->nthieves; i++) {
        targ[i] = (thief_arg){s, i};
        pthread_create(&tid[i], NULL, thief_main, &targ[i]);
    }

    uint64_t rng = p->seed | 1, next = 0, pops = 0, full = 0, osum = 0;
    bool late = false;
    /* Start together, or a fast owner is done before the thieves exist. */
    while (atomic_load_explicit(&s->started, memory_order_relaxed) < p->nthieves)
        sched_yield();
    while (next < p->nitems) {
        if ((next & 255) == 0 && now_s() - t0 > p->time_cap_s)
            break;
        if (p->stop_when_fed && (next & 63) == 0) {
            uint64_t mn;
            thieves_taken(s, &mn);
            if (mn > 0)
                break;
        }
        uint64_t burst = 1 + rng_next(&rng) % p->burst_max;
        for (uint64_t i = 0; i < burst && next < p->nitems; i++) {
            if (!p->light)
                s->payload[next] = payload_of(next); /* plain write, published by push */
            while (ops->push(s->q, next) != 0) {
                full++;
                if (p->stop_when_fed && now_s() - t0 <= p->time_cap_s) {
                    /* Full while a thief waits to be fed: leave the values
                     * to the thieves rather than take them back. The 128-slot deque's owner took
                     * 64 at each full push and so ran through all 2^20
                     * values before a thief that had not run yet could get
                     * one: 3 runs in 25 under ASan beside stress.deque_stress. */
                    offer_to_thieves(s);
                    continue;
                }
                pops += owner_pop(s, 64, &osum); /* take something out, try again */
            }
            next++;
            maybe_yield(p, &rng);
        }
        if (p->pop_pct && rng_next(&rng) % 100 < p->pop_pct)
            pops += owner_pop(s, 1 + rng_next(&rng) % p->pop_max, &osum);
    }
    /* Out of values before every thief was fed (a small deque, whose full
     * pushes pop, goes through them fast; a thief may not have run yet on
     * a loaded machine): leave what is queued to the thieves until they
     * are fed or the time cap passes. */
    while (p->stop_when_fed && now_s() - t0 <= p->time_cap_s) {
        uint64_t mn;
        thieves_taken(s, &mn);
        if (mn > 0)
            break;
        offer_to_thieves(s);
    }
    /* Drain: once pop reports empty, every value left was won by a thief's
     * CAS; wait for those thieves to record theirs. */
    pops += owner_pop(s, UINT64_MAX, &osum);
    while (pops + thieves_taken(s, NULL) < next) {
        if (now_s() - t0 > p->deadline_s) {
            late = true;
            break;
        }
        sched_yield();
    }
    atomic_store_explicit(&s->stop, 1, memory_order_relaxed);
    for (int i = 0; i < p->nthieves; i++)
        pthread_join(tid[i], NULL);
    res->elapsed_s = now_s() - t0;
    atomic_fetch_add_explicit(&s->sum, osum, memory_order_relaxed);

    res->produced = next;
    res->owner_pops = pops;
    res->push_full = full;
    res->steal_ok = thieves_taken(s, &res->min_thief_taken);
    for (int i = 0; i < p->nthieves; i++) {
        res->steal_retry += s->th[i].retry;
        res->steal_empty += s->th[i].empty;
    }
    res->grew = ops->grew ? ops->grew(s->q) : -1;

    int bad = 0;
    uint64_t missing = 0, multi = 0, sum = 0;
    for (uint64_t v = 0; v < next; v++) {
        sum += v;
        if (p->light)
            continue;
        uint32_t c = atomic_load_explicit(&s->seen[v], memory_order_relaxed);
        missing += c == 0;
        multi += c > 1;
    }
    uint64_t adapter = atomic_load(&adapter_errors) - before_err;
#define MIXCHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s/%s: %s: ", ops->name, p->name, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            bad = 1;                                                                               \
        }                                                                                          \
    } while (0)
    MIXCHECK(!late, "not drained within %.1fs: %llu of %llu taken", p->deadline_s,
             (unsigned long long)(pops + res->steal_ok), (unsigned long long)next);
    MIXCHECK(missing == 0, "%llu values never taken", (unsigned long long)missing);
    MIXCHECK(multi == 0 && s->dup == 0, "%llu values taken twice (dup events %llu)",
             (unsigned long long)multi, (unsigned long long)s->dup);
    MIXCHECK(pops + res->steal_ok == next, "taken %llu != produced %llu",
             (unsigned long long)(pops + res->steal_ok), (unsigned long long)next);
    MIXCHECK(s->sum == sum, "sum %llu != %llu", (unsigned long long)s->sum,
             (unsigned long long)sum);
    MIXCHECK(s->payload_err == 0, "%llu payloads not visible to the taker",
             (unsigned long long)s->payload_err);
    MIXCHECK(s->order_err == 0, "%llu steals out of FIFO order", (unsigned long long)s->order_err);
    MIXCHECK(adapter == 0, "%llu corrupted task copies", (unsigned long long)adapter);
#undef MIXCHECK

    ops->fini(s->q);
    free(s->payload);
    free(s->seen);
    free(s);
    return bad ? -1 : 0;
}

/* ------------------------------------------------------------ unit tests */

#ifndef DEQUE_BATTERY_NO_MAIN

/* Single thread: LIFO pops, FIFO steals, empty answers, reuse after drain. */
static void test_smoke(const deque_ops *ops) {
    void *q;
    uint64_t v;
    enum { N = 100 };
    CHECK(ops->init(&q) == 0, "%s init", ops->name);
    CHECK(!ops->pop(q, &v), "%s: pop on a new deque", ops->name);
    CHECK(ops->steal(q, &v) == HERD__STEAL_EMPTY, "%s: steal on a new deque", ops->name);

    for (int round = 0; round < 3; round++) {
        /* LIFO for the owner. */
        for (uint64_t i = 0; i < N; i++)
            CHECK(ops->push(q, i) == 0, "%s push", ops->name);
        if (ops == &chase_lev_ops)
            CHECK(herd__cl_size_estimate(q) == N, "size estimate %lld",
                  (long long)herd__cl_size_estimate(q));
        for (uint64_t i = N; i-- > 0;) {
            bool ok = ops->pop(q, &v);
            CHECK(ok && v == i, "%s: pop #%llu gave %d/%llu", ops->name,
                  (unsigned long long)(N - i), ok, (unsigned long long)v);
        }
        CHECK(!ops->pop(q, &v), "%s: pop after drain", ops->name);
        CHECK(ops->steal(q, &v) == HERD__STEAL_EMPTY, "%s: steal after drain", ops->name);

        /* FIFO for thieves. */
        for (uint64_t i = 0; i < N; i++)
            CHECK(ops->push(q, 1000 + i) == 0, "%s push", ops->name);
        if (ops->publish_all)
            ops->publish_all(q);
        for (uint64_t i = 0; i < N; i++) {
            herd__steal_result r = ops->steal(q, &v);
            CHECK(r == HERD__STEAL_OK && v == 1000 + i, "%s: steal #%llu gave %d/%llu", ops->name,
                  (unsigned long long)i, (int)r, (unsigned long long)v);
        }
        CHECK(ops->steal(q, &v) == HERD__STEAL_EMPTY, "%s: steal after drain", ops->name);
        CHECK(!ops->pop(q, &v), "%s: pop after steals drained it", ops->name);

        /* Both ends at once: steals ascend from the oldest, pops descend from
         * the newest, and they meet without losing or doubling a value. */
        for (uint64_t i = 0; i < N; i++)
            CHECK(ops->push(q, i) == 0, "%s push", ops->name);
        if (ops->publish_all)
            ops->publish_all(q);
        uint64_t lo = 0, hi = N, got = 0;
        for (int turn = 0; lo < hi; turn++) {
            if (turn & 1) {
                bool ok = ops->pop(q, &v);
                CHECK(ok && v == hi - 1, "%s: mixed pop gave %d/%llu, want %llu", ops->name, ok,
                      (unsigned long long)v, (unsigned long long)(hi - 1));
                hi--;
            } else {
                herd__steal_result r = ops->steal(q, &v);
                CHECK(r == HERD__STEAL_OK && v == lo, "%s: mixed steal gave %d/%llu, want %llu",
                      ops->name, (int)r, (unsigned long long)v, (unsigned long long)lo);
                lo++;
            }
            got++;
        }
        CHECK(got == N, "%s: mixed took %llu", ops->name, (unsigned long long)got);
        CHECK(!ops->pop(q, &v), "%s: pop after mixed drain", ops->name);
        CHECK(ops->steal(q, &v) == HERD__STEAL_EMPTY, "%s: steal after mixed drain", ops->name);
    }
    if (ops->grew)
        CHECK(ops->grew(q), "%s: 100 values in 4 slots did not grow", ops->name);
    ops->fini(q);
}

/* Sizes are scaled down under ThreadSanitizer, which runs ~10x slower. */
static uint64_t scaled(uint64_t n) {
#if defined(__SANITIZE_THREAD__) || defined(HERD_TSAN)
    return n;
#else
    return 5 * n;
#endif
}

static void mix(const deque_ops *ops, const mix_params *p) {
    mix_result r;
    if (run_mix(ops, p, &r) != 0) {
        failures++;
        return;
    }
    printf("  %-12s %-14s %8llu values, owner %8llu, thieves %8llu (retry %llu), %.2fs\n",
           ops->name, p->name, (unsigned long long)r.produced, (unsigned long long)r.owner_pops,
           (unsigned long long)r.steal_ok, (unsigned long long)r.steal_retry, r.elapsed_s);
    if (p->stop_when_fed)
        CHECK(r.min_thief_taken > 0, "%s/%s: a thief starved (%llu values pushed)", ops->name,
              p->name, (unsigned long long)r.produced);
    if (p->burst_max >= 256 && ops->grew)
        CHECK(r.grew == 1, "%s/%s: did not grow", ops->name, p->name);
}

/* S8 alone: a full deque whose oldest tasks thieves took; the rest move
 * down, in order, big arguments with them; a frame's base bounds it. */
static void test_compact(void) {
    enum { BIG = 64 };
    herd__sdq q;
    herd__taskcopy t;
    unsigned char arg[BIG];
    CHECK(herd__sdq_init(&q, SDQ_SMALL_CAP) == 0, "init");
    herd__sdq_own(&q);
    for (uint32_t i = 0; i < SDQ_SMALL_CAP; i++) {
        memset(arg, (int)(i & 0xff), sizeof arg);
        CHECK(herd__sdq_push(&q, sdq_marker_fn, NULL, 0, arg, (i & 1) ? BIG : 8) == 0, "push");
    }
    CHECK(herd__sdq_push(&q, sdq_marker_fn, NULL, 0, arg, 8) != 0, "push into a full deque");
    while (herd__sdq_publish(&q) != 0)
        ;
    for (int i = 0; i < 40; i++)
        CHECK(herd__sdq_steal(&q, &t) == HERD__STEAL_OK && t.arg[0] == i, "steal %d", i);
    CHECK(herd__sdq_compact(&q, 0, 41) == 0, "compact below min_gain");
    CHECK(herd__sdq_compact(&q, 41, 1) == 0, "compact with tail below base");
    CHECK(herd__sdq_compact(&q, 0, 40) == 40, "compact");
    CHECK(herd__sdq_queued(&q) == SDQ_SMALL_CAP - 40, "queued %u", herd__sdq_queued(&q));
    CHECK(herd__sdq_public_size(&q) == 0, "public part taken back");
    for (uint32_t i = 0; i < 40; i++)
        CHECK(herd__sdq_push(&q, sdq_marker_fn, NULL, 0, arg, 8) == 0, "push after compact");
    CHECK(herd__sdq_push(&q, sdq_marker_fn, NULL, 0, arg, 8) != 0, "full again");
    for (uint32_t i = 0; i < 40; i++)
        CHECK(herd__sdq_pop(&q, 0, &t) == HERD__POP_OK, "pop a new one");
    for (uint32_t i = SDQ_SMALL_CAP; i-- > 40;) {
        CHECK(herd__sdq_pop(&q, 0, &t) == HERD__POP_OK, "pop %u", i);
        size_t size = (i & 1) ? BIG : 8;
        memset(arg, (int)(i & 0xff), sizeof arg);
        CHECK(t.size == size && memcmp(t.arg, arg, size) == 0, "task %u moved whole", i);
    }
    CHECK(herd__sdq_pop(&q, 0, &t) == HERD__POP_NONE, "empty");
    herd__sdq_fini(&q);
}

/* S3 clears a thief's request only when it makes something public: a
 * thief that asked and went to sleep (tasks.md W2) waits for the wake of
 * that publication (W3), so a publication with nothing private leaves the
 * request for the owner's next push. */
static void test_request_stands(void) {
    herd__sdq q;
    herd__taskcopy t;
    unsigned char arg[8] = {0};
    CHECK(herd__sdq_init(&q, SDQ_SMALL_CAP) == 0, "init");
    herd__sdq_own(&q);
    herd__sdq_ask(&q);
    CHECK(herd__sdq_publish(&q) == 0, "nothing private to publish");
    CHECK(herd__sdq_wants_publish(&q), "the request stands");
    CHECK(herd__sdq_push(&q, sdq_marker_fn, NULL, 0, arg, sizeof arg) == 0, "push");
    CHECK(herd__sdq_publish(&q) == 1, "the pushed task published");
    CHECK(!herd__sdq_wants_publish(&q), "the request answered");
    CHECK(herd__sdq_pop(&q, 0, &t) == HERD__POP_OK, "taken back");
    herd__sdq_fini(&q);
}

int main(void) {
    test_compact();
    test_request_stands();
    for (size_t k = 0; k < NKINDS; k++) {
        const deque_ops *ops = all_kinds[k];
        printf("%s\n", ops->name);
        test_smoke(ops);

        /* Single producer, one thief: the owner pushes, then pops the rest. */
        mix(ops, &(mix_params){.name = "spsc",
                               .nthieves = 1,
                               .nitems = scaled(200000),
                               .burst_max = 16,
                               .pop_pct = 0,
                               .pop_max = 1,
                               .time_cap_s = 5,
                               .deadline_s = 20,
                               .seed = 1});
        /* Stampede: owner pushing and popping, 7 thieves at once (more threads
         * than cores is intended). */
        mix(ops, &(mix_params){.name = "stampede",
                               .nthieves = 7,
                               .nitems = scaled(200000),
                               .burst_max = 8,
                               .pop_pct = 50,
                               .pop_max = 4,
                               .time_cap_s = 5,
                               .deadline_s = 20,
                               .seed = 2});
        /* Stampede with the owner mostly popping: the last-element race. */
        mix(ops, &(mix_params){.name = "last_element",
                               .nthieves = 4,
                               .nitems = scaled(100000),
                               .burst_max = 2,
                               .pop_pct = 90,
                               .pop_max = 2,
                               .yield_pct = 1,
                               .time_cap_s = 5,
                               .deadline_s = 20,
                               .seed = 3});
        /* No starvation: the owner only pushes, one at a time; every thief
         * must get a value before the owner gives up. */
        mix(ops, &(mix_params){.name = "no_starvation",
                               .nthieves = 6,
                               .nitems = 1u << 20,
                               .burst_max = 1,
                               .pop_pct = 0,
                               .pop_max = 1,
                               .yield_pct = 1,
                               .stop_when_fed = true,
                               .time_cap_s = 10,
                               .deadline_s = 20,
                               .seed = 4});
        /* Every value exactly once, randomised schedules. */
        mix(ops, &(mix_params){.name = "exactly_once",
                               .nthieves = 5,
                               .nitems = scaled(150000),
                               .burst_max = 32,
                               .pop_pct = 30,
                               .pop_max = 16,
                               .yield_pct = 2,
                               .time_cap_s = 5,
                               .deadline_s = 20,
                               .seed = 5});
        /* Growth under concurrent steals: long bursts into a 4-slot array. */
        if (ops->grew)
            mix(ops, &(mix_params){.name = "growth",
                                   .nthieves = 4,
                                   .nitems = scaled(200000),
                                   .burst_max = 4096,
                                   .pop_pct = 10,
                                   .pop_max = 64,
                                   .time_cap_s = 5,
                                   .deadline_s = 20,
                                   .seed = 6});
    }
    /* The 128-slot deque's pushes filled it many times over: each time the
     * queued values moved down over the stolen ones (S8). */
    CHECK(atomic_load(&sdq_compactions) > 0, "split_deque_128: never compacted");
    /* And the retracting one took public values back under the thieves. */
    CHECK(atomic_load(&sdq_retracts) > 0, "split_deque_retract: never took a public part back");
    if (failures) {
        fprintf(stderr, "deque battery: %d failure(s)\n", failures);
        return 1;
    }
    printf("deque battery: all passed\n");
    return 0;
}

#endif /* DEQUE_BATTERY_NO_MAIN */
