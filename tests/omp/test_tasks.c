/* Tasks: fib with a task per call, taskwait, taskgroup, if(0), final,
 * mergeable, untied, priority, taskyield, tied thread identity across
 * waits, depend (in/out/inout/mutexinoutset) against a sequential order and
 * without serialising independent chains, taskgroup waiting for its own
 * tasks only,
 * taskloop (grainsize, num_tasks), many tasks in flight, deep recursion. */
#include "check_omp.h"

#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static long fib(int n) {
    if (n < 2)
        return n;
    long a, b;
#pragma omp task shared(a)
    a = fib(n - 1);
#pragma omp task shared(b)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

static int identity_broken;

static long fib_tied(int n) {
    if (n < 2)
        return n;
    int me = omp_get_thread_num();
    long a, b;
#pragma omp task shared(a)
    a = fib_tied(n - 1);
#pragma omp task shared(b)
    b = fib_tied(n - 2);
#pragma omp taskwait
    if (omp_get_thread_num() != me) {
#pragma omp atomic write
        identity_broken = 1;
    }
    return a + b;
}

static void test_fib(void) {
    long r = 0;
#pragma omp parallel
#pragma omp single
    r = fib(20);
    CHECK_EQ(r, 6765);
#pragma omp parallel
#pragma omp single
    r = fib_tied(18);
    CHECK_EQ(r, 2584);
    CHECK_EQ(identity_broken, 0);
}

static void test_clauses(void) {
    int count = 0, in_final = 0, undeferred_ran = 0;
#pragma omp parallel
#pragma omp single
    {
        for (int i = 0; i < 100; i++) {
#pragma omp task untied priority(3)
            {
#pragma omp atomic
                count++;
#pragma omp taskyield
            }
#pragma omp task mergeable
            {
#pragma omp atomic
                count++;
            }
        }
        int x = 0;
#pragma omp task if (0) shared(x, undeferred_ran)
        {
            x = 1;
            undeferred_ran = 1;
        }
        CHECK_EQ(x, 1); /* if(0): done before the encountering task goes on */
#pragma omp task final(1) shared(in_final)
        {
#pragma omp task shared(in_final)
            in_final = omp_in_final();
        }
#pragma omp taskwait
        CHECK_EQ(count, 200);
        CHECK_EQ(in_final, 1);
    }
    CHECK_EQ(undeferred_ran, 1);
    /* taskgroup waits for descendants. */
    int deep = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup
        {
#pragma omp task shared(deep)
            {
#pragma omp task shared(deep)
                {
#pragma omp atomic
                    deep++;
                }
            }
        }
        CHECK_EQ(deep, 1);
    }
    /* Tasks from every member, finished at the barrier. */
    int total = 0, n = 0;
#pragma omp parallel
    {
#pragma omp single
        n = omp_get_num_threads();
        for (int i = 0; i < 50; i++) {
#pragma omp task shared(total)
            {
#pragma omp atomic
                total++;
            }
        }
#pragma omp barrier
        CHECK_EQ(total, 50 * n);
    }
}

/* Yield until another task sets *flag (a task scheduling point each round). */
static void wait_flag(int *flag) {
    int f;
    do {
#pragma omp taskyield
#pragma omp atomic read
        f = *flag;
    } while (!f);
}

/* A taskgroup's end waits for the group's tasks, not for the encountering
 * task's earlier children: task `early` spins until a flag that the
 * encountering task sets only after the taskgroup; were the end to wait for
 * all children, it would never return (the CTest timeout fails it). */
static void test_taskgroup_own(void) {
    int flag = 0, early_done = 0, grouped = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task shared(flag, early_done)
        {
            wait_flag(&flag);
            early_done = 1;
        }
#pragma omp taskgroup
        {
#pragma omp task shared(grouped)
            {
#pragma omp task shared(grouped)
                {
#pragma omp atomic
                    grouped++;
                }
#pragma omp atomic
                grouped++;
            }
        }
        CHECK_EQ(grouped, 2); /* the group and its descendants */
#pragma omp atomic write
        flag = 1;
#pragma omp taskwait
        CHECK_EQ(early_done, 1);
    }
}

