/* Full/empty bits on 64-bit words (Qthreads semantics, paper 000 §2.1), and
 * futures built on them.
 *
 * Every aligned word is full unless emptied. The state lives beside the
 * word, in a table of records hashed by address: a word without a record is
 * full and has no waiters, so memory costs only for words that are empty or
 * waited on. Each bucket has a spinlock that guards its records, the words'
 * values while they have a record, and the waiters' out-values. A waiter is
 * a suspended task on the record's list with the operation it waits to do;
 * the operation that changes the state completes waiters' operations on their
 * behalf, in arrival order, and resumes them (settle()).
 *
 * F1, a word used as a lock (herd_feb_lock, herd::full_empty::lock): its
 * waiter is not served in turn. The fill that lets it go wakes it and stops
 * there, the word still full; it takes the word when it runs, unless a
 * running task took it first (then it waits again, at the head). A lock
 * handed to a task that was not running yet livelocked tasks that back off
 * when a try fails (std::lock over two words, four tasks on one worker).
 * So a full word may have waiters: those queued behind a woken locker. */
#include "core/runtime.h"
#include "core/watchdog.h"

#include <stdlib.h>

#define NBUCKETS 1024

enum feb_op { OP_READFF = 1, OP_READFE, OP_WRITEEF, OP_LOCK };

typedef struct feb_waiter {
    struct feb_waiter *next;
    herd__ult *ult;
    int op;
    uint64_t value; /* in for writeEF, out for reads */
} feb_waiter;

typedef struct feb_rec {
    struct feb_rec *next;
    uint64_t *addr;
    int full;
    feb_waiter *head, *tail;
} feb_rec;

typedef struct bucket {
    herd__spin lock;
    feb_rec *recs;
} __attribute__((aligned(64))) bucket;

static bucket table[NBUCKETS];

static bucket *bucket_of(const uint64_t *addr) {
    uintptr_t a = (uintptr_t)addr >> 3;
    return &table[(a ^ (a >> 10) ^ (a >> 20)) % NBUCKETS];
}

static feb_rec **find(bucket *b, const uint64_t *addr) {
    feb_rec **p = &b->recs;
    while (*p && (*p)->addr != addr)
        p = &(*p)->next;
    return p;
}

static feb_rec *get_rec(bucket *b, uint64_t *addr) {
    feb_rec **p = find(b, addr);
    if (*p)
        return *p;
    feb_rec *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->addr = addr;
    r->full = 1;
    *p = r;
    return r;
}

static void drop_if_idle(bucket *b, feb_rec *r) {
    if (!r->full || r->head)
        return;
    feb_rec **p = find(b, r->addr);
    *p = r->next;
    free(r);
}

/* Complete what the state now allows, oldest waiter first: a full word
 * serves every reader up to and including the first readFE (which empties
 * it), or up to the first locker (F1: woken, not served; it ends the
 * settling); an empty word serves the first writeEF (which fills it);
 * repeat. Completed waiters are chained on *ready. Bucket lock held. */
static void settle(feb_rec *r, feb_waiter **ready) {
    feb_waiter **p = &r->head, *prev = NULL;
    int progress = 1, locker = 0;
    while (progress && !locker) {
        progress = 0;
        p = &r->head;
        prev = NULL;
        while (*p) {
            feb_waiter *x = *p;
            int done = 0;
            if (r->full && x->op == OP_READFF) {
                x->value = *r->addr;
                done = 1;
            } else if (r->full && x->op == OP_READFE) {
                x->value = *r->addr;
                r->full = 0;
                done = 1;
            } else if (!r->full && x->op == OP_WRITEEF) {
                *r->addr = x->value;
                r->full = 1;
                done = 1;
            } else if (r->full && x->op == OP_LOCK) {
                done = locker = 1;
            }
            if (done) {
                *p = x->next;
                if (r->tail == x)
                    r->tail = prev;
                x->next = *ready;
                *ready = x;
                progress = 1;
                if (locker)
                    break;
            } else {
                prev = x;
                p = &x->next;
            }
        }
    }
}

