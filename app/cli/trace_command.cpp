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
    if (!f)
        return Error{"--format '" + o.format + "': expected auto, mooncake, bailian, azure or csv"};
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

Result<Setup> loadSetup(const TraceOptions& o, const Presets& presets) {
    auto scenario =
        o.scenario.empty() ? defaultScenario(presets) : loadScenario(o.scenario, presets);
    if (!scenario) return scenario.error();
    auto e = evaluate(*scenario, presets);
    if (!e) return e.error();
    Setup s{*e, scenario->tiers, {}};
    for (const auto& t : scenario->tiers) {
        const TierSpec* spec = t.preset.empty() ? nullptr : presets.findTier(t.preset);
        s.writeBps.push_back(spec ? spec->writeBps : 0.0);
    }
    return s;
}

// "40GiB", "8TB", "6000blocks", "3.07e6tokens", "unlimited".
Result<double> parseCapacity(std::string text, const std::string& what, double blockBytes,
                             double blockTokens) {
    if (text == "unlimited" || text == "inf") return kUnlimited;
    auto endsWith = [&](const std::string& suf) {
        return text.size() > suf.size() &&
               text.compare(text.size() - suf.size(), suf.size(), suf) == 0;
    };
    for (const char* unit : {"blocks", "tokens"}) {
        if (!endsWith(unit)) continue;
        const std::string num = text.substr(0, text.size() - std::string(unit).size());
        try {
            std::size_t used = 0;
            const double v = std::stod(num, &used);
            if (used != num.size() || !(v >= 0) || !std::isfinite(v))
                throw std::invalid_argument(num);
            return std::string(unit) == "blocks" ? v * blockBytes : v / blockTokens * blockBytes;
        } catch (const std::exception&) {
            return Error{what + " '" + text + "': expected a number before '" + unit + "'"};
        }
    }
    if (text == "0") return 0.0;
    auto b = parseBytes(text);
    if (!b)
        return Error{what + ": " + b.message() +
                     ", a count of blocks or tokens (6000blocks), or unlimited"};
    return *b;
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
    std::vector<std::pair<std::string, double>> wanted;
    for (const auto& t : o.tiers) {
        const auto eq = t.find('=');
        if (eq == std::string::npos || eq == 0)
            return Error{"--tier '" + t + "': expected NAME=CAPACITY, e.g. dram-pcie5=512GiB"};
        auto cap =
            parseCapacity(t.substr(eq + 1), "--tier " + t.substr(0, eq), c.blockBytes, blockTokens);
        if (!cap) return cap.error();
        wanted.emplace_back(t.substr(0, eq), *cap);
    }
    std::vector<bool> used(wanted.size(), false);
    for (std::size_t i = 0; i < s.tierConfigs.size(); ++i) {
        const auto& tc = s.tierConfigs[i];
        double capacity = kUnlimited;
        bool include = wanted.empty();
        for (std::size_t w = 0; w < wanted.size(); ++w) {
            if (wanted[w].first == tc.name ||
                (!tc.preset.empty() && wanted[w].first == tc.preset)) {
                include = true;
                capacity = wanted[w].second;
                used[w] = true;
            }
        }
        if (!include) continue;
        SimTier st;
        st.name = tc.preset.empty() ? tc.name : tc.preset;
        st.capacityBytes = capacity;
        st.path = s.eval.tiers[i];
        st.writeBps = s.writeBps[i];
        st.drive = tc.drive;
        c.tiers.push_back(st);
    }
    // --tier-write NAME=GB/s: a tier's write bandwidth (the preset's otherwise).
    for (const auto& t : o.tierWrites) {
        const auto eq = t.find('=');
        if (eq == std::string::npos || eq == 0)
            return Error{"--tier-write '" + t + "': expected NAME=GB/s, e.g. nvme-gen4=2"};
        const std::string name = t.substr(0, eq);
        std::string num = t.substr(eq + 1);
        if (num.size() > 4 && num.compare(num.size() - 4, 4, "GB/s") == 0)
            num.resize(num.size() - 4);
        double gbps = 0;
        try {
            std::size_t consumed = 0;
            gbps = std::stod(num, &consumed);
            if (consumed != num.size() || !(gbps > 0) || !std::isfinite(gbps))
                throw std::invalid_argument(num);
        } catch (const std::exception&) {
            return Error{"--tier-write " + name + ": '" + t.substr(eq + 1) +
                         "': expected a write bandwidth in GB/s above 0, e.g. 2"};
        }
        bool found = false;
        for (auto& st : c.tiers)
            if (st.name == name) {
                st.writeBps = gbps * 1e9;
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
    if (o.storeAfter < 1 || o.storeAfter > kMaxStoreAfter)
        return Error{"--store-after " + std::to_string(o.storeAfter) +
                     ": expected a whole number of sightings from 1 (store every block) to " +
                     std::to_string(kMaxStoreAfter)};
    c.storeAfter = o.storeAfter;
    for (std::size_t w = 0; w < wanted.size(); ++w) {
        if (used[w]) continue;
        std::string names;
        for (const auto& tc : s.tierConfigs)
            names += (names.empty() ? "" : ", ") + (tc.preset.empty() ? tc.name : tc.preset);
        return Error{"--tier " + wanted[w].first +
                     ": not a tier of the scenario; expected one of " + names};
    }
    return c;
}

namespace {

// ------------------------------------------------------------------------------- inspect

void printSkipped(const TraceReadSummary& s) {
    if (!s.skippedLines) return;
    std::cerr << "kvbe-cli: skipped " << s.skippedLines << " bad line(s); the first:\n";
    for (const auto& m : s.skippedExamples)
        std::cerr << "  " << m << "\n";
}

} // namespace

Result<Loaded> loadAll(const TraceOptions& o, const TraceReadOptions& ro) {
    auto presets = Presets::loadBuiltin();
    if (!presets) return presets.error();
    auto setup = loadSetup(o, *presets);
    if (!setup) return setup.error();
    auto trace = loadTrace(o.file, ro);
    if (!trace) return trace.error();
    printSkipped(trace->summary);
    return Loaded{std::move(*presets), std::move(*setup), std::move(*trace)};
}

namespace {

int runInspect(const TraceOptions& o) {
    auto ro = readOptions(o);
    if (!ro) return fail(ro.message());
    auto loaded = loadAll(o, *ro);
    if (!loaded) return fail(loaded.message());
    auto report = makeTraceInspectReport(loaded->trace, o.file, loaded->setup.eval);
    if (!report) return fail(report.message());
    if (o.output == "json")
        std::cout << dumpJson(traceInspectJson(*report), 2) << "\n";
    else
        std::cout << traceInspectTable(*report);
    return kExitOk;
}

// ------------------------------------------------------------------------------- replay

int runReplay(const TraceOptions& o) {
    auto ro = readOptions(o);
    if (!ro) return fail(ro.message());
    auto admission = parseAdmission(o.admission);
    if (!admission)
        return fail("--admission '" + o.admission + "': expected always, breakeven or optimal");
    auto loaded = loadAll(o, *ro);
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
    return kExitOk;
}

// ------------------------------------------------------------------------------- sweep

Result<std::vector<double>> parseGrid(const std::string& text, int points) {
    const auto colon = text.find(':');
    if (colon == std::string::npos)
        return Error{"--capacities '" + text + "': expected LOW:HIGH in tokens, e.g. 1e4:1e9"};
    try {
        std::size_t u1 = 0, u2 = 0;
        const std::string a = text.substr(0, colon), b = text.substr(colon + 1);
        const double lo = std::stod(a, &u1), hi = std::stod(b, &u2);
        if (u1 != a.size() || u2 != b.size() || !(lo >= 1) || !(hi >= lo) || !std::isfinite(hi))
            throw std::invalid_argument(text);
        if (points < 1 || points > 1000)
            return Error{"--points " + std::to_string(points) + ": expected 1 to 1000"};
        return logGrid(lo, hi, points);
    } catch (const std::exception&) {
        return Error{"--capacities '" + text +
                     "': expected LOW:HIGH in tokens with 1 <= LOW <= HIGH, e.g. 1e4:1e9"};
    }
}

int runSweep(const TraceOptions& o) {
    auto ro = readOptions(o);
    if (!ro) return fail(ro.message());
    auto grid = parseGrid(o.capacities, o.points);
    if (!grid) return fail(grid.message());
    auto loaded = loadAll(o, *ro);
    if (!loaded) return fail(loaded.message());
    const Setup* setup = &loaded->setup;
    const Trace* trace = &loaded->trace;
    if (!trace->summary.hasBlocks())
        return fail(o.file + ": a " + std::string(toString(trace->summary.format)) +
                    " trace has no block ids, so it has no capacity curve");
    // The tiers of the sweep: those given with --with, plus the swept one.
    if (!o.singleCache && o.vary.empty())
        return fail("--tier: name the tier to sweep (gpu, or one of the scenario's), or give "
                    "--single-cache");
    TraceOptions with = o;
    if (o.singleCache)
        with.tiers.clear();
    else if (o.vary != "gpu")
        with.tiers.push_back(o.vary + "=unlimited");
    auto cfg = replayConfig(with, *setup, trace->summary.blockTokens);
    if (!cfg) return fail(cfg.message());
    if (cfg->storeAfter > 1)
        return fail("--store-after " + std::to_string(cfg->storeAfter) +
                    ": the one-pass sweep is exact only when every block is stored (a block's "
                    "place in each tier then follows from its LRU stack distance); replay each "
                    "capacity with trace replay --store-after instead");
    if (with.tiers.empty()) cfg->tiers.clear();
    std::size_t vary = 0;
    for (std::size_t k = 0; k < cfg->tiers.size(); ++k)
        if (!o.singleCache && cfg->tiers[k].name == o.vary) vary = k + 1;
    if (!o.singleCache && o.vary != "gpu" && vary == 0)
        return fail("--tier " + o.vary + ": not a tier of the scenario");
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
    return kExitOk;
}

} // namespace

void addCommon(CLI::App* sub, TraceOptions& o) {
    sub->add_option("file", o.file, "Trace file (.jsonl, .csv; .gz and .zst read directly)")
        ->required();
    sub->add_option("--format", o.format, "Trace format (default: detected from the content)")
        ->check(CLI::IsMember({"auto", "mooncake", "bailian", "azure", "csv"}));
    sub->add_option("--block-tokens", o.blockTokens,
                    "Tokens per block id (default: 512 Mooncake, 16 Bailian)")
        ->check(CLI::Range(1u, 1u << 24));
    sub->add_option("--time-unit", o.timeUnit,
                    "Unit of the timestamps (default: ms Mooncake, s otherwise)")
        ->check(CLI::IsMember({"s", "ms", "us"}));
    sub->add_flag("--skip-bad", o.skipBad, "Skip bad lines, count them and show the first few");
    sub->add_option("--scenario", o.scenario, "A .kvbe.json scenario (default: the built-in one)");
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
    sub->add_option("--tier", o.tiers,
                    "NAME=CAPACITY of a scenario tier (repeat; default: every tier, unlimited)");
    sub->add_option("--tier-write", o.tierWrites,
                    "NAME=GB/s: a tier's write bandwidth (repeat; default: the tier preset's)");
    sub->add_option("--write-buffer", o.writeBuffer,
                    "Writes a tier may have queued before the oldest are dropped (default 8GiB)");
    sub->add_option("--shared-link", o.sharedLinks,
                    "NAME: the tier's reads and writes share one link, loads first (repeat; "
                    "needs the write queue)");
    sub->add_flag(
        "--no-write-queue", o.noWriteQueue,
        "Writes always keep up (default: a write queue per tier, drained at its write bandwidth)");
}

void addTraceCommands(CLI::App& app, std::function<int()>& run) {
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
    replay->callback([o, &run] { run = [o] { return runReplay(*o); }; });

    auto* sweep = trace->add_subcommand(
        "sweep", "Hit ratio and TTFT saved against one tier's capacity, in one pass (LRU)");
    addCommon(sweep, *o);
    addCapacityOptions(sweep, *o);
    sweep->add_option("--tier", o->vary, "The tier to sweep: gpu or a scenario tier");
    sweep->add_option("--with", o->tiers, "NAME=CAPACITY of another tier kept fixed (repeat)");
    sweep->add_flag("--single-cache", o->singleCache,
                    "One cache level (the GPU): the classic hit-ratio curve");
    sweep->add_option("--capacities", o->capacities,
                      "LOW:HIGH in tokens, log grid (default 1e4:1e9)");
    sweep->add_option("--points", o->points, "Grid points (default 40)");
    sweep->add_option("--store-after", o->storeAfter,
                      "Only 1: the one-pass sweep is exact only when every block is stored");
    sweep->add_option("--output", o->output, "Output format")
        ->check(CLI::IsMember({"table", "json", "csv"}));
    sweep->callback([o, &run] { run = [o] { return runSweep(*o); }; });

    addTraceCapacityCommand(trace, o, run);
    addTracePlanCommand(trace, o, run);
}

} // namespace kvbe::cli
