/* Full/empty bits (src/core/feb.c): every operation on its own, then tasks
 * that block on words: a writeEF waiting for an empty, a producer/consumer
 * pair and a relay chain through words, many readers released by one
 * writeF, many readFE/writeEF pairs each served exactly once, a word used
 * as a lock.
 *
 * Blocking is checked by outcome, not time: a writer that may only finish
 * after an empty must not have finished before it. */
// herd-test-matrix: unit
// herd-test-env: HERD_WORKERS=1
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=4 HERD_IDLE=sleep
// herd-test-env: HERD_WORKERS=8 HERD_IDLE=spin
// herd-test-timeout: 120
#include "../common/check.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------ single operations */

static void ops_root(void *p) {
    (void)p;
    uint64_t *w = calloc(4, sizeof *w); /* a word never touched by herd */
    CHECK(w != NULL);
    uint64_t v = 0;

    /* Every word is full unless emptied. */
    CHECK_EQ(herd_feb_status(&w[0]), 1);
    w[0] = 42;
    CHECK_OK(herd_feb_readFF(&w[0], &v));
    CHECK_EQ(v, 42);
    CHECK_EQ(herd_feb_status(&w[0]), 1); /* readFF leaves it full */
    CHECK_OK(herd_feb_readFF(&w[0], &v));
    CHECK_EQ(v, 42);

    CHECK_OK(herd_feb_readFE(&w[0], &v)); /* full: returns and empties */
    CHECK_EQ(v, 42);
    CHECK_EQ(herd_feb_status(&w[0]), 0);

    CHECK_OK(herd_feb_writeEF(&w[0], 43)); /* empty: writes and fills */
    CHECK_EQ(herd_feb_status(&w[0]), 1);
    CHECK_EQ(w[0], 43);
    CHECK_OK(herd_feb_readFF(&w[0], &v));
    CHECK_EQ(v, 43);

    /* tryreadFE: readFE when full, HERD_EBUSY at once when empty. */
    CHECK_OK(herd_feb_tryreadFE(&w[0], &v));
    CHECK_EQ(v, 43);
    CHECK_EQ(herd_feb_status(&w[0]), 0);
    v = 5;
    CHECK_RC(herd_feb_tryreadFE(&w[0], &v), HERD_EBUSY);
    CHECK_EQ(v, 5); /* nothing read */
    CHECK_EQ(herd_feb_status(&w[0]), 0);
    CHECK_OK(herd_feb_writeEF(&w[0], 43));

    /* empty / fill do not write the value. */
    CHECK_OK(herd_feb_empty(&w[1]));
    CHECK_EQ(herd_feb_status(&w[1]), 0);
    CHECK_OK(herd_feb_empty(&w[1])); /* empty twice: still empty */
    CHECK_EQ(herd_feb_status(&w[1]), 0);
    w[1] = 7;
    CHECK_OK(herd_feb_fill(&w[1]));
    CHECK_EQ(herd_feb_status(&w[1]), 1);
    CHECK_EQ(w[1], 7);
    CHECK_OK(herd_feb_fill(&w[1])); /* fill twice: still full */
    CHECK_OK(herd_feb_readFE(&w[1], &v));
    CHECK_EQ(v, 7);

    /* writeF writes whatever the state. */
    CHECK_EQ(herd_feb_status(&w[1]), 0);
    CHECK_OK(herd_feb_writeF(&w[1], 8));
    CHECK_EQ(herd_feb_status(&w[1]), 1);
    CHECK_OK(herd_feb_writeF(&w[1], 9)); /* on a full word too */
    CHECK_OK(herd_feb_readFF(&w[1], &v));
    CHECK_EQ(v, 9);

    /* Neighbouring words have their own state. */
    CHECK_OK(herd_feb_empty(&w[2]));
    CHECK_EQ(herd_feb_status(&w[1]), 1);
    CHECK_EQ(herd_feb_status(&w[3]), 1);
    CHECK_OK(herd_feb_fill(&w[2]));

    /* Unaligned and NULL addresses. */
    uint64_t *odd = (uint64_t *)(void *)((char *)&w[0] + 4);
    CHECK_RC(herd_feb_readFF(odd, &v), HERD_EINVAL);
    CHECK_RC(herd_feb_readFE(odd, &v), HERD_EINVAL);
    CHECK_RC(herd_feb_writeEF(odd, 1), HERD_EINVAL);
    CHECK_RC(herd_feb_writeF(odd, 1), HERD_EINVAL);
    CHECK_RC(herd_feb_fill(odd), HERD_EINVAL);
    CHECK_RC(herd_feb_empty(odd), HERD_EINVAL);
    odd = (uint64_t *)(void *)((char *)&w[0] + 1);
    CHECK_RC(herd_feb_readFF(odd, &v), HERD_EINVAL);
    CHECK_RC(herd_feb_readFF(NULL, &v), HERD_EINVAL);
    CHECK_RC(herd_feb_readFF(&w[0], NULL), HERD_EINVAL);
    CHECK_RC(herd_feb_tryreadFE(odd, &v), HERD_EINVAL);
    CHECK_RC(herd_feb_tryreadFE(&w[0], NULL), HERD_EINVAL);
    CHECK_RC(herd_feb_writeF(NULL, 1), HERD_EINVAL);
    CHECK_RC(herd_feb_lock(odd), HERD_EINVAL);
    CHECK_RC(herd_feb_lock(NULL), HERD_EINVAL);
    CHECK_EQ(w[0], 43); /* failed calls wrote nothing */

    /* lock: readFE without the value. */
    CHECK_OK(herd_feb_lock(&w[0]));
    CHECK_EQ(herd_feb_status(&w[0]), 0);
    CHECK_EQ(w[0], 43);
    CHECK_OK(herd_feb_fill(&w[0]));
    free(w);
}

