// herd.hpp: runtime, task_group, spawn/future and parallel_invoke.
//
// Cases: the root task's result and exception through runtime::run; groups
// with small (inline) captures, captures larger than herd's 256-byte
// argument block, non-trivially-copyable and move-only callables; the
// first exception thrown deep inside nested groups reaching the root; a
// group's tasks adding tasks to it; the destructor's wait; futures (values,
// move-only results, exceptions, many gets, one produced on another worker
// than the one that reads it); parallel_invoke; misuse reported as
// herd::error. Every count is checked against a sequential twin.
//
// herd-test-matrix: unit
// herd-test-env: HERD_WORKERS=1
// herd-test-env: HERD_WORKERS=2
// herd-test-env: HERD_WORKERS=4 HERD_SPAWN=work-first
// herd-test-timeout: 120
#include <herd/herd.hpp>

#include "check.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

std::uint64_t fib_seq(int n) {
    return n < 2 ? std::uint64_t(n) : fib_seq(n - 1) + fib_seq(n - 2);
}

std::uint64_t fib_group(int n) {
    if (n < 2)
        return std::uint64_t(n);
    std::uint64_t x = 0, y = 0;
    herd::task_group g;
    g.run([&] { x = fib_group(n - 1); });
    y = fib_group(n - 2);
    g.wait();
    return x + y;
}

std::uint64_t fib_future(int n) {
    if (n < 2)
        return std::uint64_t(n);
    auto x = herd::spawn([n] { return fib_future(n - 1); });
    std::uint64_t y = fib_future(n - 2);
    return x.get() + y;
}

struct deep_error : std::runtime_error {
    int depth;
    explicit deep_error(int d) : std::runtime_error("deep"), depth(d) {}
};

// A binary tree of nested groups, `depth` levels; the leaf at path `target`
// (bit i: which child at level i) throws. Counts the leaves that ran.
void nested(int depth, int level, unsigned path, unsigned target, std::atomic<int> &leaves) {
    if (level == depth) {
        leaves.fetch_add(1, std::memory_order_relaxed);
        if (path == target)
            throw deep_error(level);
        return;
    }
    herd::task_group g;
    g.run([=, &leaves] { nested(depth, level + 1, path, target, leaves); });
    g.run([=, &leaves] { nested(depth, level + 1, path | (1u << level), target, leaves); });
    g.wait();
}

} // namespace

