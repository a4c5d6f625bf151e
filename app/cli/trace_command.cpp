// kvbe-cli trace inspect|replay|sweep (and capacity, trace_capacity_command.cpp): a request trace
// through the scenario's tiered prefix cache.
#include "commands.h"
#include "trace_options.h"
#include "trace_plan.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/units.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_report.h"
#include "kvbe/trace/trace_run.h"
#include "kvbe/trace/trace_setup.h"
#include "kvbe/trace/trace_sim.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>

namespace kvbe::cli {

Result<TraceReadOptions> readOptions(const TraceOptions& o) {
    TraceReadOptions r;
    auto f = parseTraceFormat(o.format);
    if (!f) return Error{"--format '" + o.format + "': expected " + traceFormatChoices()};
    r.format = *f;
    if (o.blockTokens) r.blockTokens = o.blockTokens;
    if (!o.timeUnit.empty()) {
        if (o.timeUnit == "s")
            r.secondsPerUnit = 1;
        else if (o.timeUnit == "ms")
            r.secondsPerUnit = 1e-3;
        else if (o.timeUnit == "us")
            r.secondsPerUnit = 1e-6;
        else
            return Error{"--time-unit '" + o.timeUnit + "': expected s, ms or us"};
    }
    r.skipBad = o.skipBad;
    return r;
}

namespace {

Result<Setup> loadSetup(const ScenarioFlags& flags) {
    auto f = scenarioFromFlags(flags);
    if (!f) return f.error();
    auto e = evaluate(f->scenario, f->presets);
    if (!e) return Error{f->where + e.message()};
    return Setup{std::move(*e), std::move(f->capacities), std::move(f->presets)};
}

// "40GiB", "8TB", "6000blocks", "3.07e6tokens", "unlimited": core's parseCapacity, in bytes.
Result<double> parseCapacity(const std::string& text, const std::string& what, double blockBytes,
                             double blockTokens) {
    auto c = kvbe::parseCapacity(text);
    if (!c) return Error{what + ": " + c.message()};
    return capacityBytes(*c, blockBytes, blockTokens);
}

} // namespace

Result<ReplayConfig> replayConfig(const TraceOptions& o, const Setup& s, double blockTokens) {
    ReplayConfig c;
    const auto& cost = s.eval.cost;
    // B · kv_bytes_per_token, plus one state snapshot per block for hybrid models.
    c.blockBytes = traceBlockBytes(cost, static_cast<std::uint32_t>(blockTokens));
    auto pol = parseEvictionPolicy(o.policy);
    if (!pol) return Error{"--policy '" + o.policy + "': expected lru or s3fifo"};
    c.policy = *pol;
    auto pl = parsePlacement(o.placement);
    if (!pl) return Error{"--placement '" + o.placement + "': expected write-through or cascade"};
    c.placement = *pl;
    if (!o.gpuCache.empty()) {
        auto g = parseCapacity(o.gpuCache, "--gpu-cache", c.blockBytes, blockTokens);
        if (!g) return g.error();
        c.gpuCapacityBytes = *g;
    } else {
        // vLLM's default: 90 % of HBM, less the weights, on each tensor-parallel GPU.
        auto left = defaultGpuCacheBytes(s.eval);
        if (!left) return Error{"--gpu-cache: " + left.message()};
        c.gpuCapacityBytes = *left;
    }
    c.tiers = scenarioSimTiers(s.eval);
    for (std::size_t i = 0; i < c.tiers.size() && i < s.capacities.size(); ++i)
        if (s.capacities[i])
            c.tiers[i].capacityBytes = capacityBytes(*s.capacities[i], c.blockBytes, blockTokens);
    // --tier-write NAME=GB/s: a tier's write bandwidth (the scenario tier's otherwise).
    for (const auto& t : o.tierWrites) {
        const auto eq = t.find('=');
        if (eq == std::string::npos || eq == 0)
            return Error{"--tier-write '" + t + "': expected NAME=GB/s, e.g. nvme-gen4=2"};
        const std::string name = t.substr(0, eq);
        auto gbps = parseBandwidthGBps(t.substr(eq + 1));
        if (!gbps) return Error{"--tier-write " + name + ": " + gbps.message()};
        bool found = false;
        for (auto& st : c.tiers)
            if (st.name == name) {
                st.writeBps = *gbps * 1e9;
                found = true;
            }
        if (!found) {
            std::string names;
            for (const auto& st : c.tiers)
                names += (names.empty() ? "" : ", ") + st.name;
            return Error{"--tier-write " + name + ": not a tier of this replay; expected one of " +
                         (names.empty() ? std::string("(none)") : names)};
        }
    }
    // --shared-link NAME: the tier's reads and writes share one link (loads delay its writes).
    for (const auto& name : o.sharedLinks) {
        bool found = false;
        for (auto& st : c.tiers)
            if (st.name == name) {
                st.sharedLink = true;
                found = true;
            }
        if (!found) {
            std::string names;
            for (const auto& st : c.tiers)
                names += (names.empty() ? "" : ", ") + st.name;
            return Error{"--shared-link " + name + ": not a tier of this replay; expected one of " +
                         (names.empty() ? std::string("(none)") : names)};
        }
    }
    if (!o.writeBuffer.empty()) {
        auto b = parseBytes(o.writeBuffer);
        if (!b || !(*b > 0))
            return Error{"--write-buffer '" + o.writeBuffer +
                         "': expected a size above 0, e.g. 8GiB"};
        for (auto& st : c.tiers)
            st.writeBufferBytes = *b;
    }
    c.writeQueue = !o.noWriteQueue;
    c.instances = o.instances;
    auto k = parseCount(o.storeAfter, 1, kMaxStoreAfter);
    if (!k)
        return Error{"--store-after '" + o.storeAfter +
                     "': expected a whole number of sightings, 1 (store every block) or more (" +
                     k.message() + ")"};
    c.storeAfter = static_cast<int>(*k);
    return c;
}

// ------------------------------------------------------------------------------- inspect

namespace {

void printSkipped(const TraceReadSummary& s) {
    if (!s.skippedLines) return;
    std::cerr << "kvbe-cli: skipped " << s.skippedLines << " bad line(s); the first:\n";
    for (const auto& m : s.skippedExamples)
        std::cerr << "  " << m << "\n";
}

} // namespace

Result<Loaded> loadAll(const TraceOptions& o, const ScenarioFlags& flags,
                       const TraceReadOptions& ro) {
    auto setup = loadSetup(flags);
    if (!setup) return setup.error();
    auto trace = loadTrace(o.file, ro);
    if (!trace) return trace.error();
    printSkipped(trace->summary);
    return Loaded{std::move(*setup), std::move(*trace)};
}

namespace {

ExitCode runInspect(const TraceOptions& o) {
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

ExitCode runReplay(const TraceOptions& o) {
    auto ro = readOptions(o);
    if (!ro) return fail(ro.message());
    auto admission = parseAdmission(o.admission);
    if (!admission)
        return fail("--admission '" + o.admission + "': expected always, breakeven or optimal");
    auto loaded = loadAll(o, o.scenario, *ro);
    if (!loaded) return fail(loaded.message());
    const Setup* setup = &loaded->setup;
    const Trace* trace = &loaded->trace;
    if (!trace->summary.hasBlocks())
        return fail(
            o.file + ": a " + std::string(toString(trace->summary.format)) +
            " trace has no block ids, so it cannot be replayed; use trace inspect for its lengths");
    auto cfg = replayConfig(o, *setup, trace->summary.blockTokens);
    if (!cfg) return fail(cfg.message());
    if (auto ok = applyLoadOptions(o, loaded->trace, *cfg); !ok) return fail(ok.message());
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
                                   *admission,
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

Result<std::vector<double>> parseGrid(const std::string& text, int points) {
    const auto colon = text.find(':');
    if (colon == std::string::npos)
        return Error{"--capacities '" + text + "': expected LOW:HIGH in tokens, e.g. 1e4:1e9"};
    const std::string expected =
        "': expected LOW:HIGH in tokens with 1 <= LOW <= HIGH, e.g. 1e4:1e9 or 10k:1m";
    auto lo = parseTokens(text.substr(0, colon)), hi = parseTokens(text.substr(colon + 1));
    if (!lo || !hi || !(*hi >= *lo)) return Error{"--capacities '" + text + expected};
    if (points < 1 || points > 1000)
        return Error{"--points " + std::to_string(points) + ": expected 1 to 1000"};
    return logGrid(*lo, *hi, points);
}

ExitCode runSweep(const TraceOptions& o) {
    auto ro = readOptions(o);
    if (!ro) return fail(ro.message());
    auto grid = parseGrid(o.capacities, o.points);
    if (!grid) return fail(grid.message());
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
    auto cfg = replayConfig(o, *setup, trace->summary.blockTokens);
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
    auto s = sweepCapacity(*trace, setup->eval.cost, *cfg, vary, *grid);
    if (!s) return fail(s.message());

    const TraceSweepReport report{trace, o.file,        setup->eval.scenario.name,
                                  &*cfg, o.singleCache, &*s};
    if (o.output == "json")
        std::cout << dumpJson(traceSweepJson(report), 2) << "\n";
    else if (o.output == "csv")
        std::cout << traceSweepCsv(report);
    else
        std::cout << traceSweepTable(report);
    return ExitCode::Ok;
}

} // namespace

void addCommon(CLI::App* sub, TraceOptions& o) {
    sub->add_option("file", o.file, traceFileHelp())->required();
    std::vector<std::string> formats{"auto"};
    for (const auto& f : traceFormats())
        formats.emplace_back(f.name);
    sub->add_option("--format", o.format, "Trace format (default: detected from the content)")
        ->check(CLI::IsMember(formats));
    sub->add_option("--block-tokens", o.blockTokens,
                    "Tokens per block id (default: " + traceBlockDefaults() + ")")
        ->check(CLI::Range(1u, 1u << 24));
    sub->add_option("--time-unit", o.timeUnit,
                    "Unit of the timestamps (default: " + traceTimeUnitDefaults() + ")")
        ->check(CLI::IsMember({"s", "ms", "us"}));
    sub->add_flag("--skip-bad", o.skipBad, "Skip bad lines, count them and show the first few");
    addScenarioFlags(sub, o.scenario);
}

void addCapacityOptions(CLI::App* sub, TraceOptions& o) {
    sub->add_option(
        "--gpu-cache", o.gpuCache,
        "HBM for KV (default: 90 % of the GPU less the weights), e.g. 40GiB, 6000blocks");
    sub->add_option("--policy", o.policy, "Eviction in every tier")
        ->check(CLI::IsMember({"lru", "s3fifo"}));
    sub->add_option("--placement", o.placement, "write-through or cascade (demote on evict)")
        ->check(CLI::IsMember({"write-through", "cascade"}));
}

void addReplayTierOptions(CLI::App* sub, TraceOptions& o) {
    sub->add_option("--tier-write", o.tierWrites,
                    "NAME=GB/s: a tier's write bandwidth (repeat; default: the scenario tier's, "
                    "as calc shows it)");
    sub->add_option("--write-buffer", o.writeBuffer,
                    "Writes a tier may have queued before the oldest are dropped (default 8GiB)");
    sub->add_option("--shared-link", o.sharedLinks,
                    "NAME: the tier's reads and writes share one link, loads first (repeat; "
                    "needs the write queue)");
    sub->add_flag(
        "--no-write-queue", o.noWriteQueue,
        "Writes always keep up (default: a write queue per tier, drained at its write bandwidth)");
}

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
    replay
        ->add_option("--instances", o->instances,
                     "Prefill servers fed first come first served (default 0: no queueing)")
        ->check(CLI::Range(0, 1 << 20));
    replay->add_option("--store-after", o->storeAfter,
                       "K: write a block to the offload tiers at its K-th sighting (default 1: "
                       "every block)");
    replay->add_option("--admission", o->admission, "The rule the summary sentence reports")
        ->check(CLI::IsMember({"always", "breakeven", "optimal"}));
    replay->add_option("--output", o->output, "Output format")
        ->check(CLI::IsMember({"table", "json", "csv"}));
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
    sweep->add_option("--capacities", o->capacities,
                      "LOW:HIGH in tokens, log grid (default 1e4:1e9)");
    sweep->add_option("--points", o->points, "Grid points (default 40)");
    sweep->add_option("--store-after", o->storeAfter,
                      "Only 1: the one-pass sweep is exact only when every block is stored");
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
