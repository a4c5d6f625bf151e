// The replay of a trace through the tiered prefix cache (trace_sim.cpp), in parts: the class
// Replay holds the tiers' state, the per-request times under each rule and the report's
// counters. trace_sim.cpp sets it up and runs it, trace_replay_request.cpp is the per-request
// step (look up, admit, update the tiers and their writes), trace_replay_summary.cpp the result
// (hit ratios, write rates, links, queueing on prefill servers). Internal to kvbe_core.
#pragma once

#include "kvbe/trace/trace_sim.h"

#include "trace_admission.h"
#include "trace_cache.h"
#include "trace_fleet.h"
#include "trace_link_use.h"
#include "trace_llamacpp.h"
#include "trace_loads.h"
#include "trace_write_queues.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <span>

namespace kvbe::detail::sim {

using detail::BusySeries;
using detail::FifoLoads;
using detail::kMaxTiers;
using detail::kNoLimit;
using detail::Recompute;
using detail::RequestCost;
using detail::RuleTimes;
using detail::TierCache;
using detail::TierTokens;
using detail::WriteQueues;

// The 1-minute window of a trace time (clamped: a fuzzed timestamp can be 1e300 s).
inline std::uint64_t windowOf(double t) {
    return static_cast<std::uint64_t>(std::floor(std::min(t / 60.0, 1e18)));
}

// Rules in the order of ReplayResult::rules.
enum Rule : std::size_t { None, GpuOnly, Always, Breakeven, Optimal, kRules };
inline constexpr const char* kRuleNames[kRules] = {"none", "gpu-only", "always", "breakeven",
                                                   "optimal"};

// One replay: the tiers' state, the per-request times under each rule and the counters of the
// report. run() walks the trace once (look up, admit, update per request); finish() summarises.
class Replay {
  public:
    // kept: the rules whose columns are kept (bits 1 << Rule); forQueueing: the replay stops
    // before the queueing (queueInputs()), which needs only the kept rules' inputs.
    Replay(const Trace& trace, const CostModel& cost, const ReplayConfig& config, RequestTimes* per,
           unsigned kept, bool forQueueing = false);

    // False when progress asked to stop.
    bool run(const std::function<bool(double)>& progress);

    ReplayResult finish();

    // The columns before the servers queue them (the config has instances > 0).
    detail::QueueInputs queueInputs();

    ReplayResult cancelled() {
        m_res.cancelled = true;
        return std::move(m_res);
    }

  private:
    double* column(std::size_t rule) { return m_cols[rule].data(); } // null: not kept

    // Capacities in blocks, the report's tier rows, and the caches: write-through LRU (the
    // common case) runs on one recency list for all tiers; the other policies and placements
    // keep a cache per tier.
    void setUpTiers();

    void request(std::size_t i);

    // The hit run and, for each of its blocks, the fastest tier holding it (and, with write
    // queues, holding it readable: its write has completed and was not dropped).
    std::size_t lookUp(std::span<const std::uint32_t> ids);
    // The tiers a block can be read from (held, its write neither pending nor dropped); where
    // the fastest holding it cannot serve it, counted late or dropped.
    std::uint8_t readable(std::uint8_t held, std::uint8_t pending, std::uint8_t dropped);

    double blockTokens(std::size_t j, double n) const {
        const double a = static_cast<double>(j) * m_b;
        return std::min(a + m_b, n) - a;
    }

    // The hit ratios' sums; returns the run's tokens per tier.
    TierTokens countHits(std::size_t i, std::size_t h);

    // The rules' times for request i, what they declined and the GPU time they saved, and the
    // reads its hit run offers each tier; returns the request's prefill time under `always` (its
    // writes are issued when it ends).
    double admit(std::size_t i, std::size_t h, double now);

    // Update the tiers: touch order 1 … m, so the deepest block is the most recent. A tier
    // holding a block whose write was dropped writes it again.
    void update(std::size_t i, std::span<const std::uint32_t> ids);

    // Counts a sighting of block id (with store admission) and says whether the block is
    // admitted to the offload tiers: seen storeAfter times or more. The count stops at
    // storeAfter, which fits a byte.
    bool sighted(std::uint32_t id) {
        if (m_config.storeAfter <= 1) return true;
        const auto k = static_cast<std::uint8_t>(m_config.storeAfter);
        std::uint8_t& n = m_seen[id];
        if (n < k) ++n;
        return n >= k;
    }
    bool admitted(std::uint32_t id) const {
        return m_config.storeAfter <= 1 || m_seen[id] >= m_config.storeAfter;
    }

    // A block written to tier k in the current window.
    void writeTo(std::size_t k);

    // Cascade: a block evicted from tier m_evictLevel moves to the next (and is written there);
    // what that tier evicts moves on in turn.
    void demote(std::uint32_t id);

