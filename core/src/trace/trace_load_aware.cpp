// The load-aware admission rule (docs/workload-model.md, "Admission under load"): each request's
// cut chosen at its arrival from the wait for a server and the loads already booked on each
// tier's link, then its transfers booked.
#include "trace_loads.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace kvbe::detail {

namespace {

class LoadAware {
  public:
    LoadAware(const LoadAwareInputs& in)
        : m_in(in), m_cost(*in.cost), m_tiers(*in.tiers), m_k(in.tiers->size() + 1),
          m_tail(in.fleet ? in.fleet->links : m_k, 0.0) {}

    // Request i arriving at a, W seconds before a server is free: its cut and TTFT; books its
    // transfers (adding their time to `busy`).
    void request(std::size_t i, double a, double W, std::vector<BusySeries>* busy,
                 LoadAwareResult& out, double& ttft, std::uint32_t& cut) {
        m_a = a;
        m_W = W;
        m_i = static_cast<std::uint32_t>(i);
        m_n = static_cast<double>(m_in.trace->inputTokens[i]);
        const auto segs = m_in.runs->of(i);
        const double r0 = recompute(0);
        std::size_t bestJ = 0;
        double best = W + r0;
        TierTokens bestTok{};
        auto consider = [&](std::size_t j, const TierTokens& tok) {
            const double t = std::max(W, loadEnd(tok) - a) + recompute(j);
            if (t < best) {
                best = t;
                bestJ = j;
                bestTok = tok;
            }
        };
        // acc: the tokens per tier of the blocks before the segment.
        TierTokens acc{};
        std::size_t j0 = 0;
        for (const RunSegment& seg : segs) {
            const std::size_t j1 = seg.end, k = seg.tier;
            const double p0 = tokensAt(j0);
            auto at = [&](std::size_t j) {
                TierTokens tok = acc;
                tok[k] += tokensAt(j) - p0;
                return tok;
            };
            if (k != 0) {
                // Within the segment L is max(A, B + transfer(x)): flat while the wait or the
                // links ahead hide the growth, then rising and concave in x. TTFT falls on the
                // flat part (recompute shrinks) and is concave on the rising part, so its least
                // is at the flat part's last cut, the one after it, or the segment's ends.
                const std::size_t jA = acc[k] > 0 ? j0 : j0 + 1; // the first cut reading tier k
                if (jA < j1) {
                    const TierTokens tokA = at(jA);
                    const double gA = std::max(W, loadEnd(tokA) - a);
                    std::size_t lo = jA, hi = j1; // g(lo) <= gA; find the last such cut
                    while (lo < hi) {
                        const std::size_t mid = lo + (hi - lo + 1) / 2;
                        if (std::max(W, loadEnd(at(mid)) - a) <= gA)
                            lo = mid;
                        else
                            hi = mid - 1;
                    }
                    consider(jA, tokA);
                    if (lo > jA) consider(lo, at(lo));
                    if (lo + 1 < j1) consider(lo + 1, at(lo + 1));
                }
            }
            const TierTokens tok1 = at(j1);
            consider(j1, tok1);
            acc = tok1;
            j0 = j1;
        }
        const std::size_t h = j0;

        // Book the chosen transfers.
        double e = a, alone = 0;
        for (std::size_t q = 1; q < m_k; ++q) {
            if (!(bestTok[q] > 0)) continue;
            const TierPath& path = m_tiers[q - 1].path;
            const double t = m_cost.tLoad(path, bestTok[q]);
            double start = 0;
            e = bookTransfer(m_tail, m_in.fleet, q, slot(q), e + path.tFixedS,
                             std::max(0.0, t - path.tFixedS), &start);
            alone += t;
            out.tokensServed[q] += bestTok[q];
            if (busy) (*busy)[q].add(start, e);
        }
        out.tokensServed[0] += bestTok[0];
        const double load = e - a;
        ttft = best;
        cut = static_cast<std::uint32_t>(bestJ);
        out.hiddenLoadS += std::min(load, W);
        out.sharedLoadS += std::max(0.0, load - alone);
        if (bestJ > 0) out.gpuSecondsSaved += r0 - recompute(bestJ);
        if (bestJ < h) {
            ++out.declinedRequests;
            out.declinedBlocks += h - bestJ;
            out.declinedLoadS += loadAlone(acc) - alone;
        }
        const std::size_t sj = (*m_in.staticCut)[i];
        if (bestJ < sj) countBacklog(segs, bestJ, sj, out);
    }