/* A taskgroup's end waits for the descendants of its tasks, also those of a
 * task run at once (if(0), and, with the creator's queue at the throttle's
 * bound, plain ones). herd lets a task run at once complete before the
 * children it queued, handing them to the frame below (J6, src/omp/task.c,
 * "Hand-up"), but not inside a taskgroup: handed down past it, the children
 * of the tasks here would escape the group's wait. Outside a taskgroup the
 * child handed down runs by the region's end everywhere, and on herd by
 * its creator's taskwait (the frame it was handed to waits for it; OpenMP
 * promises only the children there: libomp leaves the grandchildren). */
static void test_taskgroup_descendants(void) {
    enum { N = 64 };
    static _Atomic int ran[N], loose[N];
    for (int i = 0; i < N; i++)
        ran[i] = loose[i] = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskgroup
        {
            for (int i = 0; i < N; i++) {
#pragma omp task if (i % 2) firstprivate(i)
                {
#pragma omp task firstprivate(i)
                    ran[i]++;
                }
            }
        }
        for (int i = 0; i < N; i++)
            CHECK_EQ(ran[i], 1);
        for (int i = 0; i < N; i++) {
#pragma omp task if (0) firstprivate(i)
            {
#pragma omp task firstprivate(i)
                loose[i]++;
            }
        }
#pragma omp taskwait
        if (omp_test_on_herd())
            for (int i = 0; i < N; i++)
                CHECK_EQ(loose[i], 1);
    }
    for (int i = 0; i < N; i++)
        CHECK_EQ(loose[i], 1);
}

/* A DAG over a few cells: random in/out/inout/mutexinoutset tasks; each task
 * applies an order-sensitive update to its out cells from its in cells; the
 * result must equal the sequential execution's. */
#define CELLS 6
#define DTASKS 300
static unsigned long dag_par[CELLS], dag_seq[CELLS];

static unsigned long mix(unsigned long x, unsigned long y) {
    return x * 31 + y + 7;
}

static void test_depend(void) {
    unsigned seed = 12345;
    int ins[DTASKS], outs[DTASKS], kinds[DTASKS];
    for (int t = 0; t < DTASKS; t++) {
        seed = seed * 1103515245 + 12345;
        ins[t] = (seed >> 8) % CELLS;
        outs[t] = (seed >> 16) % CELLS;
        kinds[t] = (seed >> 24) % 3;
    }
    for (int c = 0; c < CELLS; c++)
        dag_par[c] = dag_seq[c] = (unsigned long)c;
    for (int t = 0; t < DTASKS; t++) {
        if (kinds[t] == 2)
            dag_seq[outs[t]] += 1; /* commutative: mutexinoutset */
        else
            dag_seq[outs[t]] = mix(dag_seq[outs[t]], dag_seq[ins[t]]);
    }
#pragma omp parallel
#pragma omp single
    for (int t = 0; t < DTASKS; t++) {
        unsigned long *in = &dag_par[ins[t]], *out = &dag_par[outs[t]];
        if (kinds[t] == 0) {
#pragma omp task depend(in : in[0]) depend(inout : out[0])
            *out = mix(*out, *in);
        } else if (kinds[t] == 1) {
#pragma omp task depend(in : in[0]) depend(out : out[0]) depend(inout : out[0])
            *out = mix(*out, *in);
        } else {
#pragma omp task depend(mutexinoutset : out[0])
            *out += 1;
        }
    }
    for (int c = 0; c < CELLS; c++)
        CHECK(dag_par[c] == dag_seq[c]);
    int x = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task depend(out : x) shared(x)
        x = 5;
#pragma omp taskwait depend(in : x)
        CHECK_EQ(x, 5);
    }
}

/* Dependences do not serialise independent tasks: two chains, a[] and b[],
 * created a-chain first. Task a1 waits for a flag that only b2 sets, and b2
 * depends on b0 and b1, created after a1. Were dependent tasks run one at a
 * time in creation order, a1 would spin forever (the CTest timeout fails
 * it); the dependences let b0..b2 run while a1 waits. a2 then must see a1's
 * write, and b3 (which depends on b2 only) runs whatever a1 does. */
