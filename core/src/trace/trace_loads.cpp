#include "trace_loads.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace kvbe::detail {

std::vector<double> SharedLoads::loadEnds(const std::vector<double>& arrival,
                                          const std::vector<SimTier>& tiers) const {
    const std::size_t n = m_start.size();
    std::vector<double> end(arrival.begin(), arrival.begin() + static_cast<std::ptrdiff_t>(n));
    struct Join {
        double t;
        std::uint32_t seg, req;
        bool operator>(const Join& o) const { return t > o.t; }
    };
    struct Running {
        double v;
        std::uint32_t seg, req;
        bool operator>(const Running& o) const { return v > o.v; }
    };
    struct Tier {
        double v = 0, last = 0;
        std::priority_queue<Running, std::vector<Running>, std::greater<>> run;
        void advance(double t) {
            if (!run.empty()) v += (t - last) / static_cast<double>(run.size());
            last = t;
        }
        double nextEnd() const {
            if (run.empty()) return kUnlimited;
            return last + std::max(0.0, run.top().v - v) * static_cast<double>(run.size());
        }
    };
    std::vector<Tier> link(tiers.size() + 1);
    std::priority_queue<Join, std::vector<Join>, std::greater<>> joins;
    auto fixed = [&](std::uint32_t seg) { return tiers[m_segs[seg].tier - 1].path.tFixedS; };
    auto last = [&](std::uint32_t req) {
        return req + 1 < n ? m_start[req + 1] : static_cast<std::uint32_t>(m_segs.size());
    };
    for (std::uint32_t i = 0; i < n; ++i)
        if (m_start[i] < last(i)) joins.push({arrival[i] + fixed(m_start[i]), m_start[i], i});
    for (;;) {
        std::size_t k = 0;
        double tEnd = kUnlimited;
        for (std::size_t q = 1; q < link.size(); ++q)
            if (const double e = link[q].nextEnd(); e < tEnd) {
                tEnd = e;
                k = q;
            }
        if (joins.empty() && k == 0) break;
        if (!joins.empty() && joins.top().t <= tEnd) {
            const Join j = joins.top();
            joins.pop();
            Tier& tier = link[m_segs[j.seg].tier];
            tier.advance(j.t);
            tier.run.push({tier.v + m_segs[j.seg].work, j.seg, j.req});
            continue;
        }
        Tier& tier = link[k];
        tier.advance(tEnd);
        const Running done = tier.run.top();
        tier.run.pop();
        if (done.seg + 1 < last(done.req))
            joins.push({tEnd + fixed(done.seg + 1), done.seg + 1, done.req});
        else
            end[done.req] = tEnd;
    }
    return end;
}

ServerQueueing queueOnServers(int servers, const std::vector<double>& arrival,
                              const std::vector<std::uint32_t>& order, double* t,
                              const double* load, const std::vector<double>& loadEnd) {
    const std::size_t n = order.size();
    std::vector<double> queued(n);
    std::priority_queue<double, std::vector<double>, std::greater<>> free;
    for (int s = 0; s < servers; ++s)
        free.push(0.0);
    double waitSum = 0, hidden = 0, shared = 0;
    for (const std::uint32_t i : order) {
        const double a = arrival[i];
        const double start = std::max(a, free.top());
        const double alone = load ? std::min(load[i], t[i]) : 0;
        const double l = load ? std::max(alone, loadEnd[i] - a) : 0; // loads beside it
        const double end = std::max(start - a, l) + (t[i] - alone);
        free.pop();
        free.push(a + end);
        queued[i] = end;
        waitSum += start - a;
        hidden += std::min(l, start - a);
        shared += l - alone;
    }
    std::copy(queued.begin(), queued.end(), t);
    return {n ? waitSum / static_cast<double>(n) : 0, hidden, shared};
}

} // namespace kvbe::detail
