/* src/dist/queue.c -- the split queue on an MPI-3 window, and its locks.
 *
 * Each rank's window holds four metadata words and a ring of task slots
 * (pool_internal.h). Indices grow forever; slot i is i % capacity:
 *
 *     tail            split              head
 *      | public tasks  | private tasks     |
 *      '- thieves take here        owner pushes and pops here -'
 *
 * The owner pushes and pops at head with plain loads and stores: nobody
 * else touches the private part. The public part [tail, split) is what
 * thieves may take, under the victim's lock, from the tail. Of the paper's
 * metadata {tail, split, nlocal} only tail and split live in the window;
 * nlocal = head - split is the owner's alone (nobody else needs it), so the
 * owner keeps head in its own memory.
 *
 * Rejected: a deque per rank with every access under the lock (the paper's
 * Figure 3 shows it losing to the split queue under contention), and
 * keeping head in the window (a remote reader has no use for it).
 *
 * Every step below cites docs/design/pool.md: Qn the queue, Ln the locks,
 * Rn the MPI rules relied on. */
#include "dist/pool_internal.h"

#include "arch/assert.h"
#include "arch/spin.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------ atomic metadata access */

/* Every metadata access, local or remote, is an accumulate-family atomic
 * followed by MPI_Win_flush: atomic against each other (R1) and complete at
 * the target when the call returns (R3). */
static int64_t aread(herd_pool *p, int target, MPI_Aint off) {
    int64_t none = 0, v = 0;
    POOL_MPI(p, MPI_Fetch_and_op(&none, &v, MPI_INT64_T, target, off, MPI_NO_OP, p->win));
    POOL_MPI(p, MPI_Win_flush(target, p->win));
    return v;
}

/* tail and split in one atomic-per-element read (R1). */
static void aread_meta(herd_pool *p, int target, int64_t *tail, int64_t *split) {
    int64_t none[2] = {0, 0}, v[2] = {0, 0};
    POOL_MPI(p, MPI_Get_accumulate(none, 2, MPI_INT64_T, v, 2, MPI_INT64_T, target, POOL_TAIL_OFF,
                                   2, MPI_INT64_T, MPI_NO_OP, p->win));
    POOL_MPI(p, MPI_Win_flush(target, p->win));
    *tail = v[0];
    *split = v[1];
}

static int64_t aswap(herd_pool *p, int target, MPI_Aint off, int64_t val) {
    int64_t old = 0;
    POOL_MPI(p, MPI_Fetch_and_op(&val, &old, MPI_INT64_T, target, off, MPI_REPLACE, p->win));
    POOL_MPI(p, MPI_Win_flush(target, p->win));
    return old;
}

static void awrite(herd_pool *p, int target, MPI_Aint off, int64_t val) {
    (void)aswap(p, target, off, val);
}

static int64_t afadd(herd_pool *p, int target, MPI_Aint off, int64_t delta) {
    int64_t old = 0;
    POOL_MPI(p, MPI_Fetch_and_op(&delta, &old, MPI_INT64_T, target, off, MPI_SUM, p->win));
    POOL_MPI(p, MPI_Win_flush(target, p->win));
    return old;
}

int64_t herd__pool_read_tail(herd_pool *p) {
    int64_t t = aread(p, p->rank, POOL_TAIL_OFF);
    /* ORDER: release; pairs with the acquire load in herd__pool_push_slot()
     * (hybrid workers): tail reached t only after the thieves' Gets of the
     * slots below t completed (Q5.4-5), and our atomic read of tail came
     * after that (R1, R3); a worker that sees t may overwrite those slots. */
    atomic_store_explicit(&p->tail_seen, t, memory_order_release);
    return t;
}

static int64_t tail_seen(herd_pool *p) {
    /* ORDER: acquire; pairs with the release store in herd__pool_read_tail(). */
    return atomic_load_explicit(&p->tail_seen, memory_order_acquire);
}

int64_t herd__pool_nlocal(const herd_pool *p) {
    return p->head - p->split;
}

int herd__pool_may_mpi(const herd_pool *p) {
    return !p->hybrid || !p->processing || pthread_equal(pthread_self(), p->comm_thread);
}

static void lq_lock(herd_pool *p) {
    if (p->hybrid)
        pthread_mutex_lock(&p->lq);
}
static void lq_unlock(herd_pool *p) {
    if (p->hybrid)
        pthread_mutex_unlock(&p->lq);
}

static char *slot_at(herd_pool *p, int64_t i) {
    return p->base + POOL_SLOTS_OFF + (size_t)(i % p->capacity) * p->slot_size;
}

