// bench/cpp/loops_common.hpp -- the loop kernels' element functions, shared
// by bench_cpp_loops (herd C++ and C) and tbb_loops (oneTBB) so all three
// compute the same thing.
//   for:    out[i] = value(i) over an array of n 32-bit words, then the
//           checksum of the array (outside the timing)
//   reduce: the wrapping sum of value(i) over [0, n)
#pragma once

#include <cstdint>

namespace loopbench {

// A few multiplies per element: enough work that the loop is not bound by
// memory alone, little enough that the runtime's overhead shows.
inline std::uint64_t value(std::int64_t i) {
    std::uint64_t x = std::uint64_t(i) * 0x9e3779b97f4a7c15ULL;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    return x ^ (x >> 29);
}

inline std::uint64_t reference(std::int64_t n) {
    std::uint64_t s = 0;
    for (std::int64_t i = 0; i < n; i++)
        s += value(i);
    return s;
}

// The checksum of a `for` output: the same sum, over the stored words.
inline std::uint64_t reference32(std::int64_t n) {
    std::uint64_t s = 0;
    for (std::int64_t i = 0; i < n; i++)
        s += std::uint32_t(value(i));
    return s;
}

} // namespace loopbench
