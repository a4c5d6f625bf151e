#include "kvbe/base/interpolation.h"

#include "kvbe/base/units.h"

#include <algorithm>
#include <cmath>

namespace kvbe {

Result<PrefillTable> PrefillTable::create(std::vector<std::pair<double, double>> points,
                                          const std::string& source) {
    if (points.size() < 2)
        return Error{source + ": needs at least 2 (tokens, seconds) points, has " +
                     std::to_string(points.size())};
    std::sort(points.begin(), points.end());
    for (size_t i = 0; i < points.size(); ++i) {
        const auto [n, t] = points[i];
        if (!std::isfinite(n) || !std::isfinite(t) || n <= 0 || t <= 0)
            return Error{source + ": point " + std::to_string(i + 1) +
                         " must have positive, finite tokens and seconds"};
        if (i > 0 && n == points[i - 1].first)
            return Error{source + ": two points at " + formatTokens(n) +
                         " tokens; expected one per length"};
        if (i > 0 && t <= points[i - 1].second)
            return Error{source + ": prefill time falls or stays flat from " +
                         formatTokens(points[i - 1].first) + " to " + formatTokens(n) +
                         " tokens; expected it to grow with length"};
    }
    PrefillTable t;
    t.m_points = points;
    const size_t n = points.size();
    for (const auto& [x, y] : points) {
        t.m_x.push_back(std::log(x));
        t.m_y.push_back(std::log(y));
    }
    std::vector<double> h(n - 1), delta(n - 1);
    for (size_t i = 0; i + 1 < n; ++i) {
        h[i] = t.m_x[i + 1] - t.m_x[i];
        delta[i] = (t.m_y[i + 1] - t.m_y[i]) / h[i];
    }
    t.m_slope.assign(n, 0);
    if (n == 2) {
        t.m_slope[0] = t.m_slope[1] = delta[0];
    } else {
        for (size_t i = 1; i + 1 < n; ++i) {
            if (delta[i - 1] * delta[i] <= 0) continue;
            const double w1 = 2 * h[i] + h[i - 1], w2 = h[i] + 2 * h[i - 1];
            t.m_slope[i] = (w1 + w2) / (w1 / delta[i - 1] + w2 / delta[i]);
        }
        // One-sided three-point ends, kept shape-preserving.
        auto endSlope = [](double h0, double h1, double d0, double d1) {
            double s = ((2 * h0 + h1) * d0 - h0 * d1) / (h0 + h1);
            if (s * d0 <= 0)
                s = 0;
            else if (d0 * d1 <= 0 && std::abs(s) > std::abs(3 * d0))
                s = 3 * d0;
            return s;
        };
        t.m_slope[0] = endSlope(h[0], h[1], delta[0], delta[1]);
        t.m_slope[n - 1] = endSlope(h[n - 2], h[n - 3], delta[n - 2], delta[n - 3]);
    }
    return t;
}

double PrefillTable::operator()(double tokens) const {
    if (tokens <= 0) return 0;
    const double x = std::log(tokens);
    const size_t n = m_x.size();
    if (x <= m_x[0]) {
        const double s = (m_y[1] - m_y[0]) / (m_x[1] - m_x[0]);
        return std::exp(m_y[0] + s * (x - m_x[0]));
    }
    if (x >= m_x[n - 1]) {
        const double s = (m_y[n - 1] - m_y[n - 2]) / (m_x[n - 1] - m_x[n - 2]);
        return std::exp(m_y[n - 1] + s * (x - m_x[n - 1]));
    }
    const size_t i =
        static_cast<size_t>(std::upper_bound(m_x.begin(), m_x.end(), x) - m_x.begin()) - 1;
    const double h = m_x[i + 1] - m_x[i];
    const double s = (x - m_x[i]) / h;
    const double h00 = (1 + 2 * s) * (1 - s) * (1 - s), h10 = s * (1 - s) * (1 - s);
    const double h01 = s * s * (3 - 2 * s), h11 = s * s * (s - 1);
    return std::exp(h00 * m_y[i] + h10 * h * m_slope[i] + h01 * m_y[i + 1] +
                    h11 * h * m_slope[i + 1]);
}

Result<TransferFit> fitTransfer(const std::vector<std::pair<double, double>>& samples,
                                const std::string& source) {
    if (samples.size() < 2)
        return Error{source +
                     ": needs at least 2 (bytes, seconds) samples to fit t_fixed and "
                     "bandwidth, has " +
                     std::to_string(samples.size())};
    double sx = 0, sy = 0;
    for (const auto& [b, t] : samples) {
        if (!std::isfinite(b) || !std::isfinite(t) || b <= 0 || t <= 0)
            return Error{source + ": every sample needs positive, finite bytes and seconds"};
        sx += b;
        sy += t;
    }
    const double n = static_cast<double>(samples.size());
    const double mx = sx / n, my = sy / n;
    double sxx = 0, sxy = 0, syy = 0;
    for (const auto& [b, t] : samples) {
        sxx += (b - mx) * (b - mx);
        sxy += (b - mx) * (t - my);
        syy += (t - my) * (t - my);
    }
    if (sxx <= 0)
        return Error{source + ": all samples have the same size; expected at least two sizes"};
    const double slope = sxy / sxx;
    if (slope <= 0)
        return Error{source + ": time does not grow with size; no bandwidth can be fitted"};
    TransferFit f;
    f.bandwidthBps = 1 / slope;
    f.tFixedS = std::max(0.0, my - slope * mx);
    f.rSquared = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1;
    return f;
}

} // namespace kvbe
