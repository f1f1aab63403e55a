/* A herd user, built against the installed package only (no source tree).
 * Computes fib(N) with nested tasks, the same sum through a task group and a
 * future, and checks each against its sequential twin. Exit 0 means every
 * check passed. */
#include <herd/herd.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if HERD_VERSION_MAJOR != 0 || HERD_VERSION_MINOR < 1
#error "unexpected herd version macros"
#endif

typedef struct fib_arg {
    int n;
    uint64_t *out;
} fib_arg;

static uint64_t fib_seq(int n) {
    return n < 2 ? (uint64_t)n : fib_seq(n - 1) + fib_seq(n - 2);
}

static void fib_task(void *p) {
    fib_arg *a = p;
    if (a->n < 12) {
        *a->out = fib_seq(a->n);
        return;
    }
    uint64_t x = 0, y = 0;
    fib_arg left = {a->n - 1, &x}, right = {a->n - 2, &y};
    if (herd_spawn(fib_task, &left, sizeof left) != 0 ||
        herd_spawn(fib_task, &right, sizeof right) != 0) {
        fprintf(stderr, "consumer: herd_spawn failed\n");
        exit(1);
    }
    herd_wait();
    *a->out = x + y;
}

typedef struct slot_arg {
    uint64_t *slots;
    int i;
} slot_arg;

static void square_task(void *p) {
    slot_arg *a = p;
    a->slots[a->i] = (uint64_t)a->i * (uint64_t)a->i;
}

static uint64_t future_fn(void *p) {
    return fib_seq(*(int *)p);
}

/* herd_run() copies its argument block, so results travel through a pointer. */
typedef struct results {
    int n;
    uint64_t fib, squares, future;
    int err;
} results;

enum { SLOTS = 100 };

static void root_task(void *p) {
    results *r = *(results **)p;
    fib_arg a = {r->n, &r->fib};
    fib_task(&a);

    static uint64_t slots[SLOTS];
    herd_group g;
    herd_group_init(&g);
    for (int i = 0; i < SLOTS; i++) {
        slot_arg s = {slots, i};
        if (herd_group_spawn(&g, square_task, &s, sizeof s) != 0)
            r->err = 1;
    }
    if (herd_group_wait(&g) != 0)
        r->err = 1;
    for (int i = 0; i < SLOTS; i++)
        r->squares += slots[i];

    herd_future f;
    int k = 20;
    if (herd_future_spawn(&f, future_fn, &k, sizeof k) != 0 || herd_future_get(&f, &r->future) != 0)
        r->err = 1;
}

int main(void) {
    herd_config cfg = {0};
    cfg.workers = 2;
    int rc = herd_start(&cfg);
    if (rc != 0) {
        fprintf(stderr, "consumer: herd_start: %s\n", herd_strerror(rc));
        return 1;
    }
    if (herd_num_workers() != 2) {
        fprintf(stderr, "consumer: %d workers, expected 2\n", herd_num_workers());
        return 1;
    }
    results r = {.n = 27};
    results *rp = &r;
    rc = herd_run(root_task, &rp, sizeof rp);
    if (rc != 0) {
        fprintf(stderr, "consumer: herd_run: %s\n", herd_strerror(rc));
        return 1;
    }
    rc = herd_stop();
    if (rc != 0) {
        fprintf(stderr, "consumer: herd_stop: %s\n", herd_strerror(rc));
        return 1;
    }

    uint64_t want_squares = 0;
    for (uint64_t i = 0; i < SLOTS; i++)
        want_squares += i * i;
    int ok =
        !r.err && r.fib == fib_seq(r.n) && r.squares == want_squares && r.future == fib_seq(20);
    printf("consumer: fib(%d) = %llu, sum of squares = %llu, future = %llu: %s\n", r.n,
           (unsigned long long)r.fib, (unsigned long long)r.squares, (unsigned long long)r.future,
           ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
