// bench/tbb/sort.cpp -- the parallel mergesort of bench/omp/sort.c on oneTBB
// task groups: a peer for the OpenMP and herd versions.
//
//   tbb_sort [--n N] [--cutoff C] [--workers W] [--reps R] [--seed S]
//
// Quarters sorted as tasks, then two merges as tasks, then the last merge;
// a merge above the cut-off splits at the middle of the longer input (binary
// search in the shorter) into two tasks. Below the cut-offs (32K): std::sort
// for the pieces (introsort: quicksort with insertion sort at the bottom,
// as the other versions) and a sequential merge. Verification: sorted, and
// the same multiset (count, sum, sum of a 64-bit mix) as the input.
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

const char usage[] = "tbb_sort [--n N] [--cutoff C] [--workers W] [--reps R] [--seed S]";
using elem = int32_t;
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
    tbb::task_group g;
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
    tbb::task_group g;
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

uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    return x ^ (x >> 33);
}

uint64_t splitmix(uint64_t &s) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
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
    int w = workers > 0 ? workers : tbb::this_task_arena::max_concurrency();
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, size_t(w));
    std::vector<elem> a(n), t(n);
    std::vector<double> times;
    bool ok = true;
    for (int r = 0; r < reps; r++) {
        uint64_t st = uint64_t(seed) * 0x2545F4914F6CDD1DULL + uint64_t(r);
        uint64_t sum0 = 0, h0 = 0, sum1 = 0, h1 = 0;
        for (long i = 0; i < n; i++) {
            a[i] = elem(uint32_t(splitmix(st)));
            sum0 += uint32_t(a[i]);
            h0 += mix(uint32_t(a[i]));
        }
        auto t0 = std::chrono::steady_clock::now();
        sort(a.data(), t.data(), n);
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        for (long i = 0; i < n; i++) {
            sum1 += uint32_t(a[i]);
            h1 += mix(uint32_t(a[i]));
        }
        bool good = std::is_sorted(a.begin(), a.end()) && sum0 == sum1 && h0 == h1;
        if (!good)
            std::fprintf(stderr, "tbb_sort: rep %d is not a sorted permutation of the input\n", r);
        ok = ok && good;
    }
    double med = tbbbench::median(times);
    std::string ts = tbbbench::join(times);
    std::printf("{\"kernel\":\"sort\",\"runtime\":\"tbb\",\"params\":{\"n\":%ld,\"cutoff\":%ld},"
                "\"workers\":%d,\"seconds\":%.9f,\"verified\":%s,\"reps\":%d,\"times\":[%s]}\n",
                n, cutoff, int(tbb::global_control::active_value(
                                   tbb::global_control::max_allowed_parallelism)),
                med, ok ? "true" : "false", reps, ts.c_str());
    return ok ? 0 : 1;
}
