#include "trace_loads.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace kvbe::detail {

std::vector<double> FifoLoads::loadEnds(const std::vector<double>& arrival,
                                        const std::vector<std::uint32_t>& order,
                                        const std::vector<SimTier>& tiers,
                                        std::vector<BusySeries>* busy,
                                        const FleetLinks* fleet) const {
    const std::size_t n = m_start.size();
    std::vector<double> end(arrival.begin(), arrival.begin() + static_cast<std::ptrdiff_t>(n));
    // When each link has finished its loads.
    std::vector<double> tail(fleet ? fleet->links : tiers.size() + 1, 0.0);
    for (const std::uint32_t i : order) {
        const std::size_t first = m_start[i];
        const std::size_t last = i + 1 < n ? m_start[i + 1] : m_segs.size();
        double e = arrival[i];
        for (std::size_t s = first; s < last; ++s) {
            const std::size_t k = m_segs[s].tier;
            const std::uint32_t slot = fleet ? fleet->slot(k, i) : static_cast<std::uint32_t>(k);
            double start = 0;
            e = bookTransfer(tail, fleet, k, slot, e + tiers[k - 1].path.tFixedS, m_segs[s].work,
                             &start);
            if (busy) (*busy)[k].add(start, e);
        }
        end[i] = e;
    }
    return end;
}

void HitRuns::add(const std::uint8_t* tierOf, std::size_t h) {
    m_adding.start.push_back(static_cast<std::uint32_t>(m_adding.segs.size()));
    for (std::size_t j = 0; j < h; ++j) {
        if (j + 1 < h && tierOf[j + 1] == tierOf[j]) continue;
        m_adding.segs.push_back({static_cast<std::uint32_t>(j + 1) & kMaxRunBlocks, // checked
                                 static_cast<std::uint32_t>(tierOf[j] & 7u)});
    }
}

ServerQueueing queueOnServers(int servers, const std::vector<double>& arrival,
                              const std::vector<std::uint32_t>& order, double* t,
                              const double* load, const std::vector<double>& loadEnd,
                              const double* none, const FleetLinks* fleet) {
    const std::size_t n = order.size();
    // A server for every request (the searches' bound) needs no queue: each is free from 0.
    const bool everyone = !fleet && static_cast<std::size_t>(servers) >= n;
    std::priority_queue<double, std::vector<double>, std::greater<>> free;
    for (int s = 0; s < servers && !everyone && !fleet; ++s)
        free.push(0.0);
    // A fleet: each server's own queue, in the order its requests arrive.
    std::vector<double> own(fleet ? static_cast<std::size_t>(fleet->servers) : 0, 0.0);
    double waitSum = 0, hidden = 0, shared = 0, saved = 0;
    for (const std::uint32_t i : order) {
        const double a = arrival[i];
        const double start = std::max(a, fleet      ? own[fleet->server[i]]
                                         : everyone ? 0.0
                                                    : free.top());
        const double alone = load ? std::min(load[i], t[i]) : 0;
        const double l = load ? std::max(alone, loadEnd[i] - a) : 0; // after the loads ahead
        const double wait = start - a;
        const double recompute = t[i] - alone;
        const double end = std::max(wait, l) + recompute;
        if (fleet) {
            own[fleet->server[i]] = a + end;
        } else if (!everyone) {
            free.pop();
            free.push(a + end);
        }
        t[i] = end; // each request once, its prefill time read above: in place
        waitSum += wait;
        hidden += std::min(l, wait);
        shared += l - alone;
        if (none && end < wait + none[i]) saved += none[i] - recompute;
    }
    return {n ? waitSum / static_cast<double>(n) : 0, hidden, shared, saved};
}

} // namespace kvbe::detail
