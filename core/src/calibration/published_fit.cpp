// The fit to published figures (published.h: fitPublished), the fitted scenario it makes, and
// the held-out check of a fitted scenario on another model (heldOutForms).
#include "kvbe/base/json_text.h"
#include "kvbe/calibration/fit.h"
#include "kvbe/calibration/published.h"

#include <Eigen/Dense>
#include <unsupported/Eigen/LevenbergMarquardt>
#include <unsupported/Eigen/NumericalDiff>

#include <algorithm>
#include <cmath>
#include <set>

namespace kvbe {
using nlohmann::json;

namespace {

// A residual for "the model gives no figure here".
double penalty() {
    return 10.0;
}

// Which points a fit can use, and why not the others.
bool fittable(const PublishedPoint& p, const std::vector<TierPath>& tiers, std::string* why) {
    if (tierIndexFor(tiers, p.tier) < 0) {
        *why =
            "'" + p.id + "' (" + p.text + "): no tier of the scenario stands for '" + p.tier + "'";
        if (p.tier == "fio")
            *why += "; fio measures the drive alone, an upper bound on what a hit sees";
        return false;
    }
    if (p.quantity == PublishedQuantity::Bandwidth && p.tokens && !p.low) {
        *why = "'" + p.id + "' (" + p.text +
               "): a rate at one short length, before the path reaches its "
               "streaming bandwidth; the model puts that start-up into t_fixed";
        return false;
    }
    return true;
}

// One model's inputs and the points fitted with them.
struct ModelPart {
    CostInputs base;
    std::vector<const PublishedPoint*> points;
};

// Parameters, unconstrained for the optimiser: u = logistic(x0); per fitted tier t0 = x², with
// both parts t_layer = x², and the bandwidth exp(x).
struct PublishedProblem {
    std::vector<ModelPart> models;
    std::vector<TierPath> tiers; // the base scenario's, as evaluated
    std::vector<int> fittedTier; // tier indices with their own parameters
    bool bothParts = false;      // t0 and t_layer (points of models of different depths)

    int perTier() const { return bothParts ? 3 : 2; }
    int inputs() const { return 1 + perTier() * static_cast<int>(fittedTier.size()); }
    int values() const {
        size_t n = 0;
        for (const auto& m : models)
            n += m.points.size();
        return static_cast<int>(n);
    }

