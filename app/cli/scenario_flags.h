// The scenario flags, read in one place and taken by every command that evaluates a scenario
// (calc, trace inspect|replay|sweep, published compare|fit, probe serving): --scenario FILE (or
// the default scenario), then each flag given overrides that field of it.
#pragma once

#include "tier_flags.h"

#include "kvbe/base/result.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kvbe::cli {

struct ScenarioFlags {
    std::string scenario, model, gpu, peak, util, flops, kvDtype, stateDtype, params;
    int tp = 0;
    bool sharedPath = false;
    std::vector<std::string> tiers;         // tier_flags.h
    std::vector<std::string> amplification; // AMP or NAME=AMP
};

// Adds --scenario, --model, --gpu, --peak-tflops, --util, --flops, --kv-dtype, --state-dtype,
// --params, --tp, --shared-path, --tier and --amplification to a subcommand. Without withModel
// there is no --model (probe serving's --model is the served model's name, and sets the model
// itself).
void addScenarioFlags(CLI::App* sub, ScenarioFlags& flags, bool withModel = true);

// The scenario the flags describe, with the presets it was read with and the capacity each
// tier's --tier flag gave.
struct FlaggedScenario {
    Presets presets;
    Scenario scenario;
    std::vector<std::optional<Capacity>> capacities; // one per scenario tier
    // "FILE: " where --scenario named a file, for messages about what came from it; else "".
    std::string where;
};
Result<FlaggedScenario> scenarioFromFlags(const ScenarioFlags& flags);

// The flags given, as a command line ("--scenario s.kvbe.json --gpu h200"), for provenance.
std::string scenarioFlagsCommandLine(const ScenarioFlags& flags);

} // namespace kvbe::cli
