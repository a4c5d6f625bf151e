// The replay's result (trace_replay.h): hit ratios, write rates and state size per tier, the
// links' busy time, what each rule took from each tier, the queueing on prefill servers and the
// comparison with GPU-only caching.
#include "trace_replay.h"

#include "kvbe/base/statistics.h"

#include <algorithm>
#include <vector>

namespace kvbe::detail::sim {

namespace {

// A fleet's link use over the copies of a tier (each node's link, or the pool's links): the
// sum of their busy time divided by the copies, the mean node's.
LinkUse perCopy(LinkUse u, double copies) {
    if (copies <= 1) return u;
    u.busyS /= copies;
    u.meanShare /= copies;
    u.peakShare /= copies;
    u.binsOver = 0;
    for (float& f : u.share) {
        f = static_cast<float>(f / copies);
        if (f > 1) ++u.binsOver;
    }
    return u;
}

} // namespace

void Replay::summariseTiers() {
    const double reqs = static_cast<double>(m_n);
    auto ratios = [&](double t, double b, double r) {
        HitRatios hr;
        hr.tokenWeighted = m_res.tokens ? t / static_cast<double>(m_res.tokens) : 0;
        hr.blockWeighted = m_res.blocks ? b / static_cast<double>(m_res.blocks) : 0;
        hr.perRequest = m_n ? r / reqs : 0;
        return hr;
    };
    m_res.anyTier = ratios(m_anyTok, m_anyBlk, m_anyReq);
    for (std::size_t k = 0; k < m_k; ++k) {
        auto& tr = m_res.tiers[k];
        tr.hits = ratios(m_hitTok[k], m_hitBlk[k], m_hitReq[k]);
        tr.bytesWritten = static_cast<double>(tr.blocksWritten) * m_config.blockBytes;
        tr.blocksStored = queueOn(k) ? queuedWrites(k) - tr.writesDropped : tr.blocksWritten;
        tr.bytesStored = static_cast<double>(tr.blocksStored) * m_config.blockBytes;
        if (k > 0) summariseLinks(k, tr);
        detail::summariseWriteRates(m_windowBytes[k], m_res.windows, tr);
        if (!m_inclusive && !m_fleet) m_res.stateBytes += m_caches[k].stateBytes();
    }
    for (const auto& q : m_fleetQueues)
        m_res.stateBytes += q.stateBytes();
    m_res.stateBytes += m_resident.bytes() + m_queues->stateBytes() + m_seen.bytes() +
                        (m_fleet       ? m_fleet->stateBytes()
                         : m_inclusive ? m_lru->stateBytes()
                                       : m_links->stateBytes()) +
                        (m_lruOffload ? m_lruOffload->stateBytes() : 0);
}

void Replay::summariseLinks(std::size_t k, TierReport& tr) {
    const double span = m_res.durationS;
    tr.readOffered = perCopy(m_offered[k].summary(span), tr.copies);
    const double w = m_config.tiers[k - 1].writeBps;
    if (!(w > 0) || m_caps[k] == 0) return;
    if (queueOn(k)) {
        tr.write = writeBusy(k).summary(span);
        return;
    }
    BusySeries offered(m_res.binS);
    for (const auto& [window, bytes] : m_windowBytes[k])
        offered.addAt(static_cast<double>(window) * 60, bytes / w);
    tr.write = perCopy(offered.summary(span), tr.copies);
}

bool Replay::queueOn(std::size_t k) const {
    if (m_fleetQueues.empty()) return m_queues->on(k);
    return std::any_of(m_fleetQueues.begin(), m_fleetQueues.end(),
                       [k](const WriteQueues& q) { return q.on(k); });
}

std::uint64_t Replay::queuedWrites(std::size_t k) const {
    if (m_fleetQueues.empty()) return m_queues->queued(k);
    std::uint64_t n = 0;
    for (const auto& q : m_fleetQueues)
        n += q.queued(k);
    return n;
}

BusySeries Replay::writeBusy(std::size_t k) const {
    if (m_fleetQueues.empty()) return m_queues->writeBusy(k);
    // A fleet: the nodes' (or the pool's) time spent writing, over the copies of the tier.
    BusySeries sum(m_res.binS);
    const double copies = m_res.tiers[k].copies;
    for (const auto& q : m_fleetQueues) {
        if (!q.on(k)) continue;
        const auto bins = q.writeBusy(k).perBin();
        for (std::size_t b = 0; b < bins.size(); ++b)
            sum.addAt((static_cast<double>(b) + 0.5) * m_res.binS, bins[b] / copies);
    }
    return sum;
}

void Replay::summariseRuleTiers() {
    for (std::size_t r = 0; r < kRules; ++r) {
        auto& tiers = m_rules[r].tiers;
        tiers.assign(m_k, RuleTierUse{});
        for (std::size_t k = 1; k < m_k; ++k) {
            tiers[k].tokensOffered = m_hitTok[k];
            tiers[k].tokensServed = m_served[r][k];
            if (!m_busy[r].empty())
                tiers[k].read =
                    perCopy(m_busy[r][k].summary(m_res.durationS), m_res.tiers[k].copies);
        }
    }
}

void Replay::sealQueueInputs() {
    m_fifo[0].seal();
    m_fifo[1].seal();
    m_runs.seal();
}

void Replay::queueOnInstances() {
    sealQueueInputs();
    const auto& arrival = *m_arrival;
    std::vector<std::uint32_t> order(m_n);
    for (std::size_t i = 0; i < m_n; ++i)
        order[i] = static_cast<std::uint32_t>(i);
    if (!std::is_sorted(arrival.begin(), arrival.end()))
        std::stable_sort(order.begin(), order.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return arrival[a] < arrival[b]; });
    std::vector<double>* perQueued[kRules] = {};
    if (m_per) {
        perQueued[None] = &m_per->queuedNone;
        perQueued[GpuOnly] = &m_per->queuedGpuOnly;
        perQueued[Always] = &m_per->queuedAlways;
        perQueued[Breakeven] = &m_per->queuedBreakeven;
        perQueued[Optimal] = &m_per->queuedOptimal;
    }
    if (m_fleet) setUpFleetLinks();
    const detail::FleetLinks* fleet = m_fleetLinks ? &*m_fleetLinks : nullptr;
    // Recomputing everything, before its column is queued: what the loads must beat.
    const std::vector<double> none(column(None), column(None) + m_n);
    for (std::size_t r : {Always, Breakeven, Optimal})
        m_busy[r].assign(m_k, BusySeries(m_res.binS));
    for (std::size_t r = 0; r < Optimal; ++r) {
        double* t = column(r);
        const double* load = r >= Always ? m_loads[r - Always].data() : nullptr;
        const std::vector<double> loadEnd =
            load ? m_fifo[r - Always].loadEnds(arrival, order, m_config.tiers, &m_busy[r], fleet)
                 : std::vector<double>();
        const auto q = detail::queueOnServers(m_config.instances, arrival, order, t, load, loadEnd,
                                              none.data(), fleet);
        if (perQueued[r]) perQueued[r]->assign(t, t + m_n);
        m_rules[r].meanWaitS = q.meanWaitS;
        m_rules[r].hiddenLoadS = q.hiddenLoadS;
        m_rules[r].sharedLoadS = q.sharedLoadS;
        m_rules[r].gpuSecondsSaved = q.gpuSecondsSaved;
    }
    detail::LoadAwareInputs in{&m_trace,     &m_cost, &m_config.tiers, m_b, &m_runs,
                               &m_staticCut, fleet};
    std::vector<std::uint32_t> cuts;
    double* t = column(Optimal);
    const auto q =
        detail::queueLoadAware(m_config.instances, arrival, order, in, t, &m_busy[Optimal], &cuts);
    if (perQueued[Optimal]) perQueued[Optimal]->assign(t, t + m_n);
    RuleResult& o = m_rules[Optimal];
    o.meanWaitS = q.meanWaitS;
    o.hiddenLoadS = q.hiddenLoadS;
    o.sharedLoadS = q.sharedLoadS;
    o.gpuSecondsSaved = q.gpuSecondsSaved;
    o.declinedRequests = q.declinedRequests;
    o.declinedBlocks = q.declinedBlocks;
    o.declinedLoadS = q.declinedLoadS;
    // What declining saved, against `always` queued on its own links.
    const double* always = column(Always);
    o.declinedNetS = 0;
    for (std::size_t i = 0; i < m_n; ++i)
        if (cuts[i] < m_hitRun[i]) o.declinedNetS += always[i] - t[i];
    if (m_per) m_per->optimalCut = cuts;
    for (std::size_t k = 1; k < m_k; ++k) {
        m_served[Optimal][k] = q.tokensServed[k];
        m_backlogBlocks[k] = q.blocksDeclinedForBacklog[k];
        m_backlogRequests[k] = q.requestsDeclinedForBacklog[k];
    }
}

