// The options of `kvbe-cli trace` and what they load, shared by trace inspect|replay|sweep
// (trace_command.cpp), trace capacity (trace_capacity_command.cpp) and trace plan; defined in
// trace_options.cpp.
#pragma once

#include "commands.h"
#include "scenario_flags.h"

#include "kvbe/base/result.h"
#include "kvbe/base/units.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kvbe::cli {

struct TraceOptions {
    std::string file, format = "auto", timeUnit, output = "table";
    ScenarioFlags scenario; // its --tier flags pick the replay's tiers and their capacities
    std::uint32_t blockTokens = 0;
    bool skipBad = false;
    // replay, sweep and capacity
    std::string gpuCache, policy = "lru", placement = "write-through", admission = "optimal";
    // replay and capacity
    std::vector<std::string> tierWrites;  // NAME=GB/s
    std::vector<std::string> sharedLinks; // NAME: reads and writes share one link
    std::string writeBuffer;
    bool noWriteQueue = false;
    int instances = 0;
    std::string rateScale, durationCap; // the load: arrivals divided by S; the trace's prefix
    std::string storeAfter = "1";       // replay and sweep: store admission at the K-th sighting
    // sweep
    std::vector<std::string> with; // tiers kept fixed: more --tier flags
    std::string capacities = "1e4:1e9";
    int points = 40;
    bool singleCache = false;
    // capacity
    std::string slo, servers; // --instances, read by capacity itself (N < 1 is a sentence)
    std::string maxInstances = "1024";
};

Result<TraceReadOptions> readOptions(const TraceOptions& o);

// The scenario evaluated, the capacity each of its tiers was given (none: unlimited), and the
// presets it was read with.
struct Setup {
    Evaluation eval;
    std::vector<std::optional<Capacity>> capacities;
    Presets presets;
};

// What every trace command reads: the scenario's evaluation and the trace (its skipped lines
// reported), each failure a sentence.
struct Loaded {
    Setup setup;
    Trace trace;
};
Result<Loaded> loadAll(const TraceOptions& o, const ScenarioFlags& flags,
                       const TraceReadOptions& ro);

// The replay's tiers: the scenario's (after its --tier flags), each with the capacity its flag
// gave, unlimited where none; the policy, placement, write queues and servers as the options say.
Result<ReplayConfig> replayConfig(const TraceOptions& o, const Setup& s, double blockTokens);

// The trace file and how to read it, and the scenario flags.
void addCommon(CLI::App* sub, TraceOptions& o);
// --gpu-cache, --policy, --placement.
void addCapacityOptions(CLI::App* sub, TraceOptions& o);
// --tier-write, --write-buffer, --shared-link, --no-write-queue.
void addReplayTierOptions(CLI::App* sub, TraceOptions& o);

// --rate-scale and --duration-cap.
void addLoadOptions(CLI::App* sub, TraceOptions& o);
// Takes the prefix --duration-cap names and sets the config's rate scale from --rate-scale.
Status applyLoadOptions(const TraceOptions& o, Trace& trace, ReplayConfig& config);

// Adds `trace capacity` to the `trace` command.
void addTraceCapacityCommand(CLI::App* trace, const std::shared_ptr<TraceOptions>& o, Command& run);

} // namespace kvbe::cli
