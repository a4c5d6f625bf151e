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

double rankSumPValue(std::span<const double> a, std::span<const double> b) {
    const std::size_t m = a.size(), n = b.size();
    if (m == 0 || n == 0) return 1;
    // U counted in halves: each pair with a above b counts 2, a tie 1.
    std::uint64_t u2 = 0;
    for (double x : a)
        for (double y : b)
            u2 += x > y ? 2 : (x == y ? 1 : 0);
    const double u = static_cast<double>(u2) / 2, mean = static_cast<double>(m * n) / 2;
    const double dev = std::abs(u - mean);
    if (m + n > 60) {
        const double sd = std::sqrt(static_cast<double>(m * n * (m + n + 1)) / 12);
        return std::min(1.0, std::erfc((dev - 0.5) / sd / std::sqrt(2.0)));
    }
    // count[i][j][k]: orderings of i a's and j b's whose U is k (the a's above the b's).
    std::vector<std::vector<double>> prev(n + 1), cur(n + 1);
    const std::size_t top = m * n;
    for (std::size_t j = 0; j <= n; ++j) {
        prev[j].assign(top + 1, 0);
        prev[j][0] = 1; // no a's: U = 0
    }
    for (std::size_t i = 1; i <= m; ++i) {
        for (std::size_t j = 0; j <= n; ++j) {
            cur[j].assign(top + 1, 0);
            for (std::size_t k = 0; k <= top; ++k) {
                // The largest sample is an a (above all j b's) or a b.
                double c = k >= j ? prev[j][k - j] : 0;
                if (j > 0) c += cur[j - 1][k];
                cur[j][k] = c;
            }
        }
        std::swap(prev, cur);
    }
    double total = 0, tail = 0;
    for (std::size_t k = 0; k <= top; ++k) {
        total += prev[n][k];
        if (std::abs(static_cast<double>(k) - mean) >= dev - 1e-9) tail += prev[n][k];
    }
    return std::min(1.0, tail / total);
}

} // namespace kvbe
