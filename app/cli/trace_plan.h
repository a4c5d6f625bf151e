// kvbe-cli trace plan (trace_plan_command.cpp): what to buy for a trace. Internal to the CLI.
#pragma once

#include "trace_options.h"

#include "kvbe/plan/plan.h"
#include "kvbe/plan/plan_sample.h"
#include "kvbe/plan/plan_setup.h"

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kvbe::cli {

// The flags that set what a plan tries and holds it to, shared by `trace plan` and `report`
// (report_command.cpp): --life, --slo-p99, --budget, --prices, --dram, --drives, --drive,
// --store-after, --placements, --links, --routers, --threads, --exact, --sample-rate; each parsed
// once as it is read.
struct PlanFlags {
    PlanLimits limits;
    PlanGrid grid = defaultPlanGrid();
    std::optional<PriceTable> prices; // the --prices file, read once
    std::vector<std::string> driveKeys;
    bool placeLocal = true, placePooled = false; // --placements
    std::vector<std::string> links;              // --links
    std::vector<std::string> routers;            // --routers: other routers' GPU-only rows
    int threads = 0;
    SampleFlags sampling; // --exact, --sample-rate
};
void addPlanFlags(CLI::App* sub, PlanFlags& o, FlagErrors& errors);
// The request core checks and sets the plan up from (kvbe/plan/plan_setup.h), and how it samples.
// Fails for --routers without a fleet.
Result<PlanRequest> planRequest(const TraceOptions& o, const PlanFlags& p);
PlanSampleOptions planSampling(const PlanFlags& p);

// Adds `trace plan` to the `trace` command; o holds the options every trace command shares.
void addTracePlanCommand(CLI::App* trace, const std::shared_ptr<TraceOptions>& o, Command& run);

// Adds `trace generate` (trace_generate_command.cpp).
void addTraceGenerateCommand(CLI::App* trace, Command& run);

} // namespace kvbe::cli
