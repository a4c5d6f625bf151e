// The options of `kvbe-cli trace` and what they load, shared by trace inspect|replay|sweep
// (trace_command.cpp), trace capacity (trace_capacity_command.cpp) and trace plan; defined in
// trace_options.cpp.
#pragma once

#include "commands.h"
#include "scenario_flags.h"

#include "kvbe/base/result.h"
#include "kvbe/base/units.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/fleet.h"
#include "kvbe/trace/replay_request.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_capacity.h"
#include "kvbe/trace/trace_sample.h"
#include "kvbe/trace/trace_sim.h"

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvbe::cli {

// The first flag whose value did not parse, as a sentence naming the flag. Each value is parsed
// once, as the flags are read, into its typed field (core's parsers, kvbe/base/units.h); the
// command reports this when it runs (exit 1, as every bad value).
struct FlagErrors {
    std::string first;
    void add(std::string message) {
        if (first.empty()) first = std::move(message);
    }
};

// A flag whose text `parse` turns into `into` (a Result<T>); a failure is `flag` and the
// parser's sentence.
template <class T, class Parse>
CLI::Option* addParsed(CLI::App* sub, const std::string& flag, T& into, FlagErrors& errors,
                       Parse parse, const std::string& help) {
    return sub->add_option_function<std::string>(
        flag,
        [flag, &into, &errors, parse](const std::string& text) {
            auto v = parse(text);
            if (!v)
                errors.add(flag + " " + v.message());
            else
                into = std::move(*v);
        },
        help);
}

// --exact and --sample-rate: how trace plan, sweep and capacity answer a large trace (the same
// SampleMode defaults, kvbe/trace/trace_sample.h).
struct SampleFlags {
    bool exact = false;
    double sampleRate = 0; // 0: the default rate
};
// `exactHelp` says what --exact does for the command; `answered` what happens to a small trace
// ("planned", "swept").
void addSampleFlags(CLI::App* sub, SampleFlags& f, const std::string& exactHelp,
                    const std::string& answered);
// --sample-rate given: sampled whatever the trace's size.
SampleMode sampleMode(const SampleFlags& f);

struct TraceOptions {
    std::string file, format = "auto", timeUnit, output = "table";
    ScenarioFlags scenario; // its --tier flags pick the replay's tiers and their capacities
    std::uint32_t blockTokens = 0;
    bool skipBad = false;
    FlagErrors errors;
    // replay, sweep, capacity and plan: the request core assembles the replay from
    // (kvbe/trace/replay_request.h); the tier capacities come from the scenario's --tier flags.
    ReplayRequest replay;
    Admission admission = Admission::Optimal;
    bool admissionGiven = false;
    std::string compareDir;  // replay --compare: a probe replay's folder
    bool asRouted = false;   // replay --as-routed: each request where the live run sent it
    std::string calibration; // replay --calibration: a calibration whose fit the scenario adopts
    std::string engine;      // replay --engine: llama.cpp[:cache_ram=SIZE,similarity=F]
    std::optional<double> durationCapS; // the trace's prefix
    // sweep
    std::vector<std::string> with;                  // tiers kept fixed: more --tier flags
    std::pair<double, double> capacities{1e4, 1e9}; // LOW:HIGH in tokens
    int points = 40;
    bool singleCache = false;
    // capacity
    std::optional<LatencyTarget> slo;
    std::optional<int> servers; // --instances, read by capacity itself (N < 1 is a sentence)
    int maxInstances = 1024;
    // sweep and capacity
    SampleFlags sampling;
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

// The replay core assembles from the options' request (kvbe/trace/replay_request.h) and the
// scenario's tiers (after its --tier flags), each with the capacity its flag gave; a failure
// names the flag of the field it is about.
Result<ReplayConfig> replayConfig(const TraceOptions& o, const Setup& s, double blockTokens);

// trace replay --calibration FILE (trace_compare.cpp): the setup with the file's fit adopted
// (utilisation, overhead, each tier's bandwidth and fixed cost), as calibration fit --adopt.
Result<Setup> adoptCalibration(const std::string& file, const Setup& setup);
// trace replay --engine (trace_compare.cpp): llama.cpp's servers in the config; "" leaves it.
Status applyEngine(const std::string& engine, ReplayConfig& config);
// trace replay --compare DIR (trace_compare.cpp): the prediction beside a live replay.
ExitCode runLiveCompare(const TraceOptions& o, const Setup& setup, const Trace& loaded);

// The flag of a request's field: --gpu-cache, --store-after, --life…; "" for none.
std::string flagOf(RequestField field);
// A core failure as the CLI says it: the field's flag, then the sentence.
std::string flagMessage(const RequestError& e);

// The trace file and how to read it, and the scenario flags.
void addCommon(CLI::App* sub, TraceOptions& o);
// --gpu-cache, --policy, --placement.
void addCapacityOptions(CLI::App* sub, TraceOptions& o);
// --tier-write, --write-buffer, --shared-link, --no-write-queue.
void addReplayTierOptions(CLI::App* sub, TraceOptions& o);
// Each one flag of the request, with the command's help text.
void addAdmissionOption(CLI::App* sub, TraceOptions& o, const std::string& help);
void addStoreAfterOption(CLI::App* sub, TraceOptions& o, const std::string& help);
void addWriteBufferOption(CLI::App* sub, TraceOptions& o, const std::string& help);
void addWriteQueueFlag(CLI::App* sub, TraceOptions& o, const std::string& help);
void addInstancesOption(CLI::App* sub, TraceOptions& o, const std::string& help);
// --router, --node-servers, --pooled, --pool-bandwidth: the fleet of trace replay.
void addFleetOptions(CLI::App* sub, TraceOptions& o);
// For a command that takes one router (trace capacity, trace plan): o with its servers a fleet
// where --router names one; fails for --router compare (`oneRouter` says who takes one: "trace
// capacity takes one router") and for --node-servers or --pooled without --router.
Result<TraceOptions> oneRouterFleet(const TraceOptions& o, const std::string& oneRouter);
// A plan's fleet (trace plan, report): oneRouterFleet, and a router needs two servers or more
// to route to.
Result<TraceOptions> plannedFleet(const TraceOptions& o, const std::string& oneRouter);

// --rate-scale and --duration-cap.
void addLoadOptions(CLI::App* sub, TraceOptions& o);
// Takes the prefix --duration-cap names (the rate scale is the request's).
void applyLoadOptions(const TraceOptions& o, Trace& trace);

// Adds `trace capacity` to the `trace` command.
void addTraceCapacityCommand(CLI::App* trace, const std::shared_ptr<TraceOptions>& o, Command& run);

} // namespace kvbe::cli