    struct Decoded {
        double u = 0.5;
        std::vector<TierPath> tiers;
    };
    Decoded decode(const Eigen::VectorXd& x) const {
        Decoded d;
        d.u = 1 / (1 + std::exp(-x[0]));
        d.tiers = tiers;
        for (size_t k = 0; k < fittedTier.size(); ++k) {
            auto& t = d.tiers[static_cast<size_t>(fittedTier[k])];
            const auto i = static_cast<Eigen::Index>(1 + perTier() * static_cast<int>(k));
            t.tFixedS = x[i] * x[i];
            t.tLayerS = bothParts ? x[i + 1] * x[i + 1] : 0.0;
            t.bandwidthBps = std::exp(std::clamp(x[i + perTier() - 1], 0.0, 40.0));
        }
        return d;
    }
    std::optional<CostModel> model(size_t m, double u) const {
        CostInputs in = models[m].base;
        in.utilisation = std::min(1.0, u);
        auto c = CostModel::create(in);
        if (!c) return std::nullopt;
        return *c;
    }
};

struct PublishedFunctor : Eigen::DenseFunctor<double> {
    const PublishedProblem& problem;
    explicit PublishedFunctor(const PublishedProblem& pr)
        : Eigen::DenseFunctor<double>(pr.inputs(), pr.values()), problem(pr) {}
    int operator()(const InputType& x, ValueType& f) const {
        const auto d = problem.decode(x);
        Eigen::Index row = 0;
        for (size_t m = 0; m < problem.models.size(); ++m) {
            const auto cost = problem.model(m, d.u);
            for (const auto* p : problem.models[m].points) {
                const auto v =
                    cost ? publishedModelFigure(*p, *cost, d.tiers, nullptr) : std::nullopt;
                f[row++] = v ? (*v - p->value) / p->value : penalty();
            }
        }
        return 0;
    }
};

std::string modelsSentence(const std::vector<FittedModel>& models) {
    std::string s;
    for (const auto& m : models)
        s += (s.empty() ? "" : ", ") + m.model + " (" + std::to_string(m.layers) + " layers)";
    return s;
}

// The problem, with the points each model's scenario can use; notes for the others.
Result<PublishedProblem> problemFor(const std::vector<PublishedModelPoints>& models,
                                    std::vector<std::string>& notes) {
    const Evaluation& base = models.front().eval;
    PublishedProblem problem;
    problem.tiers = base.tiers;
    std::set<int> tierSet, depths;
    std::set<std::string> hardware; // the node's own figures (no model) count once
    for (const auto& m : models) {
        if (!m.eval.cost.analytic())
            return Error{"the scenario uses measured prefill times; a fit to published figures "
                         "needs the analytic model"};
        ModelPart part{m.eval.cost.inputs(), {}};
        for (const auto& p : m.points) {
            if (p.model.empty() && !hardware.insert(p.id).second) continue;
            std::string why;
            if (!fittable(p, base.tiers, &why)) {
                notes.push_back("left out " + why);
                continue;
            }
            part.points.push_back(&p);
            tierSet.insert(tierIndexFor(base.tiers, p.tier));
        }
        if (!part.points.empty()) depths.insert(m.eval.cost.kvStateLayers());
        problem.models.push_back(std::move(part));
    }
    problem.fittedTier.assign(tierSet.begin(), tierSet.end());
    problem.bothParts = depths.size() >= 2;
    if (problem.values() < problem.inputs())
        return Error{"only " + std::to_string(problem.values()) +
                     " published points fit this scenario's model and GPU, for " +
                     std::to_string(problem.inputs()) +
                     " parameters; expected at least as many points as parameters"};
    return problem;
}

} // namespace

Result<PublishedFit> fitPublished(const std::vector<PublishedPoint>& points,
                                  const Evaluation& base) {
    return fitPublished(std::vector<PublishedModelPoints>{{points, base}});
}

Result<PublishedFit> fitPublished(const std::vector<PublishedModelPoints>& models) {
    if (models.empty()) return Error{"no model to fit published figures to"};
    PublishedFit out;
    auto problemOr = problemFor(models, out.notes);
    if (!problemOr) return problemOr.error();
    const PublishedProblem& problem = *problemOr;
    const Evaluation& base = models.front().eval;
    const int baseLayers = base.cost.kvStateLayers();

    Eigen::VectorXd x(problem.inputs());
    const double u0 = std::clamp(base.cost.inputs().utilisation, 0.01, 0.99);
    x[0] = std::log(u0 / (1 - u0));
    for (size_t k = 0; k < problem.fittedTier.size(); ++k) {
        const auto& t = base.tiers[static_cast<size_t>(problem.fittedTier[k])];
        const auto i = static_cast<Eigen::Index>(1 + problem.perTier() * static_cast<int>(k));
        const double fixed = std::max(base.cost.tFixed(t), 1e-4);
        // Both parts start from half of the base model's fixed cost each.
        x[i] = std::sqrt(problem.bothParts ? fixed / 2 : fixed);
        if (problem.bothParts) x[i + 1] = std::sqrt(fixed / 2 / baseLayers);
        x[i + problem.perTier() - 1] = std::log(t.bandwidthBps);
    }
    PublishedFunctor functor(problem);
    Eigen::NumericalDiff<PublishedFunctor, Eigen::Central> numeric(functor);
    Eigen::LevenbergMarquardt<Eigen::NumericalDiff<PublishedFunctor, Eigen::Central>> lm(numeric);
    lm.setMaxfev(20000);
    lm.setXtol(1e-14);
    lm.setFtol(1e-14);
    const auto status = lm.minimize(x);
    if (status == Eigen::LevenbergMarquardtSpace::ImproperInputParameters)
        return Error{"the published points cannot be fitted with this scenario"};

    const auto d = problem.decode(x);
    double sum = 0;
    for (size_t m = 0; m < problem.models.size(); ++m) {
        auto cost = problem.model(m, d.u);
        if (!cost)
            return Error{"the fitted utilisation " + std::to_string(d.u) + " is not a valid input"};
        for (const auto* p : problem.models[m].points) {
            PublishedComparison c{*p, {}, {}};
            c.model = publishedModelFigure(*p, *cost, d.tiers, &c.modelTier);
            const double r = c.relative().value_or(penalty());
            sum += r * r;
            out.residuals.push_back(std::move(c));
        }
        if (!problem.models[m].points.empty())
            out.params.fittedOn.push_back(
                {models[m].eval.model.id, models[m].eval.cost.kvStateLayers()});
    }
    out.params.utilisation = std::min(1.0, d.u);
    out.params.overheadS = 0;
    out.notes.push_back("shared overhead not fitted: it cancels out of every break-even figure");
    out.params.rmsRelativeResidual = std::sqrt(sum / static_cast<double>(problem.values()));
    if (problem.bothParts) {
        out.fixedCostForm = FixedCostForm::Both;
        out.fixedCostWhy = "t0 and t_layer fitted together to the points of " +
                           std::to_string(out.params.fittedOn.size()) +
                           " models on one node: " + modelsSentence(out.params.fittedOn) +
                           ", with one utilisation";
    } else {
        out.fixedCostForm = FixedCostForm::PerLayer;
        out.fixedCostWhy = kOneModelFixedCostForm;
    }
    for (int idx : problem.fittedTier) {
        const auto& t = d.tiers[static_cast<size_t>(idx)];
        // Keyed by the published tier name, so adoptFit matches "ssd"/"mem" to the scenario's
        // tiers.
        std::string key = t.name;
        for (const auto& m : problem.models)
            for (const auto* p : m.points)
                if (tierIndexFor(base.tiers, p->tier) == idx) key = p->tier;
        const double fixed = t.tFixedS + baseLayers * t.tLayerS;
        if (problem.bothParts && t.tFixedS < 1e-6 * fixed)
            out.notes.push_back("tier " + key +
                                ": t0 fell to its bound, 0: across these models the fixed cost "
                                "grows at least in proportion to the layers");
        const double tLayer =
            problem.bothParts ? t.tLayerS : fitFixedCostLine({{baseLayers, fixed}}).tLayerS;
        out.params.tiers[key] = {t.bandwidthBps, fixed, 1, tLayer, baseLayers};
    }
    return out;
}

Scenario fittedScenario(const Scenario& base, const PublishedFit& fit, const std::string& name) {
    Scenario s = adoptFit(base, fit.params);
    s.name = name;
    std::vector<TierPath> paths;
    for (const auto& t : base.tiers)
        paths.push_back({t.name, t.bandwidthGBps * 1e9, t.tFixedMs * 1e-3});
    std::set<int> keep;
    for (const auto& [key, tier] : fit.params.tiers)
        keep.insert(tierIndexFor(paths, key));
    std::vector<TierConfig> tiers;
    for (size_t i = 0; i < s.tiers.size(); ++i) {
        if (!keep.count(static_cast<int>(i))) continue;
        auto t = s.tiers[i];
        t.preset.clear(); // no longer the preset's values
        t.name += ", fitted";
        tiers.push_back(std::move(t));
    }
    s.tiers = std::move(tiers);
    return s;
}

std::string fittedScenarioJson(const Scenario& s, const PublishedFit& fit,
                               const PublishedReference& ref, const std::string& command) {
    auto j = json::parse(scenarioToJson(s));
    json used = json::array();
    json residuals = json::array();
    for (const auto& r : fit.residuals) {
        used.push_back(r.point.id);
        residuals.push_back(
            {{"id", r.point.id},
             {"published", r.point.text},
             {"model", r.model ? json(*r.model) : json(nullptr)},
             {"relative",
              r.relative() ? json(std::round(*r.relative() * 10000) / 10000) : json(nullptr)}});
    }
    json tiers = json::object();
    for (const auto& [key, t] : fit.params.tiers)
        tiers[key] = {{"bandwidth_GBps", t.bandwidthBps / 1e9},
                      {"t_fixed_ms", t.tFixedS * 1e3},
                      {"t0_ms", t.t0() * 1e3},
                      {"t_layer_us", t.tLayerS * 1e6},
                      {"layers", t.layers}};
    j["provenance"] = {
        {"made_by", command},
        {"method",
         "utilisation, and t_fixed and bandwidth of each tier, fitted by kvbe's fitPublished "
         "(core/src/calibration/published_fit.cpp: Levenberg-Marquardt on relative residuals, "
         "every point weighted the same) to the published points of " +
             ref.name +
             "; B* uses the t_fixed of the tier the point names; "
             "fit.h's adoptFit writes the values into the scenario. Not tuned by hand."},
        {"fixed_cost_form", std::string(toString(fit.fixedCostForm))},
        {"fixed_cost_why", fit.fixedCostWhy},
        {"reference", ref.file},
        {"points_used", used},
        {"notes", fit.notes},
        {"fitted",
         {{"utilisation", fit.params.utilisation.value_or(0)},
          {"tiers", tiers},
          {"rms_relative_residual", fit.params.rmsRelativeResidual}}},
        {"residuals", residuals}};
    return dumpJson(j, 2) + "\n";
}

namespace {

// The scenario's tiers in one form, each from the fixed cost it had on the model fitted on.
Scenario inForm(Scenario s, int fittedLayers, FixedCostForm form) {
    for (auto& t : s.tiers) {
        const double fixedMs = t.tFixedMs + fittedLayers * t.tLayerUs * 1e-3;
        t.tFixedMs = form == FixedCostForm::Constant ? fixedMs : 0.0;
        t.tLayerUs = form == FixedCostForm::Constant ? 0.0 : fixedMs * 1e3 / fittedLayers;
    }
    return s;
}

} // namespace

std::optional<HeldOutForms> heldOutForms(const std::vector<PublishedPoint>& points,
                                         const Evaluation& e, const Presets& presets) {
    const auto& fittedOn = e.scenario.fittedOn;
    if (fittedOn.size() != 1 || fittedOn.front().layers <= 0) return std::nullopt;
    const auto& fitted = fittedOn.front().model;
    if (sameModelName(fitted, e.model.id) || sameModelName(fitted, e.scenario.model))
        return std::nullopt;
    std::vector<PublishedPoint> tierFigures;
    for (const auto& p : points)
        if (p.quantity != PublishedQuantity::Bandwidth) tierFigures.push_back(p);
    HeldOutForms out;
    out.fittedOn = fittedOn.front();
    out.model = e.model.id;
    out.layers = e.cost.kvStateLayers();
    const bool anyT0 = std::any_of(e.scenario.tiers.begin(), e.scenario.tiers.end(),
                                   [](const TierConfig& t) { return t.tFixedMs > 0; });
    const bool anyLayer = std::any_of(e.scenario.tiers.begin(), e.scenario.tiers.end(),
                                      [](const TierConfig& t) { return t.tLayerUs > 0; });
    if (!anyLayer)
        out.scenarioForm = FixedCostForm::Constant;
    else if (!anyT0)
        out.scenarioForm = FixedCostForm::PerLayer;
    for (const auto form : {FixedCostForm::PerLayer, FixedCostForm::Constant}) {
        auto eval = evaluate(inForm(e.scenario, out.fittedOn.layers, form), presets, e.model);
        if (!eval) return std::nullopt;
        (form == FixedCostForm::PerLayer ? out.perLayer : out.constant) =
            comparePublished(tierFigures, *eval);
    }
    return out;
}

} // namespace kvbe
