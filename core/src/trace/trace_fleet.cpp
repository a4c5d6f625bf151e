// A fleet in the replay (trace_fleet.h): its caches, what the router knows of the servers' load,
// and the report of where the requests went. The routers are in trace_router.cpp.
#include "trace_fleet.h"

#include "kvbe/base/text.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvbe::detail {

Fleet::Fleet(const Trace& trace, const ReplayConfig& config, const std::vector<std::uint64_t>& caps)
    : m_trace(trace), m_rc(config.fleet.router), m_n(config.instances),
      m_nodeServers(std::clamp(config.fleet.nodeServers, 1, config.instances)),
      m_b(trace.summary.blockTokens), m_caps(caps), m_queue(static_cast<std::size_t>(m_n)),
      m_load(static_cast<std::size_t>(m_n), 0), m_free(static_cast<std::size_t>(m_n), 0.0),
      m_requests(static_cast<std::size_t>(m_n), 0), m_busy(static_cast<std::size_t>(m_n), 0.0),
      m_rng(m_rc.seed) {
    const std::uint32_t blocks = trace.distinctBlocks;
    const RouterKind kind = m_rc.kind;
    const std::size_t tiers = caps.size();
    // The tiers in groups that see the same uses: the same span (1: the GPU; a node's servers:
    // a local tier; every server: a pool) and the same blocks (the GPU every block, an offload
    // tier the admitted ones, which are every block unless stores wait for a sighting).
    std::vector<int> span(tiers, 1);
    for (std::size_t k = 1; k < tiers; ++k) {
        const bool pooled = k - 1 < config.fleet.pooled.size() && config.fleet.pooled[k - 1];
        span[k] = pooled ? m_n : m_nodeServers;
        if (!pooled) {
            m_localLevels.push_back(k);
            const std::string name = lower(config.tiers[k - 1].name);
            const bool cpu = name.find("dram") != std::string::npos ||
                             name.find("cpu") != std::string::npos ||
                             name.find("host") != std::string::npos;
            m_levelWeight.push_back(cpu ? m_rc.cpuTierWeight : m_rc.otherTierWeight);
        }
    }
    const bool gpuShares = config.storeAfter <= 1;
    std::vector<std::vector<std::size_t>> members;
    std::vector<std::pair<int, bool>> keys;
    m_groupOf.resize(tiers);
    for (std::size_t k = 0; k < tiers; ++k) {
        const std::pair<int, bool> key{span[k], k == 0 && !gpuShares};
        const auto at = std::find(keys.begin(), keys.end(), key);
        m_groupOf[k] = static_cast<std::size_t>(at - keys.begin());
        if (at == keys.end()) {
            keys.push_back(key);
            members.emplace_back();
        }
        members[m_groupOf[k]].push_back(k);
    }
    // Every tier's index, and the router's, side by side in one array, with the inline stamps of
    // each LRU order among them (the groups' and SGLang's tree).
    const bool extra = kind == RouterKind::Sglang || kind == RouterKind::Dynamo;
    auto records =
        ServerIndex::interleaved(blocks, m_n, static_cast<int>(tiers) + extra,
                                 static_cast<int>(members.size()) + (kind == RouterKind::Sglang));
    m_index.assign(records.index.begin(), records.index.begin() + static_cast<long>(tiers));
    for (std::size_t g = 0; g < members.size(); ++g) {
        std::vector<ServerIndex> index;
        std::vector<std::uint64_t> groupCaps;
        std::array<std::uint8_t, kMaxTiers> numbers{};
        for (std::size_t j = 0; j < members[g].size(); ++j) {
            index.push_back(m_index[members[g][j]]);
            groupCaps.push_back(caps[members[g][j]]);
            numbers[j] = static_cast<std::uint8_t>(members[g][j]);
        }
        m_groups.emplace_back(std::move(index), records.stamps[g], m_n, keys[g].first, groupCaps);
        m_groupTiers.push_back(numbers);
    }
    m_needsLoad = kind == RouterKind::LeastLoaded || kind == RouterKind::Sglang ||
                  kind == RouterKind::LlmD || kind == RouterKind::Dynamo;
    if (kind == RouterKind::Session) {
        // 160 points a server, as uhashring's default ring; kvbe's hash, as it has no URLs.
        for (int s = 0; s < m_n; ++s)
            for (std::uint64_t v = 0; v < 160; ++v)
                m_ring.emplace_back(mix64((static_cast<std::uint64_t>(s + 1) << 32) ^ v), s);
        std::sort(m_ring.begin(), m_ring.end());
    }
    if (kind == RouterKind::Sglang) {
        m_tree.emplace(std::vector<ServerIndex>{records.index.back()}, records.stamps.back(), m_n,
                       1, std::vector<std::uint64_t>{kNoLimit});
        const double chars = std::max(1.0, m_rc.charsPerToken * m_b);
        m_treeBlocks = static_cast<std::uint64_t>(std::floor(m_rc.maxTreeSize / chars));
        m_nextEviction = m_rc.evictionIntervalS;
    }
    if (kind == RouterKind::LlmD) {
        m_waiting.assign(static_cast<std::size_t>(m_n), 0.0);
        m_usage.assign(static_cast<std::size_t>(m_n), 0.0);
    }
    if (kind == RouterKind::Dynamo) {
        m_active.emplace(records.index.back());
        m_activeTokens.assign(static_cast<std::size_t>(m_n), 0.0);
        m_activeBlocks.assign(static_cast<std::size_t>(m_n), 0);
    }
    m_depthLevel.resize(m_localLevels.size());
    if ((kind == RouterKind::LlmD || kind == RouterKind::Dynamo) && m_rc.eventLagS > 0) {
        // The router's index lags the caches: a copy of each tier's index (the pools' are the
        // same for every server and are not read), fed the caches' changes eventLagS late.
        m_lagged = true;
        m_view.resize(tiers);
        for (std::size_t k = 0; k < tiers; ++k) {
            const bool local =
                std::find(m_localLevels.begin(), m_localLevels.end(), k) != m_localLevels.end();
            if (k != 0 && !local) continue;
            m_view[k] = ServerIndex(blocks, m_n);
            const auto& in = members[m_groupOf[k]];
            const auto j =
                static_cast<std::size_t>(std::find(in.begin(), in.end(), k) - in.begin());
            m_groups[m_groupOf[k]].logTo(j, &m_events, &m_clock, m_rc.eventLagS,
                                         static_cast<std::uint8_t>(k));
        }
        m_seen0 = &m_depthSeen;
    }
}

