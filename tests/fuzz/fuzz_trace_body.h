// The fuzz target of the trace readers and the cache replay, shared with the regression test
// (tests/core/tst_fuzz_regressions.cpp). A violated property aborts.
#pragma once

#include "kvbe/cost/cost_model.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/trace/fleet.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string_view>
#include <vector>

namespace kvbe::fuzz {

// Two reads that give the same requests replay alike: Auto and the format it detects, and a
// trace with nothing to skip read with and without skipBad, give the same trace, which is
// replayed once (each input read 12 ways replayed up to 4 copies of one trace, 16 replays).
inline bool sameReplayInput(const kvbe::Trace& a, const kvbe::Trace& b) {
    return a.summary.blockTokens == b.summary.blockTokens && a.distinctBlocks == b.distinctBlocks &&
           a.arrivalS == b.arrivalS && a.inputTokens == b.inputTokens &&
           a.outputTokens == b.outputTokens && a.blockOffset == b.blockOffset &&
           a.blocks == b.blocks;
}

// How many ways an input is tried. EveryWay (the regression test, tst_fuzz_regressions): every
// format, with and without skipBad, and each distinct trace under both policies and both
// placements. OneWay (the libFuzzer target): the input picks one format besides Auto detection
// and one policy by its hash, so one input runs a sixth of the code and the fuzzer runs six
// times the inputs; over the inputs every format and policy is tried, and an input that fails
// one way fails the regression test too, which tries it every way.
enum class FuzzWays { EveryWay, OneWay };

// A fleet of 3 servers, 2 a node, the second tier pooled behind a 3 GB/s pool, under each
// router: every request routed once, ratios in [0, 1], optimal never slower than always or
// GPU-only caching. Then 2 llama.cpp servers.
inline void fuzzFleet(const kvbe::Trace& t, const kvbe::CostModel& cost,
                      const kvbe::ReplayConfig& base, const std::vector<std::string>& routers) {
    for (const auto& name : routers) {
        kvbe::ReplayConfig c = base;
        c.instances = 3;
        c.fleet.enabled = true;
        c.fleet.nodeServers = 2;
        c.fleet.pooled = {false, true};
        c.fleet.poolBps = {0, 3e9};
        auto router = kvbe::parseRouter(name);
        if (!router) std::abort();
        c.fleet.router = *router;
        kvbe::RequestTimes times;
        auto r = kvbe::replayTrace(t, cost, c, &times);
        if (!r || !r->fleet) std::abort();
        std::uint64_t routed = 0;
        for (auto n : r->fleet->requests)
            routed += n;
        if (routed != t.size()) std::abort();
        for (double v : {r->anyTier.tokenWeighted, r->anyTier.blockWeighted, r->anyTier.perRequest})
            if (!(v >= 0 && v <= 1 + 1e-12)) std::abort();
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (times.optimal[i] > times.always[i] || times.optimal[i] > times.gpuOnly[i])
                std::abort();
            if (!(times.queuedAlways[i] >= times.always[i] * (1 - 1e-12))) std::abort();
        }
    }
    // llama.cpp's servers (a slot and a prompt cache of 64 blocks each): every hit run within
    // its request's blocks, ratios in [0, 1]; without an offload tier, a sentence.
    kvbe::ReplayConfig c = base;
    c.instances = 2;
    c.fleet.enabled = true;
    c.fleet.router = kvbe::RouterConfig{};
    c.llamaCpp = kvbe::ReplayConfig::LlamaCpp{64 * c.blockBytes, 0.1};
    kvbe::RequestTimes times;
    auto r = kvbe::replayTrace(t, cost, c, &times);
    if (c.tiers.empty()) {
        if (r) std::abort();
        return;
    }
    if (!r) std::abort();
    for (double v : {r->anyTier.tokenWeighted, r->anyTier.blockWeighted, r->anyTier.perRequest})
        if (!(v >= 0 && v <= 1 + 1e-12)) std::abort();
    for (std::size_t i = 0; i < t.size(); ++i)
        if (times.hitBlocks[i] > t.blocksOf(i).size()) std::abort();
}