/* ----------------------------------------------------------------- locks */

/* Linear backoff (L2): wait `round` units, each a few hundred cycles; past
 * a point give the CPU away, since the holder may be waiting for one. */
static void backoff(int round) {
    if (round > 16) {
        sched_yield();
        return;
    }
    for (int i = 0; i < round * 64; i++)
        herd__cpu_relax();
}

/* Take victim's lock. Returns 1 when held, 0 when an aborting steal gave up
 * because victim's public part went empty while we waited (L3). */
static int lock_take(herd_pool *p, int victim, int may_abort) {
    switch (p->cfg.lock) {
    case HERD_POOL_LOCK_TICKET: {
        /* L1: take a ticket, wait until it is served. Fair, never aborts. */
        int64_t t = afadd(p, victim, POOL_LOCK_OFF, 1);
        for (int r = 1; aread(p, victim, POOL_SERVE_OFF) != t; r++)
            backoff(r < 8 ? r : 8);
        return 1;
    }
    case HERD_POOL_LOCK_SPIN:
        may_abort = 0;
        /* fall through */
    default:
        /* L2: swap our mark in; the lock is ours when the old value was 0. */
        for (int r = 1;; r++) {
            if (aswap(p, victim, POOL_LOCK_OFF, p->rank + 1) == 0)
                return 1;
            if (may_abort) {
                /* L3: between tries, look at the victim's public part. */
                int64_t tail, split;
                aread_meta(p, victim, &tail, &split);
                if (split - tail <= 0)
                    return 0;
            }
            backoff(r);
        }
    }
}

/* Release victim's lock. Our accesses under it are complete (each helper
 * flushed, R3), so the next holder sees them. */
static void lock_give(herd_pool *p, int victim) {
    if (p->cfg.lock == HERD_POOL_LOCK_TICKET)
        afadd(p, victim, POOL_SERVE_OFF, 1); /* L1: serve the next ticket */
    else
        awrite(p, victim, POOL_LOCK_OFF, 0); /* L2 */
}

/* ---------------------------------------------------------- the queue */

int herd__pool_queue_init(herd_pool *p) {
    p->slot_size = (sizeof(pool_slot_hdr) + p->cfg.arg_max + 7) & ~(size_t)7;
    p->capacity = (int64_t)p->cfg.queue_capacity;
    memset(p->base, 0, POOL_SLOTS_OFF);
    p->split = p->wsplit = p->head = 0;
    atomic_store_explicit(&p->tail_seen, 0, memory_order_relaxed);
    p->pending = p->pending_at = 0;
    /* A steal takes at most half the victim's queue (steal-half), at most 2
     * otherwise; the landing buffer is allocated once and recycled. */
    p->steal_buf_tasks = (size_t)(p->capacity + 1) / 2;
    p->steal_buf = malloc(p->steal_buf_tasks * p->slot_size);
    p->exec_buf = malloc(p->slot_size);
    return p->steal_buf && p->exec_buf ? HERD_OK : HERD_ENOMEM;
}

/* H3: a hybrid worker found the ring full by tail_seen: ask the comm thread
 * for a fresh tail and wait for two answers (the first may have been under
 * way before our request). Called with lq held; returns with lq held. */
static int worker_ring_full(herd_pool *p) {
    for (int answers = 0; answers < 2 && p->head - tail_seen(p) >= p->capacity; answers++) {
        unsigned e = atomic_load_explicit(&p->tail_epoch, memory_order_acquire);
        atomic_store_explicit(&p->want_tail, 1, memory_order_relaxed);
        pthread_mutex_unlock(&p->lq);
        /* ORDER: acquire; pairs with the comm thread's release increment
         * after its herd__pool_read_tail(). The comm thread keeps answering
         * until the pool terminates, and it cannot while we run a task. */
        while (atomic_load_explicit(&p->tail_epoch, memory_order_acquire) == e)
            sched_yield();
        pthread_mutex_lock(&p->lq);
    }
    return p->head - tail_seen(p) >= p->capacity;
}

/* Q1 (push, owner only): the slot at head, unless the ring is full. The
 * tail we know is a lower bound (thieves only raise it); when it says full,
 * read the real one before giving up. Hybrid (H3): returns with lq held,
 * for herd__pool_push_commit() to release; on failure lq is released. */
