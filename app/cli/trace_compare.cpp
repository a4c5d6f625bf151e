// trace replay TRACE --compare DIR: the model's prediction of a live replay (what `probe replay`
// wrote to DIR) beside what the servers did, request for request: the same requests (its
// --limit, --duration-cap and --block-tokens), the same servers, router and load, the scenario
// the flags describe (a calibration's fit adopted with --scenario). docs/trace.md, "Replaying
// against live servers".
#include "commands.h"
#include "trace_options.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"
#include "kvbe/calibration/calibration.h"
#include "kvbe/calibration/fit.h"
#include "kvbe/trace/live_compare.h"
#include "kvbe/trace/trace_capacity.h"
#include "kvbe/trace/trace_sim.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

namespace kvbe::cli {
namespace {

namespace fs = std::filesystem;

nlohmann::ordered_json figuresJson(const LiveFigures& f) {
    return {{"token_hit_ratio", f.tokenHitRatio ? nlohmann::ordered_json(*f.tokenHitRatio)
                                                : nlohmann::ordered_json(nullptr)},
            {"ttft_s", {{"mean", f.mean}, {"p50", f.p50}, {"p90", f.p90}, {"p99", f.p99}}}};
}

nlohmann::ordered_json checkJson(const LiveServiceCheck& c) {
    const auto ratio = c.ratio();
    return {{"requests", c.requests},
            {"predicted_median_s",
             c.requests ? nlohmann::ordered_json(c.predictedMedian) : nlohmann::ordered_json()},
            {"measured_median_s",
             c.requests ? nlohmann::ordered_json(c.measuredMedian) : nlohmann::ordered_json()},
            {"measured_over_predicted",
             ratio ? nlohmann::ordered_json(*ratio) : nlohmann::ordered_json(nullptr)}};
}

} // namespace

Result<Setup> adoptCalibration(const std::string& file, const Setup& setup) {
    auto c = readCalibration(file);
    if (!c) return Error{"--calibration " + c.message()};
    for (const auto& w : mismatchWarnings(*c, setup.eval.model, setup.eval.cost.inputs().kvDtype))
        std::cerr << "kvbe-cli: warning: " << w << "\n";
    auto fit = fitCalibration(*c, setup.eval.cost.inputs(), setup.eval.tiers);
    if (!fit) return Error{"--calibration " + file + ": " + fit.message()};
    Scenario s = adoptFit(setup.eval.scenario, fit->params);
    s.name += " (fit of " + fs::path(file).filename().string() + " adopted)";
    auto e = evaluate(s, setup.presets);
    if (!e) return Error{"--calibration " + file + ": " + e.message()};
    return Setup{std::move(*e), setup.capacities, setup.presets};
}

Status applyEngine(const std::string& engine, ReplayConfig& config) {
    auto e = parseEngine(engine);
    if (!e) return Error{e.message()};
    kvbe::applyEngine(*e, config);
    return Ok{};
}

ExitCode runLiveCompare(const TraceOptions& o, const Setup& setup, const Trace& loaded) {
    auto live = readLiveReplay(o.compareDir);
    if (!live) return fail("--compare " + live.message());
    // The flags may repeat what the live replay did, not change it.
    if (o.replay.instances > 0 && static_cast<std::size_t>(o.replay.instances) != live->servers)
        return fail("--servers " + std::to_string(o.replay.instances) + ": the live replay in " +
                    o.compareDir + " had " + std::to_string(live->servers) + " servers");
    if (!o.replay.router.empty() && o.replay.router != live->router)
        return fail("--router " + o.replay.router + ": the live replay in " + o.compareDir +
                    " routed with " + live->router);
    if (o.replay.rateScale != 1 && o.replay.rateScale != live->rateScale)
        return fail("--rate-scale " + valueText(o.replay.rateScale) + ": the live replay in " +
                    o.compareDir + " ran at " + valueText(live->rateScale));
    if (o.durationCapS)
        return fail("--duration-cap: --compare replays the requests the live replay in " +
                    o.compareDir + " sent; leave it out");
    auto engine = parseEngine(o.engine);
    if (!engine) return fail(engine.message());
    // An engine loads every cached block it finds: `always`, unless --admission says otherwise.
    const Admission rule = o.admissionGiven ? o.admission : Admission::Always;
    ReplayRequest request = o.replay;
    request.tierCapacities = setup.capacities;
    auto c = compareLiveReplay(*live, loaded, setup.eval, request, *engine, rule, o.asRouted);
    if (!c) {
        if (c.error().field != RequestField::None) return fail(flagMessage(c.error()));
        const std::string& m = c.error().message;
        return fail(m.rfind("the trace", 0) == 0 ? o.file + ": " + m : m);
    }
    const LiveComparison& r = *c;
    const LiveFigures &measured = r.measured, &predicted = r.predicted;
    const std::string& router = live->router;
    const std::size_t servers = live->servers, requests = live->requests;
    const double scale = live->rateScale;
    const std::uint32_t blockTokens = live->blockTokens;
    const std::string rowsPath = (fs::path(o.compareDir) / "requests.jsonl").string();

    if (o.output == "json") {
        nlohmann::ordered_json j = {{"live", o.compareDir},
                                    {"requests", requests},
                                    {"compared", r.compared},
                                    {"failed", r.failed},
                                    {"servers", servers},
                                    {"router", router},
                                    {"routing", r.asRouted ? "as routed live" : "by the model"},
                                    {"rate_scale", scale},
                                    {"block_tokens", blockTokens},
                                    {"rule", toString(rule)},
                                    {"scenario", setup.eval.scenario.name},
                                    {"engine", o.engine.empty() ? nlohmann::ordered_json(nullptr)
                                                                : nlohmann::ordered_json(o.engine)},
                                    {"measured", figuresJson(measured)},
                                    {"predicted", figuresJson(predicted)},
                                    {"ttft_mape", r.mape},
                                    {"served_alone",
                                     {{"no_cached_token", checkJson(r.aloneCold)},
                                      {"cached_tokens", checkJson(r.aloneHit)}}}};
        std::cout << dumpJson(j, 2) << "\n";
        return ExitCode::Ok;
    }
    TextTable t;
    t.title = "Predicted against measured: " + std::to_string(r.compared) + " of " +
              std::to_string(requests) + " requests on " + std::to_string(servers) +
              (servers == 1 ? " server" : " servers") + " behind " + router +
              (r.asRouted ? " (each request on the server it went to live)" : "") +
              ", rate scale " + valueText(scale) + ", " + std::to_string(blockTokens) +
              "-token blocks";
    t.columns = {"figure", "predicted", "measured", "error"};
    for (const auto& row : liveComparisonRows(r))
        t.rows.push_back({row[0], row[1], row[2], row[3]});
    t.footnotes.push_back("Per request, the predicted TTFT is off by " +
                          formatFixed(100 * r.mape, 1) + " % on average (MAPE).");
    // The engine's speed in this run against the calibration's price of the same work.
    t.footnotes.push_back(servedAloneSentence());
    t.footnotes.push_back(
        "Predicted: " + setup.eval.scenario.name + ", rule " + std::string(toString(rule)) +
        (o.admissionGiven ? "" : " (an engine loads every cached block it finds)") +
        ". Measured: " + rowsPath + ".");
    if (r.failed > 0)
        t.footnotes.push_back(std::to_string(r.failed) +
                              " requests failed live and are left out of both columns.");
    std::cout << renderTable(t);
    return ExitCode::Ok;
}

} // namespace kvbe::cli
