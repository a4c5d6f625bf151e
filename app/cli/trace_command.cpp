// kvbe-cli trace inspect|replay|sweep: a request trace through the scenario's tiered prefix cache.
#include "commands.h"
#include "scenario_flags.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/units.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_setup.h"
#include "kvbe/trace/trace_sim.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

namespace kvbe::cli {
namespace {

struct TraceOptions {
    std::string file, format = "auto", timeUnit, output = "table";
    ScenarioFlags scenario; // its --tier flags pick the replay's tiers and their capacities
    std::uint32_t blockTokens = 0;
    bool skipBad = false;
    // replay and sweep
    std::string gpuCache, policy = "lru", placement = "write-through", admission = "optimal";
    // replay
    std::vector<std::string> tierWrites;  // NAME=GB/s
    std::vector<std::string> sharedLinks; // NAME: reads and writes share one link
    std::string writeBuffer;
    bool noWriteQueue = false;
    int instances = 0;
    // sweep
    std::vector<std::string> with; // tiers kept fixed: more --tier flags
    std::string capacities = "1e4:1e9";
    int points = 40;
    bool singleCache = false;
};

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}
std::string pct(double v) {
    return fixed(v * 100, 1) + " %";
}
std::string ms(double s) {
    return fixed(s * 1e3, 2);
}
std::string duration(double s) {
    return s >= 120 ? fixed(s / 60, 1) + " min" : fixed(s, 1) + " s";
}

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

// The scenario evaluated, and the capacity each of its tiers was given (none: unlimited).
struct Setup {
    Evaluation eval;
    std::vector<std::optional<Capacity>> capacities;
};

Result<Setup> loadSetup(const ScenarioFlags& flags) {
    auto f = scenarioFromFlags(flags);
    if (!f) return f.error();
    auto e = evaluate(f->scenario, f->presets);
    if (!e) return Error{f->where + e.message()};
    return Setup{std::move(*e), std::move(f->capacities)};
}

// "40GiB", "8TB", "6000blocks", "3.07e6tokens", "unlimited": core's parseCapacity, in bytes.
Result<double> parseCapacity(const std::string& text, const std::string& what, double blockBytes,
                             double blockTokens) {
    auto c = kvbe::parseCapacity(text);
    if (!c) return Error{what + ": " + c.message()};
    return capacityBytes(*c, blockBytes, blockTokens);
}

// The replay's tiers: the scenario's (after its --tier flags), each with the capacity its flag
// gave, unlimited where none.
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
    // --tier-write NAME=GB/s: a tier's write bandwidth (the preset's otherwise).
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
    return c;
}

nlohmann::json ratiosJson(const HitRatios& h) {
    return {{"token_weighted", h.tokenWeighted},
            {"block_weighted", h.blockWeighted},
            {"per_request", h.perRequest}};
}

nlohmann::json traceJson(const Trace& t, const std::string& file) {
    return {{"file", file},
            {"format", std::string(toString(t.summary.format))},
            {"block_tokens", t.summary.blockTokens},
            {"requests", t.size()},
            {"skipped_lines", t.summary.skippedLines},
            {"distinct_blocks", t.distinctBlocks}};
}

std::string capacityText(double bytes) {
    return std::isfinite(bytes) ? formatBytes(bytes) : "unlimited";
}

// ------------------------------------------------------------------------------- inspect

double pctile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const double pos = q * double(v.size() - 1);
    const auto i = static_cast<std::size_t>(pos);
    const double f = pos - double(i);
    return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

void printSkipped(const TraceReadSummary& s) {
    if (!s.skippedLines) return;
    std::cerr << "kvbe-cli: skipped " << s.skippedLines << " bad line(s); the first:\n";
    for (const auto& m : s.skippedExamples)
        std::cerr << "  " << m << "\n";
}

// What inspect, replay and sweep all read: the scenario's evaluation and the trace
// (its skipped lines reported), each failure a sentence.
struct Loaded {
    Setup setup;
    Trace trace;
};

