// bench/tbb/tbb_common.hpp -- option parsing and the result line shared by
// the oneTBB peers.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace tbbbench {

[[noreturn]] inline void bad(const char *usage, const char *what, const char *arg) {
    std::fprintf(stderr, "error: %s%s%s\nusage: %s\n", what, arg ? ": " : "", arg ? arg : "",
                 usage);
    std::exit(2);
}

// The integer value of option argv[i] in [lo, hi]; advances i past it.
inline long int_arg(const char *usage, int argc, char **argv, int &i, long lo, long hi) {
    if (i + 1 >= argc)
        bad(usage, "missing value for option", argv[i]);
    char *end;
    long v = std::strtol(argv[++i], &end, 10);
    if (*end || end == argv[i] || v < lo || v > hi)
        bad(usage, "bad value for option", argv[i]);
    return v;
}

inline double median(std::vector<double> s) {
    std::sort(s.begin(), s.end());
    if (s.empty())
        return 0;
    return s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
}

// "t0,t1,..." for the JSON line.
inline std::string join(const std::vector<double> &v) {
    std::string out;
    char buf[32];
    for (double t : v) {
        std::snprintf(buf, sizeof buf, "%.9f", t);
        out += (out.empty() ? "" : ",") + std::string(buf);
    }
    return out;
}

} // namespace tbbbench
