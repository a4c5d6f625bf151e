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
#include "kvbe/trace/trace_sample.h"

#include <cstddef>
#include <functional>

namespace kvbe {

// Where a plan is, for a front end's progress line (the window's Plan section).
enum class PlanStage {
    Full,        // every configuration replayed in full (--exact, or a trace below exactBelow)
    DriveCounts, // fast mode, stage 1: the full replays the drive counts are read from
    Sampling,    // stage 2: drawing sample `sample` from the trace
    Sample,      // stage 2: the grid replayed on sample `sample`
    Shortlist,   // stages 3 and 4: the shortlist (and the recommendation's neighbours) in full
};
struct PlanProgress {
    PlanStage stage = PlanStage::Full;
    int sample = 0;  // Sampling and Sample: 1 or 2
    double rate = 1; // the sampling rate (fast mode's, in every stage); 1 in full
    // The configurations this stage replays: Sample the grid's, Shortlist the shortlist's (stage
    // 4's neighbours added when it starts); 0 where not known beforehand (Full, DriveCounts).
    std::size_t configurations = 0;
    double stageDone = 0; // the share of this stage done
    double done = 0;      // the share of the whole plan done, as `progress` gets it
};

// exact (--exact: every configuration in full), exactBelow, rate and sampleRequests: the same
// defaults as trace sweep and trace capacity (kvbe/trace/trace_sample.h).
struct PlanSampleOptions : SampleMode {
    std::size_t shortlistByNet = 4; // the sample's best by net value, per sample
    std::size_t shortlistMax = 24;  // at most this many configurations in full
    // Called with every progress report (on the calling thread, as `progress`) and when a stage
    // starts; `progress` alone cancels.
    std::function<void(const PlanProgress&)> stages;
};

RequestResult<PlanResult> planTraceSampled(const PlanSetup& setup, const PlanSampleOptions& options,
                                           const std::function<bool(double)>& progress = {});

} // namespace kvbe