std::size_t Fleet::lookUp(int s, std::span<const std::uint32_t> ids, std::uint8_t* tierOf) const {
    const std::size_t k = m_index.size();
    std::size_t h = 0;
    for (; h < ids.size(); ++h) {
        std::size_t q = 0;
        while (q < k && !m_index[q].holds(ids[h], s))
            ++q;
        if (q == k) break;
        tierOf[h] = static_cast<std::uint8_t>(q);
    }
    return h;
}

void Fleet::booked(std::size_t i, int s, double now, double serviceS) {
    const auto u = static_cast<std::size_t>(s);
    const double start = std::max(now, m_free[u]);
    const double finish = start + serviceS;
    m_free[u] = finish;
    m_busy[u] += serviceS;
    if (m_needsLoad) {
        m_queue[u].push_back({finish, static_cast<std::uint32_t>(i), m_routedTokens});
        ++m_load[u];
        m_nextFinish = std::min(m_nextFinish, finish);
    }
    m_routedTokens = 0;
}

void Fleet::started(std::size_t i, int s) {
    if (m_needsLoad) {
        m_queue[static_cast<std::size_t>(s)].push_back({std::numeric_limits<double>::infinity(),
                                                        static_cast<std::uint32_t>(i),
                                                        m_routedTokens});
        ++m_load[static_cast<std::size_t>(s)];
    }
    m_routedTokens = 0;
}

