// kvbe-cli calibration fit FILE... : one calibration fitted with the scenario's model, or one
// node's calibrations for several models, each with its own model, and the fixed cost's two
// parts (t0 + layers × t_layer) fitted across them.
#include "calibration_fit.h"

#include "commands.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/units.h"
#include "kvbe/calibration/calibration.h"
#include "kvbe/calibration/fit.h"

#include <cmath>
#include <iostream>

namespace kvbe::cli {
using nlohmann::json;

Result<CalibrationContext> loadCalibrationContext(const std::string& scenarioPath) {
    auto presets = Presets::loadBuiltin();
    if (!presets) return presets.error();
    auto s =
        scenarioPath.empty() ? defaultScenario(*presets) : loadScenario(scenarioPath, *presets);
    if (!s) return s.error();
    auto e = evaluate(*s, *presets);
    if (!e)
        return Error{(scenarioPath.empty() ? std::string() : scenarioPath + ": ") + e.message()};
    return CalibrationContext{std::move(*presets), *s, std::move(*e)};
}

json optionalJson(const std::optional<double>& v) {
    return v ? json(*v) : json(nullptr);
}

namespace {

// p* of a fitted tier, NaN where it never pays.
double breakevenOf(const FitResult& fit, const std::string& tier) {
    const auto it = fit.breakevenPrefix.find(tier);
    if (it == fit.breakevenPrefix.end() || !it->second) return std::nan("");
    return *it->second;
}

// One file and its fit, with the scenario evaluated for the model it was fitted with.
struct FileFit {
    Calibration c;
    Evaluation eval;
    FitResult fit;
};

// With `ownModel`, a file that names another model than the scenario's is fitted with that
// model (the scenario's GPU and tiers); otherwise with the scenario's, as one file always is.
Result<FileFit> fitFile(const std::string& file, const CalibrationContext& ctx, bool ownModel,
                        const FitOptions& options) {
    auto c = readCalibration(file);
    if (!c) return c.error();
    Evaluation eval = ctx.eval;
    if (ownModel && !c->model.empty() && !sameModelName(c->model, ctx.eval.model.id)) {
        Scenario s = ctx.scenario;
        s.model = c->model;
        auto e = evaluate(s, ctx.presets);
        if (!e)
            return Error{file + ": measured with model '" + c->model +
                         "', which kvbe cannot read (" + e.message() +
                         "); give a preset id, a config.json or a model folder in 'model'"};
        eval = std::move(*e);
    }
    auto fit = fitCalibration(*c, eval.cost.inputs(), eval.tiers, options);
    if (!fit) return fit.error();
    return FileFit{std::move(*c), std::move(eval), std::move(*fit)};
}

json fitJson(const FitResult& fit) {
    const auto& p = fit.params;
    json j = {{"utilisation", optionalJson(p.utilisation)},
              {"ramp_half_tokens", optionalJson(p.rampHalfTokens)},
              {"overhead_s", p.overheadS},
              {"rms_relative_residual", p.rmsRelativeResidual},
              {"fitted_on", fittedOnJson(p.fittedOn)},
              {"fixed_cost_form",
               fit.fixedCostForm ? json(std::string(toString(*fit.fixedCostForm))) : json(nullptr)},
              {"tiers", json::object()},
              {"residuals", json::array()},
              {"notes", fit.notes},
              {"unreliable", fit.unreliable}};
    for (const auto& [n, t] : p.tiers) {
        const double pstar = breakevenOf(fit, n);
        j["tiers"][n] = {{"bandwidth_Bps", t.bandwidthBps},
                         {"t_fixed_s", t.tFixedS},
                         {"t0_s", t.t0()},
                         {"t_layer_s", t.tLayerS},
                         {"layers", t.layers},
                         {"amplification", t.amplification},
                         {"breakeven_prefix_tokens",
                          std::isnan(pstar) ? json(nullptr) : jsonCount(std::ceil(pstar))}};
    }
    for (const auto& r : fit.residuals)
        j["residuals"].push_back({{"series", r.series},
                                  {"tokens", jsonCount(r.tokens)},
                                  {"prefix", jsonCount(r.prefix)},
                                  {"measured_s", r.measuredS},
                                  {"fitted_s", r.fittedS}});
    return j;
}

// One file's fit as a block of lines; `ownForm` shows the fixed cost's form for this file alone
// (a fit across models states its own).
void printFit(const FileFit& f, bool ownForm) {
    const auto& p = f.fit.params;
    std::cout << "Fitted to " << f.c.source << " (" << f.c.format << ")";
    if (!p.fittedOn.empty())
        std::cout << " with " << p.fittedOn.front().model << " (" << p.fittedOn.front().layers
                  << " KV/state layers)";
    std::cout << "\n";
    if (p.utilisation)
        std::cout << "  utilisation      " << std::round(*p.utilisation * 1000) / 10 << " %\n";
    if (p.rampHalfTokens)
        std::cout << "  ramp n_half      " << formatTokens(*p.rampHalfTokens) << " tokens\n";
    std::cout << "  shared overhead  " << formatSeconds(p.overheadS) << "\n";
    for (const auto& [n, t] : p.tiers) {
        const double pstar = breakevenOf(f.fit, n);
        std::cout << "  tier " << n << ": " << formatBandwidth(t.bandwidthBps);
        if (t.amplification != 1)
            std::cout << " × " << std::round(t.amplification * 100) / 100
                      << " amplification = " << formatBandwidth(t.bandwidthBps / t.amplification)
                      << " effective";
        std::cout << ", t_fixed " << formatSeconds(t.tFixedS);
        if (ownForm && t.tLayerS > 0)
            std::cout << " = " << formatSeconds(t.t0()) << " + " << t.layers << " layers × "
                      << formatSeconds(t.tLayerS);
        std::cout << ", break-even prefix "
                  << (std::isnan(pstar) ? std::string("never")
                                        : formatTokens(std::ceil(pstar)) + " tokens")
                  << "\n";
    }
    std::cout << "  rms residual     " << std::round(p.rmsRelativeResidual * 1000) / 10
              << " % of the measured time\n";
    // The fixed cost's note only where its form is this tool's own (it is told by its index,
    // not its text).
    for (std::size_t i = 0; i < f.fit.notes.size(); ++i)
        if (ownForm || f.fit.fixedCostNote != i) std::cout << "  note: " << f.fit.notes[i] << "\n";
    for (const auto& why : f.fit.unreliable)
        std::cout << "  unreliable: " << why << "\n";
}

ExitCode writeOut(const CalibrationFitOptions& o, const FileFit& f, const CalibrationContext& ctx) {
    Calibration saved = f.c;
    saved.fitted = f.fit.params;
    saved.breakevenPrefix.clear();
    for (const auto& [n, p] : f.fit.breakevenPrefix)
        if (p) saved.breakevenPrefix[n] = *wholeBreakevenPrefix(p);
    if (saved.model.empty()) saved.model = ctx.eval.model.id;
    if (!saved.kvDtype) saved.kvDtype = ctx.eval.cost.inputs().kvDtype;
    if (auto st = saveCalibration(o.out, saved); !st) return fail(st.message());
    return ExitCode::Ok;
}

// Several models: per tier, t0 and t_layer across them; the scenario adopts the fit of the
// file for its own model (else the first file's) with those fixed costs.
ExitCode runAcrossModels(const CalibrationFitOptions& o, const CalibrationContext& ctx,
                         const std::vector<FileFit>& files) {
    std::vector<ModelFit> fits;
    std::optional<size_t> primary;
    for (size_t i = 0; i < files.size(); ++i) {
        const auto& f = files[i];
        fits.push_back({f.c.source, {f.eval.model.id, f.eval.cost.kvStateLayers()}, f.fit});
        if (!primary && sameModelName(f.eval.model.id, ctx.eval.model.id)) primary = i;
    }
    const auto lines = fixedCostsAcrossModels(fits);
    const FittedParameters params = withFixedCostLines(fits[primary.value_or(0)], lines, fits);
    if (!o.adopt.empty())
        if (auto st = saveScenario(o.adopt, adoptFit(ctx.scenario, params)); !st)
            return fail(st.message());
    if (o.format == "json") {
        json models = json::array();
        for (const auto& f : files)
            models.push_back(json{{"file", f.c.source}, {"fit", fitJson(f.fit)}});
        json tiers = json::object();
        for (const auto& [n, l] : lines)
            tiers[n] = {{"t0_s", l.t0S},
                        {"t_layer_s", l.tLayerS},
                        {"form", std::string(toString(l.form))},
                        {"why", l.why}};
        std::cout << dumpJson(json{{"models", models},
                                   {"fitted_on", fittedOnJson(params.fittedOn)},
                                   {"fixed_cost", tiers}},
                              2)
                  << "\n";
        return ExitCode::Ok;
    }
    for (const auto& f : files)
        printFit(f, false);
    std::cout << "Fixed cost across " << files.size() << " models (t_fixed = t0 + layers × "
              << "t_layer, layers that hold KV or state):\n";
    for (const auto& [n, l] : lines) {
        std::cout << "  tier " << n << ": t0 " << formatSeconds(l.t0S) << ", t_layer "
                  << formatSeconds(l.tLayerS);
        for (const auto& f : fits)
            std::cout << "; " << f.model.layers
                      << " layers: " << formatSeconds(l.at(f.model.layers));
        std::cout << "\n    " << l.why << "\n";
    }
    return ExitCode::Ok;
}

} // namespace

ExitCode runCalibrationFit(const CalibrationFitOptions& o) {
    auto ctx = loadCalibrationContext(o.scenario);
    if (!ctx) return fail(ctx.message());
    if (o.files.size() > 1 && !o.out.empty())
        return fail("--out writes one calibration file: give one file with --out, or several "
                    "with --adopt to write the scenario fitted across their models");
    FitOptions options;
    options.fitRamp = o.ramp;
    options.fitOverhead = !o.noOverhead;
    const bool several = o.files.size() > 1;
    std::vector<FileFit> files;
    for (const auto& file : o.files) {
        auto f = fitFile(file, *ctx, several, options);
        if (!f) return fail(f.message());
        for (const auto& w : mismatchWarnings(f->c, f->eval.model, f->eval.cost.inputs().kvDtype))
            std::cerr << "kvbe-cli: warning: " << w << "\n";
        files.push_back(std::move(*f));
    }
    if (several) return runAcrossModels(o, *ctx, files);

    const auto& f = files.front();
    if (!o.out.empty())
        if (const ExitCode rc = writeOut(o, f, *ctx); rc != ExitCode::Ok) return rc;
    if (!o.adopt.empty())
        if (auto st = saveScenario(o.adopt, adoptFit(ctx->scenario, f.fit.params)); !st)
            return fail(st.message());
    if (o.format == "json") {
        std::cout << dumpJson(fitJson(f.fit), 2) << "\n";
        return ExitCode::Ok;
    }
    printFit(f, true);
    return ExitCode::Ok;
}

} // namespace kvbe::cli