Result<Loaded> loadAll(const TraceOptions& o, const ScenarioFlags& flags,
                       const TraceReadOptions& ro) {
    auto setup = loadSetup(flags);
    if (!setup) return setup.error();
    auto trace = loadTrace(o.file, ro);
    if (!trace) return trace.error();
    printSkipped(trace->summary);
    return Loaded{std::move(*setup), std::move(*trace)};
}

ExitCode runInspect(const TraceOptions& o) {
    auto ro = readOptions(o);
    if (!ro) return fail(ro.message());
    auto loaded = loadAll(o, o.scenario, *ro);
    if (!loaded) return fail(loaded.message());
    const Setup* setup = &loaded->setup;
    const Trace* trace = &loaded->trace;
    const Trace& t = *trace;
    std::vector<double> in(t.inputTokens.begin(), t.inputTokens.end());
    double sumIn = 0, sumOut = 0, duration = 0;
    for (double v : in)
        sumIn += v;
    for (auto v : t.outputTokens)
        sumOut += v;
    for (double a : t.arrivalS)
        duration = std::max(duration, a);
    const double n = double(t.size());
    std::optional<ReplayResult> unlimited;
    if (t.summary.hasBlocks()) {
        ReplayConfig c;
        c.blockBytes = 1;
        auto r = replayTrace(t, setup->eval.cost, c);
        if (!r) return fail(r.message());
        unlimited = *r;
    }
    struct Above {
        std::string name;
        std::optional<double> pStar;
        double share;
    };
    std::vector<Above> above;
    for (std::size_t i = 0; i < setup->eval.tiers.size(); ++i) {
        const auto& tc = setup->eval.scenario.tiers[i];
        Above a{tc.preset.empty() ? tc.name : tc.preset,
                setup->eval.cost.breakevenPrefix(setup->eval.tiers[i]), 0};
        if (a.pStar) {
            std::size_t k = 0;
            for (double v : in)
                k += v >= *a.pStar;
            a.share = n > 0 ? double(k) / n : 0;
        }
        above.push_back(a);
    }
    if (o.output == "json") {
        nlohmann::json j = {{"kvbe_trace_inspect", 1}, {"trace", traceJson(t, o.file)}};
        j["duration_s"] = duration;
        j["input_tokens"] = {{"mean", n ? sumIn / n : 0},
                             {"p50", pctile(in, 0.5)},
                             {"p90", pctile(in, 0.9)},
                             {"p99", pctile(in, 0.99)},
                             {"max", in.empty() ? 0 : *std::max_element(in.begin(), in.end())}};
        j["output_tokens_mean"] = n ? sumOut / n : 0;
        j["unlimited_capacity_hits"] =
            unlimited ? ratiosJson(unlimited->anyTier) : nlohmann::json(nullptr);
        j["scenario"] = setup->eval.scenario.name;
        nlohmann::json tiers = nlohmann::json::array();
        for (const auto& a : above)
            tiers.push_back(
                {{"tier", a.name},
                 {"p_star_tokens", a.pStar ? nlohmann::json(*a.pStar) : nlohmann::json(nullptr)},
                 {"share_of_requests_at_or_above",
                  a.pStar ? nlohmann::json(a.share) : nlohmann::json(nullptr)}});
        j["tiers"] = tiers;
        std::cout << dumpJson(j, 2) << "\n";
        return ExitCode::Ok;
    }
    std::cout << "trace      " << o.file << " (" << toString(t.summary.format);
    if (t.summary.hasBlocks()) std::cout << ", " << t.summary.blockTokens << "-token blocks";
    std::cout << ")\n";
    std::cout << "requests   " << t.size() << " over " << kvbe::cli::duration(duration) << "\n";
    std::cout << "input      mean " << fixed(n ? sumIn / n : 0, 0) << " tokens; p50 "
              << fixed(pctile(in, 0.5), 0) << ", p90 " << fixed(pctile(in, 0.9), 0) << ", p99 "
              << fixed(pctile(in, 0.99), 0) << "\n";
    std::cout << "output     mean " << fixed(n ? sumOut / n : 0, 0) << " tokens\n";
    if (unlimited) {
        std::cout << "blocks     " << unlimited->blocks << " (" << t.distinctBlocks
                  << " distinct)\n";
        std::cout << "unlimited-capacity prefix hits: " << pct(unlimited->anyTier.tokenWeighted)
                  << " token-weighted, " << pct(unlimited->anyTier.blockWeighted)
                  << " block-weighted, " << pct(unlimited->anyTier.perRequest) << " per-request\n";
    } else {
        std::cout << "no block ids: lengths and arrivals only (no hit ratios)\n";
    }
    std::cout << "scenario   " << setup->eval.scenario.name << "\n";
    for (const auto& a : above) {
        std::cout << "  " << a.name << ": p* ";
        if (a.pStar)
            std::cout << fixed(*a.pStar, 0) << " tokens, " << pct(a.share)
                      << " of requests at or above it\n";
        else
            std::cout << "never (loading does not pay up to the context limit)\n";
    }
    return ExitCode::Ok;
}

