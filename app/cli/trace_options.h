// The options of `kvbe-cli trace` and what they load, shared by trace inspect|replay|sweep
// (trace_command.cpp) and trace capacity (trace_capacity_command.cpp).
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kvbe::cli {

struct TraceOptions {
    std::string file, format = "auto", timeUnit, scenario, output = "table";
    std::uint32_t blockTokens = 0;
    bool skipBad = false;
    // replay, sweep and capacity
    std::string gpuCache, policy = "lru", placement = "write-through", admission = "optimal";
    std::vector<std::string> tiers; // NAME=CAPACITY
    // replay and capacity
    std::vector<std::string> tierWrites;  // NAME=GB/s
    std::vector<std::string> sharedLinks; // NAME: reads and writes share one link
    std::string writeBuffer;
    bool noWriteQueue = false;
    int instances = 0;
    std::string rateScale, durationCap; // the load: arrivals divided by S; the trace's prefix
    int storeAfter = 1;                 // replay and sweep: store admission at the K-th sighting
    // sweep
    std::string vary, capacities = "1e4:1e9";
    int points = 40;
    bool singleCache = false;
    // capacity
    std::string slo, servers; // --instances, read by capacity itself (N < 1 is a sentence)
    std::string maxInstances = "1024";
};

Result<TraceReadOptions> readOptions(const TraceOptions& o);

struct Setup {
    Evaluation eval;
    std::vector<TierConfig> tierConfigs;
    std::vector<double> writeBps;
};

// What every trace command reads: the presets, the scenario's evaluation and the trace (its
// skipped lines reported), each failure a sentence.
struct Loaded {
    Presets presets;
    Setup setup;
    Trace trace;
};
Result<Loaded> loadAll(const TraceOptions& o, const TraceReadOptions& ro);

// The tiers of the replay: those named by --tier (in the scenario's order), or all of the
// scenario's tiers with unlimited capacity when none is named; the policy, placement, write
// queues and servers as the options say.
Result<ReplayConfig> replayConfig(const TraceOptions& o, const Setup& s, double blockTokens);

// The trace file and how to read it, and --scenario.
void addCommon(CLI::App* sub, TraceOptions& o);
// --gpu-cache, --policy, --placement.
void addCapacityOptions(CLI::App* sub, TraceOptions& o);
// --tier, --tier-write, --write-buffer, --shared-link, --no-write-queue.
void addReplayTierOptions(CLI::App* sub, TraceOptions& o);

// --rate-scale and --duration-cap (trace_capacity_command.cpp).
void addLoadOptions(CLI::App* sub, TraceOptions& o);
// Takes the prefix --duration-cap names and sets the config's rate scale from --rate-scale.
Status applyLoadOptions(const TraceOptions& o, Trace& trace, ReplayConfig& config);

// Adds `trace capacity` to the `trace` command.
void addTraceCapacityCommand(CLI::App* trace, const std::shared_ptr<TraceOptions>& o,
                             std::function<int()>& run);

} // namespace kvbe::cli
