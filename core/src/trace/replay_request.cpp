#include "kvbe/trace/replay_request.h"

#include "kvbe/trace/trace_setup.h"

#include <cmath>
#include <cstdio>

namespace kvbe {

std::string_view toString(RequestField f) {
    switch (f) {
    case RequestField::None:
        return "none";
    case RequestField::GpuCache:
        return "gpu cache";
    case RequestField::Tiers:
        return "tiers";
    case RequestField::TierWrite:
        return "tier write";
    case RequestField::SharedLink:
        return "shared link";
    case RequestField::WriteBuffer:
        return "write buffer";
    case RequestField::Instances:
        return "instances";
    case RequestField::StoreAfter:
        return "store after";
    case RequestField::RateScale:
        return "rate scale";
    case RequestField::Router:
        return "router";
    case RequestField::NodeServers:
        return "node servers";
    case RequestField::Pooled:
        return "pooled";
    case RequestField::Life:
        return "life";
    case RequestField::SloP99:
        return "slo p99";
    case RequestField::Budget:
        return "budget";
    case RequestField::DramSizes:
        return "dram sizes";
    case RequestField::DriveCounts:
        return "drive counts";
    case RequestField::Drives:
        return "drives";
    case RequestField::StoreAfterGrid:
        return "store after grid";
    case RequestField::Placements:
        return "placements";
    case RequestField::Links:
        return "links";
    }
    return "none";
}

std::string valueText(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

namespace {

std::string quoted(double v) {
    return "'" + valueText(v) + "'";
}

std::string tierNames(const std::vector<SimTier>& tiers) {
    std::string names;
    for (const auto& t : tiers)
        names += (names.empty() ? "" : ", ") + t.name;
    return names.empty() ? std::string("(none)") : names;
}

} // namespace

RequestStatus applyTierSettings(const ReplayRequest& r, std::vector<SimTier>& tiers, bool strict) {
    for (const auto& w : r.tierWrites) {
        if (!(w.bytesPerSecond > 0) || !std::isfinite(w.bytesPerSecond))
            return RequestError{RequestField::TierWrite,
                                w.tier + ": " + valueText(w.bytesPerSecond / 1e9) +
                                    " GB/s; expected a write bandwidth above 0"};
        bool found = false;
        for (auto& t : tiers)
            if (t.name == w.tier) {
                t.writeBps = w.bytesPerSecond;
                found = true;
            }
        if (!found && strict)
            return RequestError{RequestField::TierWrite,
                                w.tier + ": not a tier of this replay; expected one of " +
                                    tierNames(tiers)};
    }
    for (const auto& name : r.sharedLinks) {
        bool found = false;
        for (auto& t : tiers)
            if (t.name == name) {
                t.sharedLink = true;
                found = true;
            }
        if (!found && strict)
            return RequestError{RequestField::SharedLink,
                                name + ": not a tier of this replay; expected one of " +
                                    tierNames(tiers)};
    }
    if (r.everyLinkShared)
        for (auto& t : tiers)
            t.sharedLink = true;
    if (r.writeBufferBytes) {
        if (!(*r.writeBufferBytes > 0) || !std::isfinite(*r.writeBufferBytes))
            return RequestError{RequestField::WriteBuffer,
                                quoted(*r.writeBufferBytes) +
                                    ": expected a size above 0 bytes, e.g. 8GiB"};
        for (auto& t : tiers)
            t.writeBufferBytes = *r.writeBufferBytes;
    }
    return Ok{};
}

RequestResult<ReplaySetup> replaySetup(const ReplayRequest& r, const Evaluation& e,
                                       std::uint32_t blockTokens) {
    ReplaySetup out;
    ReplayConfig& c = out.config;
    // B · kv_bytes_per_token, plus one state snapshot per block for hybrid models.
    c.blockBytes = traceBlockBytes(e.cost, blockTokens);
    c.policy = r.policy;
    c.placement = r.placement;
    if (r.gpuCache) {
        c.gpuCapacityBytes = capacityBytes(*r.gpuCache, c.blockBytes, blockTokens);
    } else {
        // vLLM's default: 90 % of HBM, less the weights, on each tensor-parallel GPU.
        auto left = defaultGpuCacheBytes(e);
        if (!left) return RequestError{RequestField::GpuCache, left.message()};
        c.gpuCapacityBytes = *left;
    }
    if (r.tierCapacities.size() > e.scenario.tiers.size())
        return RequestError{RequestField::Tiers, std::to_string(r.tierCapacities.size()) +
                                                     " tier capacities for a scenario of " +
                                                     std::to_string(e.scenario.tiers.size()) +
                                                     " tiers"};
    auto sim = scenarioSimTiers(e);
    for (std::size_t i = 0; i < sim.size(); ++i) {
        SimTier t = sim[i];
        if (r.tiersNamedAsScenario && i < e.tiers.size()) t.name = e.tiers[i].name;
        if (i < r.tierCapacities.size() && r.tierCapacities[i])
            t.capacityBytes = capacityBytes(*r.tierCapacities[i], c.blockBytes, blockTokens);
        if (r.leaveOutEmptyTiers && !(t.capacityBytes > 0)) continue;
        c.tiers.push_back(std::move(t));
        out.scenarioTierOf.push_back(int(i));
    }
    if (auto ok = applyTierSettings(r, c.tiers, true); !ok) return ok.error();
    c.writeQueue = r.writeQueue;
    if (r.instances < 0)
        return RequestError{RequestField::Instances,
                            "'" + std::to_string(r.instances) +
                                "': expected 0 (no queueing) or more prefill servers"};
    c.instances = r.instances;
    c.fleet.enabled = r.fleet;
    if (!r.router.empty()) {
        auto router = parseRouter(r.router);
        if (!router) return RequestError{RequestField::Router, router.message()};
        c.fleet.router = std::move(*router);
    }
    if (r.nodeServers < 1)
        return RequestError{RequestField::NodeServers,
                            "'" + std::to_string(r.nodeServers) +
                                "': expected 1 or more servers per node"};
    c.fleet.nodeServers = r.nodeServers;
    auto tierNames = [&] {
        std::string names;
        for (std::size_t k = 0; k < c.tiers.size(); ++k)
            names += (k ? ", " : "") + c.tiers[k].name;
        return names.empty() ? std::string("none (the scenario has no offload tier)") : names;
    };
    c.fleet.pooled.assign(c.tiers.size(), false);
    c.fleet.poolBps.assign(c.tiers.size(), 0.0);
    for (std::size_t k = 0; k < c.tiers.size(); ++k) {
        const auto i = static_cast<std::size_t>(out.scenarioTierOf[k]);
        if (i < r.pooledScenarioTiers.size() && r.pooledScenarioTiers[i]) c.fleet.pooled[k] = true;
    }
    for (const auto& name : r.pooled) {
        bool found = false;
        for (std::size_t k = 0; k < c.tiers.size(); ++k)
            if (c.tiers[k].name == name) c.fleet.pooled[k] = found = true;
        if (!found)
            return RequestError{RequestField::Pooled, "'" + name +
                                                          "' names no tier of the replay; "
                                                          "expected one of " +
                                                          tierNames()};
    }
    for (const auto& b : r.poolBandwidths) {
        bool found = false;
        for (std::size_t k = 0; k < c.tiers.size(); ++k)
            if (c.tiers[k].name == b.tier && c.fleet.pooled[k]) {
                c.fleet.poolBps[k] = b.bytesPerSecond;
                found = true;
            }
        if (!found)
            return RequestError{RequestField::Pooled,
                                "'" + b.tier +
                                    "': a pool bandwidth for a tier that is not "
                                    "pooled; pool it first (--pooled " +
                                    b.tier + ")"};
    }
    if (!r.pooled.empty() && r.instances < 2 && r.fleet)
        return RequestError{RequestField::Pooled,
                            "a pooled tier needs a fleet: expected 2 or more servers (--servers)"};
    if (r.storeAfter < 1 || r.storeAfter > kMaxStoreAfter)
        return RequestError{RequestField::StoreAfter,
                            "'" + std::to_string(r.storeAfter) +
                                "': expected a whole number of sightings, 1 (store every block) "
                                "to " +
                                std::to_string(kMaxStoreAfter)};
    c.storeAfter = r.storeAfter;
    if (!(r.rateScale > 0) || !std::isfinite(r.rateScale))
        return RequestError{RequestField::RateScale,
                            quoted(r.rateScale) +
                                ": expected a load scale above 0 (2 doubles the request rate)"};
    c.rateScale = r.rateScale;
    return out;
}

} // namespace kvbe