// ------------------------------------------------------------------------------- replay

// What a replay printed needs: the options, the trace, the scenario and the replay's result
// (with, when writes fell behind, the same replay with writes that always keep up).
struct ReplayOutput {
    const TraceOptions& o;
    const Trace& trace;
    const Setup& setup;
    const ReplayConfig& cfg;
    Admission admission;
    const ReplayResult& r;
    const std::optional<ReplayResult>& unlimitedWrites;
    bool queued; // some tier's writes went through a write queue
};

void printReplayJson(const ReplayOutput& x) {
    nlohmann::json j = {{"kvbe_trace_replay", 1}, {"trace", traceJson(x.trace, x.o.file)}};
    j["scenario"] = x.setup.eval.scenario.name;
    j["config"] = {{"policy", std::string(toString(x.cfg.policy))},
                   {"placement", std::string(toString(x.cfg.placement))},
                   {"admission", std::string(toString(x.admission))},
                   {"block_bytes", x.cfg.blockBytes},
                   {"write_queue", x.cfg.writeQueue},
                   {"instances", x.cfg.instances}};
    j["requests"] = x.r.requests;
    j["tokens"] = x.r.tokens;
    j["blocks"] = x.r.blocks;
    j["duration_s"] = x.r.durationS;
    j["hits_any_tier"] = ratiosJson(x.r.anyTier);
    j["hits_any_tier_if_writes_kept_up"] =
        x.unlimitedWrites ? ratiosJson(x.unlimitedWrites->anyTier) : ratiosJson(x.r.anyTier);
    nlohmann::json tiers = nlohmann::json::array();
    for (std::size_t k = 0; k < x.r.tiers.size(); ++k) {
        const auto& t = x.r.tiers[k];
        const double buffer = k > 0 ? x.cfg.tiers[k - 1].writeBufferBytes : 0;
        tiers.push_back(
            {{"name", t.name},
             {"capacity_bytes", std::isfinite(t.capacityBytes) ? nlohmann::json(t.capacityBytes)
                                                               : nlohmann::json(nullptr)},
             {"p_star_tokens",
              t.pStarTokens ? nlohmann::json(*t.pStarTokens) : nlohmann::json(nullptr)},
             {"hits", ratiosJson(t.hits)},
             {"blocks_written", t.blocksWritten},
             {"bytes_written", t.bytesWritten},
             {"write_Bps",
              {{"p50", t.writeRateP50}, {"p99", t.writeRateP99}, {"max", t.writeRateMax}}},
             {"tier_write_Bps",
              t.writeBps > 0 ? nlohmann::json(t.writeBps) : nlohmann::json(nullptr)},
             {"windows_over_write_bandwidth", t.windowsOverWriteBw},
             {"write_buffer_bytes", k > 0 ? nlohmann::json(buffer) : nlohmann::json(nullptr)},
             {"shared_link", k > 0 && x.cfg.tiers[k - 1].sharedLink},
             {"writes_dropped", t.writesDropped},
             {"lookups_late", t.lookupsLate},
             {"lookups_of_dropped_copies", t.lookupsDropped},
             {"max_write_backlog_s", t.maxBacklogS}});
    }
    j["tiers"] = tiers;
    j["windows"] = x.r.windows;
    nlohmann::json rules = nlohmann::json::array();
    for (const auto& ru : x.r.rules) {
        rules.push_back({{"rule", ru.name},
                         {"ttft_s",
                          {{"mean", ru.ttft.mean},
                           {"p50", ru.ttft.p50},
                           {"p90", ru.ttft.p90},
                           {"p99", ru.ttft.p99}}},
                         {"share_faster_than_gpu_only", ru.gainShare},
                         {"share_slower_than_gpu_only", ru.lossShare},
                         {"gpu_prefill_s_saved", ru.gpuSecondsSaved},
                         {"declined_requests", ru.declinedRequests},
                         {"declined_blocks", ru.declinedBlocks},
                         {"declined_load_s", ru.declinedLoadS},
                         {"declined_net_s", ru.declinedNetS},
                         {"mean_wait_s", ru.meanWaitS},
                         {"hidden_load_s", ru.hiddenLoadS},
                         {"shared_load_s", ru.sharedLoadS}});
    }
    j["rules"] = rules;
    std::cout << dumpJson(j, 2) << "\n";
}

