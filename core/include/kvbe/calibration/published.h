// Published figures to hold the model against: a reference file
// (docs/published-reference-format.md) with each value, its unit and the sentence it was quoted
// from; which of them apply to a scenario; the model's own figure at each point; and a fit of
// utilisation and the tiers' t_fixed and bandwidth to them.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/calibration/calibration.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/scenario/scenario.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

inline constexpr int kPublishedVersion = 1;

enum class PublishedQuantity {
    BreakevenBandwidth, // B*(N), value in B/s
    BreakevenPrefix,    // p*_T, value in tokens
    MinCachedFraction,  // f*_T(N), value as a fraction (the file says %)
    Bandwidth,          // a measured transfer rate, value in B/s
};
std::string_view toString(PublishedQuantity q);

struct PublishedPoint {
    std::string id;
    PublishedQuantity quantity = PublishedQuantity::BreakevenBandwidth;
    std::string model; // model id; empty for hardware figures
    std::string gpu;   // GPU preset key, or the start of one ("h100": any H100)
    std::optional<KvDtype> kvDtype;
    std::string tier;                // "ssd", "mem" (py-kvcache's names), or another path
    std::string path;                // what was measured, in the study's words
    std::optional<double> tokens;    // N, where the value is at a prompt length
    std::string tokensLabel;         // "1k" as printed
    double value = 0;                // SI units: B/s, tokens, fraction; the middle of a range
    std::optional<double> low, high; // a range as published ("54 to 56 GB/s")
    std::string unit;                // as the file gives it: "GB/s", "tokens", "%"
    std::string text;                // the value as printed
    std::string source;              // "arXiv 2609.11744, section 5"
    std::string quotedIn;            // the shared file that quotes it
    std::string quote;               // the sentence, verbatim

    // "23.2 GB/s at 1k tokens (arXiv 2609.11744, section 5)": for tooltips and tables.
    std::string describe() const;
};

struct PublishedReference {
    std::string file; // where it was read from
    std::string name;
    std::string study;
    std::string node;
    std::string note;
    double tokensPerK = 1024;
    std::vector<PublishedPoint> points;
};

// A file in this format classifies as FileKind::PublishedReference (kvbe/files/file_kind.h).
Result<PublishedReference> parsePublishedReference(std::string_view text,
                                                   const std::string& source);
Result<PublishedReference> readPublishedReference(const std::filesystem::path& path);
// The references shipped in resources/published/.
Result<std::vector<PublishedReference>> builtinPublishedReferences(const Presets& presets);

// The points that describe this scenario: same model (by preset id, case-insensitive, with or
// without the organisation), a GPU preset that starts with the point's gpu, and the same KV dtype
// where the point names one. Hardware figures (no model) match on the GPU, and only alongside at
// least one model figure: they describe the study's node, not every node with that GPU.
std::vector<PublishedPoint> matchingPoints(const PublishedReference& ref, const Evaluation& e);
bool modelMatches(const PublishedPoint& p, const std::string& scenarioModel,
                  const std::string& modelId);

// The tier of a scenario that stands for a published tier name: the same name, or py-kvcache's
// "ssd" for the first NVMe/SSD tier and "mem" for the first DRAM tier; -1 when none.
int tierIndexFor(const std::vector<TierPath>& tiers, const std::string& publishedTier);

// The model's figure at one published point, in the point's SI unit, with the cost model and
// tier paths given; none where the model gives none (no tier to compare with, B* with no budget
// left, p* never). `tierName` (if given) gets the name of the tier compared with.
std::optional<double> publishedModelFigure(const PublishedPoint& p, const CostModel& cost,
                                           const std::vector<TierPath>& tiers,
                                           std::string* tierName);

struct PublishedComparison {
    PublishedPoint point;
    std::string modelTier; // the scenario tier it was compared with
    std::optional<double> model;
    std::optional<double> relative() const {
        if (!model || point.value == 0) return std::nullopt;
        return (*model - point.value) / point.value;
    }
};
std::vector<PublishedComparison> comparePublished(const std::vector<PublishedPoint>& points,
                                                  const Evaluation& e);

// The published figures that describe a scenario, from every reference that has any: for each
// reference, in the order given, its matching points (matchingPoints) beside the model's
// figures (comparePublished); a reference with no matching point is left out. `kvbe-cli calc`,
// `published compare` and the window show all of them; `published fit` fits to the one with the
// most points.
struct PublishedMatch {
    const PublishedReference* reference = nullptr; // one of the references given
    std::vector<PublishedComparison> rows;
};
std::vector<PublishedMatch> publishedMatches(const std::vector<PublishedReference>& refs,
                                             const Evaluation& e);