static void test_depend_parallel(void) {
    int a[4] = {0}, b[4] = {0}, flag = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task depend(out : a[0]) shared(a)
        a[0] = 1;
#pragma omp task depend(in : a[0]) depend(out : a[1]) shared(a, flag)
        {
            wait_flag(&flag);
            a[1] = a[0] + 1;
        }
#pragma omp task depend(in : a[1]) depend(out : a[2]) shared(a)
        a[2] = a[1] + 1;
#pragma omp task depend(out : b[0]) shared(b)
        b[0] = 10;
#pragma omp task depend(in : b[0]) depend(out : b[1]) shared(b)
        b[1] = b[0] + 1;
#pragma omp task depend(in : b[1]) depend(out : b[2]) shared(b, flag)
        {
            b[2] = b[1] + 1;
#pragma omp atomic write
            flag = 1;
        }
#pragma omp task depend(inout : b[2]) shared(b)
        b[3] = b[2] + 1;
        /* taskwait depend waits for the b chain only; then the a chain. */
#pragma omp taskwait depend(in : b[2])
        CHECK_EQ(b[2], 12);
#pragma omp taskwait
    }
    CHECK_EQ(a[2], 3);
    CHECK_EQ(b[3], 13);
}

/* A random DAG over many addresses, larger than test_depend's, with
 * undeferred (if(0)) tasks mixed in: checked against the sequential order.
 * Not those under LLVM's libomp 14, where an undeferred task's wait for its
 * dependences races with a finishing task's release of them (an assertion
 * of libomp's own, "n >= 0", in about one run in ten; llvm-project issues
 * 85963 and 86952, fixed in 2024). */
#define BIG_CELLS 64
#define BIG_TASKS 4000
static void test_depend_big(void) {
    static unsigned long par[BIG_CELLS], seq[BIG_CELLS];
    unsigned seed = 777;
    for (int c = 0; c < BIG_CELLS; c++)
        par[c] = seq[c] = (unsigned long)c;
    static int in1[BIG_TASKS], in2[BIG_TASKS], out[BIG_TASKS], undeferred[BIG_TASKS];
    for (int t = 0; t < BIG_TASKS; t++) {
        seed = seed * 1103515245 + 12345;
        in1[t] = (seed >> 4) % BIG_CELLS;
        in2[t] = (seed >> 12) % BIG_CELLS;
        out[t] = (seed >> 20) % BIG_CELLS;
        undeferred[t] = (seed >> 28) % 16 == 0 && !omp_test_on_llvm_libomp();
        seq[out[t]] = mix(seq[out[t]], seq[in1[t]] ^ (seq[in2[t]] << 1));
    }
#pragma omp parallel
#pragma omp single
    for (int t = 0; t < BIG_TASKS; t++) {
        unsigned long *i1 = &par[in1[t]], *i2 = &par[in2[t]], *o = &par[out[t]];
#pragma omp task depend(in : i1[0], i2[0]) depend(inout : o[0]) if (!undeferred[t])
        *o = mix(*o, *i1 ^ (*i2 << 1));
    }
    for (int c = 0; c < BIG_CELLS; c++)
        CHECK(par[c] == seq[c]);
}

static void test_taskloop(void) {
    static int hit[1000];
    memset(hit, 0, sizeof hit);
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskloop grainsize(7)
        for (int i = 0; i < 1000; i++)
            hit[i]++;
#pragma omp taskloop num_tasks(13)
        for (int i = 999; i >= 0; i--)
            hit[i]++;
#pragma omp taskloop
        for (int i = 0; i < 1000; i += 2)
            hit[i]++;
        /* unsigned long long loops (GOMP_taskloop_ull) beyond LONG_MAX, by
         * 3, and with a copy function (a firstprivate VLA). Not downwards:
         * a downward unsigned taskloop (u = 999 while u > 0, u -= 5) runs
         * the same iterations under herd and the system libgomp, but not
         * those of the sequential loop (GCC 12: 27 of 200 skipped with
         * num_tasks(7), 99 with the default), so there is no right answer
         * to check. */
        const unsigned long long big = 1ULL << 63;
#pragma omp taskloop grainsize(11)
        for (unsigned long long u = big; u < big + 1000; u += 3)
            hit[u - big]++;
#ifndef OMP_TEST_NO_TASKLOOP_VLA
        int len = 3, add[len];
#else
        enum { len = 3 }; /* clang: a plain array, copied without a copy function */
        int add[len];
#endif
        for (int k = 0; k < len; k++)
            add[k] = k == 2;
#pragma omp taskloop num_tasks(7) firstprivate(add)
        for (unsigned long long u = big + 1; u < big + 1000; u += 5)
            hit[u - big] += add[2];
    }
    for (int i = 0; i < 1000; i++)
        CHECK_EQ(hit[i], 2 + (i % 2 == 0) + (i % 3 == 0) + (i % 5 == 1));
}

