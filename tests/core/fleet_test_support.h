// Helpers shared by the fleet tests: a fleet's configuration, traces written inline, and
// independent counts of a fleet's caches (each copy of each tier an LRU of its own, std::list and
// a hash map), against which the replay's hits and writes are checked.
#pragma once

#include "kvbe/cost/cost_model.h"
#include "kvbe/trace/fleet.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"
#include "trace_test_support.h"

#include <algorithm>
#include <string>
#include <vector>

namespace kvbe::test {

inline double hitTokens(std::size_t h, double n, double B) {
    return std::min(double(h) * B, n);
}

// The token-weighted hits of LRUs of `blocks` each, request i fed to LRU copyOf(i), counted
// here: an independent reference for a fleet's caches.
template <class CopyOf>
inline double referenceHits(const std::vector<RealRequest>& reqs, std::size_t copies,
                            std::size_t blocks, CopyOf copyOf) {
    std::vector<ReferenceLru> caches(copies, ReferenceLru(blocks));
    double hit = 0, total = 0;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        hit += hitTokens(caches[copyOf(i)].request(reqs[i].ids), reqs[i].n, 512);
        total += reqs[i].n;
    }
    return hit / total;
}

// A fleet's tiers counted here, each copy an independent LRU (ReferenceLru), requests i going to
// server i mod N (round-robin): per tier the hit tokens (each block of the hit run in the fastest
// tier holding it) and the blocks written (each block a copy did not hold when used). spans:
// servers a copy of each tier (GPU first); storeAfter: the offload tiers take a block from its
// storeAfter-th sighting.
struct TierCounts {
    std::vector<double> hitTokens;
    std::vector<std::uint64_t> written;
};
inline TierCounts referenceTiers(const std::vector<RealRequest>& reqs, int servers,
                                 const std::vector<std::size_t>& caps,
                                 const std::vector<int>& spans, int storeAfter = 1) {
    const std::size_t K = caps.size();
    std::vector<std::vector<ReferenceLru>> tiers(K);
    for (std::size_t k = 0; k < K; ++k)
        tiers[k].assign(static_cast<std::size_t>((servers + spans[k] - 1) / spans[k]),
                        ReferenceLru(caps[k]));
    std::unordered_map<qint64, int> seen;
    TierCounts out{std::vector<double>(K, 0.0), std::vector<std::uint64_t>(K, 0)};
    for (std::size_t i = 0; i < reqs.size(); ++i) {
        const int s = static_cast<int>(i % static_cast<std::size_t>(servers));
        auto copy = [&](std::size_t k) -> ReferenceLru& {
            return tiers[k][static_cast<std::size_t>(s / spans[k])];
        };
        const auto& ids = reqs[i].ids;
        for (std::size_t j = 0; j < ids.size(); ++j) {
            std::size_t k = 0;
            while (k < K && !copy(k).holds(ids[j]))
                ++k;
            if (k == K) break;
            out.hitTokens[k] += std::clamp(reqs[i].n - 512.0 * double(j), 0.0, 512.0);
        }
        for (const qint64 id : ids) {
            out.written[0] += copy(0).use(id);
            if (++seen[id] < storeAfter) continue;
            for (std::size_t k = 1; k < K; ++k)
                out.written[k] += copy(k).use(id);
        }
    }
    double total = 0;
    for (const auto& r : reqs)
        total += r.n;
    for (double& h : out.hitTokens)
        h /= total;
    return out;
}

inline ReplayConfig fleetConfig(const CostModel& cm, int servers, const std::string& router) {
    ReplayConfig cfg;
    cfg.blockBytes = cm.kvBytesPerToken() * 512;
    cfg.instances = servers;
    cfg.fleet.enabled = true;
    auto r = parseRouter(router);
    if (!r) qFatal("%s", r.message().c_str());
    cfg.fleet.router = *r;
    return cfg;
}

// Every request at t = 0 (nobody finishes during the example, as docs/routers.md's examples
// assume), each the given prefix ids, whole 512-token blocks.
inline Trace atOnce(const std::vector<std::vector<int>>& requests) {
    std::string text;
    for (const auto& ids : requests) {
        std::string list;
        for (std::size_t j = 0; j < ids.size(); ++j)
            list += (j ? ", " : "") + std::to_string(ids[j]);
        text += R"({"timestamp": 0, "input_length": )" + std::to_string(512 * ids.size()) +
                R"(, "hash_ids": [)" + list + "]}\n";
    }
    auto t = loadTraceText(text, "routers.jsonl", {});
    if (!t) qFatal("%s", t.message().c_str());
    return std::move(*t);
}

} // namespace kvbe::test
