// Every chart's numbers for a scenario: curves over prompt length, the frontier grid, and the
// model-size sweep. Computed here once so that the window, the CLI and the tests agree.
#pragma once

#include "kvbe/cost/cost_model.h"

#include <optional>
#include <string>
#include <vector>

namespace kvbe {

// Prompt lengths from min to max, evenly spaced in log or linear space, rounded to tokens. A log
// grid holds every power of two in range exactly (each replaces the point nearest it).
std::vector<double> lengthGrid(double minTokens, double maxTokens, int points, bool log);

struct TierCurves {
    TierPath tier;
    std::optional<double> breakevenPrefix;                 // p*_T
    std::vector<std::optional<double>> breakevenBandwidth; // B*(N) with this tier's t_fixed
    std::vector<double> tHit;                              // at the chosen cached fraction
    std::vector<double> speedup;
    std::vector<std::optional<double>> minFraction; // f*_T(N)
};

struct CurveSet {
    std::vector<double> tokens;
    double cachedFraction = 0;
    std::vector<double> kvBytes;
    std::vector<double> tMiss;
    std::vector<std::optional<double>> breakevenBandwidth; // B*(N), no fixed cost
    std::vector<TierCurves> tiers;
};

CurveSet computeCurves(const CostModel& cost, const std::vector<TierPath>& tiers,
                       const std::vector<double>& tokens, double cachedFraction);

// Speedup t_miss / t_hit over the (N, f) plane for one tier; speedup[j * tokens + i] is at
// (tokens[i], fractions[j]).
struct FrontierGrid {
    std::vector<double> tokens;
    std::vector<double> fractions;
    std::vector<double> speedup;
    double at(size_t i, size_t j) const { return speedup[j * tokens.size() + i]; }
};
FrontierGrid computeFrontier(const CostModel& cost, const TierPath& tier,
                             const std::vector<double>& tokens,
                             const std::vector<double>& fractions);

struct SweepPoint {
    std::string id;
    double paramsTotal = 0;
    double paramsActive = 0;
    double kvBytesPerToken = 0;
    std::optional<double> breakevenBandwidth; // B*(N) at the sweep length, no fixed cost
    bool hybrid = false;   // attention in some layers only (or shared / sparse KV)
    double stateBytes = 0; // per cached prefix, hybrids
    std::string layerMix;  // "52 layers: 23 Mamba-2, 23 MoE, 6 attention"
};
// B*(N) at one length for each model, with the scenario's GPU, utilisation, FLOP model and
// KV dtype (or each model's own when the scenario leaves it to the model).
std::vector<SweepPoint> modelSweep(const CostInputs& base, const std::vector<ModelSpec>& models,
                                   double tokens, std::optional<KvDtype> kvDtype);

} // namespace kvbe