/* Many tasks in flight at once (queued before any wait), and deep recursion. */
static long chain(int d) {
    if (d == 0)
        return 0;
    long r;
#pragma omp task shared(r)
    r = chain(d - 1);
#pragma omp taskwait
    return r + 1;
}

/* The creation throttle (herd: src/omp/task.c): under the schedulers that
 * queue tasks in per-worker deques (auto, ws, ws-nearest, numa,
 * numa-random, hier), a task created while its worker's deque holds
 * HERD_OMP_THROTTLE (default 4) queued tasks runs at once, unless a thief
 * is asking for work; under the queue schedulers (mts, central, lifo,
 * fifo), while the team has that many queued tasks per thread. With one
 * thread nobody else takes them, so at every creation at most that many
 * tasks wait: checked exactly there (omp.tasks.one-worker, .one-thread
 * under each kind of scheduler). With thieves the bound moves with their
 * demand, and only the results are checked, as under libgomp (which
 * throttles on a larger team-wide count). A team of one thread is checked
 * exactly whatever the number of workers: its region parks the others, so
 * nobody else takes its tasks, and a thief's request raised before they
 * parked must not raise the bound (herd raised it at once to 64 times the
 * setting, and GCC's priority.c failed). Both kinds of task data: plain,
 * and built by a copy function (GCC emits one for a firstprivate struct
 * with an array). */
typedef struct big_arg {
    int index;
    char pad[60];
} big_arg;

static void throttle_case(int team_of_one) {
    enum { N = 20000 };
    static _Atomic int started, ran[N];
    static int created;
    int herd = omp_test_on_herd();
    int waiting_max = 0, nthreads = 1;
    started = 0;
    for (int i = 0; i < N; i++)
        ran[i] = 0;
#pragma omp parallel num_threads(team_of_one ? 1 : omp_get_max_threads())
#pragma omp single
    {
        nthreads = omp_get_num_threads();
        for (created = 0; created < N;) {
            int i = created++;
            if (i % 2) {
#pragma omp task firstprivate(i)
                {
                    started++;
                    ran[i]++;
                }
            } else {
                big_arg a = {.index = i};
                a.pad[59] = 7;
#pragma omp task firstprivate(a)
                {
                    started++;
                    if (a.pad[59] == 7)
                        ran[a.index]++;
                }
            }
            int waiting = created - started;
            if (waiting > waiting_max)
                waiting_max = waiting;
        }
#pragma omp taskwait
    }
    for (int i = 0; i < N; i++)
        if (ran[i] != 1)
            CHECK_EQ(ran[i], 1);
    const char *t = getenv("HERD_OMP_THROTTLE");
    int limit = t && *t ? atoi(t) : 4; /* "off": 0, nothing to check */
    if (herd && nthreads == 1 && limit > 0)
        CHECK(waiting_max <= limit);
}

static void test_throttle(void) {
    throttle_case(0);
    throttle_case(1);
}

/* The throttle with a mate that spins: thread 1 takes one task and spins in
 * it, with no scheduling point, until thread 0 has started a task. The
 * creator, thread 0, must then run one of its own tasks at once long
 * before it has created them all, as libomp's throttle does (LLVM's
 * omp_fill_taskqueue.c). Under lifo and fifo its tasks were dealt to
 * thread 1's shepherd's queue, which the throttle did not count: it created
 * all 2,000, and only then ran one. Checked on herd where both members are
 * workers (one worker: member 1 is a guest, which takes from the team's
 * pool); everywhere, nothing hangs: thread 0 ends the spin after its loop. */
