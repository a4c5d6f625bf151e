#include "serving_outputs.h"

#include "kvbe/base/host_info.h"
#include "kvbe/base/json_text.h"
#include "kvbe/calibration/fit.h"
#include "kvbe/files/file_kind.h"
#include "serving_parts.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <limits>
#include <system_error>
#include <unistd.h>

namespace kvbe::serving {
namespace {

using detail::quantile;
using probes::ExitCode;

std::string ms(double s) {
    return probes::fixedDecimals(s * 1e3, 2);
}

nlohmann::ordered_json seconds(double v) {
    return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

// What the cells measured: the CSV rows, the calibration's samples (the GPU tier's hits apart:
// they are fitted on their own) and the table of medians; each measured cell is also a point.
struct CellSummary {
    std::vector<detail::CsvRow> rows;
    Calibration c;
    std::vector<HitSample> gpuHits;
    int offloadAccepted = 0, offloadQueries = 0;
    std::string offloadReject; // why the server did not count offload hits as hits
    probes::TextTable measured;
};

probes::ExitResult<CellSummary> summariseCells(const SweepData& d, probes::ProbeSink& sink) {
    const ServingSettings& s = *d.settings;
    CellSummary out;
    Calibration& c = out.c;
    c.format = toString(CalibrationFormat::Kvbe);
    c.host = hostName();
    c.date = utcNow();
    c.gpuName = s.gpuName;
    c.model = s.modelRef.empty() ? s.model : s.modelRef;
    c.kvDtype = s.costInputs.kvDtype;
    auto model = CostModel::create(s.costInputs);
    if (!model) return probes::ProbeOutcome{ExitCode::BadInput, model.message()};
    c.kvBytesPerToken = model->kvBytesPerToken();
    out.measured = probes::TextTable{
        "TTFT against " + s.endpoint + " (" + s.model + ")",
        {"state", "tokens", "prefix", "median ms", "p05 ms", "p95 ms", "samples", "not hits"},
        {},
        {}};
    for (const auto& cell : d.cells) {
        detail::CsvRow row;
        row.curve = cell.tier.empty() ? "cold_prefill" : "cache_hit";
        row.serverConfig = cell.tier.empty() ? "recompute" : cell.tier;
        row.docSize = static_cast<double>(cell.tokens);
        const double counted =
            cell.counted.empty() ? static_cast<double>(cell.prefix) : quantile(cell.counted, 0.5);
        row.prefixLen = cell.tier.empty() ? 0 : counted;
        row.prefixFrac = cell.tier.empty() ? 0 : counted / static_cast<double>(cell.tokens);
        row.concurrency = s.concurrency;
        row.queries = cell.queries;
        row.successful = static_cast<int>(cell.ttft.size());
        row.ttfts = cell.ttft;
        if (cell.tier == s.offloadTier) {
            out.offloadQueries += cell.queries;
            out.offloadAccepted += static_cast<int>(cell.ttft.size());
            if (!cell.rejectReason.empty()) out.offloadReject = cell.rejectReason;
        }
        if (cell.ttft.empty()) {
            row.error = cell.rejectReason.empty()
                            ? "no sample"
                            : "not counted as a hit by the server: " + cell.rejectReason;
            out.rows.push_back(row);
            out.measured.rows.push_back({cell.tier.empty() ? "cold" : cell.tier,
                                         std::to_string(cell.tokens), std::to_string(cell.prefix),
                                         "-", "-", "-", "0", std::to_string(cell.rejected)});
            continue;
        }
        out.rows.push_back(row);
        const double med = quantile(cell.ttft, 0.5), p05 = quantile(cell.ttft, 0.05),
                     p95 = quantile(cell.ttft, 0.95);
        out.measured.rows.push_back(
            {cell.tier.empty() ? "cold" : cell.tier, std::to_string(cell.tokens),
             cell.tier.empty() ? "0" : probes::fixedDecimals(counted, 0), ms(med), ms(p05), ms(p95),
             std::to_string(cell.ttft.size()), std::to_string(cell.rejected)});
        probes::ProbePoint pt;
        pt.series = cell.tier.empty() ? series::kColdTtft : series::kHitTtft;
        pt.x = static_cast<double>(cell.tokens);
        pt.y = med;
        pt.unit = "s";
        pt.meta = {{"p05_s", p05},
                   {"p95_s", p95},
                   {"samples", cell.ttft.size()},
                   {"not_hits", cell.rejected}};
        if (!cell.tier.empty()) {
            pt.meta["tier"] = cell.tier;
            pt.meta["prefix"] = counted;
            pt.meta["fraction"] = cell.fraction;
        }
        sink.point(pt);
        const double v =
            s.fitOnFastest ? *std::min_element(cell.ttft.begin(), cell.ttft.end()) : med;
        if (cell.tier.empty())
            c.prefill.push_back({static_cast<double>(cell.tokens), v});
        else if (cell.tier == "gpu")
            out.gpuHits.push_back({static_cast<double>(cell.tokens), counted, "gpu", v});
        else
            c.hits.push_back({static_cast<double>(cell.tokens), counted, cell.tier, v});
    }
    for (const auto& [n, why] : d.skippedLengths) {
        detail::CsvRow row;
        row.curve = "cold_prefill";
        row.serverConfig = "recompute";
        row.docSize = static_cast<double>(n);
        row.concurrency = s.concurrency;
        row.error = why;
        out.rows.push_back(row);
    }
    return out;
}

// The fit: u and the shared overhead from the cold prompts, the offload tier's t_fixed and
// bandwidth from its hits; the GPU tier moves no bytes, so only its t_fixed is fitted.
struct SweepFit {
    FitResult fit;
    CostInputs inputs; // the scenario's, with the fitted utilisation
    CostModel model;   // of those inputs
    std::optional<double> gpuTFixed, gpuPStar;
    const FittedTier* offload = nullptr; // the offload tier's fitted values (in c.fitted)
    std::optional<double> offloadPStar;
};

probes::ExitResult<SweepFit> fitSweep(const ServingSettings& s, Calibration& c,
                                      const std::vector<HitSample>& gpuHits,
                                      probes::ProbeSink& sink) {
    using probes::ProbeOutcome;
    if (c.prefill.empty())
        return ProbeOutcome{ExitCode::Failed,
                            "no cold prompt was measured, so nothing can be fitted"};
    FitOptions fo;
    fo.fitOverhead = true;
    fo.fitRamp = false;
    auto fit = fitCalibration(c, s.costInputs, s.nominalTiers, fo);
    if (!fit) return ProbeOutcome{ExitCode::Failed, "the fit failed: " + fit.message()};
    for (const auto& n : fit->notes)
        sink.note("fit: " + n);
    c.fitted = fit->params;
    for (const auto& [name, p] : fit->breakevenPrefix)
        if (p) c.breakevenPrefix[name] = *p;
    CostInputs fittedInputs = s.costInputs;
    fittedInputs.utilisation =
        std::min(1.0, fit->params.utilisation.value_or(s.costInputs.utilisation));
    auto fitted = CostModel::create(fittedInputs);
    if (!fitted)
        return ProbeOutcome{ExitCode::Failed,
                            "the fit gave an unusable model: " + fitted.message()};
    SweepFit out{*fit, fittedInputs, *fitted, {}, {}, nullptr, {}};
    const double overhead = fit->params.overheadS;
    if (!gpuHits.empty()) {
        double sum = 0, weights = 0;
        for (const auto& h : gpuHits) {
            const double w = 1 / h.seconds;
            sum += w * (h.seconds - overhead - fitted->tRecompute(h.tokens - h.prefix, h.prefix));
            weights += w;
        }
        out.gpuTFixed = std::max(0.0, sum / weights);
        out.gpuPStar = fitted->breakevenPrefix(
            {"gpu", std::numeric_limits<double>::infinity(), *out.gpuTFixed});
        if (out.gpuPStar) c.breakevenPrefix["gpu"] = *out.gpuPStar;
        c.hits.insert(c.hits.end(), gpuHits.begin(), gpuHits.end());
    }
    if (const auto it = c.fitted->tiers.find(s.offloadTier); it != c.fitted->tiers.end()) {
        out.offload = &it->second;
        if (const auto p = fit->breakevenPrefix.find(s.offloadTier);
            p != fit->breakevenPrefix.end())
            out.offloadPStar = p->second;
    }
    return out;
}

probes::TextTable fitTable(const ServingSettings& s, const SweepFit& f, double driftRelative) {
    probes::TextTable t{"Fit to the " + std::string(s.fitOnFastest ? "fastest sample" : "median") +
                            " of each point (" + std::string(toString(s.costInputs.flopModel)) +
                            " FLOP model, peak " +
                            probes::fixedDecimals(s.costInputs.peakFlops / 1e12, 0) + " TFLOP/s)",
                        {"parameter", "value"},
                        {},
                        {}};
    t.rows.push_back({"utilisation u", probes::fixedDecimals(f.inputs.utilisation, 4)});
    t.rows.push_back({"overhead (both paths)", ms(f.fit.params.overheadS) + " ms"});
    if (f.gpuTFixed) {
        t.rows.push_back({"gpu t_fixed", ms(*f.gpuTFixed) + " ms"});
        t.rows.push_back(
            {"gpu p*", f.gpuPStar ? probes::fixedDecimals(*f.gpuPStar, 0) + " tokens" : "never"});
    }
    if (f.offload) {
        t.rows.push_back({s.offloadTier + " bandwidth",
                          probes::fixedDecimals(f.offload->bandwidthBps / 1e9, 3) + " GB/s"});
        t.rows.push_back({s.offloadTier + " t_fixed", ms(f.offload->tFixedS) + " ms"});
        if (f.offload->tLayerS > 0)
            t.rows.push_back({s.offloadTier + " t_fixed per layer",
                              ms(f.offload->tLayerS) + " ms × " +
                                  std::to_string(f.offload->layers) + " KV/state layers"});
        if (f.fit.fixedCostForm)
            t.rows.push_back({"fixed cost form", std::string(toString(*f.fit.fixedCostForm)) +
                                                     " (one model: the held-out check's form)"});
        t.rows.push_back(
            {s.offloadTier + " p*",
             f.offloadPStar ? probes::fixedDecimals(*f.offloadPStar, 0) + " tokens" : "never"});
    }
    t.rows.push_back({"rms relative residual",
                      probes::fixedDecimals(f.fit.params.rmsRelativeResidual * 100, 2) + " %"});
    t.rows.push_back(
        {"drift of the reference point", probes::fixedDecimals(driftRelative * 100, 1) + " %"});
    return t;
}

// py-kvcache's v2 file for the measured tier: f and its g curve from the fitted model at the
// measured lengths; the medium the sweep did not measure is written equal to f.
PyKvcacheV2 pyKvcacheV2For(const ServingSettings& s, const SweepData& d, const Calibration& c,
                           const SweepFit& f, const PyKvcacheThresholds& v1,
                           const std::filesystem::path& csv) {
    const bool ssd = s.offloadTier == "nvme";
    PyKvcacheV2 v2;
    v2.thresholds = v1;
    v2.gpuModel = s.gpuName;
    v2.kvBytesPerToken = f.model.kvBytesPerToken();
    const TierPath path{s.offloadTier, f.offload->bandwidthBps, f.offload->tFixedS};
    const std::string g = ssd ? "g_ssd" : "g_mem";
    CurveKnots& gCurve = ssd ? v2.gSsd : v2.gMem;
    v2.f.floorS = 0.0;
    v2.f.knots.emplace_back(0.0, 0.0);
    gCurve.floorS = path.tFixedS;
    gCurve.knots.emplace_back(0.0, path.tFixedS);
    for (const auto& p : c.prefill) {
        if (!(p.tokens > 0)) continue;
        v2.f.knots.emplace_back(p.tokens, f.model.tMiss(p.tokens));
        gCurve.knots.emplace_back(p.tokens, f.model.tLoad(path, p.tokens));
    }
    std::sort(v2.f.knots.begin(), v2.f.knots.end());
    std::sort(gCurve.knots.begin(), gCurve.knots.end());
    // The format needs all three curves; the medium this sweep did not measure is written equal
    // to f, so py-kvcache's rule (load where f > g) never loads from it.
    (ssd ? v2.gMem : v2.gSsd) = v2.f;
    v2.thresholds.ssdTokens = ssd ? std::optional<double>(pyKvcacheRuleThreshold(v2.f, gCurve))
                                  : std::optional<double>(pyKvcacheRuleThreshold(v2.f, v2.gSsd));
    v2.thresholds.memTokens = ssd ? std::optional<double>(pyKvcacheRuleThreshold(v2.f, v2.gMem))
                                  : std::optional<double>(pyKvcacheRuleThreshold(v2.f, gCurve));
    v2.thresholds.writeSsd = v2.thresholds.writeMem = true;
    v2.provenance = {
        {"source_csv", csv.string()},
        {"generated", c.date},
        {"endpoint", s.endpoint},
        {"tool", "kvbe-cli probe serving"},
        {"cache_reset", d.resetMethod},
        {"hits_verified", d.verified ? "yes" : "no"},
        {"curves", "fitted cost model: f = cold prefill without the shared overhead, " + g +
                       " = t_fixed + kv_bytes / bandwidth; " + (ssd ? "g_mem" : "g_ssd") +
                       " not measured: written equal to f, so it never loads"}};
    return v2;
}

// The files under --out: the Pareto CSV, the calibration and, with a fitted offload tier,
// py-kvcache's v1 and v2 files. Returns their paths by role.
probes::ExitResult<nlohmann::ordered_json> writeFiles(const SweepData& d, const CellSummary& cells,
                                                      const SweepFit& f) {
    using probes::ProbeOutcome;
    const ServingSettings& s = *d.settings;
    const Calibration& c = cells.c;
    nlohmann::ordered_json files = nlohmann::ordered_json::object();
    if (s.outDir.empty() || cells.offloadAccepted == 0) return files;
    std::error_code ec;
    std::filesystem::create_directories(s.outDir, ec);
    if (ec)
        return ProbeOutcome{ExitCode::BadInput,
                            "--out " + s.outDir + ": cannot make the folder: " + ec.message()};
    const std::filesystem::path dir(s.outDir);
    if (auto st = writeFileAtomically(dir / "serving.csv", detail::paretoCsv(cells.rows)); !st)
        return ProbeOutcome{ExitCode::CannotRun, st.message()};
    files["pareto_csv"] = (dir / "serving.csv").string();
    if (auto st = saveCalibration(dir / "calibration.json", c); !st)
        return ProbeOutcome{ExitCode::CannotRun, st.message()};
    files["calibration"] = (dir / "calibration.json").string();
    if (!f.offload) return files;

    const double contextLimit = s.costInputs.model.contextLimit;
    const bool ssd = s.offloadTier == "nvme";
    PyKvcacheThresholds v1;
    v1.modelName = s.model;
    v1.kvDtype = vllmKvCacheDtype(s.costInputs.kvDtype, s.costInputs.model.weightDtype)
                     .value_or(std::string(toString(s.costInputs.kvDtype)));
    v1.contextTokens = contextLimit;
    // Only the measured tier is gated; the other is left out (py-kvcache: gate off). py-kvcache
    // stores whole blocks; a tier that never pays gets the context limit.
    (ssd ? v1.ssdTokens : v1.memTokens) =
        detail::blockCeil(f.offloadPStar ? *f.offloadPStar : contextLimit, s.blockSize);
    (ssd ? v1.writeMem : v1.writeSsd) = false;
    if (auto st = writeFileAtomically(dir / "pykvcache-v1.json", pyKvcacheV1Json(v1)); !st)
        return ProbeOutcome{ExitCode::CannotRun, st.message()};
    files["pykvcache_v1"] = (dir / "pykvcache-v1.json").string();

    const PyKvcacheV2 v2 = pyKvcacheV2For(s, d, c, f, v1, dir / "serving.csv");
    if (auto st = writeFileAtomically(dir / "pykvcache-v2.json", pyKvcacheV2Json(v2)); !st)
        return ProbeOutcome{ExitCode::CannotRun, st.message()};
    files["pykvcache_v2"] = (dir / "pykvcache-v2.json").string();
    return files;
}

// The result event: the fitted values, how far to trust them and the files written.
nlohmann::ordered_json summary(const SweepData& d, const CellSummary& cells, const SweepFit& f,
                               const nlohmann::ordered_json& files) {
    const ServingSettings& s = *d.settings;
    nlohmann::ordered_json tiers = nlohmann::ordered_json::object();
    if (f.gpuTFixed)
        tiers["gpu"] = {{"t_fixed_s", *f.gpuTFixed},
                        {"breakeven_prefix_tokens", seconds(f.gpuPStar.value_or(NAN))}};
    if (f.offload)
        tiers[s.offloadTier] = {{"bandwidth_Bps", f.offload->bandwidthBps},
                                {"t_fixed_s", f.offload->tFixedS},
                                {"t_layer_s", f.offload->tLayerS},
                                {"layers", f.offload->layers},
                                {"breakeven_prefix_tokens", seconds(f.offloadPStar.value_or(NAN))}};
    nlohmann::ordered_json skipped = nlohmann::ordered_json::object();
    for (const auto& [n, why] : d.skippedLengths)
        skipped[std::to_string(n)] = why;
    // Each fitted sample beside its measurement, as the Fleet view shows a file's fit.
    nlohmann::ordered_json residuals = nlohmann::ordered_json::array();
    for (const auto& r : f.fit.residuals)
        residuals.push_back({{"series", r.series},
                             {"tokens", r.tokens},
                             {"prefix", r.prefix},
                             {"measured_s", r.measuredS},
                             {"fitted_s", r.fittedS}});
    return {{"fitted_to", s.fitOnFastest ? "fastest" : "median"},
            {"utilisation", f.inputs.utilisation},
            {"overhead_s", f.fit.params.overheadS},
            {"rms_relative_residual", f.fit.params.rmsRelativeResidual},
            {"tiers", tiers},
            {"residuals", residuals},
            {"fixed_cost_form", f.fit.fixedCostForm ? nlohmann::ordered_json(std::string(
                                                          toString(*f.fit.fixedCostForm)))
                                                    : nlohmann::ordered_json(nullptr)},
            {"fixed_cost_why", f.fit.fixedCostWhy},
            {"drift_relative", d.driftRelative},
            {"hits_verified", d.verified},
            {"offload_hits_verified", d.offloadVerified},
            {"offload_hits", cells.offloadAccepted},
            {"offload_queries", cells.offloadQueries},
            {"retries", d.retries},
            {"cache_reset", d.resetMethod},
            {"skipped_lengths", skipped},
            {"notes", d.notes},
            {"files", files}};
}

} // namespace

probes::ProbeOutcome finishSweep(const SweepData& d, probes::ProbeSink& sink) {
    const ServingSettings& s = *d.settings;
    auto fail = [&](const probes::ProbeOutcome& o) {
        return probes::reportFailure(sink, o.exit, o.message);
    };
    auto cells = summariseCells(d, sink);
    if (!cells) return fail(cells.error());
    auto fit = fitSweep(s, cells->c, cells->gpuHits, sink);
    if (!fit) return fail(fit.error());

    auto& measured = cells->measured;
    measured.footnotes.push_back(
        d.verified ? "hits verified against the server's /metrics counters"
                   : "hits NOT verified: the server's /metrics has no prefix-cache counters");
    if (d.retries)
        measured.footnotes.push_back(std::to_string(d.retries) +
                                     " request(s) retried after 429/503");
    sink.table(measured);
    sink.table(fitTable(s, *fit, d.driftRelative));

    auto files = writeFiles(d, *cells, *fit);
    if (!files) return fail(files.error());
    if (s.tierOffload && cells->offloadAccepted == 0)
        return fail({ExitCode::Failed,
                     "the server counted none of the " + std::to_string(cells->offloadQueries) +
                         " offload hits as hits (" + cells->offloadReject +
                         "); is the offload connector on (vLLM --kv-transfer-config, SGLang "
                         "--enable-hierarchical-cache)?"});
    if (s.tierOffload && !fit->offload)
        return fail({ExitCode::Failed, "the offload tier '" + s.offloadTier +
                                           "' could not be fitted; see the fit notes"});
    sink.result(summary(d, *cells, *fit, *files));
    return {};
}

} // namespace kvbe::serving
