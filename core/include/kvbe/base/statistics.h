// Medians and quantiles of samples, one rule for all of kvbe: the probes' timings and latencies,
// the serving probe's TTFTs, the trace replay's TTFT and write-rate percentiles, `kvbe-cli trace
// inspect`'s prompt lengths and the Workload view's TTFT axis.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kvbe {

// Where the q-quantile (q in [0, 1]) of n samples lies among their order statistics
// x_0 <= ... <= x_{n-1}: at rank q·(n − 1), between x_index and x_index+1, `fraction` of the
// way (linear interpolation between order statistics: numpy's default, Hyndman and Fan's type
// 7). n >= 1. Callers that keep their samples in another form (implicit zeros, a partial sort)
// read the two order statistics themselves and combine them with quantileBetween.
struct QuantileRank {
    std::uint64_t index = 0;
    double fraction = 0; // 0 when the rank is a whole number (or the last sample)
};
QuantileRank quantileRank(std::uint64_t n, double q);
// x_index · (1 − fraction) + x_index+1 · fraction; exactly x_index when fraction is 0.
inline double quantileBetween(double lower, double upper, double fraction) {
    return fraction == 0 ? lower : lower * (1 - fraction) + upper * fraction;
}

// The q-quantile of samples sorted ascending; 0 for no samples.
double quantileOfSorted(std::span<const double> sorted, double q);
// The q-quantile of the samples (sorted here); 0 for no samples.
double quantile(std::vector<double> samples, double q);
// The q-quantile of the samples, found by selection in place (which reorders them, in linear
// time instead of a sort's); 0 for no samples.
double quantileInPlace(std::span<double> samples, double q);
// The median, quantile(samples, 0.5): the middle sample, or the mean of the two middle ones.
double median(std::vector<double> samples);

// The two-sided p-value of the Wilcoxon rank-sum (Mann-Whitney U) test that `a` and `b` come
// from one distribution: the chance, with every ordering of the pooled samples equally likely,
// of a U at least as far from its mean as the one seen. Exact (by counting orderings) up to 60
// samples in all, ties counted as half; the normal approximation above. 1 when either is empty.
double rankSumPValue(std::span<const double> a, std::span<const double> b);

} // namespace kvbe