int main() {
    herd::runtime rt;
    const int nw = rt.workers();
    CHECK(nw >= 1);

    STEP("runtime::run: a value, void, a move-only value, an exception");
    CHECK_EQ(rt.run([] { return 42; }), 42);
    int side = 0;
    rt.run([&] { side = 7; });
    CHECK_EQ(side, 7);
    auto p = rt.run([] { return std::make_unique<int>(5); });
    CHECK(p && *p == 5);
    bool caught = false;
    try {
        rt.run([]() -> int { throw std::logic_error("root"); });
    } catch (const std::logic_error &e) {
        caught = std::string(e.what()) == "root";
    }
    CHECK(caught);

    STEP("task_group: fib(20) with lambdas capturing by reference");
    CHECK_EQ(rt.run([] { return fib_group(20); }), fib_seq(20));

    STEP("task_group: captures larger than HERD_ARG_MAX, strings, move-only callables");
    rt.run([] {
        constexpr int N = 64;
        std::array<std::uint64_t, N> out{};
        herd::task_group g;
        for (int i = 0; i < N; i++) {
            std::array<std::uint64_t, 64> big; // 512 bytes: twice the argument block
            static_assert(sizeof big > HERD_ARG_MAX, "the capture must exceed the block");
            for (int k = 0; k < 64; k++)
                big[k] = std::uint64_t(i) * 1000 + std::uint64_t(k);
            g.run([big, i, &out] {
                std::uint64_t s = 0;
                for (auto v : big)
                    s += v;
                out[i] = s;
            });
        }
        std::array<std::string, N> strs;
        for (int i = 0; i < N; i++) {
            std::string s(100 + i, char('a' + i % 26)); // not trivially copyable
            g.run([s, i, &strs] { strs[i] = s; });
        }
        std::array<int, N> moved{};
        for (int i = 0; i < N; i++) {
            auto up = std::make_unique<int>(i * 3); // move-only capture
            g.run([up = std::move(up), i, &moved] { moved[i] = *up; });
        }
        g.wait();
        for (int i = 0; i < N; i++) {
            std::uint64_t want = 64 * std::uint64_t(i) * 1000 + 63 * 64 / 2;
            CHECK_EQ_U64(out[i], want);
            CHECK(strs[i] == std::string(100 + i, char('a' + i % 26)));
            CHECK_EQ(moved[i], i * 3);
        }
    });

    STEP("task_group: a move-only callable object (not a lambda), run as an rvalue");
    rt.run([] {
        struct job {
            std::unique_ptr<int> v;
            int *out;
            void operator()() { *out = *v + 1; }
        };
        int out = 0;
        herd::task_group g;
        g.run(job{std::make_unique<int>(9), &out});
        g.wait();
        CHECK_EQ(out, 10);
    });

    STEP("task_group: the first exception from deep inside nested groups reaches the root");
    for (unsigned target : {0u, 5u, 63u}) {
        std::atomic<int> leaves{0};
        int depth = -1;
        try {
            rt.run([&] {
                herd::task_group g;
                g.run([&] { nested(6, 0, 0, target, leaves); });
                g.wait();
            });
        } catch (const deep_error &e) {
            depth = e.depth;
        }
        CHECK_EQ(depth, 6);
        CHECK_EQ(leaves.load(), 64); // the other tasks still ran
    }

    STEP("task_group: many tasks throw; wait() rethrows one, once; the group is reusable");
    rt.run([] {
        herd::task_group g;
        std::atomic<int> ran{0};
        for (int i = 0; i < 100; i++)
            g.run([i, &ran] {
                ran.fetch_add(1, std::memory_order_relaxed);
                if (i % 3 == 0)
                    throw std::runtime_error("task " + std::to_string(i));
            });
        bool threw = false;
        try {
            g.wait();
        } catch (const std::runtime_error &e) {
            threw = std::string(e.what()).rfind("task ", 0) == 0;
        }
        CHECK(threw);
        CHECK_EQ(ran.load(), 100);
        g.run([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
        g.wait(); // nothing thrown this time
        CHECK_EQ(ran.load(), 101);
    });

    STEP("task_group: an exception unwinds through a group's destructor, which waits");
    for (int round = 0; round < 20; round++) {
        std::atomic<int> ran{0};
        bool unwound = false;
        rt.run([&] {
            try {
                herd::task_group g;
                for (int i = 0; i < 50; i++)
                    g.run([&ran] {
                        herd::this_task::yield();
                        try {
                            throw 1; // exceptions of other tasks meanwhile, on any worker
                        } catch (int) {
                        }
                        ran.fetch_add(1, std::memory_order_relaxed);
                    });
                throw std::runtime_error("unwind");
            } catch (const std::runtime_error &e) {
                unwound = std::string(e.what()) == "unwind";
            }
            CHECK_EQ(std::uncaught_exceptions(), 0);
        });
        CHECK(unwound);
        CHECK_EQ(ran.load(), 50);
    }

    STEP("task_group: wait() inside a catch handler, then `throw;`");
    for (int round = 0; round < 20; round++) {
        bool rethrown = false;
        rt.run([&] {
            try {
                try {
                    throw std::runtime_error("inner");
                } catch (...) {
                    herd::task_group g;
                    for (int i = 0; i < 20; i++)
                        g.run([] {
                            herd::this_task::yield();
                            try {
                                throw 2;
                            } catch (int) {
                            }
                        });
                    g.wait(); // may resume on another worker
                    throw;    // needs this task's handled exception there
                }
            } catch (const std::runtime_error &e) {
                rethrown = std::string(e.what()) == "inner";
            }
        });
        CHECK(rethrown);
    }

    STEP("task_group: tasks of the group add tasks to it (from other tasks)");
    rt.run([] {
        std::atomic<int> count{0};
        herd::task_group g;
        for (int i = 0; i < 8; i++)
            g.run([&g, &count] {
                for (int k = 0; k < 8; k++)
                    g.run([&g, &count] {
                        g.run([&count] { count.fetch_add(1, std::memory_order_relaxed); });
                        count.fetch_add(1, std::memory_order_relaxed);
                    });
            });
        g.wait();
        CHECK_EQ(count.load(), 128);
    });

    STEP("task_group: a group created outside tasks, waited inside one");
    {
        std::atomic<int> count{0};
        herd::task_group g;
        rt.run([&] {
            for (int i = 0; i < 50; i++)
                g.run([&count] { count.fetch_add(1, std::memory_order_relaxed); });
            g.wait();
        });
        CHECK_EQ(count.load(), 50);
    }

    STEP("task_group: the destructor waits");
    rt.run([] {
        std::atomic<int> count{0};
        {
            herd::task_group g;
            for (int i = 0; i < 100; i++)
                g.run([&count] {
                    herd::this_task::yield();
                    count.fetch_add(1, std::memory_order_relaxed);
                });
        }
        CHECK_EQ(count.load(), 100);
    });

    STEP("task_group: wait() from a task that is not the owner is refused");
    rt.run([] {
        herd::task_group g;
        int code = 0;
        herd::task_group other;
        other.run([&] {
            try {
                g.wait();
            } catch (const herd::error &e) {
                code = e.code();
            }
        });
        other.wait();
        CHECK_EQ(code, HERD_EINVAL);
    });

    STEP("spawn/future: fib(20), move-only results, exceptions, many gets");
    CHECK_EQ(rt.run([] { return fib_future(20); }), fib_seq(20));
    rt.run([] {
        auto f = herd::spawn([] { return std::make_unique<std::string>("moved"); });
        CHECK(*f.get() == "moved");
        std::unique_ptr<std::string> mine = std::move(f.get());
        CHECK(mine && *mine == "moved");
        auto v = herd::spawn([] {});
        v.get();
        auto bad = herd::spawn([]() -> int { throw deep_error(3); });
        for (int k = 0; k < 3; k++) {
            int d = 0;
            try {
                bad.get();
            } catch (const deep_error &e) {
                d = e.depth;
            }
            CHECK_EQ(d, 3);
        }
        std::array<char, 300> big{};
        big[299] = 'z';
        auto large = herd::spawn([big] { return big[299]; }); // capture > HERD_ARG_MAX
        CHECK_EQ(large.get(), 'z');
        CHECK_EQ(large.get(), 'z');
        std::deque<herd::future<int>> many;
        for (int i = 0; i < 200; i++)
            many.emplace_back([i] { return i * i; });
        for (int i = 0; i < 200; i++)
            CHECK_EQ(many[std::size_t(i)].get(), i * i);
    });

    STEP("futures: 256 at once, each read after it ran wherever it was taken");
    rt.run([] {
        std::deque<herd::future<std::uint64_t>> fs;
        for (int i = 0; i < 256; i++)
            fs.emplace_back([i] { return fib_seq(10 + i % 8); });
        for (int i = 0; i < 256; i++)
            CHECK_EQ_U64(fs[std::size_t(i)].get(), fib_seq(10 + i % 8));
    });

    // fifo and lifo never move a queued task to another shepherd's workers
    // (no stealing, by design): a spinning producer could then hold the only
    // worker that may run the reader. Elsewhere an idle worker takes it.
    const char *sched = std::getenv("HERD_SCHED");
    bool balancing = !sched || (std::string(sched) != "fifo" && std::string(sched) != "lifo");
    if (nw >= 2 && !balancing)
        STEP("future read on another worker: not run under HERD_SCHED=%s (no stealing)", sched);
    if (nw >= 2 && balancing) {
        STEP("future: produced on one worker while the reader runs on another");
        // The producer holds its worker (it spins, never suspends) until the
        // reader has set `go`; so the reader must have run on another worker.
        rt.run([] {
            std::atomic<int> started{0}, go{0};
            std::atomic<int> producer_worker{-1}, reader_worker{-1};
            auto f = herd::spawn([&] {
                producer_worker = herd::worker_id();
                started.store(1, std::memory_order_release);
                while (!go.load(std::memory_order_acquire)) {
                }
                return 1234;
            });
            while (!started.load(std::memory_order_acquire))
                herd::this_task::yield();
            reader_worker = herd::worker_id();
            go.store(1, std::memory_order_release);
            CHECK_EQ(f.get(), 1234);
            CHECK(producer_worker.load() != reader_worker.load());
        });
    }

    STEP("parallel_invoke: all run, the first exception is rethrown after all finished");
    rt.run([] {
        int a = 0, b = 0, c = 0;
        herd::parallel_invoke([&] { a = 1; }, [&] { b = 2; }, [&] { c = 3; });
        CHECK(a == 1 && b == 2 && c == 3);
        std::atomic<int> done{0};
        bool threw = false;
        try {
            herd::parallel_invoke(
                [&] {
                    done++;
                    throw std::runtime_error("first");
                },
                [&] { done++; },
                [&] {
                    done++;
                    throw std::runtime_error("x");
                });
        } catch (const std::runtime_error &) {
            threw = true;
        }
        CHECK(threw);
        CHECK_EQ(done.load(), 3);
    });

    STEP("misuse outside tasks throws herd::error with HERD_ENOTASK");
    int code = 0;
    try {
        herd::task_group g;
        g.run([] {});
    } catch (const herd::error &e) {
        code = e.code();
    }
    CHECK_EQ(code, HERD_ENOTASK);
    code = 0;
    try {
        herd::parallel_for(0, 10, [](int) {});
    } catch (const herd::error &e) {
        code = e.code();
    }
    CHECK_EQ(code, HERD_ENOTASK);

    STEP("a second runtime is refused while one runs");
    code = 0;
    try {
        herd::runtime again;
    } catch (const herd::error &e) {
        code = e.code();
    }
    CHECK_EQ(code, HERD_ESTATE);
    rt.stop();

    STEP("runtime(config): settings from the struct");
    herd::config cfg;
    cfg.workers = 1;
    cfg.sched = "ws";
    herd::runtime one(cfg);
    CHECK_EQ(one.workers(), 1);
    CHECK_EQ(one.run([] { return fib_group(15) + fib_future(15); }), 2 * fib_seq(15));
    return 0;
}