char *herd__pool_push_slot(herd_pool *p, int cls, size_t size) {
    lq_lock(p);
    int full = p->head - tail_seen(p) >= p->capacity;
    if (full)
        full = herd__pool_may_mpi(p) ? p->head - herd__pool_read_tail(p) >= p->capacity
                                     : worker_ring_full(p);
    if (full) {
        lq_unlock(p);
        fprintf(stderr,
                "herd pool: rank %d: queue full (%lld tasks); raise HERD_POOL_QUEUE or "
                "herd_pool_config.queue_capacity\n",
                p->rank, (long long)p->capacity);
        p->last_error = HERD_ENOMEM;
        return NULL;
    }
    char *s = slot_at(p, p->head);
    pool_slot_hdr h = {.cls = cls, .size = (uint32_t)size};
    memcpy(s, &h, sizeof h);
    return s + sizeof h;
}

/* Q2 (release, owner only, no lock): publish the k oldest private tasks
 * by raising split. */
void herd__pool_release(herd_pool *p, int64_t k) {
    HERD_ASSERT(herd__pool_may_mpi(p)); /* H4: in hybrid mode, the comm thread's */
    /* H2: the local bound first, so that no worker pops what we publish.
     * The lock also orders the workers' stores into those slots (made
     * before their unlock) before our MPI_Win_sync below. */
    lq_lock(p);
    p->split += k;
    int64_t split = p->split;
    lq_unlock(p);
    /* R2: our plain stores into those slots must be visible before a thief
     * can see the new split and MPI_Get them. MPI_Win_sync orders our local
     * stores before the atomic that publishes split (the unified model's
     * memory barrier). */
    POOL_MPI(p, MPI_Win_sync(p->win));
    p->wsplit = split;
    awrite(p, p->rank, POOL_SPLIT_OFF, split);
    p->st.releases++;
}

/* Q1 end: the slot becomes a task; then the release policy (Q2): when the
 * public part is empty and we hold release_min private tasks, publish half. */
void herd__pool_push_commit(herd_pool *p) {
    p->head++;
    p->st.tasks_added++;
    int64_t nlocal = p->head - p->split;
    lq_unlock(p);
    /* Hybrid workers never publish (H4): the comm thread applies the policy. */
    if (!herd__pool_may_mpi(p))
        return;
    if (nlocal >= p->cfg.release_min && nlocal >= 2) {
        /* tail_seen >= split proves the public part empty (tail_seen <= tail
         * <= split). Otherwise it may still hold work; reading the real tail
         * costs an atomic on our own window, so do it every 16th push, and
         * when the private part reaches a power of two: a task that queues
         * a few children and then runs long must not keep them private
         * because a thief emptied the public part unseen (Q2). */
        if (tail_seen(p) >= p->wsplit ||
            ((++p->release_checks % 16 == 0 || (nlocal & (nlocal - 1)) == 0) &&
             herd__pool_read_tail(p) >= p->wsplit))
            herd__pool_release(p, nlocal / 2);
    }
}

/* Q3 (pop, owner only): the newest private task, copied out so that the
 * running task may push into the slot it came from. */
int herd__pool_pop(herd_pool *p, char *dst) {
    return herd__pool_pop_after(p, dst, 0);
}

/* H3: a hybrid worker that just finished a task counts it out (running--)
 * in the same critical section as its next pop: one lock hold per task. */
int herd__pool_pop_after(herd_pool *p, char *dst, int finished) {
    lq_lock(p);
    p->running -= finished;
    if (p->head == p->split) {
        lq_unlock(p);
        return 0;
    }
    p->head--;
    const char *s = slot_at(p, p->head);
    pool_slot_hdr h;
    memcpy(&h, s, sizeof h);
    memcpy(dst, s, sizeof h + h.size);
    p->running++; /* H3: counted until the task returned (hybrid only reads it) */
    lq_unlock(p);
    return 1;
}

/* Q4 (reacquire, owner, under our own lock): take back half the public
 * part (rounded up) by lowering split. Returns the number taken. */
int64_t herd__pool_reacquire(herd_pool *p) {
    /* Q4.1: nothing to take when the tail we know has reached split (it
     * only grows). */
    if (tail_seen(p) >= p->wsplit)
        return 0;
    lock_take(p, p->rank, 0); /* Q4.2 */
    int64_t tail = herd__pool_read_tail(p);
    int64_t pub = p->wsplit - tail, k = 0;
    if (pub > 0) {
        /* Q4.3: lower split under the lock. A thief holding the lock read
         * split before we did and has finished; one that reads it later sees
         * the new value; one that read it without the lock re-reads it under
         * the lock before taking anything (Q5.3). */
        k = (pub + 1) / 2;
        p->wsplit -= k;
        awrite(p, p->rank, POOL_SPLIT_OFF, p->wsplit);
        /* H2: the window's split first, then the local bound: the tasks
         * between them become poppable only once no thief can take them.
         * split == the old wsplit here: only this thread moves either. */
        lq_lock(p);
        p->split = p->wsplit;
        lq_unlock(p);
        p->st.reacquires++;
    }
    lock_give(p, p->rank); /* Q4.4 */
    return k;
}

