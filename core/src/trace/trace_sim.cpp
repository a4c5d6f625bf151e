// Replay of a trace through the tiered prefix cache (docs/workload-model.md): per request the
// lookup, the admission rules on its hit run (trace_admission.h), the tiers' update and its
// writes (trace_write_queues.h); at the end the hit ratios, write rates and, with prefill
// servers, the queueing (trace_loads.h). The caches themselves are in trace_cache.h.
#include "kvbe/trace/trace_sim.h"

#include "kvbe/base/statistics.h"

#include "trace_replay.h"

#include <algorithm>
#include <cmath>

namespace kvbe {

namespace detail::sim {

namespace {

std::uint64_t capacityBlocks(double bytes, double blockBytes) {
    if (!std::isfinite(bytes)) return kNoLimit;
    // A hair above the quotient: "6000 blocks" given in bytes must not round down to 5999.
    return static_cast<std::uint64_t>(std::floor(bytes / blockBytes * (1 + 1e-12)));
}

} // namespace

Replay::Replay(const Trace& trace, const CostModel& cost, const ReplayConfig& config,
               RequestTimes* per, unsigned kept, bool forQueueing)
    : m_trace(trace), m_cost(cost), m_config(config), m_per(per), m_k(config.tiers.size() + 1),
      m_b(trace.summary.blockTokens), m_n(trace.size()), m_forQueueing(forQueueing),
      m_resident(trace.distinctBlocks, 0), m_rc{cost, config.tiers} {
    if (config.rateScale != 1) {
        m_scaled.reserve(m_n);
        for (double a : trace.arrivalS)
            m_scaled.push_back(a / config.rateScale);
        m_arrival = &m_scaled;
    }
    setUpTiers();
    // A fleet's write queues are its nodes' and its pools' (m_fleetQueues); the replay's own
    // are then off.
    m_queues.emplace(config, m_fleet ? std::vector<std::uint64_t>(m_k, 0) : m_caps,
                     trace.distinctBlocks, m_resident.data(), m_res.tiers, m_res.binS);
    if (m_fleet && config.writeQueue) {
        const int nodes = m_fleet->nodes(), perNode = m_fleet->nodeServers();
        m_fleetQueues.reserve(static_cast<std::size_t>(nodes) + 1);
        for (int g = 0; g <= nodes; ++g) {
            std::vector<std::uint64_t> caps = m_caps;
            for (std::size_t k = 1; k < m_k; ++k)
                if (m_res.tiers[k].pooled != (g == nodes)) caps[k] = 0;
            const int server = g == nodes ? 0 : g * perNode;
            const detail::Fleet* fleet = &*m_fleet;
            m_fleetQueues.emplace_back(
                config, caps, trace.distinctBlocks,
                [fleet, server](std::uint32_t id, std::size_t k) {
                    return fleet->holds(k, id, server);
                },
                m_res.tiers, m_res.binS);
        }
    }
    // Prefill times per rule (none, gpu-only, always, breakeven, optimal), and with instances
    // the load part of always and breakeven (the part a wait can hide), their transfers, and
    // the hit runs the load-aware rule cuts at queueing time.
    if (per || (config.instances > 0 && !forQueueing)) kept = detail::kAllRules;
    for (std::size_t r = 0; r < kRules; ++r)
        // Queueing overwrites the load-aware rule's times from its runs without reading them.
        if ((kept & (1u << r)) && !(forQueueing && r == Optimal))
            m_cols[r] = detail::BlockArray<double>(m_n);
    m_keepRuns = config.instances > 0 && (kept & (1u << Optimal));
    if (config.instances > 0) {
        for (std::size_t r : {Always, Breakeven})
            if (kept & (1u << r)) m_loads[r - Always] = detail::BlockArray<double>(m_n);
        if (m_keepRuns) m_staticCut.reserve(m_n);
    }
    m_windowBytes.resize(m_k);
    for (std::size_t r = 0; r < kRules; ++r)
        m_rules[r].name = kRuleNames[r];
    if (per) {
        per->hitBlocks.clear();
        per->hitBlocks.reserve(m_n);
        per->hitTiers.clear();
        per->optimalCut.clear();
        per->optimalCut.reserve(m_n);
    }
}

bool Replay::run(const std::function<bool(double)>& progress) {
    for (std::size_t i = 0; i < m_n; ++i) {
        if (progress && (i & 4095u) == 0 &&
            !progress(static_cast<double>(i) / static_cast<double>(m_n)))
            return false;
        request(i);
    }
    if (progress) progress(1.0);
    return true;
}

ReplayResult Replay::finish() {
    summariseTiers();
    if (m_per) {
        m_per->none.assign(column(None), column(None) + m_n);
        m_per->gpuOnly.assign(column(GpuOnly), column(GpuOnly) + m_n);
        m_per->always.assign(column(Always), column(Always) + m_n);
        m_per->breakeven.assign(column(Breakeven), column(Breakeven) + m_n);
        m_per->optimal.assign(column(Optimal), column(Optimal) + m_n);
    }
    if (m_config.instances > 0) queueOnInstances();
    if (m_fleet) m_res.fleet = m_fleet->report();
    summariseRuleTiers();
    for (std::size_t k = 1; k < m_k; ++k) {
        m_rules[Optimal].tiers[k].blocksDeclinedForBacklog = m_backlogBlocks[k];
        m_rules[Optimal].tiers[k].requestsDeclinedForBacklog = m_backlogRequests[k];
    }
    compareWithGpuOnly();
    // The GPU-only column is compared against last, as the quantiles reorder each column.
    for (std::size_t r : {None, Always, Breakeven, Optimal, GpuOnly})
        if (double* t = column(r)) m_rules[r].ttft = detail::ttftStats(t, t + m_n);
    for (std::size_t r = 0; r < kRules; ++r)
        if (column(r)) m_res.rules.push_back(m_rules[r]);
    return std::move(m_res);
}

detail::QueueInputs Replay::queueInputs() {
    detail::QueueInputs q; // the columns moved, not copied: at 10^7 requests, 560 MB
    q.requests = m_n;
    q.columns = std::move(m_cols);
    q.loadColumns = std::move(m_loads);
    sealQueueInputs();
    q.fifo = std::move(m_fifo);
    q.runs = std::move(m_runs);
    q.staticCut = std::move(m_staticCut);
    return q;
}

void Replay::setUpTiers() {
    m_res.requests = m_trace.size();
    m_res.distinctBlocks = m_trace.distinctBlocks;
    m_caps.resize(m_k);
    m_res.tiers.resize(m_k);
    for (std::size_t k = 0; k < m_k; ++k) {
        const double bytes =
            k == 0 ? m_config.gpuCapacityBytes : m_config.tiers[k - 1].capacityBytes;
        m_caps[k] = capacityBlocks(bytes, m_config.blockBytes);
        auto& tr = m_res.tiers[k];
        tr.name = k == 0 ? "gpu" : m_config.tiers[k - 1].name;
        tr.capacityBytes = bytes;
        tr.capacityBlocks = m_caps[k];
        if (k > 0) {
            // The rule decides on p* itself; the report states the whole prefix, as every view.
            const auto pStar = m_cost.breakevenPrefix(m_config.tiers[k - 1].path);
            tr.pStarTokens = wholeBreakevenPrefix(pStar);
            tr.writeBps = m_config.tiers[k - 1].writeBps;
            m_pStar[k] = pStar ? *pStar : kUnlimited;
        }
    }
    const std::uint32_t nb = m_trace.distinctBlocks;
    if (m_config.storeAfter > 1) m_seen = detail::BlockArray<std::uint8_t>(nb, 0);
    if (m_config.isFleet()) {
        // A fleet: a cache per server, a local tier per node, one copy of a pooled tier.
        m_fleet.emplace(m_trace, m_config, m_caps);
        if (m_config.llamaCpp)
            m_llama.emplace(m_config.instances,
                            m_config.llamaCpp->cacheRamBytes /
                                (m_config.blockBytes / m_b + detail::kLlamaCellMetaBytes),
                            m_config.llamaCpp->slotSimilarity, static_cast<std::uint32_t>(m_b));
        for (std::size_t k = 0; k < m_k; ++k) {
            m_res.tiers[k].copies = m_fleet->copies(k);
            m_res.tiers[k].pooled =
                k > 0 && k - 1 < m_config.fleet.pooled.size() && m_config.fleet.pooled[k - 1];
        }
        m_serverOf.reserve(m_n);
    }
    m_inclusive = !m_fleet && m_config.policy == EvictionPolicy::Lru &&
                  m_config.placement == Placement::WriteThrough &&
                  m_trace.blocks.size() < detail::InclusiveLru::kNever;
    if (m_fleet) {
        // The fleet holds the caches.
    } else if (m_inclusive && m_config.storeAfter > 1) {
        // Store admission: the GPU sees every access, the offload tiers only the accesses of
        // admitted blocks. Each stream is inclusive by itself, so one recency structure
        // each: the GPU's, and the offload tiers' (their cursors skip the positions of the
        // accesses they did not see, which are never their blocks' last admitted access).
        std::vector<std::uint64_t> gpu(m_k, 0), offload = m_caps;
        gpu[0] = m_caps[0];
        offload[0] = 0;
        m_lru.emplace(nb, gpu, m_resident.data(), m_trace.blocks.data(), m_trace.blocks.size());
        m_lruOffload.emplace(nb, offload, m_resident.data(), m_trace.blocks.data(),
                             m_trace.blocks.size());
    } else if (m_inclusive) {
        m_lru.emplace(nb, m_caps, m_resident.data(), m_trace.blocks.data(), m_trace.blocks.size());
    } else {
        m_links.emplace(nb, m_k);
        m_caches.reserve(m_k);
        for (std::size_t k = 0; k < m_k; ++k)
            m_caches.emplace_back(nb, m_caps[k], m_config.policy, m_resident.data(),
                                  static_cast<int>(k), m_links->base(k), m_links->stride());
    }
    double maxArrival = 0;
    for (double a : *m_arrival)
        maxArrival = std::max(maxArrival, a);
    m_res.durationS = maxArrival;
    m_res.windows = windowOf(maxArrival) + 1;
    m_res.binS = detail::linkBinSeconds(m_res.windows);
    m_offered.assign(m_k, BusySeries());
    for (std::size_t k = 1; k < m_k; ++k) {
        m_offered[k] = BusySeries(m_res.binS);
        m_res.tiers[k].readBps = m_config.tiers[k - 1].path.bandwidthBps;
    }
}

} // namespace detail::sim

// The replay's parts (trace_replay.h).
using namespace detail::sim;

namespace {

Status checkConfig(const Trace& trace, const ReplayConfig& c) {
    if (!trace.summary.hasBlocks())
        return Error{"the trace has no block ids (" + std::string(toString(trace.summary.format)) +
                     " traces carry lengths and arrivals only): it feeds the length histogram, not "
                     "a replay"};
    if (!(c.blockBytes > 0))
        return Error{"block bytes: expected more than 0 (the model's KV bytes per token times the "
                     "block size)"};
    if (c.tiers.size() + 1 > kMaxTiers)
        return Error{"tiers: " + std::to_string(c.tiers.size()) +
                     " offload tiers; expected at most " + std::to_string(kMaxTiers - 1)};
    if (!(c.gpuCapacityBytes >= 0)) return Error{"GPU cache capacity: expected 0 or more bytes"};
    if (c.instances > 0)
        for (std::size_t i = 0; i < trace.size(); ++i)
            if (trace.blockOffset[i + 1] - trace.blockOffset[i] > detail::kMaxRunBlocks)
                return Error{"request " + std::to_string(i + 1) + ": " +
                             std::to_string(trace.blockOffset[i + 1] - trace.blockOffset[i]) +
                             " blocks; queueing on servers takes at most " +
                             std::to_string(detail::kMaxRunBlocks) + " a request"};
    if (c.llamaCpp) {
        if (!c.fleet.enabled || c.instances < 1)
            return Error{"llama.cpp servers: expected 1 or more servers (--servers)"};
        if (c.llamaCpp->cacheRamBytes > 0 && c.tiers.empty())
            return Error{"llama.cpp servers: the host-RAM prompt cache is read as the first "
                         "offload tier, and the replay has none; name it with --tier"};
        if (!(c.llamaCpp->cacheRamBytes >= 0))
            return Error{"llama.cpp servers: the prompt cache's size is expected 0 or more bytes"};
    }
    if (c.isFleet()) {
        if (c.instances > kMaxServers)
            return Error{"servers: " + std::to_string(c.instances) + "; expected at most " +
                         std::to_string(kMaxServers)};
        if (c.policy != EvictionPolicy::Lru || c.placement != Placement::WriteThrough)
            return Error{"servers: a fleet of " + std::to_string(c.instances) +
                         " servers is replayed with LRU eviction and write-through placement; "
                         "S3-FIFO and cascade are replayed on one server"};
        if (c.fleet.nodeServers < 1)
            return Error{"servers per node: " + std::to_string(c.fleet.nodeServers) +
                         "; expected 1 or more"};
        for (std::size_t k = 0; k < c.fleet.poolBps.size(); ++k)
            if (!(c.fleet.poolBps[k] >= 0) || !std::isfinite(c.fleet.poolBps[k]))
                return Error{"pool bandwidth: expected 0 (no limit) or more bytes/s"};
        for (const double b : c.fleet.poolLinkWriteBps)
            if (!(b >= 0) || !std::isfinite(b))
                return Error{"pool link write bandwidth: expected 0 (no limit) or more bytes/s"};
    }
    if (c.storeAfter < 1 || c.storeAfter > kMaxStoreAfter)
        return Error{"store after: " + std::to_string(c.storeAfter) +
                     " sightings; expected a whole number from 1 (store every block) to " +
                     std::to_string(kMaxStoreAfter)};
    if (!(c.rateScale > 0) || !std::isfinite(c.rateScale))
        return Error{"rate scale: expected a number above 0 (2 doubles the request rate)"};
    for (const auto& name : c.reportRules)
        if (std::find(std::begin(kRuleNames), std::end(kRuleNames), name) == std::end(kRuleNames))
            return Error{"report rules: '" + name +
                         "'; expected none, gpu-only, always, breakeven or optimal"};
    for (const auto& t : c.tiers) {
        if (!(t.capacityBytes >= 0))
            return Error{"tier " + t.name + ": capacity expected 0 or more bytes"};
        if (!(t.path.bandwidthBps > 0))
            return Error{"tier " + t.name + ": read bandwidth expected more than 0"};
    }
    return Ok{};
}

} // namespace

Result<ReplayResult> replayTrace(const Trace& trace, const CostModel& cost,
                                 const ReplayConfig& config, RequestTimes* per,
                                 const std::function<bool(double)>& progress) {
    if (auto ok = checkConfig(trace, config); !ok) return ok.error();
    unsigned kept = config.reportRules.empty() ? detail::kAllRules : 0;
    for (const auto& name : config.reportRules)
        for (std::size_t r = 0; r < kRules; ++r)
            if (name == kRuleNames[r]) kept |= 1u << r;
    // A pool's writes come over its nodes' links: at most their write bandwidth together, for
    // the nodes of these servers (a search that tries several counts gets each its own).
    ReplayConfig linked;
    const ReplayConfig* c = &config;
    const auto& link = config.fleet.poolLinkWriteBps;
    // (One server is no fleet, but its pool is still behind its link.)
    if (config.instances >= 1 &&
        std::any_of(link.begin(), link.end(), [](double b) { return b > 0; })) {
        linked = config;
        const double nodes = fleetNodes(config.instances, config.fleet.nodeServers);
        for (std::size_t k = 0; k < link.size() && k < linked.tiers.size(); ++k) {
            const bool pooled = k < config.fleet.pooled.size() && config.fleet.pooled[k];
            if (!pooled || !(link[k] > 0)) continue;
            double& w = linked.tiers[k].writeBps;
            w = w > 0 ? std::min(w, link[k] * nodes) : link[k] * nodes;
        }
        c = &linked;
    }
    Replay replay(trace, cost, *c, per, kept);
    if (!replay.run(progress)) return replay.cancelled();
    return replay.finish();
}

Result<detail::QueueInputs> detail::replayForQueueing(const Trace& trace, const CostModel& cost,
                                                      const ReplayConfig& config, unsigned rules,
                                                      const std::function<bool(double)>& progress) {
    ReplayConfig c = config;
    // Collects the loads and their segments, on one server: the searches queue them on as many
    // as they try.
    c.instances = 1;
    c.fleet.enabled = false;
    if (auto ok = checkConfig(trace, c); !ok) return ok.error();
    Replay replay(trace, cost, c, nullptr, rules, true);
    if (!replay.run(progress)) {
        QueueInputs cancelled;
        cancelled.cancelled = true;
        return cancelled;
    }
    return replay.queueInputs();
}

} // namespace kvbe
