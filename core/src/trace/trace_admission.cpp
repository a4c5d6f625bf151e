#include "trace_admission.h"

#include "kvbe/base/statistics.h"

#include <span>

namespace kvbe::detail {

RuleTimes ruleTimes(const RequestCost& rc, Recompute& re, const std::uint8_t* tierOf, std::size_t h,
                    double B, double N, const TierTokens& pStar) {
    auto blockTokens = [&](std::size_t j) {
        const double a = static_cast<double>(j) * B;
        return std::min(a + B, N) - a;
    };
    auto timeAt = [&](std::size_t j, const TierTokens& loaded) {
        return rc.loadTime(loaded) + re.at(j);
    };
    RuleTimes r;
    r.none = re.at(0);
    auto& acc = r.allTok;
    double best = r.none;
    r.gpuOnly = r.none;
    bool gpuRun = true;
    double maxP = 0;
    for (std::size_t j = 0; j <= h; ++j) {
        // State: blocks 0 … j-1 loaded.
        const double p = std::min(static_cast<double>(j) * B, N);
        const bool boundary = j == h || (j > 0 && tierOf[j] != tierOf[j - 1]);
        if (j > 0 && p >= maxP) {
            r.beJ = j;
            r.beTok = acc;
        }
        if (gpuRun && (j == h || tierOf[j] != 0)) {
            gpuRun = false;
            r.gpuJ = j;
            if (j > 0) r.gpuOnly = timeAt(j, acc);
        }
        if (j > 0 && boundary) {
            // The end of the run: `always`, its loads per tier kept.
            const double t = j == h ? rc.loadTimes(acc, r.allLoad) + re.at(j) : timeAt(j, acc);
            if (j == h) r.always = t;
            if (t < best) {
                best = t;
                r.bestJ = j;
                r.bestTok = acc;
            }
        }
        if (j < h) {
            acc[tierOf[j]] += blockTokens(j);
            if (tierOf[j] != 0) maxP = std::max(maxP, pStar[tierOf[j]]);
        }
    }
    if (h == 0) r.always = r.none;
    r.breakeven = r.beJ > 0 ? timeAt(r.beJ, r.beTok) : r.none;
    if (r.breakeven < best) {
        best = r.breakeven;
        r.bestJ = r.beJ;
        r.bestTok = r.beTok;
    }
    r.optimal = best;
    return r;
}

TtftStats ttftStats(double* b, double* e) {
    TtftStats s;
    const std::span<double> v(b, e);
    if (v.empty()) return s;
    for (double x : v)
        s.totalS += x;
    s.mean = s.totalS / static_cast<double>(v.size());
    // Ascending quantiles, each selected in the part above the one before (about 1.6 passes
    // over the data instead of 3).
    std::size_t from = 0;
    auto select = [&](double q) {
        const QuantileRank r = quantileRank(v.size(), q);
        const auto i = static_cast<std::size_t>(r.index);
        std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(from),
                         v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
        from = i;
        const double lo = v[i];
        if (r.fraction == 0) return lo;
        const double hi =
            *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(i) + 1, v.end());
        return quantileBetween(lo, hi, r.fraction);
    };
    s.p50 = select(0.50);
    s.p90 = select(0.90);
    s.p99 = select(0.99);
    return s;
}

} // namespace kvbe::detail
