// kvbe-cli calibration inspect | fit | export-pykvcache: measurements in and thresholds out.
#include "calibration_fit.h"
#include "commands.h"

#include "kvbe/base/host_info.h"
#include "kvbe/base/json_text.h"
#include "kvbe/base/units.h"
#include "kvbe/calibration/calibration.h"
#include "kvbe/calibration/fit.h"
#include "kvbe/calibration/published.h"
#include "kvbe/calibration/pykvcache.h"
#include "kvbe/files/file_kind.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <cmath>
#include <ctime>
#include <iostream>
#include <memory>

namespace kvbe::cli {
namespace {
using nlohmann::json;

using Context = CalibrationContext;

Result<Context> loadContext(const std::string& scenarioPath) {
    return loadCalibrationContext(scenarioPath);
}

json countOrNull(const std::optional<double>& v) {
    return v ? jsonCount(*v) : json(nullptr);
}

json calibrationSummary(const Calibration& c, const std::vector<std::string>& mismatches) {
    json tiers = json::array();
    for (const auto& t : c.tiers)
        tiers.push_back({{"name", t.name},
                         {"read_Bps", optionalJson(t.readBps)},
                         {"write_Bps", optionalJson(t.writeBps)},
                         {"read_samples", t.reads.size()}});
    json fitted = nullptr;
    if (c.fitted) {
        fitted = {{"utilisation", optionalJson(c.fitted->utilisation)},
                  {"ramp_half_tokens", optionalJson(c.fitted->rampHalfTokens)},
                  {"overhead_s", c.fitted->overheadS},
                  {"rms_relative_residual", c.fitted->rmsRelativeResidual},
                  {"tiers", json::object()}};
        for (const auto& [n, t] : c.fitted->tiers)
            fitted["tiers"][n] = {{"bandwidth_Bps", t.bandwidthBps},
                                  {"t_fixed_s", t.tFixedS},
                                  {"t_layer_s", t.tLayerS},
                                  {"layers", t.layers},
                                  {"amplification", t.amplification}};
    }
    json warnings = c.warnings;
    for (const auto& w : mismatches)
        warnings.push_back(w);
    json curves = json::object();
    for (const auto& [name, k] : c.curves) {
        json knots = json::array();
        for (const auto& [m, s] : k.knots)
            knots.push_back({jsonCount(m), s});
        curves[name] = {{"floor_s", k.floorS}, {"knots", std::move(knots)}};
    }
    json golden = json::array();
    for (const auto& g : c.golden)
        golden.push_back(
            {{"tokens", jsonCount(g.tokens)}, {"f", g.f}, {"g_ssd", g.gSsd}, {"g_mem", g.gMem}});
    json breakeven = json::object();
    for (const auto& [tier, tokens] : c.breakevenPrefix)
        breakeven[tier] = jsonCount(tokens);
    const auto format = calibrationFormatOf(c.format);
    const bool pykv = format && isPyKvcache(*format);
    json gate = nullptr;
    if (pykv) {
        gate = json::object();
        for (const auto& [tier, tokens] : pyKvcacheGate(c))
            gate[tier] = jsonCount(tokens);
    }
    return {{"source", c.source},
            {"format", c.format},
            {"host", c.host},
            {"date", c.date},
            {"gpu", c.gpuName},
            {"model", c.model},
            {"kv_dtype", c.kvDtype ? json(std::string(toString(*c.kvDtype))) : json(nullptr)},
            {"kv_dtype_as_written", c.kvDtypeText.empty() ? json(nullptr) : json(c.kvDtypeText)},
            {"ssd_model", c.ssdModel},
            {"curves", curves},
            {"golden", golden},
            {"provenance", c.provenance},
            {"gate_tokens", gate},
            {"kv_bytes_per_token", countOrNull(c.kvBytesPerToken)},
            {"prefill_points", c.prefill.size()},
            {"hit_points", c.hits.size()},
            {"tiers", tiers},
            {"fitted", fitted},
            {"breakeven_prefix_tokens", breakeven},
            {"safety_margin_tokens", countOrNull(c.safetyMarginTokens)},
            {"warnings", warnings}};
}

json publishedSummary(const PublishedReference& r, const Evaluation& e) {
    json points = json::array();
    const auto matching = matchingPoints(r, e);
    for (const auto& p : r.points) {
        bool matches = false;
        for (const auto& m : matching)
            matches = matches || m.id == p.id;
        points.push_back({{"id", p.id},
                          {"quantity", std::string(toString(p.quantity))},
                          {"model", p.model},
                          {"gpu", p.gpu},
                          {"tier", p.tier},
                          {"tokens", p.tokens ? jsonCount(*p.tokens) : json(nullptr)},
                          {"value", p.value},
                          {"min", p.low ? json(*p.low) : json(nullptr)},
                          {"max", p.high ? json(*p.high) : json(nullptr)},
                          {"text", p.text},
                          {"source", p.source},
                          {"quoted_in", p.quotedIn},
                          {"quote", p.quote},
                          {"matches_scenario", matches}});
    }
    return {{"source", r.file}, {"format", "kvbe-published"},
            {"name", r.name},   {"study", r.study},
            {"node", r.node},   {"tokens_per_k", jsonCount(r.tokensPerK)},
            {"points", points}};
}

void printPublished(const PublishedReference& r, const Evaluation& e) {
    std::cout << r.file << "  (kvbe-published)\n  " << r.name << "\n";
    if (!r.study.empty()) std::cout << "  study " << r.study << "\n";
    if (!r.node.empty()) std::cout << "  node " << r.node << "\n";
    const auto matching = matchingPoints(r, e);
    for (const auto& p : r.points) {
        bool matches = false;
        for (const auto& m : matching)
            matches = matches || m.id == p.id;
        std::cout << "  " << (matches ? "* " : "  ") << toString(p.quantity)
                  << (p.tier.empty() ? "" : " " + p.tier) << (p.model.empty() ? "" : ", " + p.model)
                  << (p.gpu.empty() ? "" : " on " + p.gpu) << ": " << p.text << "  [" << p.source
                  << "; quoted in " << p.quotedIn << "]\n";
    }
    std::cout << "  (* matches the scenario's model and GPU)\n";
}

ExitCode runInspect(const std::vector<std::string>& files, const std::string& scenarioPath,
                    const std::string& format) {
    auto ctx = loadContext(scenarioPath);
    if (!ctx) return fail(ctx.message());
    // The files, and the files of folders, as the window's import takes them; published-reference
    // files (docs/published-reference-format.md) are read here, the rest are calibrations.
    auto list = filesToRead({files.begin(), files.end()}, FileKind::Calibration);
    std::vector<std::filesystem::path> paths;
    std::vector<PublishedReference> refs;
    std::vector<std::string> refErrors;
    for (const auto& f : list.files) {
        if (classifyFile(f).kind == FileKind::PublishedReference) {
            if (auto r = readPublishedReference(f))
                refs.push_back(std::move(*r));
            else
                refErrors.push_back(r.message());
            continue;
        }
        paths.push_back(f);
    }
    auto set = readCalibrations(paths);
    set.errors.insert(set.errors.begin(), list.errors.begin(), list.errors.end());
    for (auto& e : refErrors)
        set.errors.push_back(std::move(e));
    const auto kv = ctx->eval.cost.inputs().kvDtype;
    json out = json::array();
    for (const auto& c : set.calibrations)
        out.push_back(calibrationSummary(c, mismatchWarnings(c, ctx->eval.model, kv)));
    json published = json::array();
    for (const auto& r : refs)
        published.push_back(publishedSummary(r, ctx->eval));
    if (format == "json") {
        json j{{"calibrations", out}, {"errors", set.errors}};
        if (!refs.empty()) j["published"] = published;
        std::cout << dumpJson(j, 2) << "\n";
    } else {
        for (const auto& r : refs)
            printPublished(r, ctx->eval);
        for (const auto& c : out) {
            std::cout << c["source"].get<std::string>() << "  (" << c["format"].get<std::string>()
                      << ")\n";
            if (!c["host"].get<std::string>().empty())
                std::cout << "  host " << c["host"].get<std::string>() << "\n";
            if (!c["model"].get<std::string>().empty())
                std::cout << "  model " << c["model"].get<std::string>() << "\n";
            if (!c["gpu"].get<std::string>().empty())
                std::cout << "  gpu " << c["gpu"].get<std::string>() << "\n";
            if (!c["ssd_model"].get<std::string>().empty())
                std::cout << "  ssd " << c["ssd_model"].get<std::string>() << "\n";
            if (!c["kv_dtype_as_written"].is_null()) {
                std::cout << "  kv_dtype " << c["kv_dtype_as_written"].get<std::string>();
                if (!c["kv_dtype"].is_null() && c["kv_dtype_as_written"] == "auto")
                    std::cout << " (the model's own: " << c["kv_dtype"].get<std::string>() << ")";
                std::cout << "\n";
            }
            std::cout << "  " << c["prefill_points"] << " cold prefills, " << c["hit_points"]
                      << " hits\n";
            for (const auto& [name, k] : c["curves"].items())
                if (!k["knots"].empty())
                    std::cout << "  curve " << name << ": " << k["knots"].size() << " knots from "
                              << formatTokens(k["knots"].front()[0].get<double>()) << " to "
                              << formatTokens(k["knots"].back()[0].get<double>())
                              << " tokens, floor " << formatSeconds(k["floor_s"].get<double>())
                              << "\n";
            if (!c["golden"].empty()) std::cout << "  " << c["golden"].size() << " golden points\n";
            for (const auto& t : c["tiers"]) {
                std::cout << "  tier " << t["name"].get<std::string>();
                if (!t["read_Bps"].is_null())
                    std::cout << "  read " << formatBandwidth(t["read_Bps"].get<double>());
                if (!t["write_Bps"].is_null())
                    std::cout << "  write " << formatBandwidth(t["write_Bps"].get<double>());
                std::cout << "\n";
            }
            if (!c["fitted"].is_null()) {
                const auto& f = c["fitted"];
                if (!f["utilisation"].is_null())
                    std::cout << "  fitted utilisation "
                              << std::round(f["utilisation"].get<double>() * 1000) / 10
                              << " %, overhead " << formatSeconds(f["overhead_s"].get<double>())
                              << "\n";
                for (const auto& [tier, v] : f["tiers"].items()) {
                    std::cout << "  fitted tier " << tier << ": "
                              << formatBandwidth(v["bandwidth_Bps"].get<double>()) << ", t_fixed "
                              << formatSeconds(v["t_fixed_s"].get<double>());
                    if (v["t_layer_s"].get<double>() > 0)
                        std::cout << " (" << v["layers"].get<int>() << " layers × "
                                  << formatSeconds(v["t_layer_s"].get<double>()) << " of it)";
                    std::cout << "\n";
                }
            }
            for (const auto& [tier, p] : c["breakeven_prefix_tokens"].items())
                std::cout << "  break-even prefix " << tier << ": " << formatTokens(p.get<double>())
                          << " tokens\n";
            if (!c["gate_tokens"].is_null())
                for (const auto& [tier, p] : c["gate_tokens"].items())
                    std::cout << "  py-kvcache gate " << tier << ": "
                              << (p.get<double>() > 0
                                      ? "loads from " + formatTokens(p.get<double>()) + " tokens"
                                      : std::string("off (every prefix loads)"))
                              << "\n";
            for (const auto& w : c["warnings"])
                std::cout << "  warning: " << w.get<std::string>() << "\n";
        }
    }
    for (const auto& e : set.errors)
        std::cerr << "kvbe-cli: " << e << "\n";
    return set.errors.empty() ? ExitCode::Ok : ExitCode::BadInput;
}

struct ExportOptions {
    std::string scenario, calibration, out, ssdTier, memTier, model;
    std::string safetyMargin; // tokens; empty: the calibration's, or 0
    int schema = 1;
};

ExitCode runExport(const ExportOptions& o) {
    std::optional<double> margin;
    if (!o.safetyMargin.empty()) {
        auto m = parseCount(o.safetyMargin, 0, static_cast<std::int64_t>(kMaxExactTokens));
        if (!m) return fail("--safety-margin " + m.message());
        margin = static_cast<double>(*m);
    }
    if (o.scenario.empty() && o.calibration.empty())
        return fail("export-pykvcache: give --scenario FILE, --calibration FILE, or both");
    std::optional<Calibration> cal;
    if (!o.calibration.empty()) {
        auto c = readCalibration(o.calibration);
        if (!c) return fail(c.message());
        cal = std::move(*c);
    }
    // The scenario gives the model the thresholds are computed with: needed for schema 2, and to
    // check a calibration's model against when one is given.
    std::optional<Context> ctx;
    if (!o.scenario.empty() || o.schema == 2) {
        auto loaded = loadContext(o.scenario);
        if (!loaded) return fail(loaded.message());
        ctx = std::move(*loaded);
    }
    const std::string scenarioName =
        o.scenario.empty() ? std::string("the built-in default scenario") : o.scenario;
    // A file for another model than the scenario's only when --model says so.
    if (ctx && cal && !cal->model.empty() && !sameModelName(cal->model, ctx->eval.model.id) &&
        !(!o.model.empty() && sameModelName(o.model, cal->model)))
        return fail("export-pykvcache: " + cal->source + " was measured with model '" + cal->model +
                    "', " + scenarioName + " uses '" + ctx->eval.model.id +
                    "'; give a scenario for that model, or --model '" + cal->model +
                    "' to write the file for it anyway");
    if (ctx && !cal && !o.model.empty() && !sameModelName(o.model, ctx->eval.model.id))
        std::cerr << "kvbe-cli: warning: writing thresholds computed for '" << ctx->eval.model.id
                  << "' under the name '" << o.model << "' (--model)\n";

    std::string text, ssdTier, memTier;
    if (o.schema == 1) {
        Result<PyKvcacheExport> ex =
            cal ? pyKvcacheFromCalibration(*cal, o.ssdTier, o.memTier)
                : pyKvcacheFromScenario(ctx->eval, ctx->presets, o.ssdTier, o.memTier);
        if (!ex) return fail("export-pykvcache: " + ex.message());
        if (margin) ex->thresholds.safetyMarginTokens = *margin; // else the file's, or 0
        if (!o.model.empty()) ex->thresholds.modelName = o.model;
        text = pyKvcacheV1Json(ex->thresholds);
        ssdTier = ex->ssdTier;
        memTier = ex->memTier;
    } else {
        Result<Evaluation> eval = ctx->eval;
        if (cal) {
            if (!cal->fitted)
                return fail(
                    "export-pykvcache: " + cal->source +
                    " holds no fitted values; fit it first (kvbe-cli calibration fit --out)");
            eval = evaluate(adoptFit(ctx->scenario, *cal->fitted), ctx->presets);
            if (!eval)
                return fail("export-pykvcache: " + scenarioName + " with the fit of " +
                            cal->source + ": " + eval.message());
        }
        auto ex = pyKvcacheV2FromScenario(*eval, ctx->presets, o.ssdTier, o.memTier);
        if (!ex) return fail("export-pykvcache: " + ex.message());
        auto& file = ex->file;
        file.thresholds.safetyMarginTokens =
            margin ? *margin : (cal ? cal->safetyMarginTokens.value_or(0) : 0);
        if (!o.model.empty()) file.thresholds.modelName = o.model;
        file.provenance["generator"] = "kvbe-cli " KVBE_VERSION;
        file.provenance["scenario"] =
            o.scenario.empty() ? std::string("(built-in default)") : o.scenario;
        if (cal) file.provenance["calibration"] = cal->source;
        file.provenance["generated"] = utcNow();
        file.provenance["ssd_tier"] = ex->ssdTier;
        file.provenance["mem_tier"] = ex->memTier;
        text = pyKvcacheV2Json(file);
        ssdTier = ex->ssdTier;
        memTier = ex->memTier;
    }
    if (cal && ctx)
        for (const auto& w :
             mismatchWarnings(*cal, ctx->eval.model, ctx->eval.cost.inputs().kvDtype))
            std::cerr << "kvbe-cli: warning: " << w << "\n";
    if (o.out.empty() || o.out == "-") {
        std::cout << text;
        return ExitCode::Ok;
    }
    if (auto st = writeFileAtomically(o.out, text); !st) return fail(st.message());
    std::cerr << "kvbe-cli: wrote " << o.out << " (schema " << o.schema
              << "; ssd: " << (ssdTier.empty() ? "none" : ssdTier)
              << ", mem: " << (memTier.empty() ? "none" : memTier) << ")\n";
    return ExitCode::Ok;
}

} // namespace

void addCalibrationCommands(CLI::App& app, Command& run) {
    auto* cal = app.add_subcommand(
        "calibration", "Inspect and fit measurement files; export py-kvcache thresholds");
    cal->require_subcommand(1);

    auto files = std::make_shared<std::vector<std::string>>();
    auto inspectScenario = std::make_shared<std::string>();
    auto inspectFormat = std::make_shared<std::string>("table");
    auto* inspect =
        cal->add_subcommand("inspect", "Read calibration files or folders (kvbe, py-kvcache v1/v2, "
                                       "pareto-measure CSV, fio JSON, nvbandwidth JSON)");
    inspect->add_option("files", *files, "Files or folders")->required();
    inspect->add_option("--scenario", *inspectScenario,
                        "Warn where a file's model or KV dtype differs from this scenario's");
    inspect->add_option("--format", *inspectFormat, "Output format")
        ->check(CLI::IsMember({"table", "json"}));
    inspect->callback(
        [=, &run] { run = [=] { return runInspect(*files, *inspectScenario, *inspectFormat); }; });

    auto f = std::make_shared<CalibrationFitOptions>();
    auto* fit = cal->add_subcommand(
        "fit", "Fit utilisation, shared overhead and per-tier t_fixed/bandwidth to a calibration "
               "(or to one node's calibrations for several models)");
    fit->add_option("files", f->files,
                    "Calibration file; several, one per model measured on one node, fit the "
                    "fixed cost's t0 and per-layer part across the models")
        ->required();
    fit->add_option("--scenario", f->scenario,
                    "Scenario giving model, GPU, FLOP model and nominal tiers");
    fit->add_flag("--ramp", f->ramp,
                  "Also fit the utilisation ramp n_half (best without --overhead)");
    fit->add_flag("--no-overhead", f->noOverhead,
                  "Do not fit a shared overhead (prefill timings without scheduling)");
    fit->add_option("--out", f->out, "Write the calibration with its fitted values and p* to FILE");
    fit->add_option("--adopt", f->adopt,
                    "Write the scenario with the fitted values adopted to FILE");
    fit->add_option("--format", f->format, "Output format")
        ->check(CLI::IsMember({"table", "json"}));
    fit->callback([f, &run] { run = [f] { return runCalibrationFit(*f); }; });

    auto e = std::make_shared<ExportOptions>();
    auto* ex = cal->add_subcommand("export-pykvcache",
                                   "Write the py-kvcache break-even file (v1 thresholds, or v2 "
                                   "curves) a serving stack gates loads with");
    ex->add_option("--scenario", e->scenario,
                   "Thresholds computed from this scenario; with --calibration, the model to check "
                   "it against");
    ex->add_option("--calibration", e->calibration,
                   "Thresholds from this (fitted) calibration file; for --schema 2, its fit "
                   "adopted into the scenario");
    ex->add_option("--schema", e->schema,
                   "1: thresholds only; 2: also the f, g_ssd, g_mem curves and golden points")
        ->check(CLI::IsMember({1, 2}));
    ex->add_option("--model", e->model,
                   "model_name to write; needed to write a file for a calibration of another model "
                   "than the scenario's");
    ex->add_option("--out", e->out, "Output file (- or nothing: stdout)");
    ex->add_option("--ssd-tier", e->ssdTier,
                   "Tier that stands for the SSD (default: the first NVMe tier)");
    ex->add_option("--mem-tier", e->memTier,
                   "Tier that stands for host memory (default: the first DRAM tier)");
    ex->add_option(
        "--safety-margin", e->safetyMargin,
        "safety_margin_tokens to write, a token count (default: the calibration's, or 0)");
    ex->callback([e, &run] { run = [e] { return runExport(*e); }; });
}

} // namespace kvbe::cli
