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

} // namespace

std::string flagOf(RequestField field) {
    switch (field) {
    case RequestField::None:
        return "";
    case RequestField::GpuCache:
        return "--gpu-cache";
    case RequestField::Tiers:
        return "--tier";
    case RequestField::TierWrite:
        return "--tier-write";
    case RequestField::SharedLink:
        return "--shared-link";
    case RequestField::WriteBuffer:
        return "--write-buffer";
    case RequestField::Instances:
        return "--servers";
    case RequestField::Router:
        return "--router";
    case RequestField::NodeServers:
        return "--node-servers";
    case RequestField::Pooled:
        return "--pooled";
    case RequestField::StoreAfter:
    case RequestField::StoreAfterGrid:
        return "--store-after";
    case RequestField::RateScale:
        return "--rate-scale";
    case RequestField::Life:
        return "--life";
    case RequestField::SloP99:
        return "--slo-p99";
    case RequestField::Budget:
        return "--budget";
    case RequestField::DramSizes:
        return "--dram";
    case RequestField::DriveCounts:
        return "--drives";
    case RequestField::Drives:
        return "--drive";
    case RequestField::Placements:
        return "--placements";
    case RequestField::Links:
        return "--links";
    }
    return "";
}

std::string flagMessage(const RequestError& e) {
    const std::string flag = flagOf(e.field);
    if (flag.empty()) return e.message;
    // "--rate-scale '0': expected…", "--tier-write tape: not a tier…", "--gpu-cache: the GPU…"
    const bool joined = (!e.message.empty() && e.message[0] == '\'') ||
                        e.field == RequestField::TierWrite || e.field == RequestField::SharedLink;
    return flag + (joined ? " " : ": ") + e.message;
}

Result<ReplayConfig> replayConfig(const TraceOptions& o, const Setup& s, double blockTokens) {
    ReplayRequest r = o.replay;
    r.tierCapacities = s.capacities;
    auto c = replaySetup(r, s.eval, static_cast<std::uint32_t>(blockTokens));
    if (!c) return Error{flagMessage(c.error())};
    return std::move(c->config);
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
    addParsed(sub, "--gpu-cache", o.replay.gpuCache, o.errors, parseCapacity,
              "HBM for KV (default: 90 % of the GPU less the weights), e.g. 40GiB, 6000blocks");
    addParsed(
        sub, "--policy", o.replay.policy, o.errors,
        [](const std::string& t) -> Result<EvictionPolicy> {
            if (auto p = parseEvictionPolicy(t)) return *p;
            return Error{"'" + t + "': expected lru or s3fifo"};
        },
        "Eviction in every tier")
        ->check(CLI::IsMember({"lru", "s3fifo"}));
    addParsed(
        sub, "--placement", o.replay.placement, o.errors,
        [](const std::string& t) -> Result<Placement> {
            if (auto p = parsePlacement(t)) return *p;
            return Error{"'" + t + "': expected write-through or cascade"};
        },
        "write-through or cascade (demote on evict)")
        ->check(CLI::IsMember({"write-through", "cascade"}));
}

void addAdmissionOption(CLI::App* sub, TraceOptions& o, const std::string& help) {
    addParsed(
        sub, "--admission", o.admission, o.errors,
        [](const std::string& t) -> Result<Admission> {
            if (auto a = parseAdmission(t)) return *a;
            return Error{"'" + t + "': expected always, breakeven or optimal"};
        },
        help)
        ->check(CLI::IsMember({"always", "breakeven", "optimal"}))
        ->each([&o](const std::string&) { o.admissionGiven = true; });
}

void addStoreAfterOption(CLI::App* sub, TraceOptions& o, const std::string& help) {
    addParsed(
        sub, "--store-after", o.replay.storeAfter, o.errors,
        [](const std::string& t) -> Result<int> {
            // The range is core's to check (replaySetup); this reads a whole number.
            auto k = parseCount(t, -(1 << 30), 1 << 30);
            if (!k)
                return Error{"'" + t + "': expected a whole number of sightings, 1 (store every " +
                             "block) or more (" + k.message() + ")"};
            return static_cast<int>(*k);
        },
        help);
}

void addWriteBufferOption(CLI::App* sub, TraceOptions& o, const std::string& help) {
    addParsed(
        sub, "--write-buffer", o.replay.writeBufferBytes, o.errors,
        [](const std::string& t) -> Result<double> {
            auto b = parseBytes(t);
            if (!b) return Error{"'" + t + "': expected a size above 0, e.g. 8GiB"};
            return *b;
        },
        help);
}

void addReplayTierOptions(CLI::App* sub, TraceOptions& o) {
    sub->add_option_function<std::vector<std::string>>(
        "--tier-write",
        [&o](const std::vector<std::string>& items) {
            for (const auto& t : items) {
                const auto eq = t.find('=');
                if (eq == std::string::npos || eq == 0) {
                    o.errors.add("--tier-write '" + t + "': expected NAME=GB/s, e.g. nvme-gen4=2");
                    continue;
                }
                const std::string name = t.substr(0, eq);
                auto gbps = parseBandwidthGBps(t.substr(eq + 1));
                if (!gbps) {
                    o.errors.add("--tier-write " + name + ": " + gbps.message());
                    continue;
                }
                o.replay.tierWrites.push_back({name, *gbps * 1e9});
            }
        },
        "NAME=GB/s: a tier's write bandwidth (repeat; default: the scenario tier's, as calc shows "
        "it)");
    addWriteBufferOption(
        sub, o, "Writes a tier may have queued before the oldest are dropped (default 8GiB)");
    sub->add_option("--shared-link", o.replay.sharedLinks,
                    "NAME: the tier's reads and writes share one link, loads first (repeat; "
                    "needs the write queue)");
    addWriteQueueFlag(sub, o,
                      "Writes always keep up (default: a write queue per tier, drained at its "
                      "write bandwidth)");
}

