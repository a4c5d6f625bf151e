// Fitting the cost model to measurements: utilisation (with the optional ramp) and the shared
// overhead from cold prefills, then t_fixed (and bandwidth, where the prefix sizes allow) per
// tier from hits. Nonlinear least squares is Eigen's Levenberg–Marquardt.
#pragma once

#include "kvbe/calibration.h"
#include "kvbe/cost_model.h"
#include "kvbe/scenario.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kvbe {

// The ramp and the overhead both lengthen short prompts; in TTFT data they trade off against
// each other (the ramp adds 2·P·n_half / FL, a constant, plus a few per cent on the linear
// term), so by default only the overhead is fitted. Fit the ramp from prefill timings that have
// no scheduling overhead in them (the GPU probe's), with fitOverhead off.
struct FitOptions {
    bool fitRamp = false;      // n_half of u(n) = u · n / (n + n_half), given at least 4 lengths
    bool fitOverhead = true;   // a constant both paths share (scheduling, tokenisation)
};

struct FitResidual {
    std::string series;  // "recompute" or the tier's name
    double tokens = 0;
    double prefix = 0;
    double measuredS = 0;
    double fittedS = 0;
    double relative() const { return (fittedS - measuredS) / measuredS; }
};

// A fit whose rms relative residual is above this does not describe its measurements.
inline constexpr double kReliableRmsResidual = 0.10;
// The fitted utilisation is u = logistic(a): past these it sits at a bound of (0, 1), where the
// measurements ask for more (or less) than the model and GPU can give.
inline constexpr double kUtilisationBoundHigh = 0.99;
inline constexpr double kUtilisationBoundLow = 0.02;

struct FitResult {
    FittedParameters params;
    std::vector<FitResidual> residuals;
    std::map<std::string, std::optional<double>> breakevenPrefix; // p* per tier with fitted values
    std::vector<std::string> notes;                               // what could not be fitted, and why
    // Why the fit should not be trusted (a parameter at its bound, residuals above
    // kReliableRmsResidual), one sentence each; empty for a fit that describes its data.
    std::vector<std::string> unreliable;
    // Tiers whose hits asked for a negative fixed cost, which was held at 0 (seconds asked for).
    std::map<std::string, double> fixedCostHeldAtZero;
};

// `base` gives the model, FLOP model, GPU peak and TP (its utilisation is the starting point);
// `nominalTiers` the bandwidth and fixed cost to fall back on for tiers named in the hits.
Result<FitResult> fitCalibration(const Calibration& c, const CostInputs& base,
                                 const std::vector<TierPath>& nominalTiers, const FitOptions& options = {});

// The scenario with the fitted utilisation, ramp and per-tier values adopted. Tiers are matched
// by name (case-insensitive); py-kvcache's "ssd" and "mem" match the first NVMe and DRAM tier.
Scenario adoptFit(const Scenario& s, const FittedParameters& p);

} // namespace kvbe
