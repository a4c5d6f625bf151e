// Saturation of a replay's tiers in figures and words (docs/workload-model.md, "Saturation"): per
// offload tier the reads its hits ask against its bandwidth, the busy share of its links under a
// rule, the hits the rule served and those it declined for the backlog; one sentence that says
// when a tier is the bottleneck and what its bandwidth can carry. For `trace replay`, the plan
// and the Workload view alike.
#pragma once

#include "kvbe/trace/trace_sim.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

struct TierSaturation {
    std::string name;
    double readBps = 0;          // the tier's read bandwidth
    double askedMeanBps = 0;     // the reads its hits ask, over the trace
    double askedPeakBps = 0;     // ... in the busiest bin (a minute)
    std::uint64_t binsOver = 0;  // bins asking more than readBps
    std::uint64_t bins = 0;      // bins of the trace
    double binsOverShare = 0;    // binsOver / bins
    double carriedMeanShare = 1; // the share of the asked reads the bandwidth can carry
    double carriedPeakShare = 1; // ... in the busiest bin
    double servedShare = 0;      // hit tokens the rule loaded / those offered (1: none offered)
    std::optional<double> readBusyMean, readBusyPeak;   // the rule's reads (with prefill servers)
    std::optional<double> writeBusyMean, writeBusyPeak; // its writes (with a write bandwidth)
    std::uint64_t writesDropped = 0;
    std::uint64_t blocksDeclinedForBacklog = 0, requestsDeclinedForBacklog = 0;
    // Some bin asks more reads than it can carry, or the rule declined hits for the backlog.
    bool saturated = false;
    // The whole multiple of its bandwidth that carries the busiest bin (1: it does already).
    int bandwidthMultiple = 1;
};

// Per offload tier of r (the GPU left out), under rule (none, gpu-only, always, breakeven,
// optimal).
std::vector<TierSaturation> tierSaturation(const ReplayResult& r, std::string_view rule);

// "nvme is saturated in 38 % of the minutes: its hits ask up to 19.1 GB/s of reads (13.7 GB/s on
// average) from 14 GB/s, …". `queued`: the replay had prefill servers (without them loads are
// not queued, and the sentence says so). `drives[k]`: offload tier k is built of drives (the
// remedy named is another drive rather than more bandwidth). Empty without offload tiers.
std::string saturationSentence(const ReplayResult& r, std::string_view rule, bool queued,
                               const std::vector<bool>& drives = {});

} // namespace kvbe
