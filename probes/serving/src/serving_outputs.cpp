#include "serving_outputs.h"

#include "kvbe/fit.h"
#include "kvbe/host_info.h"
#include "kvbe/json_text.h"
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
using probes::ProbeExit;

std::string ms(double s) {
    return probes::fixedDecimals(s * 1e3, 2);
}

nlohmann::ordered_json seconds(double v) {
    return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

} // namespace

probes::ProbeOutcome finishSweep(const SweepData& d, probes::ProbeSink& sink) {
    const ServingSettings& s = *d.settings;
    auto fail = [&](ProbeExit e, const std::string& m) {
        return probes::reportFailure(sink, e, m);
    };

    // Medians per cell: the stream's points, the CSV rows and the calibration's samples.
    std::vector<detail::CsvRow> rows;
    Calibration c;
    c.format = "kvbe";
    c.host = hostName();
    c.date = utcNow();
    c.gpuName = s.gpuName;
    c.model = s.modelRef.empty() ? s.model : s.modelRef;
    c.kvDtype = s.costInputs.kvDtype;
    auto model = CostModel::create(s.costInputs);
    if (!model) return fail(ProbeExit::BadInput, model.message());
    c.kvBytesPerToken = model->kvBytesPerToken();
    std::vector<HitSample> gpuHits;
    int offloadAccepted = 0, offloadQueries = 0;
    std::string offloadReject;
    probes::TextTable measured{
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
            offloadQueries += cell.queries;
            offloadAccepted += static_cast<int>(cell.ttft.size());
            if (!cell.rejectReason.empty()) offloadReject = cell.rejectReason;
        }
        if (cell.ttft.empty()) {
            row.error = cell.rejectReason.empty()
                            ? "no sample"
                            : "not counted as a hit by the server: " + cell.rejectReason;
            rows.push_back(row);
            measured.rows.push_back({cell.tier.empty() ? "cold" : cell.tier,
                                     std::to_string(cell.tokens), std::to_string(cell.prefix), "-",
                                     "-", "-", "0", std::to_string(cell.rejected)});
            continue;
        }
        rows.push_back(row);
        const double med = quantile(cell.ttft, 0.5), p05 = quantile(cell.ttft, 0.05),
                     p95 = quantile(cell.ttft, 0.95);
        measured.rows.push_back(
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
            gpuHits.push_back({static_cast<double>(cell.tokens), counted, "gpu", v});
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
        rows.push_back(row);
    }

    // The fit: u and the shared overhead from the cold prompts, the offload tier's t_fixed and
    // bandwidth from its hits; the GPU tier moves no bytes, so only its t_fixed is fitted.
    if (c.prefill.empty())
        return fail(ProbeExit::Failed, "no cold prompt was measured, so nothing can be fitted");
    FitOptions fo;
    fo.fitOverhead = true;
    fo.fitRamp = false;
    auto fit = fitCalibration(c, s.costInputs, s.nominalTiers, fo);
    if (!fit) return fail(ProbeExit::Failed, "the fit failed: " + fit.message());
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
        return fail(ProbeExit::Failed, "the fit gave an unusable model: " + fitted.message());
    const double overhead = fit->params.overheadS;
    std::optional<double> gpuTFixed, gpuPStar;
    if (!gpuHits.empty()) {
        double sum = 0, weights = 0;
        for (const auto& h : gpuHits) {
            const double w = 1 / h.seconds;
            sum += w * (h.seconds - overhead - fitted->tRecompute(h.tokens - h.prefix, h.prefix));
            weights += w;
        }
        gpuTFixed = std::max(0.0, sum / weights);
        gpuPStar =
            fitted->breakevenPrefix({"gpu", std::numeric_limits<double>::infinity(), *gpuTFixed});
        if (gpuPStar) c.breakevenPrefix["gpu"] = *gpuPStar;
        c.hits.insert(c.hits.end(), gpuHits.begin(), gpuHits.end());
    }

    probes::TextTable fitTable{
        "Fit to the " + std::string(s.fitOnFastest ? "fastest sample" : "median") +
            " of each point (" + std::string(toString(s.costInputs.flopModel)) +
            " FLOP model, peak " + probes::fixedDecimals(s.costInputs.peakFlops / 1e12, 0) +
            " TFLOP/s)",
        {"parameter", "value"},
        {},
        {}};
    fitTable.rows.push_back({"utilisation u", probes::fixedDecimals(fittedInputs.utilisation, 4)});
    fitTable.rows.push_back({"overhead (both paths)", ms(overhead) + " ms"});
    if (gpuTFixed) {
        fitTable.rows.push_back({"gpu t_fixed", ms(*gpuTFixed) + " ms"});
        fitTable.rows.push_back(
            {"gpu p*", gpuPStar ? probes::fixedDecimals(*gpuPStar, 0) + " tokens" : "never"});
    }
    const auto offloadFit = c.fitted->tiers.find(s.offloadTier);
    std::optional<double> offloadPStar;
    if (offloadFit != c.fitted->tiers.end()) {
        fitTable.rows.push_back(
            {s.offloadTier + " bandwidth",
             probes::fixedDecimals(offloadFit->second.bandwidthBps / 1e9, 3) + " GB/s"});
        fitTable.rows.push_back(
            {s.offloadTier + " t_fixed", ms(offloadFit->second.tFixedS) + " ms"});
        const auto it = fit->breakevenPrefix.find(s.offloadTier);
        if (it != fit->breakevenPrefix.end()) offloadPStar = it->second;
        fitTable.rows.push_back(
            {s.offloadTier + " p*",
             offloadPStar ? probes::fixedDecimals(*offloadPStar, 0) + " tokens" : "never"});
    }
    fitTable.rows.push_back(
        {"rms relative residual",
         probes::fixedDecimals(fit->params.rmsRelativeResidual * 100, 2) + " %"});
    fitTable.rows.push_back(
        {"drift of the reference point", probes::fixedDecimals(d.driftRelative * 100, 1) + " %"});
    measured.footnotes.push_back(
        d.verified ? "hits verified against the server's /metrics counters"
                   : "hits NOT verified: the server's /metrics has no prefix-cache counters");
    if (d.retries)
        measured.footnotes.push_back(std::to_string(d.retries) +
                                     " request(s) retried after 429/503");
    sink.table(measured);
    sink.table(fitTable);

    // The files.
    nlohmann::ordered_json files = nlohmann::ordered_json::object();
    const double contextLimit = s.costInputs.model.contextLimit;
    auto threshold = [&](std::optional<double> pStar) -> double {
        // py-kvcache stores whole blocks; a tier that never pays gets the context limit.
        return detail::blockCeil(pStar ? *pStar : contextLimit, s.blockSize);
    };
    const bool ssd = s.offloadTier == "nvme";
    if (!s.outDir.empty() && offloadAccepted > 0) {
        std::error_code ec;
        std::filesystem::create_directories(s.outDir, ec);
        if (ec)
            return fail(ProbeExit::BadInput,
                        "--out " + s.outDir + ": cannot make the folder: " + ec.message());
        const std::filesystem::path dir(s.outDir);
        if (auto st = writeFileAtomically(dir / "serving.csv", detail::paretoCsv(rows)); !st)
            return fail(ProbeExit::CannotRun, st.message());
        files["pareto_csv"] = (dir / "serving.csv").string();
        if (auto st = saveCalibration(dir / "calibration.json", c); !st)
            return fail(ProbeExit::CannotRun, st.message());
        files["calibration"] = (dir / "calibration.json").string();
        if (offloadFit != c.fitted->tiers.end()) {
            PyKvcacheThresholds v1;
            v1.modelName = s.model;
            v1.kvDtype = vllmKvCacheDtype(s.costInputs.kvDtype, s.costInputs.model.weightDtype)
                             .value_or(std::string(toString(s.costInputs.kvDtype)));
            v1.contextTokens = contextLimit;
            // Only the measured tier is gated; the other is left out (py-kvcache: gate off).
            (ssd ? v1.ssdTokens : v1.memTokens) = threshold(offloadPStar);
            (ssd ? v1.writeMem : v1.writeSsd) = false;
            if (auto st = writeFileAtomically(dir / "pykvcache-v1.json", pyKvcacheV1Json(v1)); !st)
                return fail(ProbeExit::CannotRun, st.message());
            files["pykvcache_v1"] = (dir / "pykvcache-v1.json").string();

            PyKvcacheV2 v2;
            v2.thresholds = v1;
            v2.gpuModel = s.gpuName;
            v2.kvBytesPerToken = fitted->kvBytesPerToken();
            const TierPath path{s.offloadTier, offloadFit->second.bandwidthBps,
                                offloadFit->second.tFixedS};
            const std::string g = ssd ? "g_ssd" : "g_mem";
            CurveKnots& gCurve = ssd ? v2.gSsd : v2.gMem;
            v2.f.floorS = 0.0;
            v2.f.knots.emplace_back(0.0, 0.0);
            gCurve.floorS = path.tFixedS;
            gCurve.knots.emplace_back(0.0, path.tFixedS);
            for (const auto& p : c.prefill) {
                if (!(p.tokens > 0)) continue;
                v2.f.knots.emplace_back(p.tokens, fitted->tMiss(p.tokens));
                gCurve.knots.emplace_back(p.tokens, fitted->tLoad(path, p.tokens));
            }
            std::sort(v2.f.knots.begin(), v2.f.knots.end());
            std::sort(gCurve.knots.begin(), gCurve.knots.end());
            // The format needs all three curves; the medium this sweep did not measure is written
            // equal to f, so py-kvcache's rule (load where f > g) never loads from it.
            (ssd ? v2.gMem : v2.gSsd) = v2.f;
            v2.thresholds.ssdTokens =
                ssd ? std::optional<double>(pyKvcacheRuleThreshold(v2.f, gCurve))
                    : std::optional<double>(pyKvcacheRuleThreshold(v2.f, v2.gSsd));
            v2.thresholds.memTokens =
                ssd ? std::optional<double>(pyKvcacheRuleThreshold(v2.f, v2.gMem))
                    : std::optional<double>(pyKvcacheRuleThreshold(v2.f, gCurve));
            v2.thresholds.writeSsd = v2.thresholds.writeMem = true;
            v2.provenance = {
                {"source_csv", (dir / "serving.csv").string()},
                {"generated", c.date},
                {"endpoint", s.endpoint},
                {"tool", "kvbe-cli probe serving"},
                {"cache_reset", d.resetMethod},
                {"hits_verified", d.verified ? "yes" : "no"},
                {"curves", "fitted cost model: f = cold prefill without the shared overhead, " + g +
                               " = t_fixed + kv_bytes / bandwidth; " + (ssd ? "g_mem" : "g_ssd") +
                               " not measured: written equal to f, so it never loads"}};
            if (auto st = writeFileAtomically(dir / "pykvcache-v2.json", pyKvcacheV2Json(v2)); !st)
                return fail(ProbeExit::CannotRun, st.message());
            files["pykvcache_v2"] = (dir / "pykvcache-v2.json").string();
        }
    }

    nlohmann::ordered_json tiers = nlohmann::ordered_json::object();
    if (gpuTFixed)
        tiers["gpu"] = {{"t_fixed_s", *gpuTFixed},
                        {"breakeven_prefix_tokens", seconds(gpuPStar.value_or(NAN))}};
    if (offloadFit != c.fitted->tiers.end())
        tiers[s.offloadTier] = {{"bandwidth_Bps", offloadFit->second.bandwidthBps},
                                {"t_fixed_s", offloadFit->second.tFixedS},
                                {"breakeven_prefix_tokens", seconds(offloadPStar.value_or(NAN))}};
    nlohmann::ordered_json skipped = nlohmann::ordered_json::object();
    for (const auto& [n, why] : d.skippedLengths)
        skipped[std::to_string(n)] = why;
    nlohmann::ordered_json summary = {{"fitted_to", s.fitOnFastest ? "fastest" : "median"},
                                      {"utilisation", fittedInputs.utilisation},
                                      {"overhead_s", overhead},
                                      {"rms_relative_residual", fit->params.rmsRelativeResidual},
                                      {"tiers", tiers},
                                      {"drift_relative", d.driftRelative},
                                      {"hits_verified", d.verified},
                                      {"offload_hits_verified", d.offloadVerified},
                                      {"offload_hits", offloadAccepted},
                                      {"offload_queries", offloadQueries},
                                      {"retries", d.retries},
                                      {"cache_reset", d.resetMethod},
                                      {"skipped_lengths", skipped},
                                      {"notes", d.notes},
                                      {"files", files}};

    if (s.tierOffload && offloadAccepted == 0)
        return fail(ProbeExit::Failed,
                    "the server counted none of the " + std::to_string(offloadQueries) +
                        " offload hits as hits (" + offloadReject +
                        "); is the offload connector on (vLLM --kv-transfer-config, SGLang "
                        "--enable-hierarchical-cache)?");
    if (s.tierOffload && offloadFit == c.fitted->tiers.end())
        return fail(ProbeExit::Failed, "the offload tier '" + s.offloadTier +
                                           "' could not be fitted; see the fit notes");
    sink.result(summary);
    return {};
}

} // namespace kvbe::serving
