// herd.hpp: parallel_for (per index, with a grain, over a herd::range, over
// iterators) and parallel_reduce (per element and per range, arithmetic and
// heap-owning results), under every loop kind; exceptions from loop bodies;
// empty ranges. Each loop's effect is checked against its sequential twin.
//
// herd-test-matrix: unit
// herd-test-env: HERD_WORKERS=1
// herd-test-env: HERD_WORKERS=3
// herd-test-timeout: 120
#include <herd/herd.hpp>

#include "check.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace {

const herd::loop_kind kinds[] = {herd::loop_kind::each, herd::loop_kind::split,
                                 herd::loop_kind::chunks, herd::loop_kind::shepherds};
const char *kind_name(herd::loop_kind k) {
    switch (k) {
    case herd::loop_kind::each:
        return "each";
    case herd::loop_kind::split:
        return "split";
    case herd::loop_kind::chunks:
        return "chunks";
    case herd::loop_kind::shepherds:
        return "shepherds";
    }
    return "?";
}

// Every index of [lo, hi) visited exactly once, none outside.
void check_once(const std::vector<std::atomic<int>> &hits, long lo, long hi) {
    for (long i = 0; i < long(hits.size()); i++)
        CHECK_EQ(hits[std::size_t(i)].load(), (i >= lo && i < hi) ? 1 : 0);
}

void loops(herd::loop_kind kind) {
    const long n = CHECK_SCALED(20000) + 17;
    STEP("%s: parallel_for per index, with and without a grain", kind_name(kind));
    {
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n + 10));
        herd::parallel_for(
            5L, n + 5, [&](long i) { hits[std::size_t(i)]++; }, herd::loop_options{kind, 0});
        check_once(hits, 5, n + 5);
    }
    for (long grain : {1L, 7L, 1000L}) {
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
        herd::parallel_for(
            0, n, grain, [&](long i) { hits[std::size_t(i)]++; }, kind);
        check_once(hits, 0, n);
    }
    STEP("%s: parallel_for over a herd::range partitions it", kind_name(kind));
    {
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
        std::atomic<long> calls{0};
        herd::parallel_for(
            herd::range<long>(0, n, 64),
            [&](herd::range<long> r) {
                CHECK(!r.empty());
                CHECK_EQ(r.grain(), 64);
                calls++;
                for (long i = r.begin(); i < r.end(); i++)
                    hits[std::size_t(i)]++;
            },
            kind);
        check_once(hits, 0, n);
        CHECK(calls.load() >= 1);
    }
    STEP("%s: parallel_for over vector iterators", kind_name(kind));
    {
        std::vector<long> v(static_cast<std::size_t>(n));
        herd::parallel_for(
            v.begin(), v.end(), [&](std::vector<long>::iterator it) { *it = (it - v.begin()) * 2; },
            herd::loop_options{kind, 100});
        for (long i = 0; i < n; i++)
            CHECK_EQ(v[std::size_t(i)], 2 * i);
    }
    STEP("%s: parallel_reduce per element and per range", kind_name(kind));
    {
        std::uint64_t want = 0;
        for (long i = 0; i < n; i++)
            want += std::uint64_t(i) * std::uint64_t(i);
        auto sq = herd::parallel_reduce(
            0L, n, std::uint64_t(0), [](long i) { return std::uint64_t(i) * std::uint64_t(i); },
            [](std::uint64_t a, std::uint64_t b) { return a + b; }, herd::loop_options{kind, 0});
        CHECK_EQ_U64(sq, want);
        auto sq2 = herd::parallel_reduce(
            0L, n, std::uint64_t(0),
            [](herd::range<long> r, std::uint64_t acc) {
                for (long i = r.begin(); i < r.end(); i++)
                    acc += std::uint64_t(i) * std::uint64_t(i);
                return acc;
            },
            [](std::uint64_t a, std::uint64_t b) { return a + b; }, herd::loop_options{kind, 33});
        CHECK_EQ_U64(sq2, want);
        // A max with a non-zero identity: the identity takes part once per partial.
        long mx = herd::parallel_reduce(
            0L, n, -1L, [n](long i) { return (i * 7919) % n; },
            [](long a, long b) { return std::max(a, b); }, herd::loop_options{kind, 0});
        CHECK_EQ(mx, n - 1);
    }
    STEP("%s: parallel_reduce into a heap-owning type (a vector of the indices)", kind_name(kind));
    {
        const long m = std::min(n, 3000L);
        auto all = herd::parallel_reduce(
            0L, m, std::vector<long>{},
            [](herd::range<long> r, std::vector<long> acc) {
                for (long i = r.begin(); i < r.end(); i++)
                    acc.push_back(i);
                return acc;
            },
            [](std::vector<long> a, std::vector<long> b) {
                a.insert(a.end(), b.begin(), b.end());
                return a;
            },
            herd::loop_options{kind, 50});
        std::sort(all.begin(), all.end());
        CHECK_EQ(long(all.size()), m);
        for (long i = 0; i < m; i++)
            CHECK_EQ(all[std::size_t(i)], i);
    }
    STEP("%s: an exception in a loop body is rethrown after the loop", kind_name(kind));
    {
        bool threw = false;
        try {
            herd::parallel_for(
                0L, n,
                [&](long i) {
                    if (i == n / 2)
                        throw std::out_of_range("half");
                },
                herd::loop_options{kind, 0});
        } catch (const std::out_of_range &) {
            threw = true;
        }
        CHECK(threw);
        threw = false;
        try {
            herd::parallel_reduce(
                0L, n, std::make_shared<long>(0),
                [&](long i) {
                    if (i == n - 1)
                        throw std::out_of_range("last");
                    return std::make_shared<long>(i);
                },
                [](std::shared_ptr<long> a, std::shared_ptr<long> b) {
                    return std::make_shared<long>(*a + *b);
                },
                herd::loop_options{kind, 0});
        } catch (const std::out_of_range &) {
            threw = true;
        }
        CHECK(threw);
    }
    STEP("%s: empty ranges run nothing and reduce to the identity", kind_name(kind));
    {
        herd::parallel_for(
            10, 10, [](int) { CHECK(!"an empty loop ran a body"); }, herd::loop_options{kind, 0});
        herd::parallel_for(
            10, 3, [](int) { CHECK(!"a reversed loop ran a body"); }, herd::loop_options{kind, 0});
        CHECK_EQ(herd::parallel_reduce(
                     4, 4, 99, [](int i) { return i; }, [](int a, int b) { return a + b; },
                     herd::loop_options{kind, 0}),
                 99);
    }
}

} // namespace

int main() {
    herd::runtime rt;
    rt.run([] {
        for (auto k : kinds)
            loops(k);
        STEP("nested loops wait for their own iterations only");
        std::vector<std::atomic<int>> cells(100 * 100);
        herd::parallel_for(0, 100, [&](int i) {
            herd::parallel_for(0, 100, [&](int j) { cells[std::size_t(i * 100 + j)]++; });
        });
        for (auto &c : cells)
            CHECK_EQ(c.load(), 1);
    });
    return 0;
}