  private:
    double tokensAt(std::size_t j) const {
        return std::min(static_cast<double>(j) * m_in.blockTokens, m_n);
    }
    double recompute(std::size_t j) const {
        const double p = tokensAt(j);
        return m_cost.tRecompute(m_n - p, p);
    }
    // When the transfers of tok would end, booked now behind the links' loads.
    std::uint32_t slot(std::size_t q) const {
        return m_in.fleet ? m_in.fleet->slot(q, m_i) : static_cast<std::uint32_t>(q);
    }
    double loadEnd(const TierTokens& tok) const {
        double e = m_a;
        for (std::size_t q = 1; q < m_k; ++q) {
            if (!(tok[q] > 0)) continue;
            const TierPath& path = m_tiers[q - 1].path;
            const double work = std::max(0.0, m_cost.tLoad(path, tok[q]) - path.tFixedS);
            const double start = std::max(e + path.tFixedS, m_tail[slot(q)]);
            e = start + work;
            if (m_in.fleet && m_in.fleet->pool[q] != kNil)
                e = std::max(e, std::max(m_tail[m_in.fleet->pool[q]], start) +
                                    work * m_in.fleet->poolScale[q]);
        }
        return e;
    }
    double loadAlone(const TierTokens& tok) const {
        double t = 0;
        for (std::size_t q = 1; q < m_k; ++q)
            if (tok[q] > 0) t += m_cost.tLoad(m_tiers[q - 1].path, tok[q]);
        return t;
    }
    // The blocks in [from, to) per offload tier: declined for the backlog.
    void countBacklog(std::span<const RunSegment> segs, std::size_t from, std::size_t to,
                      LoadAwareResult& out) const {
        std::array<bool, kMaxTiers> hit{};
        std::size_t j0 = 0;
        for (const RunSegment& s : segs) {
            const std::size_t b = std::max(j0, from), e = std::min<std::size_t>(s.end, to);
            if (s.tier != 0 && e > b) {
                out.blocksDeclinedForBacklog[s.tier] += e - b;
                hit[s.tier] = true;
            }
            j0 = s.end;
        }
        for (std::size_t q = 1; q < m_k; ++q)
            if (hit[q]) ++out.requestsDeclinedForBacklog[q];
    }

    const LoadAwareInputs& m_in;
    const CostModel& m_cost;
    const std::vector<SimTier>& m_tiers;
    const std::size_t m_k;
    std::vector<double> m_tail; // per tier: when its link has finished the loads booked
    double m_a = 0, m_W = 0, m_n = 0;
    std::uint32_t m_i = 0;
};

} // namespace

LoadAwareResult queueLoadAware(int servers, const std::vector<double>& arrival,
                               const std::vector<std::uint32_t>& order, const LoadAwareInputs& in,
                               double* ttft, std::vector<BusySeries>* busy,
                               std::vector<std::uint32_t>* cuts) {
    LoadAwareResult out;
    const std::size_t n = order.size();
    if (cuts) cuts->assign(n, 0);
    std::uint32_t ignored = 0;
    LoadAware rule(in);
    // A server for every request (the searches' bound) needs no queue: each is free from 0.
    const FleetLinks* fleet = in.fleet;
    const bool everyone = !fleet && static_cast<std::size_t>(servers) >= n;
    std::priority_queue<double, std::vector<double>, std::greater<>> free;
    for (int s = 0; s < servers && !everyone && !fleet; ++s)
        free.push(0.0);
    std::vector<double> own(fleet ? static_cast<std::size_t>(fleet->servers) : 0, 0.0);
    double waitSum = 0;
    for (const std::uint32_t i : order) {
        const double a = arrival[i];
        const double wait = std::max(0.0, (fleet      ? own[fleet->server[i]]
                                           : everyone ? 0.0
                                                      : free.top()) -
                                              a);
        double t = 0;
        rule.request(i, a, wait, busy, out, t, cuts ? (*cuts)[i] : ignored);
        if (fleet) {
            own[fleet->server[i]] = a + t;
        } else if (!everyone) {
            free.pop();
            free.push(a + t);
        }
        ttft[i] = t;
        waitSum += wait;
    }
    out.meanWaitS = n ? waitSum / static_cast<double>(n) : 0;
    return out;
}

} // namespace kvbe::detail
