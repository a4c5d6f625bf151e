// kvbe-cli calc, models, gpus, tiers.
#include "commands.h"
#include "scenario_flags.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/units.h"
#include "kvbe/calibration/published.h"
#include "kvbe/scenario/calc_report.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <cmath>
#include <iostream>
#include <memory>

namespace kvbe::cli {
namespace {

struct CalcOptions {
    ScenarioFlags scenario;
    std::string lengths, fraction;
    bool allowPastContext = false;
    std::string format = "table";
};

ExitCode runCalc(const CalcOptions& o) {
    auto flagged = scenarioFromFlags(o.scenario);
    if (!flagged) return fail(flagged.message());
    const Presets* presets = &flagged->presets;
    const Scenario& s = flagged->scenario;
    double fraction = s.cachedFraction;
    if (!o.fraction.empty()) {
        auto f = parseFraction(o.fraction);
        if (!f) return fail("--fraction " + f.message());
        fraction = *f;
    }

    const std::string& where = flagged->where;
    auto model = resolveModel(s.model, *presets);
    if (!model) return fail(where + model.message());
    if (auto why = tensorParallelProblem(*model, s.tensorParallel))
        return fail((!o.scenario.tp.empty() ? "--tp " + o.scenario.tp + ": "
                                            : where + "tensor_parallel: ") +
                    *why);

    const double context = model->contextLimit;
    std::vector<double> lengths;
    if (!o.lengths.empty()) {
        auto l = parseTokenList(o.lengths);
        if (!l) return fail("--lengths: " + l.message());
        lengths = *l;
        for (double n : lengths)
            if (n > context && !o.allowPastContext)
                return fail("--lengths: " + formatTokens(n) + " tokens is past the context of " +
                            model->id + " (" + formatTokens(context) +
                            " tokens, its max_position_embeddings), so no such prompt exists; pass "
                            "--allow-past-context to extrapolate anyway (those rows are flagged)");
    } else {
        // The default lengths stop at the model's context, which is the last row.
        for (double n : {1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0, 131072.0})
            if (n < context) lengths.push_back(n);
        lengths.push_back(context);
    }

    auto eval = evaluate(s, *presets, *model);
    if (!eval) return fail(where + eval.message());
    const auto report = makeCalcReport(*eval, lengths, fraction);
    // The study's published figures for this model and GPU, beside the model's (not in CSV,
    // whose rows are one length each).
    auto refs = builtinPublishedReferences(*presets);
    if (!refs) return fail(refs.message());
    const auto published = publishedMatches(*refs, *eval);
    if (o.format == "json") {
        auto j = calcJson(report);
        j["published"] = nlohmann::json::array();
        for (const auto& [ref, rows] : published)
            for (const auto& r : rows)
                j["published"].push_back(
                    {{"id", r.point.id},
                     {"reference", ref->file},
                     {"quantity", std::string(toString(r.point.quantity))},
                     {"tier", r.point.tier},
                     {"tokens",
                      r.point.tokens ? jsonCount(*r.point.tokens) : nlohmann::json(nullptr)},
                     {"published", r.point.value},
                     {"published_text", r.point.text},
                     {"source", r.point.source},
                     {"model", r.model ? nlohmann::json(*r.model) : nlohmann::json(nullptr)},
                     {"model_tier", r.modelTier}});
        std::cout << dumpJson(j, 2) << "\n";
    } else if (o.format == "csv") {
        std::cout << calcCsv(report);
    } else {
        std::cout << calcTable(report);
        for (const auto& [ref, rows] : published)
            std::cout << "\n" << publishedComparisonTable("Published (" + ref->name + "):", rows);
    }
    return ExitCode::Ok;
}

template <class JsonFn, class TableFn>
ExitCode runListing(const std::string& format, JsonFn toJson, TableFn toTable) {
    auto presets = Presets::loadBuiltin();
    if (!presets) return fail(presets.message());
    if (format == "json")
        std::cout << dumpJson(toJson(*presets), 2) << "\n";
    else
        std::cout << toTable(*presets);
    return ExitCode::Ok;
}

} // namespace

void addCalcCommands(CLI::App& app, Command& run) {
    auto o = std::make_shared<CalcOptions>();
    auto* calc = app.add_subcommand(
        "calc", "Break-even bandwidth, prefix length, TTFT and speedup for a scenario");
    addScenarioFlags(calc, o->scenario);
    calc->add_option("--lengths", o->lengths,
                     "Prompt lengths, e.g. 1024,8k,80k (at most the model's context)");
    calc->add_flag(
        "--allow-past-context", o->allowPastContext,
        "Accept lengths past the model's context; those rows are flagged in every format");
    calc->add_option("--fraction", o->fraction, "Cached fraction for t_hit and speedup (0..1)");
    calc->add_option("--format", o->format, "Output format")
        ->check(CLI::IsMember({"table", "csv", "json"}));
    calc->callback([o, &run] { run = [o] { return runCalc(*o); }; });

    auto format = std::make_shared<std::string>("table");
    auto* models =
        app.add_subcommand("models", "List the model presets with their KV and parameter figures");
    auto* gpus = app.add_subcommand("gpus", "List the GPU presets with peaks and host links");
    auto* tiers =
        app.add_subcommand("tiers", "List the tier presets with bandwidths and fixed costs");
    for (auto* sub : {models, gpus, tiers})
        sub->add_option("--format", *format, "Output format")
            ->check(CLI::IsMember({"table", "json"}));
    models->callback([format, &run] {
        run = [format] { return runListing(*format, modelsJson, modelsTable); };
    });
    gpus->callback(
        [format, &run] { run = [format] { return runListing(*format, gpusJson, gpusTable); }; });
    tiers->callback(
        [format, &run] { run = [format] { return runListing(*format, tiersJson, tiersTable); }; });
}

} // namespace kvbe::cli