void printReplayCsv(const ReplayOutput& x) {
    std::cout << "section,name,metric,value\n";
    auto row = [](const std::string& a, const std::string& b, const std::string& c, double v) {
        std::cout << a << "," << b << "," << c << "," << fixed(v, 9) << "\n";
    };
    row("trace", "all", "requests", double(x.r.requests));
    row("trace", "all", "tokens", double(x.r.tokens));
    row("trace", "all", "blocks", double(x.r.blocks));
    row("hits", "any", "token_weighted", x.r.anyTier.tokenWeighted);
    row("hits", "any", "block_weighted", x.r.anyTier.blockWeighted);
    row("hits", "any", "per_request", x.r.anyTier.perRequest);
    for (const auto& t : x.r.tiers) {
        row("tier", t.name, "capacity_bytes",
            std::isfinite(t.capacityBytes) ? t.capacityBytes : -1);
        if (t.pStarTokens) row("tier", t.name, "p_star_tokens", *t.pStarTokens);
        row("tier", t.name, "hits_token_weighted", t.hits.tokenWeighted);
        row("tier", t.name, "hits_block_weighted", t.hits.blockWeighted);
        row("tier", t.name, "hits_per_request", t.hits.perRequest);
        row("tier", t.name, "bytes_written", t.bytesWritten);
        row("tier", t.name, "write_Bps_p50", t.writeRateP50);
        row("tier", t.name, "write_Bps_p99", t.writeRateP99);
        row("tier", t.name, "writes_dropped", double(t.writesDropped));
        row("tier", t.name, "lookups_late", double(t.lookupsLate));
        row("tier", t.name, "lookups_of_dropped_copies", double(t.lookupsDropped));
    }
    for (const auto& ru : x.r.rules) {
        row("rule", ru.name, "ttft_mean_s", ru.ttft.mean);
        row("rule", ru.name, "ttft_p50_s", ru.ttft.p50);
        row("rule", ru.name, "ttft_p90_s", ru.ttft.p90);
        row("rule", ru.name, "ttft_p99_s", ru.ttft.p99);
        row("rule", ru.name, "share_faster_than_gpu_only", ru.gainShare);
        row("rule", ru.name, "gpu_prefill_s_saved", ru.gpuSecondsSaved);
        row("rule", ru.name, "declined_requests", double(ru.declinedRequests));
        row("rule", ru.name, "declined_load_s", ru.declinedLoadS);
        if (x.cfg.instances > 0) {
            row("rule", ru.name, "mean_wait_s", ru.meanWaitS);
            row("rule", ru.name, "hidden_load_s", ru.hiddenLoadS);
            row("rule", ru.name, "shared_load_s", ru.sharedLoadS);
        }
    }
}

