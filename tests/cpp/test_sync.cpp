// herd.hpp: herd::mutex, herd::condition_variable, herd::barrier and
// herd::full_empty, through the standard lock types (std::lock_guard,
// std::unique_lock, std::scoped_lock over one and over two locks).
//
// First on one worker, where every case can only finish if a blocked task
// gives its worker up (a spinning wait would hang, and the test's timeout
// fails it): more tasks than workers meet at a barrier; consumers all wait
// on a condition at once; a task waits for a mutex held by a task that is
// itself waiting for a full/empty word; std::scoped_lock over two locks,
// taken in both orders by many tasks (a lock handed to a task that was not
// running yet livelocked it). Then the same cases with the
// environment's workers (the scheduler matrix).
//
// herd-test-matrix: unit
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=4 HERD_IDLE=sleep
// herd-test-timeout: 120
#include <herd/herd.hpp>

#include "check.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace {

void mutexes(int tasks, int iters) {
    STEP("mutex and full_empty as locks: lock_guard, unique_lock, scoped_lock (one and two)");
    herd::mutex m;
    herd::full_empty word;                  // full: free
    long plain = 0, both = 0, via_word = 0; // guarded by m / both / word
    herd::task_group g;
    for (int t = 0; t < tasks; t++)
        g.run([&, t] {
            for (int i = 0; i < iters; i++) {
                switch ((t + i) % 4) {
                case 0: {
                    std::lock_guard<herd::mutex> lk(m);
                    plain++;
                    break;
                }
                case 1: {
                    std::unique_lock<herd::mutex> lk(m);
                    plain++;
                    lk.unlock();
                    if (lk.try_lock()) {
                        plain++;
                        lk.unlock();
                    } else {
                        std::lock_guard<herd::mutex> again(m);
                        plain++;
                    }
                    break;
                }
                case 2: {
                    std::scoped_lock lk(m, word); // std::lock: try_lock on both types
                    both++;
                    break;
                }
                default: {
                    std::lock_guard<herd::full_empty> lk(word);
                    CHECK(!word.is_full());
                    via_word++;
                    if (i % 8 == 0)
                        herd::this_task::yield(); // hold it across a switch
                }
                }
            }
        });
    g.wait();
    long want_plain = 0, want_both = 0, want_word = 0;
    for (int t = 0; t < tasks; t++)
        for (int i = 0; i < iters; i++) {
            int k = (t + i) % 4;
            want_plain += k == 0 ? 1 : k == 1 ? 2 : 0;
            want_both += k == 2;
            want_word += k == 3;
        }
    CHECK_EQ(plain, want_plain);
    CHECK_EQ(both, want_both);
    CHECK_EQ(via_word, want_word);
    CHECK(word.is_full());
    CHECK(m.try_lock());
    m.unlock();
    CHECK(word.try_lock());
    CHECK(!word.try_lock());
    word.unlock();
}

// std::lock locks one, tries the other, and on failure releases and starts
// over from the other: with locks handed to waiters that were not running
// yet, each try found the other lock held by a task queued behind it, and
// four tasks on one worker livelocked. A section yields, so tasks queue up.
template <class A, class B> void lock_pairs(const char *what, int tasks, int iters) {
    STEP("std::scoped_lock over %s, both orders, %d tasks", what, tasks);
    A a;
    B b;
    long n = 0; // guarded by a and b
    herd::task_group g;
    for (int t = 0; t < tasks; t++)
        g.run([&, t] {
            for (int i = 0; i < iters; i++) {
                if ((t + i) % 2) {
                    std::scoped_lock lk(a, b);
                    n++;
                    herd::this_task::yield();
                } else {
                    std::scoped_lock lk(b, a);
                    n++;
                    herd::this_task::yield();
                }
            }
        });
    g.wait();
    CHECK_EQ(n, long(tasks) * iters);
    CHECK(a.try_lock());
    CHECK(b.try_lock());
    a.unlock();
    b.unlock();
}

void blocked_mutex_holder() {
    STEP("a task waits for a mutex whose holder waits for a full/empty word");
    herd::mutex m;
    herd::full_empty signal;
    signal.empty();
    std::atomic<int> holding{0}, asking{0};
    int order = 0, a_done = 0, b_done = 0; // guarded by m
    herd::task_group g;
    g.run([&] {
        std::lock_guard<herd::mutex> lk(m);
        holding = 1;
        CHECK_EQ(signal.read_fe(), 77u); // suspends with m held
        a_done = ++order;
    });
    while (!holding.load())
        herd::this_task::yield();
    g.run([&] {
        asking = 1;
        std::lock_guard<herd::mutex> lk(m); // suspends until the holder is done
        b_done = ++order;
    });
    while (!asking.load())
        herd::this_task::yield();
    signal.write_f(77);
    g.wait();
    CHECK_EQ(a_done, 1);
    CHECK_EQ(b_done, 2);
}