static void test_throttle_spinning_mate(void) {
    enum { N = 2000 };
    static _Atomic int block, created, created_at_first_run;
    block = 1;
    created = 0;
    created_at_first_run = -1;
    int nthreads = 0;
#pragma omp parallel num_threads(2)
#pragma omp master
    {
        nthreads = omp_get_num_threads();
        for (int i = 0; i < N; i++) {
            created++;
#pragma omp task
            {
                if (omp_get_thread_num() == 0) {
                    int none = -1;
                    atomic_compare_exchange_strong(&created_at_first_run, &none, created);
                    block = 0;
                }
                while (block)
                    ;
            }
        }
        block = 0;
    }
    CHECK(created_at_first_run >= 1);
    const char *t = getenv("HERD_OMP_THROTTLE"), *w = getenv("HERD_WORKERS");
    int limit = t && *t ? atoi(t) : 4; /* "off": 0, nothing to check */
    int workers = w && *w ? atoi(w) : omp_get_num_procs();
    if (omp_test_on_herd() && nthreads == 2 && workers >= 2 && limit > 0)
        CHECK(created_at_first_run < N);
}

/* A task's taskwait waits for its own children only, and a task run at once
 * has its own children too (herd: src/omp/task.c, "Frames"). The task runs
 * at once because of if(0) (with data built by a copy function, then
 * without), and because of the creation throttle (after `limit` queued
 * tasks). Its creator's queued tasks (x) must not run inside its taskwait,
 * its own (y) must; its untended child (z) has not run at the task's end:
 * it waits in the deque, handed to its creator's frame, and the creator's
 * taskwait runs it (herd since round 28, J6 in docs/design/tasks.md: a task
 * run at once may complete before its children, as OpenMP allows; before,
 * herd ran z at the task's end, as a herd task completes after its
 * children). Under the throttle (the third kind) the deque already holds
 * the creator's `limit` tasks, so y and z run at once too: z has run at the
 * task's end there. Exact only where nothing
 * else may run x meanwhile: herd, one worker, a deque scheduler (a queue
 * scheduler's wait may run any queued task; a work-first spawn runs x at
 * once, before the count is taken, which the check allows). */
static _Atomic int own_x, own_y, own_z;

static void own_children_body(int *x_seen, int *y_seen, const big_arg *a) {
    if (a)
        CHECK_EQ(a->index, 1); /* the task's own copy (firstprivate) */
    int x0 = own_x;
#pragma omp task
    own_y++;
#pragma omp taskwait
    *x_seen = own_x - x0;
    *y_seen = own_y;
#pragma omp task
    own_z++;
}

static void test_own_children(void) {
    int herd = omp_test_on_herd();
    const char *s = getenv("HERD_SCHED");
    int queue_sched = s && (!strcmp(s, "mts") || !strcmp(s, "central") || !strcmp(s, "lifo") ||
                            !strcmp(s, "fifo"));
    const char *t = getenv("HERD_OMP_THROTTLE");
    int limit = t && *t ? atoi(t) : 4;
    for (int kind = 0; kind < 3; kind++) {
        int nthreads = 1, x_seen = -1, y_seen = -1, z_after = -1, x_total = -1;
        own_x = own_y = own_z = 0;
#pragma omp parallel
#pragma omp single
        {
            nthreads = omp_get_num_threads();
            /* if(0): one x; the throttle: `limit` of them (then the task
             * below is the one over the bound). */
            int nx = kind == 2 ? (limit > 0 ? limit : 1) : 1;
            for (int i = 0; i < nx; i++) {
#pragma omp task
                own_x++;
            }
            big_arg a = {.index = 1};
            if (kind == 0) {
#pragma omp task if (0) firstprivate(a) shared(x_seen, y_seen)
                own_children_body(&x_seen, &y_seen, &a);
            } else if (kind == 1) {
#pragma omp task if (0) shared(x_seen, y_seen)
                own_children_body(&x_seen, &y_seen, NULL);
            } else {
#pragma omp task shared(x_seen, y_seen)
                own_children_body(&x_seen, &y_seen, NULL);
            }
            z_after = own_z;
#pragma omp taskwait
            x_total = own_x;
        }
        CHECK_EQ(y_seen, 1);
        CHECK_EQ(own_z, 1);
        CHECK_EQ(x_total, kind == 2 ? (limit > 0 ? limit : 1) : 1);
        /* The throttle's task runs at once only with the throttle on. */
        int at_once = kind < 2 || limit > 0;
        if (herd && !queue_sched && nthreads == 1 && at_once) {
            CHECK_EQ(x_seen, 0);
            CHECK_EQ(z_after, kind == 2 ? 1 : 0);
        }
    }
}

