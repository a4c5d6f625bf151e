// The scenario flags, the one place they are read, for every command that evaluates a scenario
// (kvbe-cli calc, trace inspect|replay|sweep, published compare|fit, probe serving): --scenario
// FILE (or the default scenario), then each flag given overrides that field of it. The table
// of flags (scenarioFlagSpecs) is what kvbe-cli registers (app/cli/scenario_flags.h) and what
// the probe catalog lists for probe serving, so a flag is named and explained once.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/base/units.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

// The flags as typed; empty: not given.
struct ScenarioFlags {
    std::string scenario, model, gpu, peak, util, flops, kvDtype, stateDtype, weights, params, tp;
    bool sharedPath = false;
    std::vector<std::string> tiers;         // kvbe/scenario/tier_flags.h
    std::vector<std::string> amplification; // AMP or NAME=AMP
};

// One scenario flag: its name, its help line, the values it takes (empty: any), and the field
// of ScenarioFlags it fills (a text, a repeatable list, or an on/off flag).
struct ScenarioFlagSpec {
    std::string_view flag;
    std::string_view help;
    std::vector<std::string_view> choices;
    std::string ScenarioFlags::*text = nullptr;
    std::vector<std::string> ScenarioFlags::*list = nullptr;
    bool ScenarioFlags::*on = nullptr;
};
// Every scenario flag, --scenario first.
const std::vector<ScenarioFlagSpec>& scenarioFlagSpecs();

// The scenario the flags describe, with the presets it was read with and the capacity each
// tier's --tier flag gave (none: no capacity named, which a replay reads as unlimited).
struct FlaggedScenario {
    Presets presets;
    Scenario scenario;
    std::vector<std::optional<Capacity>> capacities; // one per scenario tier
    // "FILE: " where --scenario named a file, for messages about what came from it; else "".
    std::string where;
};
// Where flags changed the scenario, its name says so: "Llama 3.2 3B on an H100 SXM (--gpu h200)".
Result<FlaggedScenario> scenarioFromFlags(const ScenarioFlags& flags);

// The flags given, as a command line ("--scenario s.kvbe.json --gpu h200"), for provenance.
std::string scenarioFlagsCommandLine(const ScenarioFlags& flags);

} // namespace kvbe