/* --------------------------------------- writeEF on a full word blocks */

static uint64_t bw_word;
static _Atomic int bw_done;

static void bw_writer(void *p) {
    (void)p;
    CHECK_OK(herd_feb_writeEF(&bw_word, 2)); /* full: waits for an empty */
    atomic_store(&bw_done, 1);
}

static void block_write_root(void *p) {
    (void)p;
    CHECK_OK(herd_feb_writeF(&bw_word, 1));
    CHECK_OK(herd_spawn(bw_writer, NULL, 0));
    for (int i = 0; i < 200; i++) {
        CHECK_OK(herd_yield());
        /* Nobody emptied the word: the writer cannot have finished. */
        CHECK_EQ(atomic_load(&bw_done), 0);
        CHECK_EQ(herd_feb_status(&bw_word), 1);
    }
    uint64_t v = 0;
    CHECK_OK(herd_feb_readFF(&bw_word, &v));
    CHECK_EQ(v, 1);
    CHECK_OK(herd_feb_readFE(&bw_word, &v)); /* this empty lets the writer in */
    CHECK_EQ(v, 1);
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&bw_done), 1);
    CHECK_EQ(herd_feb_status(&bw_word), 1);
    CHECK_OK(herd_feb_readFF(&bw_word, &v));
    CHECK_EQ(v, 2);
}

/* Same for readers: readFF/readFE on an empty word wait for a fill. */
static uint64_t br_word;
static _Atomic int br_done;

static void br_reader(void *p) {
    int fe = *(int *)p;
    uint64_t v = 0;
    if (fe)
        CHECK_OK(herd_feb_readFE(&br_word, &v));
    else
        CHECK_OK(herd_feb_readFF(&br_word, &v));
    CHECK_EQ(v, 5);
    atomic_fetch_add(&br_done, 1);
}

static void block_read_root(void *p) {
    (void)p;
    CHECK_OK(herd_feb_empty(&br_word));
    int ff = 0, fe = 1;
    CHECK_OK(herd_spawn(br_reader, &ff, sizeof ff));
    CHECK_OK(herd_spawn(br_reader, &fe, sizeof fe));
    for (int i = 0; i < 200; i++) {
        CHECK_OK(herd_yield());
        CHECK_EQ(atomic_load(&br_done), 0);
    }
    /* A fill serves the waiters in arrival order up to the readFE, which
     * empties the word again: if the readFE came first, the readFF needs a
     * second fill. */
    br_word = 5;
    CHECK_OK(herd_feb_fill(&br_word));
    while (atomic_load(&br_done) < 2) {
        CHECK_OK(herd_yield());
        if (herd_feb_status(&br_word) == 0)
            CHECK_OK(herd_feb_fill(&br_word));
    }
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&br_done), 2);
    CHECK_OK(herd_feb_fill(&br_word));
}

/* ------------------------------------------------- a word used as a lock
 * herd_feb_lock (F1 in src/core/feb.c): a fill wakes the oldest locker but
 * leaves the word full, so the running task may take it first; the locker
 * then waits again at the head, ahead of later lockers. Checked exactly on
 * one worker, where the woken locker runs only when the root yields. */
static uint64_t lk_word;
static _Atomic int lk_arrived;
static int lk_order[2], lk_pos; /* guarded by lk_word */

static void lk_task(void *p) {
    int i = *(int *)p;
    atomic_fetch_add(&lk_arrived, 1);
    CHECK_OK(herd_feb_lock(&lk_word));
    lk_order[lk_pos++] = i;
    CHECK_OK(herd_feb_fill(&lk_word));
}