    // Hit ratios, bytes written and write rates over 1-minute windows per tier; state size.
    void summariseTiers();

    // An offload tier's links over the trace: the reads its hits offer and its writes (the write
    // queue's busy time, or without one the writes offered at its write bandwidth).
    void summariseLinks(std::size_t k, TierReport& tr);

    // What each rule took from each offload tier: the hit tokens offered and served and, with
    // prefill servers, its reads' busy share of the link.
    void summariseRuleTiers();

    // n prefill servers, first come first served in arrival order (ties in trace order): the
    // columns become the TTFTs with queueing (detail::queueOnServers), each rule's loads queued
    // on the tiers' links behind the loads booked before them (FifoLoads); `optimal` cuts each
    // run at its arrival from the wait and the links' backlog (detail::queueLoadAware).
    void sealQueueInputs();

    void queueOnInstances();

    // Faster or slower than GPU-only caching (the TTFTs with queueing where it is modelled).
    void compareWithGpuOnly();

    const Trace& m_trace;
    const CostModel& m_cost;
    const ReplayConfig& m_config;
    RequestTimes* m_per;
    std::vector<double> m_scaled;                             // arrivals over the rate scale
    const std::vector<double>* m_arrival = &m_trace.arrivalS; // ... or as the trace gives them
    const std::size_t m_k;                                    // the GPU and the offload tiers
    const double m_b;                                         // tokens per block
    const std::size_t m_n;                                    // requests
    const bool m_forQueueing; // stops before the queueing (queueInputs())
    bool m_keepRuns = false;  // optimal's hit runs and static cuts, for the load-aware rule

    ReplayResult m_res;
    std::vector<std::uint64_t> m_caps;
    TierTokens m_pStar{};
    detail::BlockArray<std::uint8_t> m_resident; // a bit per tier holding the block
    bool m_inclusive = false;
    std::optional<detail::InclusiveLru> m_lru;
    std::optional<detail::InclusiveLru> m_lruOffload; // with store admission: the offload tiers
    detail::BlockArray<std::uint8_t> m_seen;          // with store admission: sightings so far
    std::optional<detail::TierLinks> m_links;
    std::vector<TierCache> m_caches;
    std::optional<WriteQueues> m_queues;
    // With instances: always's and breakeven's transfers, the hit runs and optimal's static cut
    // (the load-aware rule cuts at queueing time), the hit run's length per request.
    std::array<FifoLoads, 2> m_fifo;
    detail::HitRuns m_runs;
    std::vector<std::uint32_t> m_staticCut, m_hitRun;
    std::array<std::vector<BusySeries>, kRules> m_busy; // per rule and tier: the reads' time
    std::vector<BusySeries> m_offered;                  // per tier: the reads the hits offer
    std::array<TierTokens, kRules> m_served{};          // per rule and tier: tokens loaded
    std::array<std::uint64_t, kMaxTiers> m_backlogBlocks{}, m_backlogRequests{};
    RequestCost m_rc;

    std::array<detail::BlockArray<double>, kRules> m_cols; // per rule, the kept ones
    std::array<detail::BlockArray<double>, 2> m_loads;     // always's and breakeven's load parts
    std::array<RuleResult, kRules> m_rules;
    TierTokens m_hitTok{}, m_hitBlk{}, m_hitReq{};
    double m_anyTok = 0, m_anyBlk = 0, m_anyReq = 0;
    // Bytes written per window, as (window, bytes) runs in the order written: only the windows
    // with writes take memory.
    std::vector<std::vector<std::pair<std::uint64_t, double>>> m_windowBytes;
    std::uint64_t m_window = 0;
    std::vector<std::uint8_t> m_tierOf; // per block of the current hit run: the tier read
    std::size_t m_evictLevel = 0;       // cascade: the tier evicting
    // A fleet (instances > 1): its caches and router, each request's server, its links.
    std::optional<detail::Fleet> m_fleet;
    std::optional<detail::LlamaCppServers> m_llama; // ReplayConfig::llamaCpp
    std::vector<std::uint16_t> m_serverOf;
    std::optional<detail::FleetLinks> m_fleetLinks;
    // Its write queues: one set per node (its local tiers), then one for the pools.
    std::vector<WriteQueues> m_fleetQueues;
    void setUpFleetLinks();
    void fleetRequest(std::size_t i, std::span<const std::uint32_t> ids, double now);
    // Tier k's write queue is on (in a fleet: on some node's or the pool's); the writes it queued;
    // its time spent writing, per copy in a fleet (the mean over the nodes).
    bool queueOn(std::size_t k) const;
    std::uint64_t queuedWrites(std::size_t k) const;
    BusySeries writeBusy(std::size_t k) const;
};

} // namespace kvbe::detail::sim
