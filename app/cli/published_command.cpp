// kvbe-cli published compare | fit: the study's published figures beside the model's, and the
// fitted scenario that resources/scenarios/ ships, made again from them.
#include "commands.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/units.h"
#include "kvbe/calibration/published.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <cmath>
#include <iostream>
#include <memory>

namespace kvbe::cli {
namespace {
using nlohmann::json;

struct PublishedOptions {
    std::string reference, scenario, out, name = "Llama 3.2 3B on the study's H100 node, fitted",
                                          format = "table";
    std::vector<std::string> alsoModels; // fit: more models of the same node
};

Result<std::vector<PublishedReference>> references(const std::string& file,
                                                   const Presets& presets) {
    if (file.empty()) return builtinPublishedReferences(presets);
    auto r = readPublishedReference(file);
    if (!r) return r.error();
    return std::vector<PublishedReference>{std::move(*r)};
}

json comparisonJson(const std::vector<PublishedComparison>& rows) {
    json a = json::array();
    for (const auto& r : rows)
        a.push_back({{"id", r.point.id},
                     {"quantity", std::string(toString(r.point.quantity))},
                     {"tokens", r.point.tokens ? json(*r.point.tokens) : json(nullptr)},
                     {"tier", r.point.tier},
                     {"published", r.point.value},
                     {"published_text", r.point.text},
                     {"source", r.point.source},
                     {"model", r.model ? json(*r.model) : json(nullptr)},
                     {"model_tier", r.modelTier},
                     {"relative", r.relative() ? json(*r.relative()) : json(nullptr)}});
    return a;
}

int runCompare(const PublishedOptions& o) {
    auto presets = Presets::loadBuiltin();
    if (!presets) return fail(presets.message());
    auto s = o.scenario.empty() ? defaultScenario(*presets) : loadScenario(o.scenario, *presets);
    if (!s) return fail(s.message());
    auto e = evaluate(*s, *presets);
    if (!e) return fail((o.scenario.empty() ? std::string() : o.scenario + ": ") + e.message());
    auto refs = references(o.reference, *presets);
    if (!refs) return fail(refs.message());
    json all = json::array();
    bool any = false;
    for (const auto& [ref, rows] : publishedMatches(*refs, *e)) {
        any = true;
        std::vector<PublishedPoint> points;
        for (const auto& r : rows)
            points.push_back(r.point);
        // A scenario fitted on another model: both forms of the fixed cost, side by side.
        const auto heldOut = heldOutForms(points, *e, *presets);
        if (o.format == "json") {
            json entry = {
                {"reference", ref->file}, {"name", ref->name}, {"points", comparisonJson(rows)}};
            if (heldOut)
                entry["held_out"] = {
                    {"fitted_on",
                     {{"model", heldOut->fittedOn.model}, {"layers", heldOut->fittedOn.layers}}},
                    {"model", heldOut->model},
                    {"layers", heldOut->layers},
                    {"scenario_form", heldOut->scenarioForm
                                          ? json(std::string(toString(*heldOut->scenarioForm)))
                                          : json(nullptr)},
                    {"per_layer", comparisonJson(heldOut->perLayer)},
                    {"constant", comparisonJson(heldOut->constant)}};
            all.push_back(std::move(entry));
        } else {
            std::cout << publishedComparisonTable(
                "Published (" + ref->name + ") against " + s->name + ":", rows);
            if (heldOut) std::cout << heldOutTable(*heldOut);
        }
    }
    if (o.format == "json")
        std::cout << dumpJson(all, 2) << "\n";
    else if (!any)
        std::cout << "No published figure matches this scenario's model, GPU and KV dtype.\n";
    return kExitOk;
}

int runFit(const PublishedOptions& o, const std::string& commandLine) {
    auto presets = Presets::loadBuiltin();
    if (!presets) return fail(presets.message());
    auto base = o.scenario.empty() ? defaultScenario(*presets) : loadScenario(o.scenario, *presets);
    if (!base) return fail(base.message());
    auto e = evaluate(*base, *presets);
    if (!e) return fail((o.scenario.empty() ? std::string() : o.scenario + ": ") + e.message());
    auto refs = references(o.reference, *presets);
    if (!refs) return fail(refs.message());
    // The reference with the most matching points: one study's figures are fitted together.
    const PublishedReference* ref = nullptr;
    std::vector<PublishedPoint> points;
    for (const auto& m : publishedMatches(*refs, *e))
        if (m.rows.size() > points.size()) {
            points.clear();
            for (const auto& row : m.rows)
                points.push_back(row.point);
            ref = m.reference;
        }
    if (!ref)
        return fail("no published figure matches the scenario's model '" + base->model +
                    "' and GPU '" + base->gpu + "'");
    // More models of the same node: their points in the same reference, each with the base
    // scenario's GPU and tiers.
    std::vector<PublishedModelPoints> models{{points, *e}};
    for (const auto& id : o.alsoModels) {
        Scenario other = *base;
        other.model = id;
        auto oe = evaluate(other, *presets);
        if (!oe) return fail("--also-model " + id + ": " + oe.message());
        auto theirs = matchingPoints(*ref, *oe); // the node's own figures are fitted once
        if (theirs.empty())
            return fail("--also-model " + id + ": " + ref->file +
                        " has no figure for that model on GPU '" + base->gpu + "'");
        models.push_back({std::move(theirs), std::move(*oe)});
    }
    auto fit = fitPublished(models);
    if (!fit) return fail(fit.message());
    const Scenario fitted = fittedScenario(*base, *fit, o.name);
    if (!o.out.empty()) {
        if (auto st =
                writeFileAtomically(o.out, fittedScenarioJson(fitted, *fit, *ref, commandLine));
            !st)
            return fail(st.message());
        std::cerr << "kvbe-cli: wrote " << o.out << "\n";
    }
    const auto& p = fit->params;
    if (o.format == "json") {
        json tiers = json::object();
        for (const auto& [n, t] : p.tiers)
            tiers[n] = {{"bandwidth_Bps", t.bandwidthBps},
                        {"t_fixed_s", t.tFixedS},
                        {"t0_s", t.t0()},
                        {"t_layer_s", t.tLayerS},
                        {"layers", t.layers}};
        json fittedOn = json::array();
        for (const auto& m : p.fittedOn)
            fittedOn.push_back({{"model", m.model}, {"layers", m.layers}});
        std::cout << dumpJson(json{{"utilisation", p.utilisation.value_or(0)},
                                   {"tiers", tiers},
                                   {"fitted_on", fittedOn},
                                   {"fixed_cost_form", std::string(toString(fit->fixedCostForm))},
                                   {"fixed_cost_why", fit->fixedCostWhy},
                                   {"rms_relative_residual", p.rmsRelativeResidual},
                                   {"residuals", comparisonJson(fit->residuals)},
                                   {"notes", fit->notes}},
                              2)
                  << "\n";
        return kExitOk;
    }
    std::cout << "Fitted to " << ref->name << " (" << ref->file << "), " << fit->residuals.size()
              << " points\n";
    std::cout << "  utilisation      " << std::round(p.utilisation.value_or(0) * 10000) / 100
              << " % of " << (e->peakFlops / 1e12) << " TFLOP/s\n";
    for (const auto& [n, t] : p.tiers)
        // t0 is printed as 0 where it fell to its bound (the optimiser leaves a rounding there).
        std::cout << "  tier " << n << ": " << formatBandwidth(t.bandwidthBps) << ", t_fixed "
                  << formatSeconds(t.tFixedS) << " = "
                  << formatSeconds(t.t0() < 1e-6 * t.tFixedS ? 0.0 : t.t0()) << " + " << t.layers
                  << " layers × " << formatSeconds(t.tLayerS) << "\n";
    std::cout << "  fixed cost       " << fit->fixedCostWhy << "\n";
    std::cout << "  rms residual     " << std::round(p.rmsRelativeResidual * 1000) / 10 << " %\n";
    for (const auto& note : fit->notes)
        std::cout << "  note: " << note << "\n";
    std::cout << publishedComparisonTable("Residuals at the fitted values:", fit->residuals);
    return kExitOk;
}

} // namespace

void addPublishedCommands(CLI::App& app, std::function<int()>& run) {
    auto* pub = app.add_subcommand(
        "published",
        "Published figures (resources/published/) beside the model, and the fit to them");
    pub->require_subcommand(1);

    auto c = std::make_shared<PublishedOptions>();
    auto* compare = pub->add_subcommand(
        "compare", "Print the published figures that match a scenario beside the model's");
    compare->add_option("--scenario", c->scenario, "Scenario (default: the default scenario)");
    compare->add_option("--reference", c->reference,
                        "A published-reference file (default: the shipped ones)");
    compare->add_option("--format", c->format, "Output format")
        ->check(CLI::IsMember({"table", "json"}));
    compare->callback([c, &run] { run = [c] { return runCompare(*c); }; });

    auto f = std::make_shared<PublishedOptions>();
    auto* fit = pub->add_subcommand(
        "fit", "Fit utilisation and the tiers' t_fixed and bandwidth to the published figures");
    fit->add_option("--scenario", f->scenario,
                    "Base scenario: model, GPU, FLOP model, tiers (default: the default scenario)");
    fit->add_option("--reference", f->reference,
                    "A published-reference file (default: the shipped ones)");
    fit->add_option("--out", f->out, "Write the fitted scenario, with how it was made, to FILE");
    fit->add_option("--name", f->name, "Name of the fitted scenario");
    fit->add_option("--also-model", f->alsoModels,
                    "Also fit to this model's figures on the same node (repeatable): with models "
                    "of different depths, both parts of the fixed cost (t0 + layers × t_layer) "
                    "are fitted");
    fit->add_option("--format", f->format, "Output format")
        ->check(CLI::IsMember({"table", "json"}));
    fit->callback([f, &run] {
        std::string line = "kvbe-cli published fit";
        if (!f->scenario.empty()) line += " --scenario " + f->scenario;
        if (!f->reference.empty()) line += " --reference " + f->reference;
        for (const auto& m : f->alsoModels)
            line += " --also-model " + m;
        if (!f->out.empty()) line += " --out " + f->out;
        run = [f, line] { return runFit(*f, line); };
    });
}

} // namespace kvbe::cli