void Replay::setUpFleetLinks() {
    detail::FleetLinks f;
    f.server = m_serverOf.data();
    f.servers = m_fleet->servers();
    const int nodeServers = std::clamp(m_config.fleet.nodeServers, 1, f.servers);
    f.link.resize(m_k);
    f.pool.assign(m_k, detail::kNil);
    f.poolScale.assign(m_k, 0.0);
    std::uint32_t next = 0;
    for (std::size_t k = 1; k < m_k; ++k) {
        // Each node's link to the tier: its own drives' (local) or its network link (pooled).
        const std::uint32_t base = next;
        next += static_cast<std::uint32_t>(fleetNodes(f.servers, nodeServers));
        f.link[k].resize(static_cast<std::size_t>(f.servers));
        for (int s = 0; s < f.servers; ++s)
            f.link[k][static_cast<std::size_t>(s)] =
                base + static_cast<std::uint32_t>(s / nodeServers);
        const bool pooled = m_res.tiers[k].pooled;
        const double poolBps =
            k - 1 < m_config.fleet.poolBps.size() ? m_config.fleet.poolBps[k - 1] : 0;
        if (pooled && poolBps > 0) {
            f.pool[k] = next++;
            f.poolScale[k] = m_config.tiers[k - 1].path.bandwidthBps / poolBps;
        }
    }
    f.links = std::max<std::uint32_t>(next, 1);
    m_fleetLinks = std::move(f);
}

void Replay::compareWithGpuOnly() {
    const double* g = column(GpuOnly);
    for (std::size_t r = 0; r < kRules && g; ++r) {
        const double* t = column(r);
        if (!t) continue;
        std::uint64_t gain = 0, loss = 0;
        for (std::size_t i = 0; i < m_n; ++i) {
            if (t[i] < g[i] * (1 - 1e-12))
                ++gain;
            else if (t[i] > g[i] * (1 + 1e-12))
                ++loss;
        }
        const double reqs = static_cast<double>(m_n);
        m_rules[r].gainShare = m_n ? static_cast<double>(gain) / reqs : 0;
        m_rules[r].lossShare = m_n ? static_cast<double>(loss) / reqs : 0;
    }
}

} // namespace kvbe::detail::sim