void Fleet::finished(std::size_t i, int s) {
    auto& q = m_queue[static_cast<std::size_t>(s)];
    const auto it =
        std::find_if(q.begin(), q.end(), [&](const Booked& b) { return b.request == i; });
    if (it == q.end()) return;
    q.erase(it);
    --m_load[static_cast<std::size_t>(s)];
    if (!q.empty()) m_nextFinish = std::min(m_nextFinish, q.front().finish);
}

void Fleet::finishBy(double now) {
    // Nothing finishes before the earliest finish at the head of a queue.
    if (now < m_nextFinish) return;
    m_nextFinish = std::numeric_limits<double>::infinity();
    for (int s = 0; s < m_n; ++s) {
        auto& q = m_queue[static_cast<std::size_t>(s)];
        while (!q.empty() && q.front().finish <= now) {
            const Booked b = q.front();
            q.pop_front();
            --m_load[static_cast<std::size_t>(s)];
            if (!m_active) continue;
            // Dynamo: its prefill tokens and its blocks leave the server's active set.
            m_activeTokens[static_cast<std::size_t>(s)] -= b.tokens;
            const auto ids = m_trace.blocksOf(b.request);
            const auto full = std::min<std::size_t>(
                ids.size(), static_cast<std::size_t>(m_trace.inputTokens[b.request] / m_b));
            for (std::size_t j = 0; j < full; ++j) {
                const std::uint64_t key = (static_cast<std::uint64_t>(s) << 32) | ids[j];
                auto it = m_activeRefs.find(key);
                if (it == m_activeRefs.end()) continue;
                if (--it->second == 0) {
                    m_activeRefs.erase(it);
                    m_active->set(ids[j], s, 1, false);
                    --m_activeBlocks[static_cast<std::size_t>(s)];
                }
            }
        }
        if (!q.empty()) m_nextFinish = std::min(m_nextFinish, q.front().finish);
    }
}

std::uint32_t Fleet::depthsOf(const ServerIndex* const* idx, std::size_t n,
                              std::span<const std::uint32_t> ids,
                              std::vector<std::uint32_t>& out) const {
    out.assign(static_cast<std::size_t>(m_n), 0);
    if (ids.empty() || n == 0) return 0;
    const std::size_t words = idx[0]->words();
    std::uint64_t aliveBuf[8], nextBuf[8];
    std::vector<std::uint64_t> aliveBig, nextBig;
    std::uint64_t* alive = aliveBuf;
    std::uint64_t* next = nextBuf;
    if (words > 8) {
        aliveBig.resize(words);
        nextBig.resize(words);
        alive = aliveBig.data();
        next = nextBig.data();
    }
    auto held = [&](std::uint32_t id, std::uint64_t* into) {
        bool any = false;
        for (std::size_t w = 0; w < words; ++w) {
            std::uint64_t v = 0;
            for (std::size_t l = 0; l < n; ++l)
                v |= idx[l]->of(id)[w];
            into[w] = v;
            any |= v != 0;
        }
        return any;
    };
    if (!held(ids[0], alive)) return 0;
    std::uint32_t best = 1;
    for (std::size_t j = 1; j < ids.size(); ++j) {
        held(ids[j], next);
        bool any = false;
        for (std::size_t w = 0; w < words; ++w) {
            const std::uint64_t kept = alive[w] & next[w];
            for (std::uint64_t d = alive[w] & ~kept; d; d &= d - 1)
                out[w * 64 + static_cast<std::size_t>(__builtin_ctzll(d))] =
                    static_cast<std::uint32_t>(j);
            alive[w] = kept;
            any |= kept != 0;
        }
        if (!any) return best;
        best = static_cast<std::uint32_t>(j + 1);
    }
    for (std::size_t w = 0; w < words; ++w)
        for (std::uint64_t d = alive[w]; d; d &= d - 1)
            out[w * 64 + static_cast<std::size_t>(__builtin_ctzll(d))] =
                static_cast<std::uint32_t>(ids.size());
    return best;
}

