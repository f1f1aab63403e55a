// bench/cpp/fib.cpp -- naive Fibonacci through herd.hpp, beside the same
// recursion on herd's C API, so that one binary measures what the C++ layer
// adds (the oneTBB peer is bench/tbb/fib.cpp).
//
//   bench_cpp_fib [--n N] [--api group|future|c|c-future] [--workers W] [--reps R]
//
//   group     herd::task_group: run fib(n-1), compute fib(n-2) here, wait
//             (tbb_fib's shape exactly)
//   future    herd::spawn(fib(n-1)) -> herd::future, fib(n-2) here, get()
//   c         herd_spawn + herd_wait, results through pointers (bench_fib
//             --shape one's shape)
//   c-future  herd_future_spawn + herd_future_get (the C futures, which sit
//             on full/empty words)
// Every call is a task (no cut-off): this measures spawn and wait. One JSON
// line at the end, as every benchmark here.
#include <herd/herd.hpp>

#include "tbb_common.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

const char usage[] = "bench_cpp_fib [--n N] [--api group|future|c|c-future] [--workers W] "
                     "[--reps R]";

std::uint64_t fib_group(int n) {
    if (n < 2)
        return std::uint64_t(n);
    std::uint64_t x, y;
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

struct fib_arg {
    int n;
    std::uint64_t *out;
};

void fib_c(void *p) {
    const fib_arg *a = static_cast<const fib_arg *>(p);
    if (a->n < 2) {
        *a->out = std::uint64_t(a->n);
        return;
    }
    std::uint64_t x, y;
    fib_arg c1{a->n - 1, &x};
    if (herd_spawn(fib_c, &c1, sizeof c1) != 0)
        fib_c(&c1);
    fib_arg c2{a->n - 2, &y};
    fib_c(&c2);
    herd_wait();
    *a->out = x + y;
}

std::uint64_t fib_c_future(void *p) {
    int n = *static_cast<int *>(p);
    if (n < 2)
        return std::uint64_t(n);
    herd_future f;
    int m = n - 1;
    std::uint64_t x;
    if (herd_future_spawn(&f, fib_c_future, &m, sizeof m) != 0)
        x = fib_c_future(&m);
    else
        herd_future_get(&f, &x);
    int k = n - 2;
    return x + fib_c_future(&k);
}

} // namespace

int main(int argc, char **argv) {
    int n = 35, workers = 0, reps = 1;
    std::string api = "group";
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--n"))
            n = int(tbbbench::int_arg(usage, argc, argv, i, 0, 92));
        else if (!std::strcmp(argv[i], "--api") && i + 1 < argc)
            api = argv[++i];
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
    if (api != "group" && api != "future" && api != "c" && api != "c-future")
        tbbbench::bad(usage, "--api takes group, future, c or c-future", api.c_str());
    herd::config cfg;
    cfg.workers = workers;
    herd::runtime rt(cfg);
    std::uint64_t a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        std::uint64_t t = a + b;
        a = b;
        b = t;
    }
    std::vector<double> times;
    bool ok = true;
    std::uint64_t result = 0;
    for (int r = 0; r < reps; r++) {
        auto t0 = std::chrono::steady_clock::now();
        if (api == "group") {
            result = rt.run([n] { return fib_group(n); });
        } else if (api == "future") {
            result = rt.run([n] { return fib_future(n); });
        } else if (api == "c") {
            fib_arg root{n, &result};
            herd::detail::check(herd_run(fib_c, &root, sizeof root), "herd_run");
        } else {
            result = rt.run([n] {
                int m = n;
                return fib_c_future(&m);
            });
        }
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        ok = ok && result == a;
    }
    std::string ts = tbbbench::join(times);
    std::printf("{\"kernel\":\"fib\",\"runtime\":\"herd-%s\",\"params\":{\"n\":%d,\"api\":\"%s\"},"
                "\"workers\":%d,\"seconds\":%.9f,\"verified\":%s,\"reps\":%d,\"result\":%llu,"
                "\"times\":[%s]}\n",
                api == "c" || api == "c-future" ? "c" : "cpp", n, api.c_str(), rt.workers(),
                tbbbench::median(times), ok ? "true" : "false", reps,
                (unsigned long long)result, ts.c_str());
    return ok ? 0 : 1;
}