static void wake_all(feb_waiter *ready) {
    while (ready) {
        feb_waiter *next = ready->next;
        herd__ult_ready(ready->ult);
        ready = next;
    }
}

typedef struct feb_arm {
    bucket *b;
    feb_rec *r;
    feb_waiter *x;
    int at_head; /* a woken locker that lost the word (F1) */
} feb_arm;

static void arm_feb(herd__worker *w, herd__ult *u, void *p) {
    (void)w;
    /* Copy the argument first (it lives on u's stack; see arm_cond). */
    feb_arm *a = p;
    bucket *b = a->b;
    feb_rec *r = a->r;
    feb_waiter *x = a->x;
    x->ult = u;
    if (a->at_head) {
        x->next = r->head;
        r->head = x;
        if (!r->tail)
            r->tail = x;
    } else {
        x->next = NULL;
        if (r->tail)
            r->tail->next = x;
        else
            r->head = x;
        r->tail = x;
    }
    herd__spin_unlock(&b->lock);
}

/* Do op on addr now (the state allows it), then serve the waiters it
 * enabled. Waiters queued on the word wait for the other state (after
 * every settle() none can proceed in the current one) or behind a woken
 * locker (F1), so this overtakes only what a locker would. Called with the
 * bucket lock held; releases it. */
static int do_now(bucket *b, feb_rec **p, uint64_t *addr, int op, uint64_t in, uint64_t *out) {
    feb_waiter *ready = NULL;
    if (op == OP_WRITEEF) {
        *addr = in;
        (*p)->full = 1; /* empty, so it has a record */
        settle(*p, &ready);
        drop_if_idle(b, *p);
    } else {
        if (out)
            *out = *addr;
        if (op != OP_READFF) {
            feb_rec *r = get_rec(b, addr);
            if (!r) {
                herd__spin_unlock(&b->lock);
                return HERD_ENOMEM;
            }
            r->full = 0;
            settle(r, &ready);
            drop_if_idle(b, r);
        }
    }
    herd__spin_unlock(&b->lock);
    wake_all(ready);
    return 0;
}

/* Do op on addr, suspending until the state allows it; with `nowait`,
 * return HERD_EBUSY instead of suspending. ra: the caller's return address
 * (the watchdog's record). */
static int feb_op(uint64_t *addr, int op, uint64_t in, uint64_t *out, int nowait, void *ra) {
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
        return HERD_ENOTASK;
    if (!addr || ((uintptr_t)addr & 7))
        return HERD_EINVAL;
    bucket *b = bucket_of(addr);
    herd__spin_lock(&b->lock);
    for (int woken = 0;; woken = 1) {
        feb_rec **p = find(b, addr);
        int full = *p ? (*p)->full : 1;
        if (op == OP_WRITEEF ? !full : full)
            return do_now(b, p, addr, op, in, out);
        if (nowait) {
            herd__spin_unlock(&b->lock);
            return HERD_EBUSY;
        }
        feb_rec *r = get_rec(b, addr);
        if (!r) {
            herd__spin_unlock(&b->lock);
            return HERD_ENOMEM;
        }
        feb_waiter x = {.op = op, .value = in};
        feb_arm a = {b, r, &x, woken};
        /* arm_feb releases the bucket lock */
        herd__block_on(HERD__WAIT_FEB, addr, ra, arm_feb, &a);
        if (op != OP_LOCK) { /* served by the waker */
            if (out)
                *out = x.value;
            return 0;
        }
        herd__spin_lock(&b->lock); /* F1: woken, not served: try again */
    }
}

HERD_API int herd_feb_readFF(uint64_t *addr, uint64_t *out) {
    return out ? feb_op(addr, OP_READFF, 0, out, 0, __builtin_return_address(0)) : HERD_EINVAL;
}

HERD_API int herd_feb_readFE(uint64_t *addr, uint64_t *out) {
    return out ? feb_op(addr, OP_READFE, 0, out, 0, __builtin_return_address(0)) : HERD_EINVAL;
}

