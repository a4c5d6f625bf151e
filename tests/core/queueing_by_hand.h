// Queueing worked out by hand for the capacity and plan tests (core's and the window's): D/D/n in
// closed form and the percentile rule, the tests' own copies, never the code under test; and the
// traces they queue, built field by field.
#pragma once

#include "kvbe/trace/trace.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
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

// A trace built field by field (no reader): request i arrives at arrival[i] with `prefix` shared
// blocks followed by `own` blocks of its own, every block full (512 tokens).
inline Trace makeTrace(const std::vector<double>& arrival, std::uint32_t prefix,
                       std::uint32_t own) {
    Trace t;
    t.summary.format = TraceFormat::Mooncake;
    t.summary.blockTokens = 512;
    t.summary.requests = arrival.size();
    t.blockOffset.push_back(0);
    t.distinctBlocks = prefix;
    for (double a : arrival) {
        t.arrivalS.push_back(a);
        t.inputTokens.push_back((prefix + own) * 512);
        t.outputTokens.push_back(1);
        for (std::uint32_t j = 0; j < prefix; ++j)
            t.blocks.push_back(j);
        for (std::uint32_t j = 0; j < own; ++j)
            t.blocks.push_back(t.distinctBlocks++);
        t.blockOffset.push_back(t.blocks.size());
    }
    return t;
}

} // namespace kvbe::test
