// kvbe-cli trace plan: the plan's own options and its run, given what every trace command
// loads (the trace, the scenario's evaluation, the replay's configuration). Internal to the CLI.
#pragma once

#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace kvbe::cli {

struct PlanOptions {
    double lifeYears = 5;
    std::string sloP99, budget, prices, output = "table", emit, emitFile;
    std::string dram, drives, storeAfter = "1,2,3";
    std::vector<std::string> driveKeys;
    int threads = 0;
};

void addPlanOptions(CLI::App* plan, PlanOptions& o);
// The flags that need no trace, checked first: a bad one writes nothing.
Status checkPlanOptions(const PlanOptions& o);
int runTracePlan(const PlanOptions& o, const std::string& file, const Trace& trace,
                 const Evaluation& e, const Presets& presets, const ReplayConfig& base,
                 Admission rule);

} // namespace kvbe::cli