HERD_API int herd_feb_tryreadFE(uint64_t *addr, uint64_t *out) {
    return out ? feb_op(addr, OP_READFE, 0, out, 1, __builtin_return_address(0)) : HERD_EINVAL;
}

HERD_API int herd_feb_lock(uint64_t *addr) {
    return feb_op(addr, OP_LOCK, 0, NULL, 0, __builtin_return_address(0));
}

HERD_API int herd_feb_writeEF(uint64_t *addr, uint64_t value) {
    return feb_op(addr, OP_WRITEEF, value, NULL, 0, __builtin_return_address(0));
}

/* Set the state (and maybe the value) without waiting, then serve waiters. */
static int feb_set(uint64_t *addr, int full, int write, uint64_t value) {
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
        return HERD_ENOTASK; /* it may wake tasks: that needs a worker */
    if (!addr || ((uintptr_t)addr & 7))
        return HERD_EINVAL;
    bucket *b = bucket_of(addr);
    herd__spin_lock(&b->lock);
    feb_rec **p = find(b, addr);
    if (write)
        *addr = value;
    feb_waiter *ready = NULL;
    if (!*p && !full) {
        feb_rec *r = get_rec(b, addr);
        if (!r) {
            herd__spin_unlock(&b->lock);
            return HERD_ENOMEM;
        }
        r->full = 0;
    } else if (*p) {
        feb_rec *r = *p;
        r->full = full;
        settle(r, &ready);
        drop_if_idle(b, r);
    }
    herd__spin_unlock(&b->lock);
    wake_all(ready);
    return 0;
}

HERD_API int herd_feb_writeF(uint64_t *addr, uint64_t value) {
    return feb_set(addr, 1, 1, value);
}
HERD_API int herd_feb_fill(uint64_t *addr) {
    return feb_set(addr, 1, 0, 0);
}
HERD_API int herd_feb_empty(uint64_t *addr) {
    return feb_set(addr, 0, 0, 0);
}

HERD_API int herd_feb_status(const uint64_t *addr) {
    bucket *b = bucket_of(addr);
    herd__spin_lock(&b->lock);
    feb_rec **p = find(b, addr);
    int full = *p ? (*p)->full : 1;
    herd__spin_unlock(&b->lock);
    return full;
}

/* ----------------------------------------------------------------- futures
 * A future is a child task that writes its result with writeF into a word
 * emptied at spawn; herd_future_get reads it with readFF. */

typedef struct future_hdr {
    herd_future *f;
    herd_future_fn fn;
} future_hdr;

static void future_body(void *arg) {
    future_hdr *h = arg;
    uint64_t v = h->fn((unsigned char *)arg + sizeof *h);
    herd_feb_writeF(&h->f->herd__value, v);
}

HERD_API int herd_future_spawn(herd_future *f, herd_future_fn fn, const void *arg,
                               size_t arg_size) {
    if (!f || !fn || arg_size > HERD_ARG_MAX - sizeof(future_hdr) || (arg_size && !arg))
        return HERD_EINVAL;
    herd__worker *w = herd__self();
    if (!w || !w->hot.frame)
        return HERD_ENOTASK;
    unsigned char buf[HERD_ARG_MAX];
    future_hdr h = {f, fn};
    memcpy(buf, &h, sizeof h);
    if (arg_size)
        memcpy(buf + sizeof h, arg, arg_size);
    int rc = herd_feb_empty(&f->herd__value);
    if (rc)
        return rc;
    rc = herd_spawn(future_body, buf, sizeof h + arg_size);
    if (rc)
        herd_feb_fill(&f->herd__value);
    return rc;
}

HERD_API int herd_future_get(herd_future *f, uint64_t *value) {
    herd__wait_ctx c;
    herd__wait_enter(&c, HERD__WAIT_FUTURE, f, __builtin_return_address(0));
    int rc = herd_feb_readFF(&f->herd__value, value);
    herd__wait_leave(&c);
    return rc;
}