static int64_t steal_count(const herd_pool *p, int64_t pub) {
    switch (p->cfg.split) {
    case HERD_POOL_SPLIT_ONE:
        return 1;
    case HERD_POOL_SPLIT_TWO:
        return pub < 2 ? pub : 2;
    default:
        return (pub + 1) / 2;
    }
}

/* Q5 (steal, thief; our own queue is empty). */
int64_t herd__pool_steal(herd_pool *p, int victim) {
    int64_t tail, split;
    /* Q5.1: look before locking; a dry victim costs one read (an aborted steal). */
    aread_meta(p, victim, &tail, &split);
    if (split - tail <= 0) {
        p->st.steals_aborted++;
        return 0;
    }
    /* Q5.2 */
    if (!lock_take(p, victim, p->cfg.lock == HERD_POOL_LOCK_ABORTING)) {
        p->st.steals_aborted++;
        return 0;
    }
    /* Q5.3: the metadata again, now that only we may move tail and the owner
     * cannot lower split (Q4.3). A split raised meanwhile by a lockless
     * release (Q2) only means more work than we take. */
    aread_meta(p, victim, &tail, &split);
    int64_t pub = split - tail;
    if (pub <= 0) {
        lock_give(p, victim);
        p->st.steals_failed++;
        return 0;
    }
    int64_t k = steal_count(p, pub);
    if ((size_t)k > p->steal_buf_tasks)
        k = (int64_t)p->steal_buf_tasks;
    /* Q5.4: fetch the k oldest public tasks (one or two pieces of the ring),
     * and complete the Gets (R3) before giving the slots back (Q5.5). */
    int64_t first = tail % p->capacity, n1 = k;
    if (first + n1 > p->capacity)
        n1 = p->capacity - first;
    size_t ss = p->slot_size;
    POOL_MPI(p, MPI_Get(p->steal_buf, (int)(n1 * (int64_t)ss), MPI_BYTE, victim,
                        (MPI_Aint)(POOL_SLOTS_OFF + (size_t)first * ss), (int)(n1 * (int64_t)ss),
                        MPI_BYTE, p->win));
    if (k > n1)
        POOL_MPI(p,
                 MPI_Get(p->steal_buf + (size_t)n1 * ss, (int)((k - n1) * (int64_t)ss), MPI_BYTE,
                         victim, POOL_SLOTS_OFF, (int)((k - n1) * (int64_t)ss), MPI_BYTE, p->win));
    POOL_MPI(p, MPI_Win_flush(victim, p->win));
    /* Q5.5: move tail past them: the owner may now reuse those slots. */
    awrite(p, victim, POOL_TAIL_OFF, tail + k);
    lock_give(p, victim); /* Q5.6 */

    p->st.steals++;
    p->st.tasks_stolen += (uint64_t)k;
    p->st.bytes_stolen += (uint64_t)k * ss;
    if (p->hybrid) {
        /* H5: workers may have pushed since we found the queue empty; what
         * does not fit waits in steal_buf. The comm thread's loop releases. */
        p->pending_at = 0;
        p->pending = k;
        herd__pool_insert_pending(p);
        return k;
    }
    /* Q5.7: they become our private tasks, oldest deepest, so that we run the
     * newest first and keep the oldest (likely the largest) for thieves. Our
     * ring is empty (we only steal when idle), so k <= capacity / 2 fit. */
    for (int64_t i = 0; i < k; i++) {
        memcpy(slot_at(p, p->head), p->steal_buf + (size_t)i * ss, ss);
        p->head++;
    }
    if (k >= 2 && k >= p->cfg.release_min && herd__pool_read_tail(p) >= p->wsplit)
        herd__pool_release(p, k / 2);
    return k;
}

void herd__pool_insert_pending(herd_pool *p) {
    size_t ss = p->slot_size;
    lq_lock(p);
    int64_t room = p->capacity - (p->head - tail_seen(p));
    int64_t n = p->pending < room ? p->pending : room;
    for (int64_t i = 0; i < n; i++) {
        memcpy(slot_at(p, p->head), p->steal_buf + (size_t)(p->pending_at + i) * ss, ss);
        p->head++;
    }
    p->pending_at += n;
    p->pending -= n;
    lq_unlock(p);
}
