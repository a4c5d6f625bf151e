// Measured tables: monotone interpolation of cold-prefill times, and the linear fit of transfers.
#pragma once

#include "kvbe/base/result.h"

#include <utility>
#include <vector>

namespace kvbe {

// A cold-prefill table (N tokens, t seconds), interpolated with monotone cubic Hermite splines
// (Fritsch–Carlson PCHIP) in log–log space, extrapolated as a power law from the end segments,
// and t(0) = 0. Monotone input gives monotone output, so t(N) − t(p) is never negative.
class PrefillTable {
  public:
    static Result<PrefillTable> create(std::vector<std::pair<double, double>> points,
                                       const std::string& source = "measured prefill table");
    double operator()(double tokens) const;
    const std::vector<std::pair<double, double>>& points() const { return m_points; }

  private:
    std::vector<std::pair<double, double>> m_points;
    std::vector<double> m_x, m_y, m_slope; // log N, log t, PCHIP derivatives
};

// Least-squares fit of t = t_fixed + bytes / B to (bytes, seconds) samples.
struct TransferFit {
    double bandwidthBps = 0;
    double tFixedS = 0; // clamped at 0: a negative intercept is noise, not a time
    double rSquared = 0;
};
Result<TransferFit> fitTransfer(const std::vector<std::pair<double, double>>& samples,
                                const std::string& source = "measured transfer table");

} // namespace kvbe
