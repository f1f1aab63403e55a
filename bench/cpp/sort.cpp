// bench/cpp/sort.cpp -- the mergesort of bench/tbb/sort.cpp (cilksort's
// quarters, std::sort below the cut-off, a parallel merge that splits the
// longer input at its middle) written with herd::task_group instead of
// tbb::task_group, line for line, so the two time the same work on the two
// runtimes. (bench/sort.c is herd's C version, with its own quicksort.)
//
//   bench_cpp_sort [--n N] [--cutoff C] [--workers W] [--reps R] [--seed S]
//
// Verification as tbb_sort's: sorted, and the same count, sum and multiset
// hash as the input. One JSON line at the end.
#include <herd/herd.hpp>

#include "tbb_common.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

const char usage[] = "bench_cpp_sort [--n N] [--cutoff C] [--workers W] [--reps R] [--seed S]";
using elem = std::int32_t;
long cutoff = 32768;

void merge(const elem *a, long na, const elem *b, long nb, elem *d) {
    if (na < nb) {
        std::swap(a, b);
        std::swap(na, nb);
    }
    if (na + nb < cutoff || nb == 0) {
        std::merge(a, a + na, b, b + nb, d);
        return;
    }
    long ma = na / 2;
    long mb = std::lower_bound(b, b + nb, a[ma]) - b;
    d[ma + mb] = a[ma];
    herd::task_group g;
    g.run([=] { merge(a, ma, b, mb, d); });
    merge(a + ma + 1, na - ma - 1, b + mb, nb - mb, d + ma + mb + 1);
    g.wait();
}

void sort(elem *a, elem *t, long n) {
    if (n < cutoff) {
        std::sort(a, a + n);
        return;
    }
    long q = n / 4, n4 = n - 3 * q;
    herd::task_group g;
    g.run([=] { sort(a, t, q); });
    g.run([=] { sort(a + q, t + q, q); });
    g.run([=] { sort(a + 2 * q, t + 2 * q, q); });
    sort(a + 3 * q, t + 3 * q, n4);
    g.wait();
    g.run([=] { merge(a, q, a + q, q, t); });
    merge(a + 2 * q, q, a + 3 * q, n4, t + 2 * q);
    g.wait();
    merge(t, 2 * q, t + 2 * q, n - 2 * q, a);
}

std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    return x ^ (x >> 33);
}

std::uint64_t splitmix(std::uint64_t &s) {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

} // namespace

int main(int argc, char **argv) {
    long n = 1L << 20, seed = 1;
    int workers = 0, reps = 1;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--n"))
            n = tbbbench::int_arg(usage, argc, argv, i, 1, 1L << 34);
        else if (!std::strcmp(argv[i], "--cutoff"))
            cutoff = tbbbench::int_arg(usage, argc, argv, i, 4, 1L << 34);
        else if (!std::strcmp(argv[i], "--workers"))
            workers = int(tbbbench::int_arg(usage, argc, argv, i, 0, 4096));
        else if (!std::strcmp(argv[i], "--reps"))
            reps = int(tbbbench::int_arg(usage, argc, argv, i, 1, 100000));
        else if (!std::strcmp(argv[i], "--seed"))
            seed = tbbbench::int_arg(usage, argc, argv, i, 0, 1L << 40);
        else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            std::printf("usage: %s\n", usage);
            return 0;
        } else
            tbbbench::bad(usage, "unknown option", argv[i]);
    }
    herd::config cfg;
    cfg.workers = workers;
    herd::runtime rt(cfg);
    std::vector<elem> a(static_cast<std::size_t>(n)), t(static_cast<std::size_t>(n));
    std::vector<double> times;
    bool ok = true;
    for (int r = 0; r < reps; r++) {
        std::uint64_t st = std::uint64_t(seed) * 0x2545F4914F6CDD1DULL + std::uint64_t(r);
        std::uint64_t sum0 = 0, h0 = 0, sum1 = 0, h1 = 0;
        for (long i = 0; i < n; i++) {
            a[std::size_t(i)] = elem(std::uint32_t(splitmix(st)));
            sum0 += std::uint32_t(a[std::size_t(i)]);
            h0 += mix(std::uint32_t(a[std::size_t(i)]));
        }
        auto t0 = std::chrono::steady_clock::now();
        rt.run([&] { sort(a.data(), t.data(), n); });
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        for (long i = 0; i < n; i++) {
            sum1 += std::uint32_t(a[std::size_t(i)]);
            h1 += mix(std::uint32_t(a[std::size_t(i)]));
        }
        bool good = std::is_sorted(a.begin(), a.end()) && sum0 == sum1 && h0 == h1;
        if (!good)
            std::fprintf(stderr, "bench_cpp_sort: rep %d is not a sorted permutation\n", r);
        ok = ok && good;
    }
    std::string ts = tbbbench::join(times);
    std::printf("{\"kernel\":\"sort\",\"runtime\":\"herd-cpp\",\"params\":{\"n\":%ld,\"cutoff\":%ld},"
                "\"workers\":%d,\"seconds\":%.9f,\"verified\":%s,\"reps\":%d,\"times\":[%s]}\n",
                n, cutoff, rt.workers(), tbbbench::median(times), ok ? "true" : "false", reps,
                ts.c_str());
    return ok ? 0 : 1;
}