static void test_many_deep(void) {
    enum { MANY = 100000 };
    long sum = 0;
#pragma omp parallel
#pragma omp single
    {
        for (int i = 0; i < MANY; i++) {
#pragma omp task shared(sum)
            {
#pragma omp atomic
                sum += 1;
            }
        }
#pragma omp taskwait
    }
    CHECK_EQ(sum, MANY);
    long d = 0;
#pragma omp parallel
#pragma omp single
    d = chain(3000);
    CHECK_EQ(d, 3000);
}

#ifndef OMP_TEST_NO_STRICT /* not in clang 14 (check_omp.h) */
/* grainsize(strict: g): every task runs g iterations but the last, which
 * runs the rest; num_tasks(strict: k): k tasks, the first n % k one longer.
 * pos[i]: the how-many-th iteration of its task i was (a task runs its
 * iterations in order; firstprivate j is the task's own). */
static void taskloop_sizes(int strict_grain, int n, int arg, int *ntasks, int *sizes) {
    int pos[400], j = 0;
    if (strict_grain) {
#pragma omp taskloop firstprivate(j) shared(pos) grainsize(strict : arg)
        for (int i = 0; i < n; i++)
            pos[i] = ++j;
    } else {
#pragma omp taskloop firstprivate(j) shared(pos) num_tasks(strict : arg)
        for (int i = 0; i < n; i++)
            pos[i] = ++j;
    }
    *ntasks = 0;
    for (int i = 0; i < n; i++) {
        if (pos[i] == 1)
            sizes[(*ntasks)++] = 0;
        CHECK(*ntasks > 0);
        sizes[*ntasks - 1]++;
        CHECK_EQ(pos[i], sizes[*ntasks - 1]);
    }
}

static void test_taskloop_strict(void) {
    int nt = 0, sz[400];
#pragma omp parallel num_threads(2)
#pragma omp single
    {
        taskloop_sizes(1, 79, 17, &nt, sz); /* 17 17 17 17 11 */
        CHECK_EQ(nt, 5);
        for (int k = 0; k < 4; k++)
            CHECK_EQ(sz[k], 17);
        CHECK_EQ(sz[4], 11);
        taskloop_sizes(1, 370, 28, &nt, sz); /* 13 of 28, then 6 */
        CHECK_EQ(nt, 14);
        CHECK_EQ(sz[12], 28);
        CHECK_EQ(sz[13], 6);
        taskloop_sizes(1, 7, 15, &nt, sz); /* fewer iterations than g */
        CHECK_EQ(nt, 1);
        CHECK_EQ(sz[0], 7);
        taskloop_sizes(1, 60, 20, &nt, sz);
        CHECK(nt == 3 && sz[0] == 20 && sz[2] == 20);
        taskloop_sizes(0, 57, 9, &nt, sz); /* 3 of 7, 6 of 6 */
        CHECK_EQ(nt, 9);
        CHECK(sz[0] == 7 && sz[2] == 7 && sz[3] == 6 && sz[8] == 6);
    }
}
#endif

int main(void) {
    for (int rep = 0; rep < 2; rep++) {
#ifndef OMP_TEST_NO_STRICT
        test_taskloop_strict();
#endif
        test_fib();
        test_clauses();
        test_depend();
        test_depend_parallel();
        test_taskgroup_own();
        test_taskgroup_descendants();
        test_depend_big();
        test_taskloop();
        test_many_deep();
        test_throttle();
        test_throttle_spinning_mate();
        test_own_children();
    }
    printf("omp tasks: ok\n");
    return 0;
}
