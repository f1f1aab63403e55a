/* Random task DAGs, 10^7 tasks in all.
 *
 * Each herd_run() root grows a random tree whose size is fixed in advance:
 * a node with budget B spawns 1..8 children and splits B-1 among them at
 * random, so the subtree holds exactly B tasks while its fan-out and depth
 * vary. Every decision comes from a hash of the node's seed, so a sequential
 * twin recomputes what the parallel run must produce:
 *  - the number of tasks run and the sum of a hash of every task's seed
 *    (each task ran exactly once, with its own argument);
 *  - the value of every root: a node's value is its hash plus its children's
 *    values, collected after herd_wait(), so a wait that returns before a
 *    child finished gives a wrong sum;
 *  - the count each of 16 mutexes guards (increments under a herd_mutex).
 * Nodes also: return without waiting (implicit wait), wait twice (spawn,
 * wait, spawn more, wait), block on a mutex, yield, and order siblings
 * through a full/empty word (later siblings readFF what the first one
 * writes: a DAG edge between tasks that are not parent and child).
 * Roots run from four threads at once. */
// herd-test-matrix: stress
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=4 HERD_IDLE=sleep
// herd-test-env: HERD_WORKERS=3 HERD_IDLE=spin HERD_STACK=64K
// herd-test-timeout: 300
#include "../common/check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define TOTAL_TASKS CHECK_SCALED(CHECK_TSAN ? 100000ull : CHECK_SANITIZED ? 400000ull : 10000000ull)
#define ROOT_THREADS 4
#define ROOTS_PER_THREAD 5
#define NROOTS (ROOT_THREADS * ROOTS_PER_THREAD)
#define MAX_FANOUT 8
#define NMUTEX 16

typedef struct node_arg {
    uint64_t seed;
    uint64_t budget; /* tasks in this subtree, this one included */
    uint64_t *out;   /* where the subtree's value goes (parent's local), or NULL */
    uint64_t *word;  /* sibling edge: the first sibling writes it, the others read */
    uint64_t expect; /* the value that goes through *word */
    int role;        /* 0 none, 1 writer, 2 reader */
} node_arg;

enum { MODE_IMPLICIT, MODE_TWO_WAITS, MODE_ONE_WAIT };

/* Everything a node decides, from its seed alone. */
typedef struct plan {
    uint64_t hash; /* its contribution */
    int fanout;
    uint64_t budgets[MAX_FANOUT];
    int mode;
    int edge;   /* siblings ordered through a word */
    int action; /* 0 none, 1 mutex, 2 yield */
    int mutex;
} plan;

static uint64_t child_seed(uint64_t seed, int i) {
    return check_mix64(seed ^ (0x632BE59BD9B4E019ull * (uint64_t)(i + 1)));
}

static void make_plan(uint64_t seed, uint64_t budget, plan *p) {
    uint64_t r = check_mix64(seed);
    p->hash = check_mix64(seed ^ 0xABCDEF0123456789ull);
    uint64_t rest = budget - 1;
    p->fanout = rest == 0 ? 0 : 1 + (int)(r % (rest < MAX_FANOUT ? rest : MAX_FANOUT));
    uint64_t x = r;
    for (int i = 0; i < p->fanout; i++) {
        int left = p->fanout - 1 - i; /* children after this one, 1 task each at least */
        if (left == 0) {
            p->budgets[i] = rest;
        } else {
            x = check_mix64(x);
            uint64_t most = rest - (uint64_t)left;
            p->budgets[i] = 1 + x % most;
        }
        rest -= p->budgets[i];
    }
    uint64_t m = (r >> 20) % 100;
    p->mode = m < 20 ? MODE_IMPLICIT : m < 35 ? MODE_TWO_WAITS : MODE_ONE_WAIT;
    p->edge = p->mode != MODE_IMPLICIT && p->fanout >= 2 && (r >> 28) % 100 < 8;
    uint64_t a = (r >> 36) % 100;
    p->action = a < 3 ? 1 : a < 6 ? 2 : 0;
    p->mutex = (int)((r >> 44) % NMUTEX);
}

/* ------------------------------------------------------------ parallel */

typedef struct {
    _Atomic uint64_t count, sum;
} __attribute__((aligned(64))) acc;

static acc *per_worker;
static herd_mutex mutexes[NMUTEX];
static uint64_t guarded[NMUTEX]; /* guarded[k] only under mutexes[k] */
static _Atomic uint64_t edge_waits;