static void lock_wake_root(void *p) {
    (void)p;
    lk_pos = 0;
    CHECK_OK(herd_feb_lock(&lk_word));
    int first = 1, second = 2;
    CHECK_OK(herd_spawn(lk_task, &first, sizeof first));
    while (atomic_load(&lk_arrived) < 1)
        CHECK_OK(herd_yield());
    CHECK_OK(herd_feb_fill(&lk_word)); /* wakes the locker, still full */
    CHECK_EQ(herd_feb_status(&lk_word), 1);
    uint64_t v;
    CHECK_OK(herd_feb_tryreadFE(&lk_word, &v)); /* taken before it runs */
    for (int i = 0; i < 20; i++)
        CHECK_OK(herd_yield()); /* it runs, finds it empty, waits again */
    CHECK_EQ(lk_pos, 0);
    CHECK_OK(herd_spawn(lk_task, &second, sizeof second));
    while (atomic_load(&lk_arrived) < 2)
        CHECK_OK(herd_yield());
    CHECK_OK(herd_feb_fill(&lk_word));
    CHECK_OK(herd_wait());
    CHECK_EQ(lk_pos, 2);
    CHECK_EQ(lk_order[0], 1); /* it kept its place at the head */
    CHECK_EQ(lk_order[1], 2);
    CHECK_EQ(herd_feb_status(&lk_word), 1);
}

/* Many lockers on any number of workers: mutual exclusion, every section
 * run once, the word full at the end. */
#define LOCKERS 24
#define LOCKS_EACH CHECK_SIZE(400, 50)
static uint64_t lm_word;
static long lm_count; /* guarded by lm_word */
static _Atomic int lm_inside;

static void lm_task(void *p) {
    (void)p;
    for (int i = 0; i < LOCKS_EACH; i++) {
        CHECK_OK(herd_feb_lock(&lm_word));
        CHECK_EQ(atomic_fetch_add(&lm_inside, 1), 0);
        lm_count++;
        if (i % 16 == 0)
            CHECK_OK(herd_yield()); /* hold it across a switch */
        atomic_fetch_sub(&lm_inside, 1);
        CHECK_OK(herd_feb_fill(&lm_word));
    }
}

static void lock_many_root(void *p) {
    (void)p;
    lm_count = 0;
    for (int t = 0; t < LOCKERS; t++)
        CHECK_OK(herd_spawn(lm_task, NULL, 0));
    CHECK_OK(herd_wait());
    CHECK_EQ(lm_count, (long)LOCKERS * LOCKS_EACH);
    CHECK_EQ(herd_feb_status(&lm_word), 1);
}

static void run_locks(void) {
    if (herd_num_workers() == 1)
        CHECK_OK(herd_run(lock_wake_root, NULL, 0));
    CHECK_OK(herd_run(lock_many_root, NULL, 0));
}

/* ----------------------------------- producer/consumer through one word */

#define PC_ITEMS CHECK_SIZE(20000, 2000)
static uint64_t pc_word;

static void pc_producer(void *p) {
    (void)p;
    for (uint64_t i = 1; i <= PC_ITEMS; i++)
        CHECK_OK(herd_feb_writeEF(&pc_word, i * 3 + 1));
}

static void pc_consumer(void *p) {
    (void)p;
    for (uint64_t i = 1; i <= PC_ITEMS; i++) {
        uint64_t v = 0;
        CHECK_OK(herd_feb_readFE(&pc_word, &v));
        CHECK_EQ_U64(v, i * 3 + 1); /* every item, in order */
    }
}

static void pc_root(void *p) {
    int consumer_first = *(int *)p;
    CHECK_OK(herd_feb_empty(&pc_word));
    if (consumer_first) {
        CHECK_OK(herd_spawn(pc_consumer, NULL, 0));
        CHECK_OK(herd_spawn(pc_producer, NULL, 0));
    } else {
        CHECK_OK(herd_spawn(pc_producer, NULL, 0));
        CHECK_OK(herd_spawn(pc_consumer, NULL, 0));
    }
    CHECK_OK(herd_wait());
    CHECK_EQ(herd_feb_status(&pc_word), 0);
    CHECK_OK(herd_feb_fill(&pc_word));
}

/* A relay: task k takes the value from word k and passes value+1 to word
 * k+1. Spawned last-first, so most of them wait before the first value. */
#define RELAY CHECK_SIZE(2000, 500)
static uint64_t relay_words[RELAY + 1];

static void relay_task(void *p) {
    int k = *(int *)p;
    uint64_t v = 0;
    CHECK_OK(herd_feb_readFE(&relay_words[k], &v));
    CHECK_EQ_U64(v, 1000 + (uint64_t)k);
    CHECK_OK(herd_feb_writeEF(&relay_words[k + 1], v + 1));
}

