#include "kvbe/trace/replay_command.h"

#include "kvbe/trace/trace_setup.h"

#include <cmath>
#include <cstdio>

namespace kvbe {

namespace {

// A number that reads back to the same double.
std::string exact(double v) {
    if (v == std::floor(v) && std::abs(v) < 1e15) return std::to_string(static_cast<long long>(v));
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

std::string capacityText(const Capacity& c) {
    switch (c.unit) {
    case Capacity::Unit::Bytes:
        return exact(c.value) + "B";
    case Capacity::Unit::Blocks:
        return exact(c.value) + "blocks";
    case Capacity::Unit::Tokens:
        return exact(c.value) + "tokens";
    case Capacity::Unit::Unlimited:
        break;
    }
    return "unlimited";
}

} // namespace

std::vector<std::string> replayCommandLine(const ReplayRequest& r, const Evaluation& e,
                                           Admission rule, const std::string& traceFile,
                                           const std::string& scenarioFile) {
    std::vector<std::string> w = {"kvbe-cli", "trace",      "replay",
                                  traceFile,  "--scenario", scenarioFile};
    if (r.gpuCache) w.insert(w.end(), {"--gpu-cache", capacityText(*r.gpuCache)});
    // The tiers as the CLI names them (their preset's key), which --tier, --pooled and
    // --shared-link take.
    const auto sim = scenarioSimTiers(e);
    std::vector<std::string> named;
    for (std::size_t i = 0; i < sim.size(); ++i) {
        const std::optional<Capacity> c =
            i < r.tierCapacities.size() ? r.tierCapacities[i] : std::nullopt;
        const bool empty = c && c->unit != Capacity::Unit::Unlimited && !(c->value > 0);
        if (r.leaveOutEmptyTiers && empty) continue;
        named.push_back(sim[i].name);
        w.insert(w.end(), {"--tier", sim[i].name + "=" + (c ? capacityText(*c) : "unlimited")});
        const bool pooled = i < r.pooledScenarioTiers.size() && r.pooledScenarioTiers[i];
        if (pooled) w.insert(w.end(), {"--pooled", sim[i].name});
    }
    // Every tier left out: the GPU alone. --tier names no tier then, so each is named with no
    // room: the same hits.
    if (named.empty())
        for (const auto& t : sim)
            w.insert(w.end(), {"--tier", t.name + "=0"});
    w.insert(w.end(),
             {"--policy", std::string(toString(r.policy)), "--placement",
              std::string(toString(r.placement)), "--admission", std::string(toString(rule))});
    if (r.instances > 0) w.insert(w.end(), {"--servers", std::to_string(r.instances)});
    if (r.instances > 1 && r.fleet) {
        if (!r.router.empty()) w.insert(w.end(), {"--router", r.router});
        if (r.nodeServers > 1) w.insert(w.end(), {"--node-servers", std::to_string(r.nodeServers)});
        for (const auto& p : r.pooled)
            w.insert(w.end(), {"--pooled", p});
        for (const auto& b : r.poolBandwidths)
            w.insert(w.end(), {"--pool-bandwidth", b.tier + "=" + exact(b.bytesPerSecond / 1e9)});
    }
    if (r.storeAfter != 1) w.insert(w.end(), {"--store-after", std::to_string(r.storeAfter)});
    for (const auto& t : r.tierWrites)
        w.insert(w.end(), {"--tier-write", t.tier + "=" + exact(t.bytesPerSecond / 1e9)});
    if (r.writeBufferBytes) w.insert(w.end(), {"--write-buffer", exact(*r.writeBufferBytes) + "B"});
    if (!r.writeQueue) {
        w.push_back("--no-write-queue");
    } else {
        for (const auto& t : r.everyLinkShared ? named : r.sharedLinks)
            w.insert(w.end(), {"--shared-link", t});
    }
    if (r.rateScale != 1) w.insert(w.end(), {"--rate-scale", exact(r.rateScale)});
    return w;
}

std::string replaySettingsSentence(const ReplayConfig& c, Admission rule) {
    auto bytes = [](double b) {
        if (!std::isfinite(b)) return std::string("unlimited");
        char buf[40];
        const double tib = 1024.0 * 1024 * 1024 * 1024;
        std::snprintf(buf, sizeof buf, b >= tib ? "%.3g TiB" : "%.3g GiB",
                      b >= tib ? b / tib : b / (1024.0 * 1024 * 1024));
        return std::string(buf);
    };
    std::string s = "Replayed with " + bytes(c.gpuCapacityBytes) + " of HBM for KV";
    if (c.instances > 1)
        s += " on each of " + std::to_string(c.instances) + " servers" +
             (c.isFleet() ? " behind " + routerText(c.fleet.router)
                          : std::string(" sharing one cache"));
    else if (c.instances == 1)
        s += " on one server";
    s += "; ";
    if (c.tiers.empty()) s += "no offload tier";
    for (std::size_t i = 0; i < c.tiers.size(); ++i) {
        const bool pooled = c.isFleet() && i < c.fleet.pooled.size() && c.fleet.pooled[i];
        s += (i ? ", " : "") + c.tiers[i].name + " " + bytes(c.tiers[i].capacityBytes) +
             (pooled                           ? " pooled"
              : c.instances > 1 && c.isFleet() ? " on each node"
                                               : "") +
             (c.tiers[i].sharedLink ? " (reads and writes on one link)" : "");
    }
    s += "; " + std::string(toString(c.policy)) + ", " + std::string(toString(c.placement)) + ", " +
         std::string(toString(rule)) + " admission";
    if (c.storeAfter > 1) s += "; blocks stored at their " + sightingText(c.storeAfter);
    s += c.instances > 0 ? "" : "; no queueing";
    s += c.writeQueue ? "; a write queue per tier." : "; writes keep up.";
    return s;
}

} // namespace kvbe