std::uint32_t Fleet::depths(std::size_t level, std::span<const std::uint32_t> ids,
                            std::vector<std::uint32_t>& out, bool seen) const {
    auto index = [&](std::size_t k) -> const ServerIndex* {
        return seen && m_lagged ? &m_view[k] : &m_index[k];
    };
    const ServerIndex* idx[kMaxTiers];
    std::size_t n = 0;
    idx[n++] = index(0);
    for (std::size_t l = 0; l < level && l < m_localLevels.size(); ++l)
        idx[n++] = index(m_localLevels[l]);
    return depthsOf(idx, n, ids, out);
}

int Fleet::leastLoaded() const {
    int best = 0;
    for (int s = 1; s < m_n; ++s)
        if (m_load[static_cast<std::size_t>(s)] < m_load[static_cast<std::size_t>(best)]) best = s;
    return best;
}

int Fleet::pickRandom(const std::vector<int>& among) {
    if (among.size() == 1) return among[0];
    return among[static_cast<std::size_t>(m_rng() % among.size())];
}

int Fleet::route(std::size_t i, double now) {
    const auto ids = m_trace.blocksOf(i);
    if (m_needsLoad) finishBy(now);
    m_clock = now; // the changes this request makes are stamped from its arrival
    const std::uint32_t best = depths(0, ids, m_depth0);
    if (m_lagged) {
        // The events that have reached the router by now.
        while (!m_events.empty() && m_events.front().t <= now) {
            const IndexEvent& e = m_events.front();
            m_view[e.tier].set(e.id, e.first, e.count, e.on);
            m_events.pop_front();
        }
        depths(0, ids, m_depthSeen, true);
    }
    const auto full = ids.first(
        std::min<std::size_t>(ids.size(), static_cast<std::size_t>(m_trace.inputTokens[i] / m_b)));
    int s = 0;
    if (m_rc.recorded)
        s = (*m_rc.recorded)[i]; // where a live run sent it
    else
        switch (m_rc.kind) {
        case RouterKind::RoundRobin:
            s = roundRobin();
            break;
        case RouterKind::Random:
            s = static_cast<int>(m_rng() % static_cast<std::uint64_t>(m_n));
            break;
        case RouterKind::LeastLoaded:
            s = leastLoaded();
            break;
        case RouterKind::Session:
            s = session(ids);
            break;
        case RouterKind::Sglang:
            s = sglang(ids, now);
            break;
        case RouterKind::LlmD:
            s = llmd(full, now);
            break;
        case RouterKind::Dynamo:
            s = dynamo(i, full);
            break;
        }
    if (m_depth0[static_cast<std::size_t>(s)] < best) ++m_away;
    ++m_requests[static_cast<std::size_t>(s)];
    return s;
}

FleetReport Fleet::report() const {
    FleetReport r;
    r.router = routerText(m_rc);
    r.servers = m_n;
    r.nodes = nodes();
    r.requests = m_requests;
    r.busyS = m_busy;
    std::uint64_t total = 0, most = 0;
    for (auto q : m_requests) {
        total += q;
        most = std::max(most, q);
    }
    double busy = 0, busiest = 0;
    for (double b : m_busy) {
        busy += b;
        busiest = std::max(busiest, b);
    }
    if (total > 0) {
        r.requestSkew = static_cast<double>(most) * m_n / static_cast<double>(total);
        r.routedAway = m_away;
        r.routedAwayShare = static_cast<double>(m_away) / static_cast<double>(total);
    }
    if (busy > 0) r.busySkew = busiest * m_n / busy;
    r.indexBytes = stateBytes();
    return r;
}

std::uint64_t Fleet::stateBytes() const {
    std::uint64_t b = 0;
    for (const auto& g : m_groups)
        b += g.bytes();
    if (m_tree) b += m_tree->bytes();
    if (m_active) b += m_active->bytes() + m_activeRefs.size() * 32;
    for (const auto& v : m_view)
        b += v.bytes();
    b += m_events.size() * sizeof(IndexEvent);
    b += m_ring.size() * 16;
    return b;
}

} // namespace kvbe::detail
