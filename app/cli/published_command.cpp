// kvbe-cli published compare | fit: the study's published figures beside the model's, and the
// fitted scenario that resources/scenarios/ ships, made again from them.
#include "commands.h"
#include "scenario_flags.h"

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
    ScenarioFlags scenario;
    std::string reference, out, name = "Llama 3.2 3B on the study's H100 node, fitted",
                                format = "table";
    std::vector<std::string> alsoModels; // fit: more models of the same node
};

// The scenario the flags describe, evaluated; its failures name the file where it came from one.
struct Evaluated {
    FlaggedScenario flagged;
    Evaluation eval;
};
Result<Evaluated> evaluated(const ScenarioFlags& flags) {
    auto f = scenarioFromFlags(flags);
    if (!f) return f.error();
    auto e = evaluate(f->scenario, f->presets);
    if (!e) return Error{f->where + e.message()};
    return Evaluated{std::move(*f), std::move(*e)};
}

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
                     {"tokens", r.point.tokens ? jsonCount(*r.point.tokens) : json(nullptr)},
                     {"tier", r.point.tier},
                     {"published", r.point.value},
                     {"published_text", r.point.text},
                     {"source", r.point.source},
                     {"model", r.model ? json(*r.model) : json(nullptr)},
                     {"model_tier", r.modelTier},
                     {"relative", r.relative() ? json(*r.relative()) : json(nullptr)}});
    return a;
}

ExitCode runCompare(const PublishedOptions& o) {
    auto ev = evaluated(o.scenario);
    if (!ev) return fail(ev.message());
    const Evaluation* e = &ev->eval;
    const Scenario* s = &ev->flagged.scenario;
    auto refs = references(o.reference, ev->flagged.presets);
    if (!refs) return fail(refs.message());
    json all = json::array();
    bool any = false;
    for (const auto& [ref, rows] : publishedMatches(*refs, *e)) {
        any = true;
        std::vector<PublishedPoint> points;
        for (const auto& r : rows)
            points.push_back(r.point);
        // A scenario fitted on another model: both forms of the fixed cost, side by side.
        const auto heldOut = heldOutForms(points, *e, ev->flagged.presets);
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
    return ExitCode::Ok;
}

ExitCode runFit(const PublishedOptions& o, const std::string& commandLine) {
    auto ev = evaluated(o.scenario);
    if (!ev) return fail(ev.message());
    const Evaluation* e = &ev->eval;
    const Scenario* base = &ev->flagged.scenario;
    auto refs = references(o.reference, ev->flagged.presets);
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
        auto oe = evaluate(other, ev->flagged.presets);
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
        std::cout << dumpJson(json{{"utilisation", p.utilisation.value_or(0)},
                                   {"tiers", tiers},
                                   {"fitted_on", fittedOnJson(p.fittedOn)},
                                   {"fixed_cost_form", std::string(toString(fit->fixedCostForm))},
                                   {"fixed_cost_why", fit->fixedCostWhy},
                                   {"rms_relative_residual", p.rmsRelativeResidual},
                                   {"residuals", comparisonJson(fit->residuals)},
                                   {"notes", fit->notes}},
                              2)
                  << "\n";
        return ExitCode::Ok;
    }
    std::cout << "Fitted to " << ref->name << " (" << ref->file << "), " << fit->residuals.size()
              << " points\n";
    std::cout << "  utilisation      " << std::round(p.utilisation.value_or(0) * 10000) / 100
              << " % of " << (e->peakFlops / 1e12) << " TFLOP/s\n";
    // t0 is printed as 0 where it fell to its bound (the optimiser leaves a rounding there).
    for (const auto& [n, t] : p.tiers)
        std::cout << "  tier " << n << ": " << formatBandwidth(t.bandwidthBps) << ", t_fixed "
                  << formatSeconds(t.tFixedS) << " = "
                  << formatSeconds(t.t0() < 1e-6 * t.tFixedS ? 0.0 : t.t0()) << " + " << t.layers
                  << " layers × " << formatSeconds(t.tLayerS) << "\n";
    std::cout << "  fixed cost       " << fit->fixedCostWhy << "\n";
    std::cout << "  rms residual     " << std::round(p.rmsRelativeResidual * 1000) / 10 << " %\n";
    for (const auto& note : fit->notes)
        std::cout << "  note: " << note << "\n";
    std::cout << publishedComparisonTable("Residuals at the fitted values:", fit->residuals);
    return ExitCode::Ok;
}

} // namespace

void addPublishedCommands(CLI::App& app, Command& run) {
    auto* pub = app.add_subcommand(
        "published",
        "Published figures (resources/published/) beside the model, and the fit to them");
    pub->require_subcommand(1);

    auto c = std::make_shared<PublishedOptions>();
    auto* compare = pub->add_subcommand(
        "compare", "Print the published figures that match a scenario beside the model's");
    addScenarioFlags(compare, c->scenario);
    compare->add_option("--reference", c->reference,
                        "A published-reference file (default: the shipped ones)");
    compare->add_option("--format", c->format, "Output format")
        ->check(CLI::IsMember({"table", "json"}));
    compare->callback([c, &run] { run = [c] { return runCompare(*c); }; });

    auto f = std::make_shared<PublishedOptions>();
    auto* fit = pub->add_subcommand(
        "fit", "Fit utilisation and the tiers' t_fixed and bandwidth to the published figures");
    addScenarioFlags(fit, f->scenario);
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
        if (const auto flags = scenarioFlagsCommandLine(f->scenario); !flags.empty())
            line += " " + flags;
        if (!f->reference.empty()) line += " --reference " + f->reference;
        for (const auto& m : f->alsoModels)
            line += " --also-model " + m;
        if (!f->out.empty()) line += " --out " + f->out;
        run = [f, line] { return runFit(*f, line); };
    });
}

} // namespace kvbe::cli
