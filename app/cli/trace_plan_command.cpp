// kvbe-cli trace plan: what to buy for a trace (kvbe/plan/plan.h): the grid replayed, the
// Pareto fronts, the recommended configuration, and with --emit the serving stack's settings.
// The plan itself is core's; this reads the flags, loads what every trace command loads
// (trace_options.h) and prints.
#include "trace_plan.h"

#include "commands.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/units.h"
#include "kvbe/plan/plan.h"
#include "kvbe/plan/plan_report.h"
#include "kvbe/plan/plan_setup.h"
#include "kvbe/plan/serving_settings.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

namespace kvbe::cli {
namespace {

// The plan's own flags, each parsed once as it is read (trace_options.h); core checks the
// values (planSetup) and names the field of what is wrong, which flagMessage names as its flag.
struct PlanOptions {
    PlanLimits limits;
    PlanGrid grid = defaultPlanGrid();
    std::optional<PriceTable> prices; // the --prices file, read once
    std::string output = "table", emitFile;
    std::optional<ServingStack> emit;
    std::string emitName;
    std::vector<std::string> driveKeys;
    int threads = 0;
};

// "0,256GiB,1TiB": core's sizes, and 0 for no DRAM tier.
Result<std::vector<double>> parseDramList(const std::string& text) {
    std::vector<double> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');) {
        if (item == "0") {
            out.push_back(0);
            continue;
        }
        auto b = parseBytes(item);
        if (!b) return Error{"'" + item + "': " + b.message() + ", or 0 for no DRAM tier"};
        out.push_back(*b);
    }
    if (out.empty()) return Error{"expected sizes such as 0,256GiB,1TiB"};
    return out;
}

// A list of whole numbers (core's count parser); core checks their range.
Result<std::vector<std::int64_t>> parseCounts(const std::string& text, const char* what) {
    auto v = parseCountList(text, std::int64_t(-1) << 40, std::int64_t(1) << 40);
    if (!v) return Error{"'" + text + "': " + v.message() + " (" + what + ")"};
    return v;
}

void addPlanOptions(CLI::App* plan, PlanOptions& o, FlagErrors& errors) {
    addParsed(
        plan, "--life", o.limits.lifeYears, errors,
        [](const std::string& t) -> Result<double> {
            auto v = parseNumber(t);
            if (!v)
                return Error{"'" + t + "': expected the years the drives must last, more than 0 " +
                             "and at most 100"};
            return *v;
        },
        "Years every drive must last at the trace's write rate, and the horizon over which "
        "savings are weighed against cost (default 5)");
    addParsed(plan, "--slo-p99", o.limits.sloP99S, errors, parseSeconds,
              "The p99 TTFT a configuration must meet, e.g. 2s");
    addParsed(
        plan, "--budget", o.limits.budgetUsd, errors,
        [](const std::string& t) -> Result<double> {
            auto v = parseNumber(t);
            if (!v) return Error{"'" + t + "': expected US dollars, 0 or more, e.g. 20000"};
            return *v;
        },
        "The most a configuration may cost up front, in USD");
    addParsed(plan, "--prices", o.prices, errors, loadPriceTable,
              "A price table (the layout of resources/prices.json; default: its example prices)");
    addParsed(plan, "--dram", o.grid.dramBytes, errors, parseDramList,
              "DRAM sizes to try (default 0,128GiB,...,2TiB; 0: none)");
    plan->add_option_function<std::string>(
        "--drives",
        [&o, &errors](const std::string& t) {
            auto v = parseCounts(t, "drive counts");
            if (!v) return errors.add("--drives " + v.message());
            o.grid.drives = *v;
            o.grid.extendDrives = false; // the counts asked for, and no more
        },
        "Drive counts to try (default 0,1,2,4,8, and more up to what bandwidth and endurance "
        "need; 0: none)");
    plan->add_option("--drive", o.driveKeys,
                     "A drive preset to try (repeat; default: every rated, priced NVMe preset)");
    plan->add_option_function<std::string>(
        "--store-after",
        [&o, &errors](const std::string& t) {
            auto v = parseCounts(t, "sightings; 1 stores every block");
            if (!v) return errors.add("--store-after " + v.message());
            o.grid.storeAfter.clear();
            for (auto k : *v) // core checks the range (checkPlanRequest)
                o.grid.storeAfter.push_back(int(std::clamp<std::int64_t>(k, -1, 1 << 20)));
        },
        "Store-after K values to try (default 1,2,3)");
    plan->add_option("--threads", o.threads, "Replays at once (default: one per hardware thread)")
        ->check(CLI::Range(0, 1024));
    plan->add_option("--output", o.output, "Output format")
        ->check(CLI::IsMember({"table", "json", "csv"}));
    plan->add_option_function<std::string>(
            "--emit",
            [&o](const std::string& t) {
                o.emit = parseServingStack(t);
                o.emitName = t;
            },
            "The serving stack's settings for the recommended configuration, instead of the "
            "report (or into --emit-file)")
        ->check(CLI::IsMember({"vllm", "lmcache", "pykvcache"}));
    plan->add_option("--emit-file", o.emitFile, "Write the --emit settings to this file");
}

ExitCode runTracePlan(const PlanOptions& o, const std::string& file, const Trace& trace,
                      const Evaluation& e, const Presets& presets, const PlanRequest& req) {
    auto setup = planSetup(e, presets, trace, req);
    if (!setup) return fail(flagMessage(setup.error()));
    auto plan = planTrace(*setup);
    if (!plan) return fail(flagMessage(plan.error()));
    const PlanReport report{&trace, file, e.scenario.name, &*setup, &*plan};
    if (o.emit) {
        if (!plan->recommended) return fail("--emit " + o.emitName + ": " + plan->unmet);
        auto text = servingSettings(*o.emit, plan->points[*plan->recommended], *setup, e, presets,
                                    trace.summary.blockTokens, trace.distinctBlocks);
        if (!text) return fail("--emit " + o.emitName + ": " + text.message());
        if (o.emitFile.empty()) {
            std::cout << *text;
            return ExitCode::Ok;
        }
        if (auto w = writeFileAtomically(o.emitFile, *text); !w)
            return fail("--emit-file: " + w.message());
    }
    if (o.output == "json")
        std::cout << dumpJson(planJson(report), 2) << "\n";
    else if (o.output == "csv")
        std::cout << planCsv(report);
    else
        std::cout << planTable(report);
    return ExitCode::Ok;
}

ExitCode runPlan(const TraceOptions& o, const PlanOptions& p) {
    if (!o.errors.first.empty()) return fail(o.errors.first);
    if (!p.emitFile.empty() && !p.emit)
        return fail("--emit-file: give --emit vllm, lmcache or pykvcache too");
    PlanRequest req;
    req.replay = o.replay;
    req.limits = p.limits;
    req.grid = p.grid;
    req.prices = p.prices;
    req.drives = p.driveKeys;
    req.rule = o.admission;
    req.threads = p.threads;
    // The limits and the grid are checked before the trace is read.
    if (auto ok = checkPlanRequest(req); !ok) return fail(flagMessage(ok.error()));
    auto ro = readOptions(o);
    if (!ro) return fail(ro.message());
    auto loaded = loadAll(o, o.scenario, *ro);
    if (!loaded) return fail(loaded.message());
    if (!loaded->trace.summary.hasBlocks())
        return fail(o.file + ": a " + std::string(toString(loaded->trace.summary.format)) +
                    " trace has no block ids, so there is nothing to plan a cache for");
    applyLoadOptions(o, loaded->trace);
    // The scenario's --tier capacities are the plan's to choose: the request does not carry them.
    return runTracePlan(p, o.file, loaded->trace, loaded->setup.eval, loaded->setup.presets, req);
}

} // namespace

void addTracePlanCommand(CLI::App* trace, const std::shared_ptr<TraceOptions>& o, Command& run) {
    auto* plan = trace->add_subcommand(
        "plan", "What to buy: DRAM, drives and store-after K against cost, TTFT and drive life");
    auto p = std::make_shared<PlanOptions>();
    addCommon(plan, *o);
    addCapacityOptions(plan, *o);
    addWriteBufferOption(plan, *o, "As for trace replay (default 8GiB)");
    addWriteQueueFlag(plan, *o, "Writes always keep up");
    addLoadOptions(plan, *o);
    addInstancesOption(plan, *o, "Prefill servers (default 0: no queueing)");
    addAdmissionOption(plan, *o, "The rule the plan's TTFT is taken under");
    addPlanOptions(plan, *p, o->errors);
    plan->callback([o, p, &run] { run = [o, p] { return runPlan(*o, *p); }; });
}

} // namespace kvbe::cli