// The one-sentence answer: the share of requests that gain against GPU-only caching, the TTFT
// change, the GPU time saved and the write bandwidth each tier needs.
void printReplaySentence(const ReplayOutput& x) {
    const RuleResult& chosen = *x.r.rule(toString(x.admission));
    const RuleResult& gpuOnly = *x.r.rule("gpu-only");
    std::ostringstream s;
    s << "\nWith ";
    for (std::size_t k = 1; k < x.r.tiers.size(); ++k)
        s << (k > 1 ? (k + 1 == x.r.tiers.size() ? " and " : ", ") : "")
          << capacityText(x.r.tiers[k].capacityBytes) << " of " << x.r.tiers[k].name;
    if (x.r.tiers.size() == 1) s << "the GPU alone";
    s << " (" << toString(x.admission) << "), " << pct(chosen.gainShare)
      << " of requests are faster than with GPU-only "
      << "caching, mean TTFT " << (chosen.ttft.mean <= gpuOnly.ttft.mean ? "-" : "+")
      << pct(std::abs(1 - chosen.ttft.mean / gpuOnly.ttft.mean)) << ", "
      << fixed(chosen.gpuSecondsSaved - gpuOnly.gpuSecondsSaved, 1)
      << " GPU prefill seconds saved beyond GPU-only";
    for (std::size_t k = 1; k < x.r.tiers.size(); ++k)
        s << "; " << x.r.tiers[k].name << " needs " << formatBandwidth(x.r.tiers[k].writeRateP99)
          << " of writes (p99 minute)";
    s << ".\n";
    std::cout << s.str();
}

