// A plan of a large trace from samples (docs/workload-model.md, "Planning a large trace from a
// sample"). Three stages: the drive counts the grid must reach, from full replays of the points
// their needs are read from; the whole grid on two independent spatial samples (SHARDS-style,
// kvbe/trace/trace_sample.h), whose difference is the error bound; the shortlist (the
// candidates that could be recommended) replayed in full, with their servers counted. The
// recommendation is chosen among full replays only, so its figures are exact; the other
// configurations carry the sample's estimates and are marked sampled.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/plan/plan.h"

#include <cstddef>
#include <functional>

namespace kvbe {

struct PlanSampleOptions {
    bool exact = false;                 // --exact: every configuration in full
    std::size_t exactBelow = 200000;    // traces with fewer requests are planned in full
    double rate = 0;                    // the sampling rate; 0: sampleRequests / requests
    std::size_t sampleRequests = 62500; // with rate 0
    std::size_t shortlistByNet = 4;     // the sample's best by net value, per sample
    std::size_t shortlistMax = 24;      // at most this many configurations in full
};

RequestResult<PlanResult> planTraceSampled(const PlanSetup& setup, const PlanSampleOptions& options,
                                           const std::function<bool(double)>& progress = {});

} // namespace kvbe
