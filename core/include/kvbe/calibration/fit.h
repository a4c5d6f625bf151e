// Fitting the cost model to measurements: utilisation (with the optional ramp) and the shared
// overhead from cold prefills, then t_fixed (and bandwidth, where the prefix sizes allow) per
// tier from hits. Nonlinear least squares is Eigen's Levenberg–Marquardt.
#pragma once

#include "kvbe/calibration/calibration.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/scenario/scenario.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kvbe {

// The ramp and the overhead both lengthen short prompts; in TTFT data they trade off against
// each other (the ramp adds 2·P·n_half / FL, a constant, plus a few per cent on the linear
// term), so by default only the overhead is fitted. Fit the ramp from prefill timings that have
// no scheduling overhead in them (the GPU probe's), with fitOverhead off.
struct FitOptions {
    bool fitRamp = false;    // n_half of u(n) = u · n / (n + n_half), given at least 4 lengths
    bool fitOverhead = true; // a constant both paths share (scheduling, tokenisation)
};

struct FitResidual {
    std::string series; // "recompute" or the tier's name
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
    std::vector<std::string> notes; // what could not be fitted, and why
    // The note that says the fixed cost's form (notes[*fixedCostNote]), for a reader that shows
    // the form its own way; none where there is no such note.
    std::optional<std::size_t> fixedCostNote;
    // Why the fit should not be trusted (a parameter at its bound, residuals above
    // kReliableRmsResidual), one sentence each; empty for a fit that describes its data.
    std::vector<std::string> unreliable;
    // Tiers whose hits asked for a negative fixed cost, which was held at 0 (seconds asked for).
    std::map<std::string, double> fixedCostHeldAtZero;
    // The form of the fixed cost of the tiers fitted from hits (fixed_cost.h), and why; none
    // where no tier was. Fixed costs from transfers or presets stay constant.
    std::optional<FixedCostForm> fixedCostForm;
    std::string fixedCostWhy;
    std::set<std::string> fixedFromHits;
    // Tiers whose bandwidth no transfer or hit gave: the nominal tier's is used (and said where
    // a reader prints the bandwidth, not shown as fitted).
    std::set<std::string> bandwidthNominal;
};

// `base` gives the model, FLOP model, GPU peak and TP (its utilisation is the starting point);
// `nominalTiers` the bandwidth and fixed cost to fall back on for tiers named in the hits.
Result<FitResult> fitCalibration(const Calibration& c, const CostInputs& base,
                                 const std::vector<TierPath>& nominalTiers,
                                 const FitOptions& options = {});

// One node calibrated for several models: each model's calibration fitted with that model
// (fitCalibration), then per tier the fixed costs fitted from hits across the models as
// t0 + layers · t_layer (fitFixedCostLine: both parts from two or more layer counts).
struct ModelFit {
    std::string source; // the calibration file
    FittedModel model;  // its model and KV/state layers
    FitResult fit;
};
std::map<std::string, FixedCostLine> fixedCostsAcrossModels(const std::vector<ModelFit>& fits);
// One model's fitted parameters with each tier's fixed cost taken from `lines` (at that model's
// layers, with the per-layer part), and every model of `fits` as the models fitted on.
FittedParameters withFixedCostLines(const ModelFit& fit,
                                    const std::map<std::string, FixedCostLine>& lines,
                                    const std::vector<ModelFit>& fits);

// What a py-kvcache v2 file's own curves imply, with no model: at each measured length p (the
// knots of f and g_T within the range both cover, p > 0, each curve read linearly between its
// knots as py-kvcache's rule reads them) and at each golden point, recompute f(p), the hit time
// g_T(p) of tier "ssd" (g_ssd) or "mem" (g_mem), and the break-even bandwidth
//     B*_T(p) = kvbytes(p) / (f(p) − t_fixed_T),
// none where f(p) ≤ t_fixed_T (no bandwidth is enough). t_fixed_T and the tier's effective
// bandwidth come from the g_T knots (p > 0) by the fit's hit step, t = t_fixed + kvbytes(p) / B
// weighted by 1 / t; a scheduling overhead that f and g share stays in both f and that intercept,
// so it cancels in f − t_fixed. With fewer than two lengths, or times that do not grow with the
// prefix, t_fixed_T is the curve's floor and no bandwidth is given. p*_T is py-kvcache's rule
// (pyKvcacheRuleThreshold). kvbytes(p) = kv_bytes_per_token · p, from the file or, where it has
// none, from `fallbackKvBytesPerToken` (the scenario's model).
struct ImpliedPoint {
    double tokens = 0;
    bool golden = false;
    double fS = 0;                      // recompute
    double gS = 0;                      // hit from the tier
    std::optional<double> breakevenBps; // B*_T(p)
};
struct ImpliedTier {
    std::string tier;  // "ssd" or "mem"
    std::string curve; // "g_ssd" or "g_mem"
    double tFixedS = 0;
    bool tFixedFitted = false;          // false: the curve's floor
    std::optional<double> bandwidthBps; // effective, fitted from the knots
    std::vector<ImpliedPoint> points;   // knot lengths ascending, then the golden points
    double pStarTokens = 0;             // py-kvcache's rule; 0: always pays (gate off)
    bool paysWithinKnots = true;        // false: f <= g at the last measured length
};
struct PyKvcacheImplied {
    double kvBytesPerToken = 0;
    std::vector<ImpliedTier> tiers; // ssd, then mem
};
Result<PyKvcacheImplied>
pyKvcacheImplied(const Calibration& c,
                 std::optional<double> fallbackKvBytesPerToken = std::nullopt);

// The scenario with the fitted utilisation, ramp and per-tier values adopted. Tiers are matched
// by name (case-insensitive); py-kvcache's "ssd" and "mem" match the first NVMe and DRAM tier.
Scenario adoptFit(const Scenario& s, const FittedParameters& p);

} // namespace kvbe
