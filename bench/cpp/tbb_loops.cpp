// bench/cpp/tbb_loops.cpp -- the loop kernels of bench_cpp_loops on oneTBB:
// tbb::parallel_for and tbb::parallel_reduce over a blocked_range with the
// default auto_partitioner (oneTBB's idiomatic form).
//
//   tbb_loops [--op for|reduce] [--n N] [--workers W] [--reps R]
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/task_arena.h>

#include "loops_common.hpp"
#include "tbb_common.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {
const char usage[] = "tbb_loops [--op for|reduce] [--n N] [--workers W] [--reps R]";
}

int main(int argc, char **argv) {
    long n = 1L << 26;
    int workers = 0, reps = 1;
    std::string op = "reduce";
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--n"))
            n = tbbbench::int_arg(usage, argc, argv, i, 1, 1L << 34);
        else if (!std::strcmp(argv[i], "--workers"))
            workers = int(tbbbench::int_arg(usage, argc, argv, i, 0, 4096));
        else if (!std::strcmp(argv[i], "--reps"))
            reps = int(tbbbench::int_arg(usage, argc, argv, i, 1, 100000));
        else if (!std::strcmp(argv[i], "--op") && i + 1 < argc)
            op = argv[++i];
        else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            std::printf("usage: %s\n", usage);
            return 0;
        } else
            tbbbench::bad(usage, "unknown option or missing value", argv[i]);
    }
    if (op != "for" && op != "reduce")
        tbbbench::bad(usage, "--op takes for or reduce", op.c_str());
    int w = workers > 0 ? workers : tbb::this_task_arena::max_concurrency();
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(w));
    using range = tbb::blocked_range<std::int64_t>;
    const std::uint64_t want = op == "for" ? loopbench::reference32(n) : loopbench::reference(n);
    std::vector<std::uint32_t> out(op == "for" ? std::size_t(n) : 0);
    std::vector<double> times;
    bool ok = true;
    for (int r = 0; r < reps; r++) {
        std::uint64_t got = 0;
        std::fill(out.begin(), out.end(), 0u);
        auto t0 = std::chrono::steady_clock::now();
        if (op == "for") {
            std::uint32_t *o = out.data();
            tbb::parallel_for(range(0, n), [o](const range &rg) {
                for (std::int64_t i = rg.begin(); i < rg.end(); i++)
                    o[i] = std::uint32_t(loopbench::value(i));
            });
        } else {
            got = tbb::parallel_reduce(
                range(0, n), std::uint64_t(0),
                [](const range &rg, std::uint64_t acc) {
                    for (std::int64_t i = rg.begin(); i < rg.end(); i++)
                        acc += loopbench::value(i);
                    return acc;
                },
                std::plus<std::uint64_t>());
        }
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (op == "for")
            for (auto v : out)
                got += v;
        ok = ok && got == want;
    }
    std::string ts = tbbbench::join(times);
    std::printf("{\"kernel\":\"%s\",\"runtime\":\"tbb\",\"params\":{\"n\":%ld},\"workers\":%d,"
                "\"seconds\":%.9f,\"verified\":%s,\"reps\":%d,\"times\":[%s]}\n",
                op.c_str(), n, int(tbb::global_control::active_value(
                                   tbb::global_control::max_allowed_parallelism)),
                tbbbench::median(times), ok ? "true" : "false", reps, ts.c_str());
    return ok ? 0 : 1;
}
