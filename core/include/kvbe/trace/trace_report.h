// The `kvbe-cli trace` reports: inspect, replay and sweep results as JSON (the scripting
// contract), CSV and a table for people. The CLI reads the options and runs the replay; these
// only lay out what it found.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sampled.h"
#include "kvbe/trace/trace_sim.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kvbe {

// trace inspect: lengths and arrivals, the hit ratios with unlimited capacity (where the trace
// has block ids) and, per scenario tier, its p* and the share of requests at or above it.
struct TraceInspectReport {
    const Trace* trace = nullptr;
    std::string file;
    std::string scenario;
    double durationS = 0; // the last arrival
    double inputMean = 0, inputP50 = 0, inputP90 = 0, inputP99 = 0, inputMax = 0;
    double outputMean = 0;
    std::optional<ReplayResult> unlimited; // one replay with every capacity unlimited
    struct Tier {
        std::string name;
        std::optional<double> pStar;
        double shareAtOrAbove = 0; // of requests with input_length >= p*
    };
    std::vector<Tier> tiers;
};

Result<TraceInspectReport> makeTraceInspectReport(const Trace& trace, const std::string& file,
                                                  const Evaluation& eval);
nlohmann::json traceInspectJson(const TraceInspectReport& r);
std::string traceInspectTable(const TraceInspectReport& r);

// trace replay: the replay's result and what it ran with; where writes fell behind, the same
// replay with writes that always keep up (what the backlog cost).
struct TraceReplayReport {
    const Trace* trace = nullptr;
    std::string file;
    std::string scenario;
    const ReplayConfig* config = nullptr;
    Admission admission = Admission::Optimal; // the rule the summary sentence reports
    const ReplayResult* result = nullptr;
    const ReplayResult* writesKeptUp = nullptr; // null when no write fell behind
    bool queued = false;                        // some tier's writes went through a write queue
    // With store admission (config->storeAfter > 1): the same replay storing every block.
    const ReplayResult* storeAll = nullptr;
};

// Each offload tier carries its writes (offered and stored), its drives' endurance
// (kvbe/trace/trace_endurance.h: drive_writes_per_day and years_to_rated_endurance, null for DRAM
// and tiers without a rating) and, with store admission, the hits it gives up against storing
// every block.
nlohmann::json traceReplayJson(const TraceReplayReport& r);
std::string traceReplayCsv(const TraceReplayReport& r);
// The tiers, the write queues, the rules and the one-sentence answer.
std::string traceReplayTable(const TraceReplayReport& r);

// trace sweep: hit ratios and mean TTFT at every capacity of the swept tier.
struct TraceSweepReport {
    const Trace* trace = nullptr;
    std::string file;
    std::string scenario;
    const ReplayConfig* config = nullptr; // the fixed tiers (and the swept one)
    bool singleCache = false;
    const SweepResult* sweep = nullptr;
    // Which mode ran, its rate and error bound (kvbe/trace/trace_sampled.h); null: not said.
    const SweepRun* run = nullptr;
};

nlohmann::json traceSweepJson(const TraceSweepReport& r);
std::string traceSweepCsv(const TraceSweepReport& r);
std::string traceSweepTable(const TraceSweepReport& r);

} // namespace kvbe
