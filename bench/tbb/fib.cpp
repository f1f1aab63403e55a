// bench/tbb/fib.cpp -- naive Fibonacci on oneTBB task groups: a peer for
// bench/omp/fib.c and bench/fib.c.
//
//   tbb_fib [--n N] [--cutoff DEPTH] [--workers W] [--reps R]
//
// Each call runs fib(n-1) as a task of a tbb::task_group and fib(n-2) in
// place, then waits; below the cut-off depth (default: none, every call a
// task) the plain recursion runs. --workers limits TBB's concurrency with a
// global_control. Verification: the iterative value. One JSON line at the end.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "tbb_common.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

const char usage[] = "tbb_fib [--n N] [--cutoff DEPTH] [--workers W] [--reps R]";

__attribute__((noinline)) uint64_t fib_seq(int n) {
    return n < 2 ? uint64_t(n) : fib_seq(n - 1) + fib_seq(n - 2);
}

uint64_t fib_par(int n, int depth, int cutoff) {
    if (n < 2)
        return uint64_t(n);
    if (depth >= cutoff)
        return fib_seq(n);
    uint64_t x = 0, y = 0;
    tbb::task_group g;
    g.run([&] { x = fib_par(n - 1, depth + 1, cutoff); });
    y = fib_par(n - 2, depth + 1, cutoff);
    g.wait();
    return x + y;
}

} // namespace

int main(int argc, char **argv) {
    int n = 30, cutoff = 1 << 30, workers = 0, reps = 1;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--n"))
            n = int(tbbbench::int_arg(usage, argc, argv, i, 0, 92));
        else if (!std::strcmp(argv[i], "--cutoff"))
            cutoff = int(tbbbench::int_arg(usage, argc, argv, i, 0, 1 << 30));
        else if (!std::strcmp(argv[i], "--workers"))
            workers = int(tbbbench::int_arg(usage, argc, argv, i, 0, 4096));
        else if (!std::strcmp(argv[i], "--reps"))
            reps = int(tbbbench::int_arg(usage, argc, argv, i, 1, 100000));
        else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            std::printf("usage: %s\n", usage);
            return 0;
        } else
            tbbbench::bad(usage, "unknown option", argv[i]);
    }
    int w = workers > 0 ? workers : tbb::this_task_arena::max_concurrency();
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, size_t(w));
    uint64_t a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        uint64_t t = a + b;
        a = b;
        b = t;
    }
    std::vector<double> times;
    bool ok = true;
    uint64_t result = 0;
    for (int r = 0; r < reps; r++) {
        auto t0 = std::chrono::steady_clock::now();
        result = fib_par(n, 0, cutoff);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        ok = ok && result == a;
    }
    double med = tbbbench::median(times);
    std::string ts = tbbbench::join(times);
    std::printf("{\"kernel\":\"fib\",\"runtime\":\"tbb\",\"params\":{\"n\":%d,\"cutoff\":%d},"
                "\"workers\":%d,\"seconds\":%.9f,\"verified\":%s,\"reps\":%d,\"result\":%llu,"
                "\"times\":[%s]}\n",
                n, cutoff >= (1 << 30) ? -1 : cutoff, int(tbb::global_control::active_value(
                    tbb::global_control::max_allowed_parallelism)),
                med, ok ? "true" : "false", reps, (unsigned long long)result, ts.c_str());
    return ok ? 0 : 1;
}
