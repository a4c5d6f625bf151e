#include "kvbe/cost/curves.h"

#include <algorithm>
#include <cmath>

namespace kvbe {

std::vector<double> lengthGrid(double minTokens, double maxTokens, int points, bool log) {
    std::vector<double> out;
    if (points < 2 || !(maxTokens > minTokens) || minTokens < 1) return out;
    out.reserve(static_cast<size_t>(points));
    for (int i = 0; i < points; ++i) {
        const double t = static_cast<double>(i) / (points - 1);
        const double v = log ? minTokens * std::pow(maxTokens / minTokens, t)
                             : minTokens + (maxTokens - minTokens) * t;
        const double n = std::round(v);
        if (out.empty() || n > out.back()) out.push_back(n);
    }
    if (!log || out.size() < 3) return out;
    // Every power of two in range replaces the grid point nearest it (in log space), so a cursor
    // near 32k reads the curves at 32,768 rather than at 32,591. Each power lies within half a
    // step of that point, between its neighbours, so the grid stays increasing.
    for (double p = std::exp2(std::ceil(std::log2(minTokens))); p <= maxTokens; p *= 2) {
        const auto it = std::lower_bound(out.begin(), out.end(), p);
        if (it != out.end() && *it == p) continue;
        auto nearest = it;
        if (it == out.end() || (it != out.begin() && std::log(p / *(it - 1)) < std::log(*it / p)))
            nearest = it - 1;
        const bool inside = (nearest == out.begin() || *(nearest - 1) < p) &&
                            (nearest + 1 == out.end() || p < *(nearest + 1));
        // The ends stay the range asked for.
        if (inside && nearest != out.begin() && nearest + 1 != out.end()) *nearest = p;
    }
    return out;
}

CurveSet computeCurves(const CostModel& cost, const std::vector<TierPath>& tiers,
                       const std::vector<double>& tokens, double cachedFraction) {
    CurveSet c;
    c.tokens = tokens;
    c.cachedFraction = cachedFraction;
    const size_t n = tokens.size();
    c.kvBytes.resize(n);
    c.tMiss.resize(n);
    c.breakevenBandwidth.resize(n);
    for (size_t i = 0; i < n; ++i) {
        c.kvBytes[i] = cost.kvBytes(tokens[i]);
        c.tMiss[i] = cost.tMiss(tokens[i]);
        c.breakevenBandwidth[i] = cost.breakevenBandwidth(tokens[i]);
    }
    const bool windows = cost.model().hasWindows();
    for (const auto& tier : tiers) {
        TierCurves tc;
        tc.tier = tier;
        tc.breakevenPrefix = cost.breakevenPrefix(tier);
        tc.breakevenBandwidth.resize(n);
        tc.tHit.resize(n);
        tc.speedup.resize(n);
        tc.minFraction.resize(n);
        for (size_t i = 0; i < n; ++i) {
            const double N = tokens[i];
            // B* with this tier's fixed cost, from the shared t_miss (no second prefill).
            const double budget = c.tMiss[i] - cost.tFixed(tier);
            // Bytes per path include a hybrid's state snapshot (loadBytes).
            if (budget > 0) tc.breakevenBandwidth[i] = cost.loadBytes(N) / budget;
            tc.tHit[i] = cost.tHit(tier, N, cachedFraction * N);
            tc.speedup[i] = c.tMiss[i] / tc.tHit[i];
            tc.minFraction[i] = windows ? cost.minCachedFractionDirect(tier, N)
                                        : cost.minCachedFraction(tier, N, tc.breakevenPrefix);
        }
        c.tiers.push_back(std::move(tc));
    }
    return c;
}

FrontierGrid computeFrontier(const CostModel& cost, const TierPath& tier,
                             const std::vector<double>& tokens,
                             const std::vector<double>& fractions) {
    FrontierGrid g;
    g.tokens = tokens;
    g.fractions = fractions;
    g.speedup.resize(tokens.size() * fractions.size());
    std::vector<double> miss(tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i)
        miss[i] = cost.tMiss(tokens[i]);
    for (size_t j = 0; j < fractions.size(); ++j)
        for (size_t i = 0; i < tokens.size(); ++i)
            g.speedup[j * tokens.size() + i] =
                miss[i] / cost.tHit(tier, tokens[i], fractions[j] * tokens[i]);
    return g;
}

std::vector<SweepPoint> modelSweep(const CostInputs& base, const std::vector<ModelSpec>& models,
                                   double tokens, std::optional<KvDtype> kvDtype) {
    std::vector<SweepPoint> out;
    out.reserve(models.size());
    for (const auto& m : models) {
        CostInputs in = base;
        in.model = m;
        in.paramsOverride.reset(); // each model's own size: that is the point of the sweep
        in.measuredPrefill.reset();
        in.kvDtype = kvDtype.value_or(m.weightDtype);
        SweepPoint p;
        p.id = m.id;
        p.paramsTotal = m.paramsTotal;
        p.paramsActive = m.paramsActive;
        p.kvBytesPerToken = m.kvBytesPerToken(in.kvDtype);
        p.hybrid = m.isHybrid();
        p.layerMix = m.layerMix();
        if (auto cm = CostModel::create(std::move(in))) {
            p.breakevenBandwidth = cm->breakevenBandwidth(tokens);
            p.stateBytes = cm->stateBytes();
        }
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace kvbe