static void node(void *p) {
    node_arg a = *(node_arg *)p;
    plan pl;
    make_plan(a.seed, a.budget, &pl);

    if (a.role == 1) {
        CHECK_OK(herd_feb_writeF(a.word, a.expect));
    } else if (a.role == 2) {
        uint64_t v = 0;
        CHECK_OK(herd_feb_readFF(a.word, &v)); /* waits for the first sibling */
        CHECK_EQ_U64(v, a.expect);
        atomic_fetch_add_explicit(&edge_waits, 1, memory_order_relaxed);
    }
    if (pl.action == 1) {
        CHECK_OK(herd_mutex_lock(&mutexes[pl.mutex]));
        guarded[pl.mutex]++;
        CHECK_OK(herd_mutex_unlock(&mutexes[pl.mutex]));
    } else if (pl.action == 2) {
        CHECK_OK(herd_yield());
    }
    int w = herd_worker_id();
    CHECK(w >= 0 && w < herd_num_workers());
    atomic_fetch_add_explicit(&per_worker[w].count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&per_worker[w].sum, pl.hash, memory_order_relaxed);

    uint64_t results[MAX_FANOUT];
    uint64_t word = 0;
    if (pl.edge)
        CHECK_OK(herd_feb_empty(&word));
    int implicit = pl.mode == MODE_IMPLICIT;
    for (int i = 0; i < pl.fanout; i++) {
        results[i] = ~0ull;
        node_arg c = {
            child_seed(a.seed, i), pl.budgets[i], implicit ? NULL : &results[i], NULL, 0, 0};
        if (pl.edge) {
            c.word = &word;
            c.expect = check_mix64(a.seed ^ 0xFEB);
            c.role = i == 0 ? 1 : 2;
        }
        CHECK_OK(herd_spawn(node, &c, sizeof c));
        if (pl.mode == MODE_TWO_WAITS && i == pl.fanout / 2) {
            CHECK_OK(herd_wait());
            for (int k = 0; k <= i; k++)
                CHECK(results[k] != ~0ull); /* the first half has finished */
        }
    }
    if (implicit) {
        /* Our value cannot include the children's: we do not wait for them
         * (the runtime does, after we return). */
        if (a.out)
            *a.out = pl.hash;
        return;
    }
    CHECK_OK(herd_wait());
    uint64_t v = pl.hash;
    for (int i = 0; i < pl.fanout; i++)
        v += results[i];
    if (pl.edge) {
        CHECK_EQ(herd_feb_status(&word), 1); /* full again: no record outlives the frame */
        CHECK_EQ_U64(word, check_mix64(a.seed ^ 0xFEB));
    }
    if (a.out)
        *a.out = v;
}

/* ---------------------------------------------------------------- twin */

typedef struct twin_totals {
    uint64_t count, sum, edges;
    uint64_t guarded[NMUTEX];
} twin_totals;

static uint64_t twin(uint64_t seed, uint64_t budget, int role, twin_totals *t) {
    plan pl;
    make_plan(seed, budget, &pl);
    if (role == 2)
        t->edges++;
    if (pl.action == 1)
        t->guarded[pl.mutex]++;
    t->count++;
    t->sum += pl.hash;
    uint64_t v = pl.hash;
    for (int i = 0; i < pl.fanout; i++) {
        int r = pl.edge ? (i == 0 ? 1 : 2) : 0;
        uint64_t c = twin(child_seed(seed, i), pl.budgets[i], r, t);
        if (pl.mode != MODE_IMPLICIT)
            v += c;
    }
    return v;
}

/* ---------------------------------------------------------------- driver */

static uint64_t root_seed(int k) {
    return check_mix64(0x5EED0000ull + (uint64_t)k);
}
static uint64_t root_budget(void) {
    return TOTAL_TASKS / NROOTS;
}
static uint64_t root_value[NROOTS];

static void *root_thread(void *p) {
    int t = (int)(intptr_t)p;
    for (int r = 0; r < ROOTS_PER_THREAD; r++) {
        int k = t * ROOTS_PER_THREAD + r;
        root_value[k] = ~0ull;
        node_arg a = {root_seed(k), root_budget(), &root_value[k], NULL, 0, 0};
        CHECK_OK(herd_run(node, &a, sizeof a));
    }
    return NULL;
}

int main(void) {
    CHECK_OK(herd_start(NULL));
    int nw = herd_num_workers();
    per_worker = aligned_alloc(64, sizeof(acc) * (size_t)nw);
    CHECK(per_worker != NULL);
    for (int i = 0; i < nw; i++) {
        atomic_init(&per_worker[i].count, 0);
        atomic_init(&per_worker[i].sum, 0);
    }
    for (int k = 0; k < NMUTEX; k++)
        herd_mutex_init(&mutexes[k]);

    STEP("%d roots of %llu tasks from %d threads, %d workers", NROOTS,
         (unsigned long long)root_budget(), ROOT_THREADS, nw);
    pthread_t th[ROOT_THREADS];
    for (int t = 0; t < ROOT_THREADS; t++)
        CHECK(pthread_create(&th[t], NULL, root_thread, (void *)(intptr_t)t) == 0);
    for (int t = 0; t < ROOT_THREADS; t++)
        CHECK(pthread_join(th[t], NULL) == 0);

    STEP("sequential twin");
    twin_totals want;
    memset(&want, 0, sizeof want);
    for (int k = 0; k < NROOTS; k++) {
        uint64_t v = twin(root_seed(k), root_budget(), 0, &want);
        CHECK_EQ_U64(root_value[k], v);
    }
    uint64_t count = 0, sum = 0;
    for (int i = 0; i < nw; i++) {
        count += atomic_load(&per_worker[i].count);
        sum += atomic_load(&per_worker[i].sum);
    }
    CHECK_EQ(want.count, root_budget() * NROOTS);
    CHECK_EQ(count, want.count);
    CHECK_EQ_U64(sum, want.sum);
    CHECK_EQ(atomic_load(&edge_waits), want.edges);
    for (int k = 0; k < NMUTEX; k++)
        CHECK_EQ(guarded[k], want.guarded[k]);

    herd_worker_stats *st = calloc((size_t)nw, sizeof *st);
    CHECK(st != NULL);
    CHECK_EQ(herd_stats(st, nw), nw);
    uint64_t executed = 0, steals = 0, blocks = 0;
    for (int i = 0; i < nw; i++) {
        executed += st[i].executed;
        steals += st[i].steals;
        blocks += st[i].blocks;
    }
    CHECK_EQ(executed, want.count);
    STEP("%llu tasks, %llu sibling edges, %llu steals, %llu suspensions", (unsigned long long)count,
         (unsigned long long)want.edges, (unsigned long long)steals, (unsigned long long)blocks);
    free(st);
    CHECK_OK(herd_stop());
    free(per_worker);
    STEP("ok");
    return 0;
}