void conditions(int consumers) {
    STEP("condition_variable: %d consumers all waiting at once, then notify_all", consumers);
    herd::mutex m;
    herd::condition_variable cv, all_waiting;
    int waiting = 0, woken = 0;
    bool go = false;
    herd::task_group g;
    for (int i = 0; i < consumers; i++)
        g.run([&] {
            std::unique_lock<herd::mutex> lk(m);
            if (++waiting == consumers)
                all_waiting.notify_one();
            cv.wait(lk, [&] { return go; });
            woken++;
        });
    {
        std::unique_lock<herd::mutex> lk(m);
        all_waiting.wait(lk, [&] { return waiting == consumers; });
        go = true;
        cv.notify_all();
    }
    g.wait();
    CHECK_EQ(woken, consumers);

    STEP("condition_variable: a bounded queue, notify_one both ways");
    const int items = int(CHECK_SCALED(CHECK_SIZE(2000, 400))) + 10, cap = 4;
    std::vector<int> q;
    long sum = 0;
    herd::condition_variable not_full, not_empty;
    g.run([&] {
        for (int i = 1; i <= items; i++) {
            std::unique_lock<herd::mutex> lk(m);
            not_full.wait(lk, [&] { return int(q.size()) < cap; });
            q.push_back(i);
            not_empty.notify_one();
        }
    });
    g.run([&] {
        for (int i = 1; i <= items; i++) {
            std::unique_lock<herd::mutex> lk(m);
            not_empty.wait(lk, [&] { return !q.empty(); });
            sum += q.front();
            q.erase(q.begin());
            not_full.notify_one();
        }
    });
    g.wait();
    CHECK_EQ(sum, long(items) * (items + 1) / 2);
}

void barriers(int tasks, int phases) {
    STEP("barrier: %d tasks, %d phases, one serial task per phase", tasks, phases);
    herd::barrier b(tasks);
    std::vector<std::atomic<int>> arrived(static_cast<std::size_t>(phases));
    std::atomic<int> serial{0};
    std::atomic<int> bad{0};
    herd::task_group g;
    for (int t = 0; t < tasks; t++)
        g.run([&] {
            for (int p = 0; p < phases; p++) {
                arrived[std::size_t(p)]++;
                if (b.arrive_and_wait())
                    serial++;
                if (arrived[std::size_t(p)].load() != tasks)
                    bad++; // someone left before everyone arrived
            }
        });
    g.wait();
    CHECK_EQ(serial.load(), phases);
    CHECK_EQ(bad.load(), 0);
    int code = 0;
    try {
        herd::barrier none(0);
    } catch (const herd::error &e) {
        code = e.code();
    }
    CHECK_EQ(code, HERD_EINVAL);
}

void full_empty_words() {
    STEP("full_empty: writeEF/readFE hand-off between tasks, readFF, status");
    herd::full_empty box;
    box.empty();
    CHECK(!box.is_full());
    const int n = 500;
    long got = 0;
    herd::task_group g;
    g.run([&] {
        for (int i = 1; i <= n; i++)
            box.write_ef(std::uint64_t(i));
    });
    g.run([&] {
        for (int i = 1; i <= n; i++)
            got += long(box.read_fe());
    });
    g.wait();
    CHECK_EQ(got, long(n) * (n + 1) / 2);
    box.write_f(5);
    CHECK_EQ(box.read_ff(), 5u);
    CHECK(box.is_full());
}

void all(int tasks) {
    mutexes(tasks, int(CHECK_SCALED(CHECK_SIZE(400, 100))) + 8);
    int pair_iters = int(CHECK_SIZE(100, 30));
    lock_pairs<herd::mutex, herd::mutex>("two mutexes", tasks, pair_iters);
    lock_pairs<herd::full_empty, herd::full_empty>("two full/empty words", tasks, pair_iters);
    lock_pairs<herd::mutex, herd::full_empty>("a mutex and a word", tasks, pair_iters);
    blocked_mutex_holder();
    conditions(tasks);
    barriers(tasks, CHECK_SIZE(20, 8));
    full_empty_words();
}

} // namespace

int main() {
    {
        STEP("one worker: blocked tasks must give the worker up");
        herd::config one;
        one.workers = 1;
        herd::runtime rt(one);
        CHECK_EQ(rt.workers(), 1);
        rt.run([] { all(16); });
    }
    {
        herd::runtime rt; // the environment's workers and scheduler
        STEP("%d workers", rt.workers());
        rt.run([&] { all(rt.workers() * 4 + 3); });
        int code = 0;
        herd::mutex m;
        try {
            m.lock(); // outside tasks
        } catch (const herd::error &e) {
            code = e.code();
        }
        CHECK_EQ(code, HERD_ENOTASK);
    }
    return 0;
}
