// The replay's step per request (trace_replay.h): its hit run looked up, the rules' times and
// what they declined, the tiers updated (a cascade of demotions where tiers are exclusive) and
// their writes queued.
#include "trace_replay.h"

#include <algorithm>
#include <cmath>

namespace kvbe::detail::sim {

void Replay::request(std::size_t i) {
    const auto ids = m_trace.blocksOf(i);
    const std::size_t m = ids.size();
    const double now = (*m_arrival)[i];
    m_window = windowOf(now);
    if (m_queues->any()) m_queues->drain(now);
    m_res.tokens += m_trace.inputTokens[i];
    m_res.blocks += m;
    if (m_tierOf.size() < m) m_tierOf.resize(m);

    if (m_fleet) {
        fleetRequest(i, ids, now);
        return;
    }
    const std::size_t h = lookUp(ids);
    const auto tok = countHits(i, h);
    // Shared links: the request's loads (its whole hit run, as `always` loads it: the cache
    // evolves as under `always`) hold each tier's link from its arrival.
    if (m_queues->anySharedLink())
        for (std::size_t k = 1; k < m_k; ++k)
            if (m_queues->shared(k) && tok[k] > 0) {
                const TierPath& path = m_config.tiers[k - 1].path;
                m_queues->occupyLink(k, now,
                                     std::max(0.0, m_cost.tLoad(path, tok[k]) - path.tFixedS));
            }
    const double issueDelay = admit(i, h, now);
    update(i, ids);
    if (m_queues->any()) m_queues->closeBatch(now + issueDelay);
}

// A fleet: the router picks the server; the caches it reads (its GPU, its node's tiers, the
// pools) give the hit run, each with its node's (or the pools') write queues, and take the blocks.
void Replay::fleetRequest(std::size_t i, std::span<const std::uint32_t> ids, double now) {
    const std::size_t m = ids.size();
    m_fleet->prefetch(ids);
    const int s = m_fleet->route(i, now);
    m_serverOf.push_back(static_cast<std::uint16_t>(s));
    WriteQueues* node = nullptr;
    WriteQueues* pool = nullptr;
    if (!m_fleetQueues.empty()) {
        for (auto& q : m_fleetQueues)
            if (q.any()) q.drain(now);
        node = &m_fleetQueues[static_cast<std::size_t>(s / m_fleet->nodeServers())];
        pool = &m_fleetQueues.back();
    }
    auto group = [&](std::size_t k) { return m_res.tiers[k].pooled ? pool : node; };
    std::size_t h = 0;
    if (m_llama) h = m_llama->request(s, ids, m_trace.inputTokens[i], m_tierOf.data());
    for (; !m_llama && h < m; ++h) {
        const std::uint32_t id = ids[h];
        const std::uint8_t held = m_fleet->heldMask(id, s);
        const std::uint8_t mask =
            node ? readable(held, static_cast<std::uint8_t>(node->pending(id) | pool->pending(id)),
                            static_cast<std::uint8_t>(node->dropped(id) | pool->dropped(id)))
                 : held;
        if (!mask) break;
        m_tierOf[h] = static_cast<std::uint8_t>(__builtin_ctz(mask));
    }
    m_res.lookups += h < m ? h + 1 : h;
    const auto tok = countHits(i, h);
    if (node)
        for (std::size_t k = 1; k < m_k; ++k)
            if (WriteQueues* g = group(k); g->shared(k) && tok[k] > 0) {
                const TierPath& path = m_config.tiers[k - 1].path;
                g->occupyLink(k, now, std::max(0.0, m_cost.tLoad(path, tok[k]) - path.tFixedS));
            }
    const double service = admit(i, h, now);
    if (!m_llama)
        m_fleet->update(
            s, ids, [this](std::uint32_t id) { return sighted(id); },
            [&](std::size_t k, std::uint32_t id, bool stored) {
                WriteQueues* g = node ? group(k) : nullptr;
                const auto bit = static_cast<std::uint8_t>(1u << k);
                // A held block whose write was dropped is written again.
                if (!stored && !(g && g->any() && (g->dropped(id) & bit))) return;
                writeTo(k);
                if (g && g->on(k)) g->enqueue(k, id);
            });
    if (node) {
        if (node->any()) node->closeBatch(now + service);
        if (pool != node && pool->any()) pool->closeBatch(now + service);
    }
    m_fleet->booked(i, s, now, service);
}

std::uint8_t Replay::readable(std::uint8_t held, std::uint8_t pending, std::uint8_t dropped) {
    const auto mask = static_cast<std::uint8_t>(held & ~(pending | dropped));
    if (held && (held & -held) != (mask & -mask)) {
        // The fastest tier holding it cannot serve it yet (or ever).
        const auto f = static_cast<std::size_t>(__builtin_ctz(held));
        if (pending & (1u << f))
            ++m_res.tiers[f].lookupsLate;
        else
            ++m_res.tiers[f].lookupsDropped;
    }
    return mask;
}

std::size_t Replay::lookUp(std::span<const std::uint32_t> ids) {
    const std::size_t m = ids.size();
    // The request's blocks are known up front: start fetching their links (all tiers share
    // the lines) so the misses overlap instead of following one another in the update.
    if (m_inclusive)
        for (std::size_t j = 0; j < m; ++j) {
            m_lru->prefetch(ids[j]);
            if (m_lruOffload) m_lruOffload->prefetch(ids[j]);
        }
    else
        for (std::size_t j = 0; j < m; ++j)
            __builtin_prefetch(m_links->of(ids[j]), 1), __builtin_prefetch(&m_resident[ids[j]], 1);

    std::size_t h = 0;
    if (!m_queues->any()) {
        while (h < m) {
            const std::uint8_t mask = m_resident[ids[h]];
            if (!mask) break;
            m_tierOf[h] = static_cast<std::uint8_t>(__builtin_ctz(mask));
            ++h;
        }
    } else {
        while (h < m) {
            const std::uint32_t id = ids[h];
            const std::uint8_t mask =
                readable(m_resident[id], m_queues->pending(id), m_queues->dropped(id));
            if (!mask) break;
            m_tierOf[h] = static_cast<std::uint8_t>(__builtin_ctz(mask));
            ++h;
        }
    }
    m_res.lookups += h < m ? h + 1 : h;
    return h;
}

TierTokens Replay::countHits(std::size_t i, std::size_t h) {
    const double N = m_trace.inputTokens[i];
    TierTokens tok{};
    for (std::size_t j = 0; j < h; ++j) {
        tok[m_tierOf[j]] += blockTokens(j, N);
        m_hitBlk[m_tierOf[j]] += 1;
    }
    double runTok = 0;
    for (std::size_t k = 0; k < m_k; ++k) {
        m_hitTok[k] += tok[k];
        m_hitReq[k] += tok[k] / N;
        runTok += tok[k];
    }
    m_anyTok += runTok;
    m_anyBlk += static_cast<double>(h);
    m_anyReq += runTok / N;
    return tok;
}

double Replay::admit(std::size_t i, std::size_t h, double now) {
    const double N = m_trace.inputTokens[i];
    Recompute re(m_cost, m_b, N);
    const RuleTimes rt = detail::ruleTimes(m_rc, re, m_tierOf.data(), h, m_b, N, m_pStar);
    const double times[kRules] = {rt.none, rt.gpuOnly, rt.always, rt.breakeven, rt.optimal};
    for (std::size_t r = 0; r < kRules; ++r)
        if (double* c = column(r)) c[i] = times[r];
    if (m_config.instances > 0) {
        // t(j) = loads + recompute after j blocks: the load part is what a wait can hide.
        if (m_loads[0].size()) {
            m_loads[0][i] = h > 0 ? std::max(0.0, rt.always - re.at(h)) : 0;
            m_fifo[0].add(m_rc, rt.allTok);
        }
        if (m_loads[1].size()) {
            m_loads[1][i] = std::max(0.0, rt.breakeven - re.at(rt.beJ));
            m_fifo[1].add(m_rc, rt.beTok);
        }
        if (m_keepRuns) {
            m_runs.add(m_tierOf.data(), h);
            m_staticCut.push_back(static_cast<std::uint32_t>(rt.bestJ));
        }
        if (!m_forQueueing) m_hitRun.push_back(static_cast<std::uint32_t>(h));
    }
    for (std::size_t k = 1; k < m_k; ++k)
        if (rt.allTok[k] > 0) {
            const TierPath& path = m_config.tiers[k - 1].path;
            m_offered[k].addAt(now, std::max(0.0, rt.allLoad[k] - path.tFixedS));
            m_served[Always][k] += rt.allTok[k];
            m_served[Breakeven][k] += rt.beTok[k];
            m_served[Optimal][k] += rt.bestTok[k];
        }
    if (m_per) {
        m_per->hitBlocks.push_back(static_cast<std::uint32_t>(h));
        m_per->hitTiers.insert(m_per->hitTiers.end(), m_tierOf.begin(),
                               m_tierOf.begin() + static_cast<std::ptrdiff_t>(h));
        m_per->optimalCut.push_back(static_cast<std::uint32_t>(rt.bestJ));
    }

    const double loadAll = m_rc.loadTime(rt.allTok);
    auto declined = [&](RuleResult& r, std::size_t j, double t, const TierTokens& loaded) {
        if (j >= h) return;
        ++r.declinedRequests;
        r.declinedBlocks += h - j;
        r.declinedLoadS += loadAll - m_rc.loadTime(loaded);
        r.declinedNetS += rt.always - t;
    };
    declined(m_rules[Breakeven], rt.beJ, rt.breakeven, rt.beTok);
    declined(m_rules[Optimal], rt.bestJ, rt.optimal, rt.bestTok);
    // GPU seconds saved: the recompute each rule avoided against no caching, where its
    // loads beat recomputing everything (with prefill servers the queueing counts it again).
    if (h > 0) {
        auto saved = [&](Rule r, double t, std::size_t j) {
            if (t < rt.none) m_rules[r].gpuSecondsSaved += rt.none - re.at(j);
        };
        saved(GpuOnly, rt.gpuOnly, rt.gpuJ);
        saved(Always, rt.always, h);
        saved(Breakeven, rt.breakeven, rt.beJ);
        saved(Optimal, rt.optimal, rt.bestJ);
    }
    return rt.always;
}

void Replay::update(std::size_t i, std::span<const std::uint32_t> ids) {
    const std::size_t m = ids.size();
    auto& wq = *m_queues;
    if (m_inclusive) {
        for (std::size_t j = 0; j < m; ++j) {
            const std::uint32_t id = ids[j];
            const auto pos = static_cast<std::uint32_t>(m_trace.blockOffset[i] + j);
            std::uint8_t written = m_lru->access(id, pos);
            if (m_lruOffload && sighted(id)) written |= m_lruOffload->access(id, pos);
            if (wq.any()) written |= static_cast<std::uint8_t>(wq.dropped(id) & m_resident[id]);
            for (std::uint8_t w = static_cast<std::uint8_t>(written & ~1u); w;
                 w &= static_cast<std::uint8_t>(w - 1)) {
                const auto k = static_cast<std::size_t>(__builtin_ctz(w));
                writeTo(k);
                if (wq.on(k)) wq.enqueue(k, id);
            }
        }
    } else if (m_config.placement == Placement::WriteThrough) {
        for (std::size_t j = 0; j < m; ++j) {
            const std::uint32_t id = ids[j];
            const std::uint8_t mask = m_resident[id];
            // Not yet admitted: only the GPU takes it (the offload tiers cannot hold it).
            const std::size_t tiers = sighted(id) ? m_k : 1;
            for (std::size_t k = 0; k < tiers; ++k) {
                if (mask & (1u << k)) {
                    m_caches[k].touch(id);
                    if (wq.any() && (wq.dropped(id) & (1u << k))) {
                        writeTo(k);
                        if (wq.on(k)) wq.enqueue(k, id);
                    }
                } else {
                    writeTo(k);
                    m_caches[k].insert(id, [](std::uint32_t) {});
                    if (wq.on(k) && m_caches[k].holds(id)) wq.enqueue(k, id);
                }
            }
        }
    } else {
        for (std::size_t j = 0; j < m; ++j) {
            const std::uint32_t id = ids[j];
            sighted(id);
            const std::uint8_t mask = m_resident[id];
            if (mask & 1u) {
                m_caches[0].touch(id);
                continue;
            }
            if (mask) m_caches[static_cast<std::size_t>(__builtin_ctz(mask))].remove(id);
            m_evictLevel = 0;
            m_caches[0].insert(id, [this](std::uint32_t e) { demote(e); });
        }
    }
}

void Replay::writeTo(std::size_t k) {
    if (k == 0 || m_caps[k] == 0) return; // a tier of size 0 stores nothing
    ++m_res.tiers[k].blocksWritten;
    auto& wb = m_windowBytes[k];
    if (wb.empty() || wb.back().first != m_window) wb.emplace_back(m_window, 0.0);
    wb.back().second += m_config.blockBytes;
}

void Replay::demote(std::uint32_t id) {
    const std::size_t next = m_evictLevel + 1;
    if (next >= m_k) return;
    // Store admission: a block leaving the GPU before its storeAfter-th sighting is dropped.
    if (m_evictLevel == 0 && !admitted(id)) return;
    auto& wq = *m_queues;
    if (m_caches[next].holds(id)) {
        m_caches[next].touch(id);
        if (wq.any() && (wq.dropped(id) & (1u << next))) {
            writeTo(next);
            if (wq.on(next)) wq.enqueue(next, id);
        }
        return;
    }
    const std::size_t saved = m_evictLevel;
    m_evictLevel = next;
    writeTo(next);
    m_caches[next].insert(id, [this](std::uint32_t e) { demote(e); });
    if (wq.on(next) && m_caches[next].holds(id)) wq.enqueue(next, id);
    m_evictLevel = saved;
}

} // namespace kvbe::detail::sim