static void relay_root(void *p) {
    (void)p;
    for (int k = 0; k <= RELAY; k++)
        CHECK_OK(herd_feb_empty(&relay_words[k]));
    for (int k = RELAY - 1; k >= 0; k--)
        CHECK_OK(herd_spawn(relay_task, &k, sizeof k));
    CHECK_OK(herd_feb_writeEF(&relay_words[0], 1000));
    uint64_t v = 0;
    CHECK_OK(herd_feb_readFE(&relay_words[RELAY], &v));
    CHECK_EQ_U64(v, 1000 + RELAY);
    CHECK_OK(herd_wait());
    for (int k = 0; k <= RELAY; k++) {
        CHECK_EQ(herd_feb_status(&relay_words[k]), 0);
        CHECK_OK(herd_feb_fill(&relay_words[k]));
    }
}

/* ------------------------------- many readers released by one writeF */

#define READERS CHECK_SIZE(1000, 500)
static uint64_t mr_word;
static _Atomic int mr_started, mr_done;

static void mr_reader(void *p) {
    (void)p;
    atomic_fetch_add(&mr_started, 1);
    uint64_t v = 0;
    CHECK_OK(herd_feb_readFF(&mr_word, &v));
    CHECK_EQ(v, 777);
    atomic_fetch_add(&mr_done, 1);
}

static void many_readers_root(void *p) {
    (void)p;
    CHECK_OK(herd_feb_empty(&mr_word));
    for (int i = 0; i < READERS; i++)
        CHECK_OK(herd_spawn(mr_reader, NULL, 0));
    while (atomic_load(&mr_started) < READERS)
        CHECK_OK(herd_yield());
    CHECK_EQ(atomic_load(&mr_done), 0);
    CHECK_OK(herd_feb_writeF(&mr_word, 777));
    CHECK_OK(herd_wait());
    CHECK_EQ(atomic_load(&mr_done), READERS);
    CHECK_EQ(herd_feb_status(&mr_word), 1);
}

/* -------------------- many readFE and writeEF on one word: each value once */

#define PAIRS 500
static uint64_t xw_word;
static _Atomic unsigned char xw_seen[PAIRS];

static void xw_writer(void *p) {
    uint64_t v = *(uint64_t *)p;
    CHECK_OK(herd_feb_writeEF(&xw_word, v));
}

static void xw_reader(void *p) {
    (void)p;
    uint64_t v = ~0ull;
    CHECK_OK(herd_feb_readFE(&xw_word, &v));
    CHECK(v < PAIRS);
    atomic_fetch_add(&xw_seen[v], 1);
}

static void exchange_root(void *p) {
    (void)p;
    CHECK_OK(herd_feb_empty(&xw_word));
    for (uint64_t i = 0; i < PAIRS; i++) {
        if (i % 2) {
            CHECK_OK(herd_spawn(xw_reader, NULL, 0));
            CHECK_OK(herd_spawn(xw_writer, &i, sizeof i));
        } else {
            CHECK_OK(herd_spawn(xw_writer, &i, sizeof i));
            CHECK_OK(herd_spawn(xw_reader, NULL, 0));
        }
    }
    CHECK_OK(herd_wait());
    for (int i = 0; i < PAIRS; i++)
        CHECK_EQ(atomic_load(&xw_seen[i]), 1);
    CHECK_EQ(herd_feb_status(&xw_word), 0);
    CHECK_OK(herd_feb_fill(&xw_word));
}

static void run_pc(void) {
    for (int order = 0; order < 2; order++)
        CHECK_OK(herd_run(pc_root, &order, sizeof order));
}

static const struct {
    const char *name;
    herd_fn root; /* or NULL, then run() */
    void (*run)(void);
} cases[] = {
    {"single operations", ops_root, NULL},
    {"writeEF on a full word waits for an empty", block_write_root, NULL},
    {"readFF/readFE on an empty word wait for a fill", block_read_root, NULL},
    {"producer/consumer through one word", NULL, run_pc},
    {"relay through words", relay_root, NULL},
    {"readers released by one writeF", many_readers_root, NULL},
    {"readFE / writeEF pairs on one word", exchange_root, NULL},
    {"a word as a lock: lockers woken, not served", NULL, run_locks},
};

/* With an argument N, runs case N only (for debugging a failure). */
int main(int argc, char **argv) {
    int only = argc > 1 ? atoi(argv[1]) : -1;
    CHECK_OK(herd_start(NULL));
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        if (only >= 0 && i != only)
            continue;
        STEP("%d: %s", i, cases[i].name);
        if (cases[i].root)
            CHECK_OK(herd_run(cases[i].root, NULL, 0));
        else
            cases[i].run();
    }
    CHECK_OK(herd_stop());
    STEP("ok");
    return 0;
}
