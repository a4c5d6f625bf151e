// The admission rules on one request's hit run (docs/workload-model.md, "Admission rules"): what
// loading the first j blocks and recomputing the rest costs, and where each rule cuts the run.
// Internal to kvbe_core.
#pragma once

#include "trace_cache.h"

#include "kvbe/cost/cost_model.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace kvbe::detail {

// Tokens per tier of a request's hit run (k = 0 is the GPU).
using TierTokens = std::array<double, kMaxTiers>;

// The time of one request that loads its first j blocks and recomputes the rest.
struct RequestCost {
    const CostModel& cost;
    const std::vector<SimTier>& tiers;

    // tok[k]: tokens loaded from tier k (k = 0 is the GPU: free).
    double loadTime(const TierTokens& tok) const {
        double t = 0;
        for (std::size_t k = 1; k <= tiers.size(); ++k)
            if (tok[k] > 0) t += cost.tLoad(tiers[k - 1].path, tok[k]);
        return t;
    }
    // The same, with each tier's part in per[k].
    double loadTimes(const TierTokens& tok, TierTokens& per) const {
        double t = 0;
        for (std::size_t k = 1; k <= tiers.size(); ++k) {
            per[k] = tok[k] > 0 ? cost.tLoad(tiers[k - 1].path, tok[k]) : 0;
            t += per[k];
        }
        return t;
    }
};

// The recompute time of a request of N tokens after its first j blocks are loaded, memoised:
// the rules share their cut points.
class Recompute {
  public:
    Recompute(const CostModel& cost, double blockTokens, double n)
        : m_cost(cost), m_b(blockTokens), m_n(n) {}
    double at(std::size_t j) {
        for (std::size_t q = 0; q < m_count; ++q)
            if (m_memo[q].first == j) return m_memo[q].second;
        const double p = std::min(static_cast<double>(j) * m_b, m_n);
        const double v = m_cost.tRecompute(m_n - p, p);
        if (m_count < m_memo.size()) m_memo[m_count++] = {j, v};
        return v;
    }

  private:
    const CostModel& m_cost;
    double m_b, m_n;
    std::array<std::pair<std::size_t, double>, 8> m_memo;
    std::size_t m_count = 0;
};

// One request's prefill time under each rule, and where each rule cut its hit run of h blocks.
struct RuleTimes {
    double none = 0, gpuOnly = 0, always = 0, breakeven = 0, optimal = 0;
    std::size_t gpuJ = 0, beJ = 0, bestJ = 0;
    TierTokens allTok{};  // tokens per tier of the whole run (always)
    TierTokens allLoad{}; // … and their load time per tier (tLoad, t_fixed included)
    TierTokens beTok{};   // … of the run breakeven loads
    TierTokens bestTok{}; // … of the run optimal loads
};

// The admission rules on one hit run: tierOf[j] is the tier block j is read from, pStar[k] the
// break-even prefix of tier k. Scans the run once; candidates for `optimal` are 0, every tier
// boundary, the end of the run and the `breakeven` cut (within one tier t(j) is concave in j for
// a convex recompute time, so its minimum sits at a segment end).
RuleTimes ruleTimes(const RequestCost& rc, Recompute& re, const std::uint8_t* tierOf, std::size_t h,
                    double B, double N, const TierTokens& pStar);

// Mean, p50, p90 and p99 of the times in [b, e), which it reorders.
TtftStats ttftStats(double* b, double* e);

} // namespace kvbe::detail