void printReplayTable(const ReplayOutput& x) {
    std::cout << "trace     " << x.o.file << ": " << x.r.requests << " requests, "
              << formatTokens(double(x.r.tokens)) << " tokens, " << x.r.blocks << " blocks of "
              << x.trace.summary.blockTokens << " tokens (" << x.r.distinctBlocks << " distinct), "
              << duration(x.r.durationS) << "\n";
    std::cout << "scenario  " << x.setup.eval.scenario.name
              << "; one block = " << formatBytes(x.cfg.blockBytes) << "; " << toString(x.cfg.policy)
              << ", " << toString(x.cfg.placement) << "\n\n";
    std::printf("%-12s %12s %10s  %-26s %12s %22s\n", "tier", "capacity", "p* tokens",
                "hits: tok / blk / req", "written", "writes p50/p99 vs W");
    for (const auto& t : x.r.tiers) {
        const std::string hits = pct(t.hits.tokenWeighted) + " / " + pct(t.hits.blockWeighted) +
                                 " / " + pct(t.hits.perRequest);
        std::string writes = "-";
        if (&t != &x.r.tiers.front())
            writes = formatBandwidth(t.writeRateP50) + " / " + formatBandwidth(t.writeRateP99) +
                     (t.writeBps > 0 ? " vs " + formatBandwidth(t.writeBps) : "");
        std::printf("%-12s %12s %10s  %-26s %12s %22s\n", t.name.c_str(),
                    capacityText(t.capacityBytes).c_str(),
                    t.pStarTokens ? fixed(*t.pStarTokens, 0).c_str()
                                  : (&t == &x.r.tiers.front() ? "-" : "never"),
                    hits.c_str(),
                    &t == &x.r.tiers.front() ? "-" : formatBytes(t.bytesWritten).c_str(),
                    writes.c_str());
    }
    std::printf("%-12s %12s %10s  %-26s\n\n", "any tier", "", "",
                (pct(x.r.anyTier.tokenWeighted) + " / " + pct(x.r.anyTier.blockWeighted) + " / " +
                 pct(x.r.anyTier.perRequest))
                    .c_str());
    if (x.queued) {
        std::printf("%-12s %14s %14s %16s %14s\n", "write queue", "writes dropped", "lookups late",
                    "dropped copies", "max backlog");
        for (std::size_t k = 1; k < x.r.tiers.size(); ++k) {
            const auto& t = x.r.tiers[k];
            if (!(t.writeBps > 0)) {
                std::printf("%-12s %14s\n", t.name.c_str(),
                            "(write bandwidth unknown: not x.queued)");
                continue;
            }
            std::printf("%-12s %14llu %14llu %16llu %14s\n", t.name.c_str(),
                        (unsigned long long)t.writesDropped, (unsigned long long)t.lookupsLate,
                        (unsigned long long)t.lookupsDropped, formatSeconds(t.maxBacklogS).c_str());
        }
        if (x.unlimitedWrites)
            std::cout << "hits lost to the write backlog: "
                      << pct(x.unlimitedWrites->anyTier.tokenWeighted) << " -> "
                      << pct(x.r.anyTier.tokenWeighted) << " token-weighted (buffer "
                      << formatBytes(x.cfg.tiers.empty() ? 0 : x.cfg.tiers.front().writeBufferBytes)
                      << " a tier)\n";
        else
            std::cout << "every write completed before its block was looked up again\n";
        std::cout << "\n";
    }
    if (x.cfg.instances > 0)
        std::cout << "TTFT below: " << x.cfg.instances << " prefill server"
                  << (x.cfg.instances > 1 ? "s" : "")
                  << ", first come first served; loads start at arrival, overlap the wait and "
                     "share each tier's bandwidth with the loads beside them\n";
    std::printf("%-10s %35s %14s %14s %12s %22s%s\n", "rule", "TTFT ms: mean / p50 / p90 / p99",
                "faster vs GPU", "slower vs GPU", "GPU s saved", "declined: req / load s",
                x.cfg.instances > 0 ? "   wait ms / hidden / shared load s" : "");
    for (const auto& ru : x.r.rules) {
        const std::string t = ms(ru.ttft.mean) + " / " + ms(ru.ttft.p50) + " / " + ms(ru.ttft.p90) +
                              " / " + ms(ru.ttft.p99);
        const std::string d =
            (ru.name == "breakeven" || ru.name == "optimal")
                ? std::to_string(ru.declinedRequests) + " / " + fixed(ru.declinedLoadS, 3)
                : "-";
        const std::string q = x.cfg.instances > 0
                                  ? "   " + ms(ru.meanWaitS) + " / " + fixed(ru.hiddenLoadS, 2) +
                                        " / " + fixed(ru.sharedLoadS, 2)
                                  : "";
        std::printf("%-10s %35s %14s %14s %12s %22s%s\n", ru.name.c_str(), t.c_str(),
                    pct(ru.gainShare).c_str(), pct(ru.lossShare).c_str(),
                    fixed(ru.gpuSecondsSaved, 2).c_str(), d.c_str(), q.c_str());
    }
    printReplaySentence(x);
}

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
    auto r = replayTrace(*trace, setup->eval.cost, *cfg);
    if (!r) return fail(r.message());
    // What the write backlog cost: the same replay with writes that always keep up.
    std::optional<ReplayResult> unlimitedWrites;
    bool backlog = false;
    for (const auto& t : r->tiers)
        backlog = backlog || t.writesDropped || t.lookupsLate || t.lookupsDropped;
    if (backlog) {
        ReplayConfig free = *cfg;
        free.writeQueue = false;
        free.instances = 0;
        auto f = replayTrace(*trace, setup->eval.cost, free);
        if (!f) return fail(f.message());
        unlimitedWrites = *f;
    }
    bool queued = false;
    for (const auto& t : cfg->tiers)
        queued = queued || (cfg->writeQueue && t.writeBps > 0);

    const ReplayOutput out{o, *trace, *setup, *cfg, *admission, *r, unlimitedWrites, queued};
    if (o.output == "json")
        printReplayJson(out);
    else if (o.output == "csv")
        printReplayCsv(out);
    else
        printReplayTable(out);
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

    if (o.output == "json") {
        nlohmann::json j = {{"kvbe_trace_sweep", 1}, {"trace", traceJson(*trace, o.file)}};
        j["scenario"] = setup->eval.scenario.name;
        j["tier"] = s->tierName;
        j["single_cache"] = o.singleCache;
        nlohmann::json names = nlohmann::json::array({"gpu"});
        for (const auto& t : cfg->tiers)
            names.push_back(t.name);
        j["tiers"] = names;
        nlohmann::json pts = nlohmann::json::array();
        for (const auto& p : s->points) {
            nlohmann::json per = nlohmann::json::array();
            for (const auto& h : p.tiers)
                per.push_back(ratiosJson(h));
            pts.push_back({{"capacity_tokens", p.capacityTokens},
                           {"capacity_bytes", p.capacityBytes},
                           {"hits_any_tier", ratiosJson(p.anyTier)},
                           {"hits_per_tier", per},
                           {"ttft_mean_s",
                            {{"none", p.meanTtftNone},
                             {"gpu_only", p.meanTtftGpuOnly},
                             {"always", p.meanTtftAlways}}},
                           {"ttft_saved_vs_none", p.ttftSavedVsNone},
                           {"ttft_saved_vs_gpu_only", p.ttftSavedVsGpuOnly}});
        }
        j["points"] = pts;
        std::cout << dumpJson(j, 2) << "\n";
        return ExitCode::Ok;
    }
    if (o.output == "csv") {
        std::cout << "capacity_tokens,capacity_bytes,hits_token_weighted,hits_block_weighted,hits_"
                     "per_request,"
                     "ttft_mean_none_s,ttft_mean_gpu_only_s,ttft_mean_always_s,ttft_saved_vs_none,"
                     "ttft_saved_vs_gpu_only\n";
        for (const auto& p : s->points)
            std::cout << fixed(p.capacityTokens, 0) << "," << fixed(p.capacityBytes, 0) << ","
                      << fixed(p.anyTier.tokenWeighted, 6) << ","
                      << fixed(p.anyTier.blockWeighted, 6) << "," << fixed(p.anyTier.perRequest, 6)
                      << "," << fixed(p.meanTtftNone, 9) << "," << fixed(p.meanTtftGpuOnly, 9)
                      << "," << fixed(p.meanTtftAlways, 9) << "," << fixed(p.ttftSavedVsNone, 6)
                      << "," << fixed(p.ttftSavedVsGpuOnly, 6) << "\n";
        return ExitCode::Ok;
    }
    std::cout << "sweep of " << s->tierName << (o.singleCache ? " (single cache)" : "") << " over "
              << s->points.size() << " capacities, one pass (LRU stack distances), "
              << trace->size() << " requests\n";
    std::printf("%14s %12s  %-26s %12s %12s %12s\n", "tokens", "bytes", "hits: tok / blk / req",
                "TTFT ms", "saved/none", "saved/GPU");
    for (const auto& p : s->points) {
        const std::string hits = pct(p.anyTier.tokenWeighted) + " / " +
                                 pct(p.anyTier.blockWeighted) + " / " + pct(p.anyTier.perRequest);
        std::printf("%14s %12s  %-26s %12s %12s %12s\n", fixed(p.capacityTokens, 0).c_str(),
                    formatBytes(p.capacityBytes).c_str(), hits.c_str(),
                    ms(p.meanTtftAlways).c_str(), pct(p.ttftSavedVsNone).c_str(),
                    pct(p.ttftSavedVsGpuOnly).c_str());
    }
    return ExitCode::Ok;
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
    replay->add_option("--tier-write", o->tierWrites,
                       "NAME=GB/s: a tier's write bandwidth (repeat; default: the scenario tier's, "
                       "as calc shows it)");
    replay->add_option(
        "--write-buffer", o->writeBuffer,
        "Writes a tier may have queued before the oldest are dropped (default 8GiB)");
    replay->add_option("--shared-link", o->sharedLinks,
                       "NAME: the tier's reads and writes share one link, loads first (repeat; "
                       "needs the write queue)");
    replay->add_flag(
        "--no-write-queue", o->noWriteQueue,
        "Writes always keep up (default: a write queue per tier, drained at its write bandwidth)");
    replay
        ->add_option("--instances", o->instances,
                     "Prefill servers fed first come first served (default 0: no queueing)")
        ->check(CLI::Range(0, 1 << 20));
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
    sweep->add_option("--output", o->output, "Output format")
        ->check(CLI::IsMember({"table", "json", "csv"}));
    sweep->footer(
        "\nThe tier --tier names without a capacity is swept (--tier gpu: the GPU's cache); "
        "the tiers named with one (--tier or --with NAME=CAPACITY) stay as they are.");
    sweep->callback([o, &run] { run = [o] { return runSweep(*o); }; });
}

} // namespace kvbe::cli
