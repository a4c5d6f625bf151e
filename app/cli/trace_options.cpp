// The options every `kvbe-cli trace` command shares (trace_options.h): how the trace is read,
// what every command loads, the replay's configuration, and the flags that fill them.
#include "trace_options.h"

#include "kvbe/base/units.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_capacity.h"
#include "kvbe/trace/trace_setup.h"
#include "kvbe/trace/trace_sim.h"

#include <cmath>
#include <iostream>

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

void addLoadOptions(CLI::App* sub, TraceOptions& o) {
    sub->add_option("--rate-scale", o.rateScale,
                    "S: every arrival time divided by S, the same requests in the same order "
                    "(2: twice the load; default 1)");
    sub->add_option("--duration-cap", o.durationCap,
                    "Only the requests arriving within this long of the first, e.g. 10min, 600s");
}

Status applyLoadOptions(const TraceOptions& o, Trace& trace, ReplayConfig& config) {
    if (!o.rateScale.empty()) {
        const auto s = parseNumber(o.rateScale);
        if (!s || !(*s > 0) || !std::isfinite(*s))
            return Error{"--rate-scale '" + o.rateScale +
                         "': expected a load scale above 0 (2 doubles the request rate)"};
        config.rateScale = *s;
    }
    if (!o.durationCap.empty()) {
        auto cap = parseSeconds(o.durationCap);
        if (!cap) return Error{"--duration-cap " + cap.message()};
        trace = tracePrefix(trace, *cap);
    }
    return Ok{};
}

} // namespace kvbe::cli
