// Queueing worked out by hand for the capacity tests (core's and the window's): D/D/n in closed
// form and the percentile rule, the tests' own copies, never the code under test.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace kvbe::test {

// The p-th percentile of values by linear interpolation between order statistics, worked out
// here (the tests' own copy of the rule).
inline double percentileByHand(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    const double rank = p / 100 * double(v.size() - 1);
    const auto i = std::size_t(std::floor(rank));
    if (i + 1 >= v.size()) return v.back();
    return v[i] + (rank - double(i)) * (v[i + 1] - v[i]);
}

// D/D/n, first come first served: n identical requests served in s, arriving every `gap`
// seconds. Request i = q·c + m takes server m after q rounds, so it waits q·(s − c·gap) when
// s > c·gap (nobody waits otherwise).
inline std::vector<double> ddcTtfts(std::size_t n, double gap, double s, int c) {
    std::vector<double> t;
    for (std::size_t i = 0; i < n; ++i) {
        const double q = std::floor(double(i) / c);
        t.push_back(q * std::max(0.0, s - c * gap) + s);
    }
    return t;
}

} // namespace kvbe::test
