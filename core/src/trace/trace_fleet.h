// A fleet in the replay (docs/workload-model.md, "The fleet"): the servers' GPU caches, each
// offload tier on every node or pooled, what the router knows of the servers' load, and the
// routers themselves (trace_router.cpp). The replay (trace_replay.h) asks the fleet where each
// request goes, looks its hit run up on that server and stores its blocks there. Internal to
// kvbe_core.
#pragma once

#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"

#include "trace_fleet_cache.h"

#include <array>
#include <deque>
#include <optional>
#include <random>
#include <span>
#include <unordered_map>
#include <vector>

namespace kvbe::detail {

// splitmix64's finaliser: the session ring's points and keys.
inline std::uint64_t mix64(std::uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

class Fleet {
  public:
    // caps: blocks per copy of each tier (GPU first), as the replay computed them.
    Fleet(const Trace& trace, const ReplayConfig& config, const std::vector<std::uint64_t>& caps);

    int servers() const { return m_n; }
    int nodes() const { return fleetNodes(m_n, m_nodeServers); }
    // Request i, arriving at now: its server, chosen by the router.
    int route(std::size_t i, double now);
    // Its hit run on server s: for each leading block, the fastest tier that server can read it
    // from (the GPU's own cache, its node's local tiers, the pools).
    std::size_t lookUp(int s, std::span<const std::uint32_t> ids, std::uint8_t* tierOf) const;
    // Write-through at server s: each block is made resident in every tier that server uses
    // (offload tiers only for blocks `admit` says are admitted); accessed(k, id, stored) for each
    // offload tier's access (stored: it was not held and is now).
    template <class Admit, class Accessed>
    void update(int s, std::span<const std::uint32_t> ids, Admit&& admit, Accessed&& accessed) {
        const std::size_t k = m_index.size();
        for (const std::uint32_t id : ids) {
            // The GPU's group takes every block, the others the admitted ones (the GPU's group
            // holds offload tiers only where every block is admitted).
            const bool admitted = k > 1 && admit(id);
            std::uint32_t stored = 0;
            for (std::size_t g = 0; g < m_groups.size() && (g == 0 || admitted); ++g)
                for (unsigned w = m_groups[g].access(id, s); w; w &= w - 1)
                    stored |= 1u << m_groupTiers[g][static_cast<std::size_t>(__builtin_ctz(w))];
            if (!admitted) continue;
            for (std::size_t q = 1; q < k; ++q)
                accessed(q, id, (stored >> q & 1u) != 0);
        }
    }
    // Starts fetching what a request's routing, lookups and updates will read: its blocks'
    // records, which hold every tier's index and stamps (whichever server it goes to).
    void prefetch(std::span<const std::uint32_t> ids) const {
        for (const std::uint32_t id : ids)
            __builtin_prefetch(m_index[0].of(id), 1);
    }
    // The tiers server s can read block id from, a bit each (GPU: bit 0).
    std::uint8_t heldMask(std::uint32_t id, int s) const {
        std::uint8_t m = 0;
        for (std::size_t k = 0; k < m_index.size(); ++k)
            if (m_index[k].holds(id, s)) m |= static_cast<std::uint8_t>(1u << k);
        return m;
    }
    bool holds(std::size_t k, std::uint32_t id, int s) const { return m_index[k].holds(id, s); }
    int nodeServers() const { return m_nodeServers; }
    // The request routed to s takes serviceS of it once it starts (its prefill time under
    // `always`): the load the routers see.
    void booked(std::size_t i, int s, double now, double serviceS);
    std::uint32_t copies(std::size_t k) const { return m_groups[m_groupOf[k]].copies(); }
    // Live servers (LiveRouter): request i, routed to s, is on it until finished() says so.
    void started(std::size_t i, int s);
    void finished(std::size_t i, int s);
    FleetReport report() const;
    std::uint64_t stateBytes() const;

  private:
    // The requests each server has not finished by `now` leave it (and the router's counters).
    void finishBy(double now);
    // Per server, how many of ids' leading blocks it can read from the tiers up to `level`
    // (0: its GPU; 1: its GPU or its node's first local tier …; pooled tiers are left out, as
    // they are the same for every server). Returns the most.
    // seen: as the router's index has it (with an event lag, what the events delivered by now).
    std::uint32_t depths(std::size_t level, std::span<const std::uint32_t> ids,
                         std::vector<std::uint32_t>& out, bool seen = false) const;
    std::uint32_t depthsOf(const ServerIndex* const* idx, std::size_t n,
                           std::span<const std::uint32_t> ids,
                           std::vector<std::uint32_t>& out) const;
    int leastLoaded() const;
    int pickRandom(const std::vector<int>& among);

    int roundRobin();
    int session(std::span<const std::uint32_t> ids);
    int sglang(std::span<const std::uint32_t> ids, double now);
    int llmd(std::span<const std::uint32_t> full, double now);
    int dynamo(std::size_t i, std::span<const std::uint32_t> full);

    const Trace& m_trace;
    const RouterConfig m_rc;
    const int m_n;
    const int m_nodeServers;
    const double m_b; // tokens per block
    // The tiers' caches, in groups of the tiers that see the same uses at the same span (each
    // group one LRU order a copy, SlotLru): the GPU's group first. Per tier: its index (a
    // handle on its group's) and its group; per group, its tiers.
    std::vector<TierCopies> m_groups;
    std::vector<ServerIndex> m_index;
    std::vector<std::size_t> m_groupOf;
    std::vector<std::array<std::uint8_t, kMaxTiers>> m_groupTiers;
    std::vector<std::size_t> m_localLevels; // the local offload tiers, fastest first
    std::vector<std::uint64_t> m_caps;
    // llm-d: each local level's tier weight, cpu_weight for a DRAM (host, CPU) tier, else
    // other_weight, from the tier's name once.
    std::vector<double> m_levelWeight;
    // Per request, reused: the routers' scores and their best servers.
    std::vector<double> m_score;
    std::vector<char> m_present;
    std::vector<int> m_best;

    // Load: per server the requests not yet finished (FIFO, so finish times rise), and when
    // its queue empties.
    struct Booked {
        double finish;
        std::uint32_t request;
        double tokens; // dynamo: the prefill tokens it added to the server's
    };
    std::vector<std::deque<Booked>> m_queue;
    std::vector<std::uint32_t> m_load; // each queue's length
    double m_nextFinish = 0;           // no request finishes before it
    std::vector<double> m_free;
    bool m_needsLoad = false;

    // The report.
    std::vector<std::uint64_t> m_requests;
    std::vector<double> m_busy;
    std::uint64_t m_away = 0;
    std::vector<std::uint32_t> m_depth0; // per server: the GPU's leading blocks (scratch)
    // The router's view with an event lag: per tier its index as the events delivered by now
    // left it, the events in transit, and the GPU's leading blocks it sees.
    bool m_lagged = false;
    double m_clock = 0;
    std::vector<ServerIndex> m_view;
    std::deque<IndexEvent> m_events;
    std::vector<std::uint32_t> m_depthSeen;
    const std::vector<std::uint32_t>* m_seen0 = &m_depth0;

    std::mt19937_64 m_rng;
    std::uint64_t m_rr = 0;
    // session: the ring's points (hash, server), sorted.
    std::vector<std::pair<std::uint64_t, int>> m_ring;
    // sglang: the router's tree, a copy per server (tenant), never evicted but by size.
    std::optional<TierCopies> m_tree;
    std::uint64_t m_treeBlocks = 0;
    double m_nextEviction = 0;
    // llm-d: the metrics as last scraped.
    std::vector<double> m_waiting, m_usage;
    double m_nextScrape = 0;
    std::vector<std::uint32_t> m_depthAny;
    std::vector<std::vector<std::uint32_t>> m_depthLevel;
    // dynamo: per server the prefill tokens routed and not yet computed, and its active blocks
    // (counted per block, shared prefixes once).
    std::vector<double> m_activeTokens;
    std::vector<std::uint64_t> m_activeBlocks;
    std::optional<ServerIndex> m_active;
    std::unordered_map<std::uint64_t, std::uint32_t> m_activeRefs;
    double m_routedTokens = 0; // the request just routed: what it adds to its server's
    std::vector<std::uint32_t> m_depthActive;
};

} // namespace kvbe::detail
