// Small things the CUDA probes share: failing with one sentence (probe.h), medians, formatting.
#pragma once

#include "kvbe/probes/probe.h"
#include "kvbe/probes/stream.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace kvbe::gpu {

using probes::failWith;
using probes::fixedDecimals;

inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

} // namespace kvbe::gpu