// Whatever the bytes, every reader gives requests or a sentence naming the source; a trace with
// block ids replays under every policy and placement with ratios in [0, 1] and `optimal` never
// slower than `always` or GPU-only caching.
inline int fuzzTraceWays(const uint8_t* data, size_t size, FuzzWays ways) {
    static const kvbe::CostModel cost = [] {
        auto p = kvbe::Presets::loadBuiltin();
        if (!p) std::abort();
        kvbe::CostInputs in;
        in.model = p->findModel("meta-llama/Llama-3.2-3B")->spec;
        in.peakFlops = 989e12;
        in.utilisation = 0.5;
        auto cm = kvbe::CostModel::create(in);
        if (!cm) std::abort();
        return *cm;
    }();
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<kvbe::TraceFormat> formats{kvbe::TraceFormat::Auto};
    for (const auto& info : kvbe::traceFormats())
        formats.push_back(kvbe::TraceFormat{info.name});
    std::vector<kvbe::EvictionPolicy> policies{kvbe::EvictionPolicy::Lru,
                                               kvbe::EvictionPolicy::S3Fifo};
    // The fleet's routers, two with their index seen 10 ms late.
    std::vector<std::string> routers;
    for (const auto name : kvbe::routerNames())
        routers.emplace_back(name);
    routers.push_back("llm-d:event_lag=0.01");
    routers.push_back("dynamo:event_lag=0.01");
    if (ways == FuzzWays::OneWay) {
        const std::size_t h = std::hash<std::string_view>{}(text);
        formats = {kvbe::TraceFormat::Auto, formats[1 + h % (formats.size() - 1)]};
        policies = {policies[(h >> 8) % 2]};
        routers = {routers[(h >> 16) % routers.size()]};
    }
    std::vector<kvbe::Trace> replayed;
    for (auto f : formats) {
        for (bool skip : {false, true}) {
            kvbe::TraceReadOptions opt;
            opt.format = f;
            opt.skipBad = skip;
            auto t = kvbe::loadTraceText(text, "fuzz.trace", opt);
            if (!t) {
                if (t.message().find("fuzz.trace") != 0) std::abort();
                continue;
            }
            if (t->size() + 1 != t->blockOffset.size()) std::abort();
            if (!t->summary.hasBlocks() || t->size() > 2000) continue;
            bool seen = false;
            for (const auto& r : replayed)
                seen = seen || sameReplayInput(r, *t);
            if (seen) continue;
            replayed.push_back(*t);
            for (auto pol : policies) {
                for (auto pl : {kvbe::Placement::WriteThrough, kvbe::Placement::Cascade}) {
                    kvbe::ReplayConfig c;
                    c.blockBytes = 1;
                    c.gpuCapacityBytes = 3;
                    c.policy = pol;
                    c.placement = pl;
                    // The write queue (1-byte blocks at 1 B/s: every write is late, a buffer of 2
                    // drops) and prefill servers, on half of the runs each.
                    c.writeQueue = pol == kvbe::EvictionPolicy::Lru;
                    c.instances = pl == kvbe::Placement::Cascade ? 2 : 0;
                    c.tiers.push_back(
                        kvbe::SimTier{"dram", 5, kvbe::TierPath{"dram", 55e9, 5e-4}, 55e9});
                    c.tiers.push_back(
                        kvbe::SimTier{"nvme", 11, kvbe::TierPath{"nvme", 6e9, 1e-3}, 4e9});
                    c.tiers.back().writeBps = 1;
                    c.tiers.back().writeBufferBytes = 2;
                    // Reads and writes on one link, in the write-through half.
                    c.tiers.back().sharedLink = pl == kvbe::Placement::WriteThrough;
                    kvbe::RequestTimes times;
                    auto r = kvbe::replayTrace(*t, cost, c, &times);
                    if (!r) std::abort();
                    for (double v : {r->anyTier.tokenWeighted, r->anyTier.blockWeighted,
                                     r->anyTier.perRequest})
                        if (!(v >= 0 && v <= 1 + 1e-12)) std::abort();
                    for (std::size_t i = 0; i < t->size(); ++i)
                        if (times.optimal[i] > times.always[i] ||
                            times.optimal[i] > times.gpuOnly[i])
                            std::abort();
                    if (pol == kvbe::EvictionPolicy::Lru && pl == kvbe::Placement::WriteThrough)
                        fuzzFleet(*t, cost, c, routers);
                    if (c.instances > 0)
                        for (std::size_t i = 0; i < t->size(); ++i) {
                            if (!(times.queuedAlways[i] >= times.always[i] * (1 - 1e-12)))
                                std::abort();
                            // The load-aware rule is never slower than GPU-only caching (up to
                            // the rounding of the arrival times it adds and subtracts).
                            const double slack = 1e-9 * (1 + std::abs(t->arrivalS[i]));
                            if (times.queuedOptimal[i] >
                                times.queuedGpuOnly[i] * (1 + 1e-9) + slack)
                                std::abort();
                        }
                }
            }
        }
    }
    return 0;
}

inline int fuzzTrace(const uint8_t* data, size_t size) {
    return fuzzTraceWays(data, size, FuzzWays::EveryWay);
}

} // namespace kvbe::fuzz