// The model's figure and the published one side by side, one line each, for `kvbe-cli calc`.
std::string publishedComparisonTable(const std::string& title,
                                     const std::vector<PublishedComparison>& rows);
// A published or model value in the point's own unit ("23.2 GB/s", "6,057 tokens", "77.8 %").
std::string formatPublishedValue(PublishedQuantity q, double si);

// Fits utilisation, and t_fixed and bandwidth of the tiers the points name, to B*, p*, f* and
// the measured bandwidths, by Levenberg–Marquardt on relative residuals (each point weighs the
// same). B* is computed with the t_fixed of the tier the point names. The shared overhead of
// fit.h cancels out of every break-even figure, so it is not fitted here (0).
//
// The fixed cost is t0 + layers · t_layer (fixed_cost.h). With one model's points the two parts
// cannot be told apart: the fit finds that model's t_fixed and states it in the per-layer form
// (t0 = 0, t_layer = t_fixed / layers, kOneModelFixedCostForm), which gives the same figures on
// that model and scales with the layers on another. With points of two or more models of
// different depths on one node, u, each tier's bandwidth, t0 and t_layer are fitted to all of
// them together (one utilisation for the node), each model's figures with its own layers.
struct PublishedFit {
    FittedParameters params; // tiers keyed by the published name ("ssd", "mem"), at the base model
    std::vector<PublishedComparison> residuals; // every point used, at the fitted values
    std::vector<std::string> notes;             // points left out, and why
    FixedCostForm fixedCostForm = FixedCostForm::PerLayer;
    std::string fixedCostWhy; // the form, and why
};
// The points of one model, and the base scenario evaluated with that model.
struct PublishedModelPoints {
    std::vector<PublishedPoint> points;
    Evaluation eval;
};
Result<PublishedFit> fitPublished(const std::vector<PublishedPoint>& points,
                                  const Evaluation& base);
// Several models on one node; the first is the base scenario's, the one the fitted values are
// stated at.
Result<PublishedFit> fitPublished(const std::vector<PublishedModelPoints>& models);

// A scenario fitted on one model (Scenario::fittedOn) and evaluated with another: the published
// figures that depend on a tier's fixed cost (B*, p*, f*) under both forms of it, each made from
// the fixed cost every tier had on the model fitted on, F = t0 + L_fitted · t_layer: per layer
// (t0 = 0, t_layer = F / L_fitted) and constant (t_fixed = F on every model).
struct HeldOutForms {
    FittedModel fittedOn;
    std::string model; // the scenario's model
    int layers = 0;    // its KV/state layers
    // The form the scenario's tiers are in; none where they mix t0 and t_layer.
    std::optional<FixedCostForm> scenarioForm;
    std::vector<PublishedComparison> perLayer, constant;
};
// None where the scenario names no single model it was fitted on, or is evaluated with that one.
std::optional<HeldOutForms> heldOutForms(const std::vector<PublishedPoint>& points,
                                         const Evaluation& e, const Presets& presets);
// Both forms side by side, one line per figure, for `kvbe-cli published compare`.
std::string heldOutTable(const HeldOutForms& h);

// The scenario of `base` with the fit adopted (fit.h's adoptFit), named, and only the fitted tiers
// kept; and its JSON with a "provenance" object that says how it was made.
Scenario fittedScenario(const Scenario& base, const PublishedFit& fit, const std::string& name);
std::string fittedScenarioJson(const Scenario& s, const PublishedFit& fit,
                               const PublishedReference& ref, const std::string& command);

// The scenarios shipped in resources/scenarios/ (the default first), by the name they carry.
struct NamedScenario {
    std::string name;
    std::string path; // relative to resources/
    Scenario scenario;
};
Result<std::vector<NamedScenario>> builtinScenarios(const Presets& presets);

// A tier whose t_fixed is its preset's value, not measured or fitted.
bool hasNominalFixedCost(const TierConfig& t, const Presets& presets);
inline constexpr const char* kNominalSentence =
    "nominal: a preset estimate of the fixed cost per hit (lookup, scheduling, first copy), not "
    "measured or fitted; "
    "it leaves out the overhead that dominates short prompts";

} // namespace kvbe
