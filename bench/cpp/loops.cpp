// bench/cpp/loops.cpp -- herd.hpp's parallel_for and parallel_reduce beside
// the same loops on herd's C API (herd_loop, herd_loop_reduce), one binary;
// the oneTBB peer is tbb_loops.cpp. Kernels: loops_common.hpp.
//
//   bench_cpp_loops [--op for|reduce] [--api cpp|c] [--kind split|chunks|shepherds]
//                   [--n N] [--grain G] [--workers W] [--reps R]
//
// --grain 0 (the default) is herd.hpp's automatic grain, n / (8 * workers),
// given to the C API as well, so both run the same ranges. The C++ `for`
// uses the per-index form, parallel_for(0, n, grain, f, kind); the C++
// reduce the per-range form of parallel_reduce. One JSON line at the end.
#include <herd/herd.hpp>

#include "loops_common.hpp"
#include "tbb_common.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

const char usage[] = "bench_cpp_loops [--op for|reduce] [--api cpp|c] "
                     "[--kind split|chunks|shepherds] [--n N] [--grain G] [--workers W] "
                     "[--reps R]";

struct c_for_arg {
    std::uint32_t *out;
};

void c_for_body(std::int64_t b, std::int64_t e, void *p) {
    std::uint32_t *out = static_cast<c_for_arg *>(p)->out;
    for (std::int64_t i = b; i < e; i++)
        out[i] = std::uint32_t(loopbench::value(i));
}

void c_reduce_body(std::int64_t b, std::int64_t e, void *, void *partial) {
    std::uint64_t s = *static_cast<std::uint64_t *>(partial);
    for (std::int64_t i = b; i < e; i++)
        s += loopbench::value(i);
    *static_cast<std::uint64_t *>(partial) = s;
}

void c_combine(void *into, const void *from, void *) {
    *static_cast<std::uint64_t *>(into) += *static_cast<const std::uint64_t *>(from);
}

} // namespace

int main(int argc, char **argv) {
    long n = 1L << 26, grain = 0;
    int workers = 0, reps = 1;
    std::string op = "reduce", api = "cpp", kind = "split";
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--n"))
            n = tbbbench::int_arg(usage, argc, argv, i, 1, 1L << 34);
        else if (!std::strcmp(argv[i], "--grain"))
            grain = tbbbench::int_arg(usage, argc, argv, i, 0, 1L << 34);
        else if (!std::strcmp(argv[i], "--workers"))
            workers = int(tbbbench::int_arg(usage, argc, argv, i, 0, 4096));
        else if (!std::strcmp(argv[i], "--reps"))
            reps = int(tbbbench::int_arg(usage, argc, argv, i, 1, 100000));
        else if (!std::strcmp(argv[i], "--op") && i + 1 < argc)
            op = argv[++i];
        else if (!std::strcmp(argv[i], "--api") && i + 1 < argc)
            api = argv[++i];
        else if (!std::strcmp(argv[i], "--kind") && i + 1 < argc)
            kind = argv[++i];
        else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            std::printf("usage: %s\n", usage);
            return 0;
        } else
            tbbbench::bad(usage, "unknown option or missing value", argv[i]);
    }
    if (op != "for" && op != "reduce")
        tbbbench::bad(usage, "--op takes for or reduce", op.c_str());
    if (api != "cpp" && api != "c")
        tbbbench::bad(usage, "--api takes cpp or c", api.c_str());
    herd::loop_kind k = herd::loop_kind::split;
    if (kind == "chunks")
        k = herd::loop_kind::chunks;
    else if (kind == "shepherds")
        k = herd::loop_kind::shepherds;
    else if (kind != "split")
        tbbbench::bad(usage, "--kind takes split, chunks or shepherds", kind.c_str());

    herd::config cfg;
    cfg.workers = workers;
    herd::runtime rt(cfg);
    const std::int64_t g = grain > 0 ? grain : herd::detail::auto_grain(n, 0);
    const std::uint64_t want = op == "for" ? loopbench::reference32(n) : loopbench::reference(n);
    std::vector<std::uint32_t> out(op == "for" ? std::size_t(n) : 0);
    std::vector<double> times;
    bool ok = true;
    for (int r = 0; r < reps; r++) {
        std::uint64_t got = 0;
        std::fill(out.begin(), out.end(), 0u);
        auto t0 = std::chrono::steady_clock::now();
        if (op == "for" && api == "cpp") {
            std::uint32_t *o = out.data();
            rt.run([&] {
                herd::parallel_for(std::int64_t(0), std::int64_t(n), g,
                                   [o](std::int64_t i) { o[i] = std::uint32_t(loopbench::value(i)); },
                                   k);
            });
        } else if (op == "for") {
            c_for_arg a{out.data()};
            rt.run([&] {
                herd::detail::check(herd_loop(0, n, g, herd_loop_kind(k), c_for_body, &a),
                                    "herd_loop");
            });
        } else if (api == "cpp") {
            got = rt.run([&] {
                return herd::parallel_reduce(
                    std::int64_t(0), std::int64_t(n), std::uint64_t(0),
                    [](herd::range<std::int64_t> rg, std::uint64_t acc) {
                        for (std::int64_t i = rg.begin(); i < rg.end(); i++)
                            acc += loopbench::value(i);
                        return acc;
                    },
                    [](std::uint64_t x, std::uint64_t y) { return x + y; },
                    herd::loop_options{k, g});
            });
        } else {
            std::uint64_t zero = 0;
            rt.run([&] {
                herd::detail::check(herd_loop_reduce(0, n, g, herd_loop_kind(k), c_reduce_body,
                                                     c_combine, nullptr, &zero, &got, sizeof got),
                                    "herd_loop_reduce");
            });
        }
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        if (op == "for")
            for (auto v : out)
                got += v;
        ok = ok && got == want;
    }
    std::string ts = tbbbench::join(times);
    std::printf("{\"kernel\":\"%s\",\"runtime\":\"herd-%s\",\"params\":{\"n\":%ld,\"kind\":\"%s\","
                "\"grain\":%lld},\"workers\":%d,\"seconds\":%.9f,\"verified\":%s,\"reps\":%d,"
                "\"times\":[%s]}\n",
                op.c_str(), api.c_str(), n, kind.c_str(), (long long)g, rt.workers(),
                tbbbench::median(times), ok ? "true" : "false", reps, ts.c_str());
    return ok ? 0 : 1;
}
