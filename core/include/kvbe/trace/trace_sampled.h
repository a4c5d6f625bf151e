// trace sweep and trace capacity on a large trace: answered from two spatial samples with their
// error stated, fast by default and exact on request (docs/workload-model.md, "Sweeps and
// capacity from a sample"). One request per command: the CLI and the window call these, each
// with the same SampleMode as trace plan (kvbe/trace/trace_sample.h).
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_capacity.h"
#include "kvbe/trace/trace_sample.h"
#include "kvbe/trace/trace_sim.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kvbe {

// Which mode ran, for the reports.
struct TraceSampling {
    bool sampled = false;
    double rate = 1;  // the sampling rate (1 in full)
    std::string mode; // "sampled: …", "--exact: …", "… (below 200000 requests)"
    std::uint64_t sampleRequests[2] = {0, 0}; // the two samples' requests
    std::uint64_t trunkBlocks = 0, trunkMinRequests = 0;
};

// ------------------------------------------------------------------------------------ sweep

struct SweepRequest {
    std::size_t varyTier = 0;             // 0 the GPU, 1… the offload tiers
    std::vector<double> capacitiesTokens; // ascending
    SampleMode sampling;
};

struct SweepRun {
    // In full: the one-pass sweep. Sampled: at each capacity the mean of the two samples'
    // figures, each sample swept at its scaled capacities (TraceSample::capacity).
    SweepResult sweep;
    TraceSampling sampling;
    // The error bound (sampled; 0 in full) of the any-tier token-weighted hit ratio at each
    // capacity (a share: 0.004 is 0.4 point): the largest difference between the two samples
    // over the grid, or where larger the difference between the first sample swept with the
    // trunk held whole and at the rate alone (the trunk's bias). hitsError is the largest of
    // them; ttftError the samples' largest relative difference of the mean TTFT (`always`).
    std::vector<double> hitsBound;
    double hitsError = 0, ttftError = 0;
};

Result<SweepRun> sweepTrace(const Trace& trace, const CostModel& cost, const ReplayConfig& config,
                            const SweepRequest& request,
                            const std::function<bool(double)>& progress = {});

// --------------------------------------------------------------------------------- capacity

struct CapacityRun {
    // What is reported: both searches on the whole trace, each started from the two samples'
    // answer (CapacityRequest::serversFrom, loadFrom), so the servers equal --exact's and the
    // load held is found to the same precision, in fewer evaluations.
    CapacityResult result;
    TraceSampling sampling;
    std::vector<CapacityResult> samples; // sampled: the two samples' own results
    // The samples' error (sampled): the largest difference between their servers over the
    // rules, and of the load held (relative to the larger; 1 where they disagree on whether a
    // load holds at all).
    int serversError = 0;
    double loadError = 0;
};

Result<CapacityRun> traceCapacityRun(const Trace& trace, const CostModel& cost,
                                     const ReplayConfig& config, const CapacityRequest& request,
                                     const SampleMode& sampling,
                                     const std::function<bool(double)>& progress = {});

} // namespace kvbe
