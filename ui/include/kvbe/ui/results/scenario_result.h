// Everything the charts draw for one scenario, computed by core in one go. The window's current
// scenario and every pinned scenario are one of these; a chart only reads them.
#pragma once

#include "kvbe/calibration/published.h"
#include "kvbe/cost/curves.h"
#include "kvbe/scenario/scenario.h"

#include <QPointF>
#include <QString>

#include <memory>
#include <vector>

namespace kvbe {

struct ScenarioResult {
    Scenario scenario;
    std::shared_ptr<const Evaluation> eval;
    CurveSet curves;
    std::vector<FrontierGrid> frontier; // one per tier
    std::vector<SweepPoint> sweep;      // presets and loaded models at scenario.sweepTokens
    QString label; // the scenario's name, or its inputs described; a pin's label
    // The shipped published figures that match the scenario's model, GPU and KV dtype, beside
    // the model's, from every reference that has any (addPublished), and the references' names;
    // and, per tier, whether its t_fixed is a preset's nominal value.
    std::vector<PublishedComparison> published;
    QString publishedName;
    std::vector<bool> nominalFixedCost;
    // The lengths asked for ran past the model's context: the curves stop at the context.
    bool endsAtContext = false;

    const ModelSpec& model() const { return eval->model; }
};
using ResultPtr = std::shared_ptr<const ScenarioResult>;

// A scenario described from its inputs, for a label where nobody named it:
// "Llama-3.3-70B-Instruct on H200 141GB, u = 50 %, BF16 KV" (and TP, FP8 compute where set).
QString describeInputs(const Scenario& s, const Evaluation& e);

// Grid sizes of the frontier map: fine enough to look smooth once scaled to the plot.
inline constexpr int kFrontierTokens = 160;
inline constexpr int kFrontierFractions = 101;

// Runs core for a scenario whose model is already read. Lengths past the model's context are
// left out: the curves end at the context limit (endsAtContext says so). `sweepModels` are the
// models of the model-size chart (presets first, then models the user loaded).
Result<ScenarioResult> computeScenarioResult(const Scenario& s, const Presets& presets,
                                             const ModelSpec& model,
                                             const std::vector<ModelSpec>& sweepModels);

// Adds the figures of `refs` that match the result's scenario to r.published, every reference
// that has any (publishedMatches), and their names, joined by "; ", to r.publishedName.
void addPublished(ScenarioResult& r, const std::vector<PublishedReference>& refs);

// Where the speedup crosses 1 in each token column of a frontier grid, scanning up in f:
// (tokens, fraction) points of the break-even contour, linearly interpolated between rows.
std::vector<QPointF> frontierContour(const FrontierGrid& g);

// Keeps at most two points (lowest and highest y) per pixel column of [xMin, xMax], so a dense
// measured series costs what the screen can show. Expects points sorted by x.
std::vector<QPointF> decimateToColumns(const std::vector<QPointF>& points, int columns, double xMin,
                                       double xMax, bool logX);

} // namespace kvbe
