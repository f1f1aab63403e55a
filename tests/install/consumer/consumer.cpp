// A C++ user of the installed package (herd.hpp), built against the install
// only: a task_group fib, a future, parallel_for and parallel_reduce, a
// mutex through std::lock_guard, and an exception that crosses a task. Each
// is checked against its sequential twin; exit 0 means every check passed.
#include <herd/herd.hpp>

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace {

std::uint64_t fib_seq(int n) {
    return n < 2 ? std::uint64_t(n) : fib_seq(n - 1) + fib_seq(n - 2);
}

std::uint64_t fib(int n) {
    if (n < 12)
        return fib_seq(n);
    std::uint64_t x = 0, y = 0;
    herd::task_group g;
    g.run([&] { x = fib(n - 1); });
    y = fib(n - 2);
    g.wait();
    return x + y;
}

} // namespace

int main() {
    herd::config cfg;
    cfg.workers = 2;
    herd::runtime rt(cfg);
    if (rt.workers() != 2) {
        std::fprintf(stderr, "consumer.cpp: %d workers, expected 2\n", rt.workers());
        return 1;
    }
    const int n = 27;
    std::uint64_t f = rt.run([] { return fib(n); });
    std::uint64_t fut = rt.run([] {
        auto x = herd::spawn([] { return fib_seq(20); });
        return x.get();
    });
    std::vector<std::uint64_t> sq(1000);
    herd::mutex m;
    long locked = 0;
    std::uint64_t sum = rt.run([&] {
        herd::parallel_for(0, 1000, [&](int i) {
            sq[std::size_t(i)] = std::uint64_t(i) * std::uint64_t(i);
            std::lock_guard<herd::mutex> lk(m);
            locked++;
        });
        return herd::parallel_reduce(
            0, 1000, std::uint64_t(0), [&](int i) { return sq[std::size_t(i)]; },
            [](std::uint64_t a, std::uint64_t b) { return a + b; });
    });
    bool caught = false;
    try {
        rt.run([] {
            herd::task_group g;
            g.run([] { throw std::runtime_error("from a task"); });
            g.wait();
        });
    } catch (const std::runtime_error &) {
        caught = true;
    }
    std::uint64_t want = 0;
    for (std::uint64_t i = 0; i < 1000; i++)
        want += i * i;
    bool ok = f == fib_seq(n) && fut == fib_seq(20) && sum == want && locked == 1000 && caught;
    std::printf("consumer.cpp: fib(%d) = %llu, future = %llu, sum of squares = %llu, "
                "exception %s: %s\n",
                n, (unsigned long long)f, (unsigned long long)fut, (unsigned long long)sum,
                caught ? "caught" : "LOST", ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
