#include "kvbe/base/statistics.h"

#include <algorithm>
#include <cmath>

namespace kvbe {

QuantileRank quantileRank(std::uint64_t n, double q) {
    const double pos = q * static_cast<double>(n - 1);
    const auto i = std::min<std::uint64_t>(static_cast<std::uint64_t>(pos), n - 1);
    return {i, i + 1 < n ? pos - static_cast<double>(i) : 0.0};
}

double quantileOfSorted(std::span<const double> sorted, double q) {
    if (sorted.empty()) return 0;
    const auto r = quantileRank(sorted.size(), q);
    const auto i = static_cast<std::size_t>(r.index);
    return quantileBetween(sorted[i], r.fraction == 0 ? sorted[i] : sorted[i + 1], r.fraction);
}

double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return quantileOfSorted(v, q);
}

double quantileInPlace(std::span<double> v, double q) {
    if (v.empty()) return 0;
    const auto r = quantileRank(v.size(), q);
    const auto at = v.begin() + static_cast<std::ptrdiff_t>(r.index);
    std::nth_element(v.begin(), at, v.end());
    // The next order statistic is the smallest of those selected above it.
    return quantileBetween(*at, r.fraction == 0 ? *at : *std::min_element(at + 1, v.end()),
                           r.fraction);
}

double median(std::vector<double> v) {
    return quantile(std::move(v), 0.5);
}

} // namespace kvbe
