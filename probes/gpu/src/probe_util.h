// Small things the CUDA probes share: failing with one sentence, medians, number formatting.
#pragma once

#include "kvbe/probes/probe.h"
#include "kvbe/probes/stream.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace kvbe::gpu {

inline probes::ProbeOutcome failWith(probes::ProbeSink& sink, probes::ProbeExit exit,
                                     const std::string& message) {
    sink.error(message);
    return {exit, message};
}

inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline std::string fixed(double v, int decimals) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, v);
    return text;
}

} // namespace kvbe::gpu
