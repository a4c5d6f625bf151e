// kvbe-cli trace inspect|replay|sweep (and capacity, trace_capacity_command.cpp): a request trace
// through the scenario's tiered prefix cache.
#include "commands.h"
#include "trace_options.h"
#include "trace_plan.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/units.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/fleet_report.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_report.h"
#include "kvbe/trace/trace_run.h"
#include "kvbe/trace/trace_sampled.h"
#include "kvbe/trace/trace_setup.h"
#include "kvbe/trace/trace_sim.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>

namespace kvbe::cli {

// ------------------------------------------------------------------------------- inspect

namespace {

ExitCode runInspect(const TraceOptions& o) {
    if (!o.errors.first.empty()) return fail(o.errors.first);
    auto ro = readOptions(o);
    if (!ro) return fail(ro.message());
    auto loaded = loadAll(o, o.scenario, *ro);
    if (!loaded) return fail(loaded.message());
    auto report = makeTraceInspectReport(loaded->trace, o.file, loaded->setup.eval);
    if (!report) return fail(report.message());
    if (o.output == "json")
        std::cout << dumpJson(traceInspectJson(*report), 2) << "\n";
    else
        std::cout << traceInspectTable(*report);
    return ExitCode::Ok;
}

// ------------------------------------------------------------------------------- replay

// --router compare: every router on the same fleet, one table.
ExitCode runRouterCompare(const TraceOptions& o, const Setup& setup, Trace& trace) {
    if (o.replay.instances < 2)
        return fail("--router compare: expected a fleet to route to, --servers 2 or more");
    TraceOptions fleet = o;
    fleet.replay.router.clear();
    fleet.replay.fleet = true;
    auto cfg = replayConfig(fleet, setup, trace.summary.blockTokens);
    if (!cfg) return fail(cfg.message());
    applyLoadOptions(o, trace);
    const std::string rule(toString(o.admission));
    auto runs = compareRouters(trace, setup.eval.cost, *cfg, rule);
    if (!runs) return fail(runs.message());
    if (o.output == "json")
        std::cout << dumpJson(routerCompareJson(*cfg, *runs, rule), 2) << "\n";
    else
        std::cout << routerCompareTable(*cfg, *runs, rule);
    return ExitCode::Ok;
}

ExitCode runReplay(const TraceOptions& o) {
    if (!o.errors.first.empty()) return fail(o.errors.first);
    if (o.asRouted && o.compareDir.empty())
        return fail("--as-routed: it replays a live run's routing; give --compare DIR too");
    auto ro = readOptions(o);
    if (!ro) return fail(ro.message());
    auto loaded = loadAll(o, o.scenario, *ro);
    if (!loaded) return fail(loaded.message());
    const Setup* setup = &loaded->setup;
    const Trace* trace = &loaded->trace;
    if (!trace->summary.hasBlocks())
        return fail(
            o.file + ": a " + std::string(toString(trace->summary.format)) +
            " trace has no block ids, so it cannot be replayed; use trace inspect for its lengths");
    std::optional<Setup> fitted;
    if (!o.calibration.empty()) {
        auto f = adoptCalibration(o.calibration, *setup);
        if (!f) return fail(f.message());
        fitted = std::move(*f);
        setup = &*fitted;
    }
    if (!o.compareDir.empty()) return runLiveCompare(o, *setup, loaded->trace);
    if (o.replay.router == "compare") return runRouterCompare(o, *setup, loaded->trace);
    TraceOptions fleet = o; // servers above one are a fleet, a GPU cache each
    fleet.replay.fleet = true;
    auto cfg = replayConfig(fleet, *setup, trace->summary.blockTokens);
    if (!cfg) return fail(cfg.message());
    if (auto st = applyEngine(o.engine, *cfg); !st) return fail(st.message());
    applyLoadOptions(o, loaded->trace);
    // With the replays it is compared with: storing every block (with --store-after), writes
    // that keep up (where they fell behind).
    auto run = runReplay(*trace, setup->eval.cost, *cfg);
    if (!run) return fail(run.message());
    bool queued = false;
    for (const auto& t : cfg->tiers)
        queued = queued || (cfg->writeQueue && t.writeBps > 0);

    const TraceReplayReport report{trace,
                                   o.file,
                                   setup->eval.scenario.name,
                                   &*cfg,
                                   o.admission,
                                   &run->result,
                                   run->writesKeptUp ? &*run->writesKeptUp : nullptr,
                                   queued,
                                   run->storeAll ? &*run->storeAll : nullptr};
    if (o.output == "json")
        std::cout << dumpJson(traceReplayJson(report), 2) << "\n";
    else if (o.output == "csv")
        std::cout << traceReplayCsv(report);
    else
        std::cout << traceReplayTable(report);
    return ExitCode::Ok;
}

// ------------------------------------------------------------------------------- sweep

// "1e4:1e9", "10k:1m": the sweep's LOW:HIGH in tokens.
Result<std::pair<double, double>> parseGridBounds(const std::string& text) {
    const auto colon = text.find(':');
    if (colon == std::string::npos)
        return Error{"'" + text + "': expected LOW:HIGH in tokens, e.g. 1e4:1e9"};
    auto lo = parseTokens(text.substr(0, colon)), hi = parseTokens(text.substr(colon + 1));
    if (!lo || !hi || !(*hi >= *lo))
        return Error{"'" + text +
                     "': expected LOW:HIGH in tokens with 1 <= LOW <= HIGH, e.g. 1e4:1e9 or "
                     "10k:1m"};
    return std::pair{*lo, *hi};
}

ExitCode runSweep(const TraceOptions& o) {
    if (!o.errors.first.empty()) return fail(o.errors.first);
    auto ro = readOptions(o);
    if (!ro) return fail(ro.message());
    if (o.points < 1 || o.points > 1000)
        return fail("--points " + std::to_string(o.points) + ": expected 1 to 1000");
    const auto grid = logGrid(o.capacities.first, o.capacities.second, o.points);
    // The sweep's tiers: those --tier and --with name. The one named without a capacity is
    // swept (--tier gpu sweeps the GPU's); the others keep theirs.
    ScenarioFlags flags = o.scenario;
    const bool gpu = std::erase(flags.tiers, std::string("gpu")) > 0;
    flags.tiers.insert(flags.tiers.end(), o.with.begin(), o.with.end());
    if (!o.singleCache && !gpu && flags.tiers.empty())
        return fail("--tier: name the tier to sweep (gpu, or one of the scenario's), or give "
                    "--single-cache");
    auto loaded = loadAll(o, flags, *ro);
    if (!loaded) return fail(loaded.message());
    const Setup* setup = &loaded->setup;
    const Trace* trace = &loaded->trace;
    if (!trace->summary.hasBlocks())
        return fail(o.file + ": a " + std::string(toString(trace->summary.format)) +
                    " trace has no block ids, so it has no capacity curve");
    TraceOptions fleet = o; // servers above one are a fleet, swept a replay at each capacity
    fleet.replay.fleet = true;
    auto cfg = replayConfig(fleet, *setup, trace->summary.blockTokens);
    if (!cfg) return fail(cfg.message());
    if (cfg->storeAfter > 1)
        return fail("--store-after " + std::to_string(cfg->storeAfter) +
                    ": the one-pass sweep is exact only when every block is stored (a block's "
                    "place in each tier then follows from its LRU stack distance); replay each "
                    "capacity with trace replay --store-after instead");
    if (o.singleCache || flags.tiers.empty()) cfg->tiers.clear();
    std::size_t vary = 0;
    if (!o.singleCache && !gpu) {
        for (std::size_t k = 0; k < cfg->tiers.size(); ++k) {
            if (setup->capacities[k]) continue;
            if (vary)
                return fail("--tier: " + cfg->tiers[vary - 1].name + " and " + cfg->tiers[k].name +
                            " have no capacity; name one tier to sweep and give the others one "
                            "(NAME=CAPACITY, or --with)");
            vary = k + 1;
        }
        if (!vary)
            return fail("--tier: every tier named has a capacity; name the one to sweep without "
                        "one (or gpu)");
    }
    const SweepRequest request{vary, grid, sampleMode(o.sampling)};
    auto s = sweepTrace(*trace, setup->eval.cost, *cfg, request);
    if (!s) return fail(s.message());

    const TraceSweepReport report{
        trace, o.file, setup->eval.scenario.name, &*cfg, o.singleCache, &s->sweep, &*s};
    if (o.output == "json")
        std::cout << dumpJson(traceSweepJson(report), 2) << "\n";
    else if (o.output == "csv")
        std::cout << traceSweepCsv(report);
    else
        std::cout << traceSweepTable(report);
    return ExitCode::Ok;
}

} // namespace

void addTraceCommands(CLI::App& app, Command& run) {
    auto* trace = app.add_subcommand(
        "trace", "Replay a request trace through the scenario's tiered prefix cache");
    trace->require_subcommand(1);
    auto o = std::make_shared<TraceOptions>();

    auto* inspect = trace->add_subcommand(
        "inspect",
        "Format, requests, lengths, unlimited-capacity hits, share above each tier's p*");
    addCommon(inspect, *o);
    inspect->add_option("--output", o->output, "Output format")
        ->check(CLI::IsMember({"table", "json"}));
    inspect->callback([o, &run] { run = [o] { return runInspect(*o); }; });

    auto* replay = trace->add_subcommand(
        "replay", "Hits per tier, TTFT under each admission rule, GPU time saved, writes");
    addCommon(replay, *o);
    addCapacityOptions(replay, *o);
    addReplayTierOptions(replay, *o);
    addLoadOptions(replay, *o);
    addInstancesOption(replay, *o,
                       "Prefill servers, each first come first served (default 0: no queueing); "
                       "above 1 a fleet, each server with its own GPU cache, behind --router");
    addFleetOptions(replay, *o);
    addStoreAfterOption(replay, *o,
                        "K: write a block to the offload tiers at its K-th sighting (default 1: "
                        "every block)");
    addAdmissionOption(replay, *o, "The rule the summary sentence reports");
    replay->add_option("--output", o->output, "Output format")
        ->check(CLI::IsMember({"table", "json", "csv"}));
    replay->add_option("--calibration", o->calibration,
                       "FILE: a calibration (probe serving's calibration.json) whose fit the "
                       "scenario adopts: utilisation, overhead, each tier's bandwidth and t_fixed");
    replay->add_option("--engine", o->engine,
                       "llama.cpp[:cache_ram=SIZE,similarity=F]: each server is llama-server "
                       "with one slot (its last prompt, the GPU tier) and a host-RAM prompt cache "
                       "of whole prompts (--cache-ram; read as the first offload tier)");
    replay->add_flag("--as-routed", o->asRouted,
                     "With --compare: replay each request on the server the live run sent it to, "
                     "not where the model's router would send it, so that the error left is the "
                     "servers' and the caches'");
    replay->add_option("--compare", o->compareDir,
                       "DIR: the prediction beside a live replay probe replay --out DIR wrote (the "
                       "same requests, servers, router and load; rule always unless --admission)");
    replay->footer(
        "\nWithout --tier the replay has every tier of the scenario, unlimited. --tier names "
        "the tiers it has instead: KEY=CAPACITY a tier of the scenario (by name or "
        "preset key) or a tier preset the scenario lacks; NAME=GBPS[@FIXED_MS][×AMP]"
        "[:CAPACITY] a custom tier. A tier named without a capacity is unlimited.");
    replay->callback([o, &run] { run = [o] { return runReplay(*o); }; });

    auto* sweep = trace->add_subcommand(
        "sweep", "Hit ratio and TTFT saved against one tier's capacity, in one pass (LRU)");
    addCommon(sweep, *o);
    addCapacityOptions(sweep, *o);
    sweep->add_option("--with", o->with,
                      "NAME=CAPACITY of another tier kept fixed, as --tier gives it (repeat)");

    sweep->add_flag("--single-cache", o->singleCache,
                    "One cache level (the GPU): the classic hit-ratio curve");
    addParsed(sweep, "--capacities", o->capacities, o->errors, parseGridBounds,
              "LOW:HIGH in tokens, log grid (default 1e4:1e9)");
    sweep->add_option("--points", o->points, "Grid points (default 40)");
    addInstancesOption(sweep, *o,
                       "Above 1: a fleet, each server with its own GPU cache behind --router, "
                       "swept a replay at each capacity (the swept tier's capacity is each "
                       "server's, each node's, or the pool's)");
    addFleetOptions(sweep, *o);
    addStoreAfterOption(sweep, *o,
                        "Only 1: the one-pass sweep is exact only when every block is stored");
    addSampleFlags(sweep, o->sampling,
                   "Sweep every request (the default at every size: the one pass costs about "
                   "what reading the trace does)",
                   "swept");
    sweep->get_option("--sample-rate")
        ->description("Sweep two samples keeping this share of prefix subtrees instead, their "
                      "mean with a bound per capacity (default: every request; see "
                      "docs/workload-model.md, \"Sweeps and capacity from a sample\")");
    sweep->add_option("--output", o->output, "Output format")
        ->check(CLI::IsMember({"table", "json", "csv"}));
    sweep->footer(
        "\nThe tier --tier names without a capacity is swept (--tier gpu: the GPU's cache); "
        "the tiers named with one (--tier or --with NAME=CAPACITY) stay as they are.");
    sweep->callback([o, &run] { run = [o] { return runSweep(*o); }; });

    addTraceCapacityCommand(trace, o, run);
    addTracePlanCommand(trace, o, run);
    addTraceGenerateCommand(trace, run);
}

} // namespace kvbe::cli