void addWriteQueueFlag(CLI::App* sub, TraceOptions& o, const std::string& help) {
    sub->add_flag_function(
        "--no-write-queue", [&o](std::int64_t n) { o.replay.writeQueue = n <= 0; }, help);
}

void addInstancesOption(CLI::App* sub, TraceOptions& o, const std::string& help) {
    sub->add_option("--servers,--instances", o.replay.instances, help)
        ->check(CLI::Range(0, 1 << 20));
}

Result<TraceOptions> oneRouterFleet(const TraceOptions& o, const std::string& oneRouter) {
    if (o.replay.router == "compare")
        return Error{"--router compare: " + oneRouter +
                     "; compare them with trace replay --router compare"};
    TraceOptions fleet = o;
    fleet.replay.fleet = !o.replay.router.empty();
    if (!fleet.replay.fleet && (o.replay.nodeServers > 1 || !o.replay.pooled.empty()))
        return Error{"--node-servers and --pooled shape a fleet: name its router (--router)"};
    return fleet;
}

Result<TraceOptions> plannedFleet(const TraceOptions& o, const std::string& oneRouter) {
    auto fleet = oneRouterFleet(o, oneRouter);
    if (fleet && fleet->replay.fleet && o.replay.instances < 2)
        return Error{"--router: expected a fleet to route to, --servers 2 or more"};
    return fleet;
}

void addFleetOptions(CLI::App* sub, TraceOptions& o) {
    std::string names;
    for (const auto n : routerNames())
        names += std::string(n) + ", ";
    sub->add_option("--router", o.replay.router,
                    "NAME[:key=value,...]: what sends each request to a server of a fleet (" +
                        names + "or compare: every router in one table; default round-robin)");
    sub->add_option("--node-servers", o.replay.nodeServers,
                    "Servers per node: a node-local tier is shared by them (default 1)")
        ->check(CLI::Range(1, 1 << 20));
    sub->add_option("--pooled", o.replay.pooled,
                    "TIER: one pool of the tier for the whole fleet, reached over each node's "
                    "link at the tier's bandwidth and t_fixed (repeat; a tier not named is on "
                    "each node, its capacity each)");
    sub->add_option_function<std::vector<std::string>>(
        "--pool-bandwidth",
        [&o](const std::vector<std::string>& items) {
            for (const auto& t : items) {
                const auto eq = t.find('=');
                if (eq == std::string::npos || eq == 0) {
                    o.errors.add("--pool-bandwidth '" + t + "': expected TIER=GB/s, e.g. nvme=50");
                    continue;
                }
                auto gbps = parseBandwidthGBps(t.substr(eq + 1));
                if (!gbps) {
                    o.errors.add("--pool-bandwidth " + t.substr(0, eq) + ": " + gbps.message());
                    continue;
                }
                o.replay.poolBandwidths.push_back({t.substr(0, eq), *gbps * 1e9});
            }
        },
        "TIER=GB/s: a pooled tier's aggregate read bandwidth, shared by every node (repeat; "
        "default: only each node's link limits it)");
}

void addSampleFlags(CLI::App* sub, SampleFlags& f, const std::string& exactHelp,
                    const std::string& answered) {
    const SampleMode d;
    sub->add_flag("--exact", f.exact, exactHelp);
    sub->add_option("--sample-rate", f.sampleRate,
                    "The share of prefix subtrees a sample keeps (default: about " +
                        formatTokens(double(d.sampleRequests)) + " requests' worth; traces under " +
                        formatTokens(double(d.exactBelow)) + " requests are " + answered +
                        " in full)")
        ->check(CLI::Range(0.0, 1.0));
}

SampleMode sampleMode(const SampleFlags& f) {
    SampleMode m;
    m.exact = f.exact;
    m.rate = f.sampleRate;
    if (f.sampleRate > 0) m.exactBelow = 0; // asked for: sample whatever the size
    return m;
}

void addLoadOptions(CLI::App* sub, TraceOptions& o) {
    addParsed(
        sub, "--rate-scale", o.replay.rateScale, o.errors,
        [](const std::string& t) -> Result<double> {
            auto s = parseNumber(t);
            if (!s)
                return Error{"'" + t + "': expected a load scale above 0 (2 doubles the " +
                             "request rate)"};
            return *s;
        },
        "S: every arrival time divided by S, the same requests in the same order (2: twice the "
        "load; default 1)");
    addParsed(sub, "--duration-cap", o.durationCapS, o.errors, parseSeconds,
              "Only the requests arriving within this long of the first, e.g. 10min, 600s");
}

void applyLoadOptions(const TraceOptions& o, Trace& trace) {
    if (o.durationCapS) trace = tracePrefix(trace, *o.durationCapS);
}

} // namespace kvbe::cli
