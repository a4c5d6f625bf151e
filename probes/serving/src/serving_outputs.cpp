#include "serving_outputs.h"

#include "kvbe/base/host_info.h"
#include "kvbe/base/json_text.h"
#include "kvbe/calibration/fit.h"
#include "kvbe/files/file_kind.h"
#include "serving_fit.h"
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

using detail::fitSweep;
using detail::quantile;
using detail::SweepFit;
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
    struct TierCount {
        int accepted = 0, queries = 0, unverified = 0;
        std::string reject; // why the server did not count hits as hits
    };
    std::map<std::string, TierCount> offload; // by offload tier
    int unverified = 0;                       // hits nothing verified, in any tier
    bool usedUnverified = false;              // --allow-unverified-hits fitted some
    probes::TextTable measured;
    probes::TextTable restores; // llama.cpp slot restores, as the server reported them
    double restoreBytes = 0, restoreMs = 0;
};

probes::ExitResult<CellSummary> summariseCells(const SweepData& d, probes::ProbeSink& sink) {
    const ServingSettings& s = *d.settings;
    CellSummary out;
    Calibration& c = out.c;
    c.format = toString(CalibrationFormat::Kvbe);
    c.host = hostName();
    c.date = utcNow();
    c.gpuName = s.gpuName; // "" where none was given (calibration.json says so: gpu.given)
    c.model = s.modelRef.empty() ? s.model : s.modelRef;
    c.kvDtype = s.costInputs.kvDtype;
    auto model = CostModel::create(s.costInputs);
    if (!model) return probes::ProbeOutcome{ExitCode::BadInput, model.message()};
    c.kvBytesPerToken = model->kvBytesPerToken();
    out.measured = probes::TextTable{"TTFT against " + s.endpoint + " (" + s.model + ")",
                                     {"state", "tokens", "prefix", "median ms", "p05 ms", "p95 ms",
                                      "samples", "not hits", "unverified"},
                                     {},
                                     {}};
    out.restores = probes::TextTable{
        "llama.cpp slot restores (POST /slots/{id}?action=restore, as the server reports them)",
        {"tokens", "prefix", "n_read MiB", "restore_ms", "GB/s"},
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
        const int unverified = static_cast<int>(cell.unverifiedTtft.size());
        out.unverified += unverified;
        out.usedUnverified = out.usedUnverified || cell.usedUnverified;
        if (!cell.tier.empty() && cell.tier != "gpu") {
            auto& t = out.offload[cell.tier];
            t.queries += cell.queries;
            t.accepted += static_cast<int>(cell.ttft.size());
            t.unverified += unverified;
            if (!cell.rejectReason.empty()) t.reject = cell.rejectReason;
        }
        // The server's restore rate from each cell's restore taken as the fit takes its samples
        // (the fastest, or the median), so that it compares with the fitted bandwidth.
        if (!cell.restoreMs.empty() && cell.restoreMs.size() == cell.restoreBytes.size()) {
            const auto fastest = std::min_element(cell.restoreMs.begin(), cell.restoreMs.end());
            const size_t i =
                s.fitOnFastest ? static_cast<size_t>(fastest - cell.restoreMs.begin()) : 0;
            out.restoreBytes +=
                s.fitOnFastest ? cell.restoreBytes[i] : quantile(cell.restoreBytes, 0.5);
            out.restoreMs += s.fitOnFastest ? cell.restoreMs[i] : quantile(cell.restoreMs, 0.5);
        }
        if (!cell.restoreBytes.empty()) {
            const double b = quantile(cell.restoreBytes, 0.5), m = quantile(cell.restoreMs, 0.5);
            out.restores.rows.push_back({std::to_string(cell.tokens), std::to_string(cell.prefix),
                                         probes::fixedDecimals(b / 1048576.0, 2),
                                         probes::fixedDecimals(m, 2),
                                         probes::fixedDecimals(b / (m * 1e-3) / 1e9, 3)});
        }
        const std::string state =
            (cell.tier.empty() ? "cold" : cell.tier) + (cell.usedUnverified ? " UNVERIFIED" : "");
        if (cell.ttft.empty()) {
            row.error = !cell.rejectReason.empty()
                            ? "not counted as a hit by the server: " + cell.rejectReason
                        : unverified > 0 ? "hit not verified: neither the response nor /metrics "
                                           "says what the server reused; not fitted"
                                         : "no sample";
            if (unverified > 0 && cell.rejectReason.empty()) row.ttfts = cell.unverifiedTtft;
            out.rows.push_back(row);
            out.measured.rows.push_back(
                {state, std::to_string(cell.tokens), std::to_string(cell.prefix),
                 unverified ? ms(quantile(cell.unverifiedTtft, 0.5)) : "-", "-", "-", "0",
                 std::to_string(cell.rejected), std::to_string(unverified)});
            continue;
        }
        out.rows.push_back(row);
        const double med = quantile(cell.ttft, 0.5), p05 = quantile(cell.ttft, 0.05),
                     p95 = quantile(cell.ttft, 0.95);
        out.measured.rows.push_back({state, std::to_string(cell.tokens),
                                     cell.tier.empty() ? "0" : probes::fixedDecimals(counted, 0),
                                     ms(med), ms(p05), ms(p95), std::to_string(cell.ttft.size()),
                                     std::to_string(cell.rejected), std::to_string(unverified)});
        probes::ProbePoint pt;
        pt.series = cell.tier.empty() ? series::kColdTtft : series::kHitTtft;
        pt.x = static_cast<double>(cell.tokens);
        pt.y = med;
        pt.unit = "s";
        pt.meta = {{"p05_s", p05},
                   {"p95_s", p95},
                   {"samples", cell.ttft.size()},
                   {"not_hits", cell.rejected}};
        if (cell.usedUnverified) pt.meta["unverified"] = true;
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

// Why a tier's bandwidth cannot be read from its hits ("" when it can): its largest load takes,
// at the fitted bandwidth, less time than the spread of that point's own repeats, so the hits'
// times cannot see the bandwidth (a small model's KV: at 16 KB a token, 8k tokens are 128 MiB,
// 4 ms at 32 GB/s, inside a few ms of noise).
std::string unmeasurable(const SweepData& d, const SweepFit& f, const std::string& tier) {
    const auto it = f.offload.find(tier);
    if (it == f.offload.end() || !(it->second.fitted->bandwidthBps > 0)) return "";
    const MeasuredCell* big = nullptr;
    for (const auto& c : d.cells)
        if (c.tier == tier && c.ttft.size() >= 2 && (!big || c.prefix > big->prefix)) big = &c;
    if (!big) return "";
    const double spread = quantile(big->ttft, 0.9) - quantile(big->ttft, 0.1);
    const double bytes = static_cast<double>(big->prefix) * f.model.kvBytesPerToken();
    const double load = bytes / it->second.fitted->bandwidthBps;
    if (load >= spread) return "";
    return "not measurable: its largest load (" + probes::fixedDecimals(bytes / 1e6, 1) +
           " MB) would take " + ms(load) + " ms at the " +
           probes::fixedDecimals(it->second.fitted->bandwidthBps / 1e9, 1) +
           " GB/s the fit holds, inside the " + ms(spread) + " ms spread of that point's repeats";
}

probes::TextTable fitTable(const ServingSettings& s, const SweepFit& f, const SweepData& d) {
    const double driftRelative = d.driftRelative;
    probes::TextTable t{"Fit to the " + std::string(s.fitOnFastest ? "fastest sample" : "median") +
                            " of each point (" + std::string(toString(s.costInputs.flopModel)) +
                            " FLOP model, peak " +
                            probes::fixedDecimals(s.costInputs.peakFlops / 1e12,
                                                  s.costInputs.peakFlops < 10e12 ? 2 : 0) +
                            " TFLOP/s)",
                        {"parameter", "value"},
                        {},
                        {}};
    t.rows.push_back({"utilisation u", probes::fixedDecimals(f.inputs.utilisation, 4)});
    t.rows.push_back({"overhead (both paths)", ms(f.fit.params.overheadS) + " ms"});
    if (f.floorS)
        t.rows.push_back({"per-request floor (measured)",
                          ms(*f.floorS) + " ms (one-block cold prompts, less their compute)"});
    if (f.gpuTFixed) {
        t.rows.push_back({"gpu t_fixed", ms(*f.gpuTFixed) + " ms"});
        t.rows.push_back(
            {"gpu p*", f.gpuPStar ? probes::fixedDecimals(*f.gpuPStar, 0) + " tokens" : "never"});
    }
    for (const auto& [tier, o] : f.offload) {
        // A bandwidth no hit gave is the scenario's, not a measurement: said, not printed as one.
        const std::string why = f.fit.bandwidthNominal.count(tier)
                                    ? "not fitted (the hits gave none); the scenario's " +
                                          probes::fixedDecimals(o.fitted->bandwidthBps / 1e9, 1) +
                                          " GB/s is used"
                                    : unmeasurable(d, f, tier);
        t.rows.push_back(
            {tier + " bandwidth",
             why.empty() ? probes::fixedDecimals(o.fitted->bandwidthBps / 1e9, 3) + " GB/s" : why});
        t.rows.push_back({tier + " t_fixed", ms(o.fitted->tFixedS) + " ms"});
        if (o.fitted->tLayerS > 0)
            t.rows.push_back({tier + " t_fixed per layer", ms(o.fitted->tLayerS) + " ms × " +
                                                               std::to_string(o.fitted->layers) +
                                                               " KV/state layers"});
        t.rows.push_back(
            {tier + " p*", o.pStar ? probes::fixedDecimals(*o.pStar, 0) + " tokens" : "never"});
    }
    if (!f.offload.empty() && f.fit.fixedCostForm)
        t.rows.push_back({"fixed cost form", std::string(toString(*f.fit.fixedCostForm)) +
                                                 " (one model: the held-out check's form)"});
    t.rows.push_back({"rms relative residual",
                      probes::fixedDecimals(f.fit.params.rmsRelativeResidual * 100, 2) + " %"});
    t.rows.push_back({"drift of the reference point",
                      probes::fixedDecimals(driftRelative * 100, 1) + " % (limit " +
                          probes::fixedDecimals(s.driftLimit * 100, 0) + " %; rank test p " +
                          probes::fixedDecimals(d.driftP, 3) + (d.drifted ? ", drift)" : ")")});
    // How far to trust the fit: the residuals above, and the spread of one repeated point.
    t.rows.push_back({"spread of the reference point",
                      probes::fixedDecimals(d.referenceSpread * 100, 1) + " % (p10 to p90 of " +
                          std::to_string(d.referenceSamples) + " samples through the run)"});
    return t;
}

// Why the sweep writes no thresholds ("" when it does): an offload tier fitted, no unverified
// hit in the fit unless asked for, the reference point steady enough.
std::string thresholdsRefused(const SweepData& d, const CellSummary& cells, const SweepFit& f) {
    const ServingSettings& s = *d.settings;
    if (f.offload.empty()) return "no offload tier was fitted";
    if (d.drifted)
        return "the reference point drifted " + probes::fixedDecimals(d.driftRelative * 100, 1) +
               " % during the run, over --drift-limit " +
               probes::fixedDecimals(s.driftLimit * 100, 1) +
               " %, and a rank test (p = " + probes::fixedDecimals(d.driftP, 3) +
               ") tells the last samples from the first";
    (void)cells;
    return "";
}

// One threshold per fitted tier, the same in the v1 and the v2 file: py-kvcache's rule on the
// v2 curves, which carry knots one block either side of the fitted p* so that the rule finds
// p* rounded up to the block (the closed form's answer) and not a measured length; a tier that
// never pays gets one block past the context (v1's convention), in both files.
struct Thresholds {
    std::map<std::string, double> tokens; // by tier
    PyKvcacheV2 v2;
};

Thresholds thresholdsFor(const SweepData& d, const Calibration& c, const SweepFit& f,
                         const std::filesystem::path& csv, const std::string& verification) {
    const ServingSettings& s = *d.settings;
    Thresholds out;
    PyKvcacheV2& v2 = out.v2;
    v2.gpuModel = s.gpuName;
    v2.kvBytesPerToken = f.model.kvBytesPerToken();
    const double contextLimit = s.costInputs.model.contextLimit;
    const double block = s.blockSize;
    std::vector<double> lengths;
    for (const auto& p : c.prefill)
        if (p.tokens > 0) lengths.push_back(p.tokens);
    for (const auto& [tier, o] : f.offload)
        if (o.pStar && *o.pStar > 0) {
            const double up = detail::blockCeil(*o.pStar, s.blockSize);
            lengths.push_back(up);
            if (up - block > 0) lengths.push_back(up - block);
        }
    std::sort(lengths.begin(), lengths.end());
    lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
    v2.f.floorS = 0.0;
    v2.f.knots.emplace_back(0.0, 0.0);
    for (double n : lengths)
        v2.f.knots.emplace_back(n, f.model.tMiss(n));
    v2.gMem = v2.f; // a medium not measured is written equal to f: the rule never loads from it
    v2.gSsd = v2.f;
    std::string curves = "fitted cost model: f = cold prefill without the shared overhead";
    for (const auto& [tier, o] : f.offload) {
        const bool ssd = tier == "nvme";
        const TierPath path{tier, o.fitted->bandwidthBps, o.fitted->tFixedS};
        CurveKnots& g = ssd ? v2.gSsd : v2.gMem;
        g = CurveKnots{};
        g.floorS = path.tFixedS;
        g.knots.emplace_back(0.0, path.tFixedS);
        for (double n : lengths)
            g.knots.emplace_back(n, f.model.tLoad(path, n));
        const double rule = pyKvcacheRuleThreshold(v2.f, g);
        const double never = detail::blockCeil(contextLimit, s.blockSize);
        out.tokens[tier] = o.pStar ? rule : never;
        curves += std::string(", ") + (ssd ? "g_ssd" : "g_mem") + " = the " + tier +
                  " tier's t_fixed + kv_bytes / bandwidth";
    }
    curves += "; a medium not measured is written equal to f, so it never loads";
    v2.thresholds.kvDtype = vllmKvCacheDtype(s.costInputs.kvDtype, s.costInputs.model.weightDtype)
                                .value_or(std::string(toString(s.costInputs.kvDtype)));
    v2.thresholds.modelName = s.model;
    v2.thresholds.contextTokens = contextLimit;
    v2.thresholds.writeMem = out.tokens.count("dram") > 0;
    v2.thresholds.writeSsd = out.tokens.count("nvme") > 0;
    if (out.tokens.count("dram")) v2.thresholds.memTokens = out.tokens["dram"];
    if (out.tokens.count("nvme")) v2.thresholds.ssdTokens = out.tokens["nvme"];
    v2.provenance = {{"source_csv", csv.string()},
                     {"generated", c.date},
                     {"endpoint", s.endpoint},
                     {"tool", "kvbe-cli probe serving"},
                     {"engine", d.engine.empty() ? "unknown" : d.engine},
                     {"cache_reset", d.resetMethod},
                     {"hits_verified", verification},
                     {"gpu", s.gpuName.empty() ? "none given (--gpu)" : s.gpuName},
                     {"curves", curves}};
    return out;
}

// What verified the hits, in one phrase for every output.
std::string verificationText(const SweepData& d, const CellSummary& cells) {
    std::string by;
    for (const auto& v : d.verifiedBy)
        by += (by.empty() ? "" : " and ") + v;
    if (cells.usedUnverified)
        return "NO: UNVERIFIED hits fitted (--allow-unverified-hits)" +
               (by.empty() ? std::string() : "; the others verified by " + by);
    if (by.empty()) return "no hit was verified";
    return "yes, every fitted hit, by " + by;
}

// The files under --out: always the Pareto CSV and the calibration (what was measured, with
// the fit); py-kvcache's v1 and v2 files only with thresholds that may be written.
probes::ExitResult<nlohmann::ordered_json> writeFiles(const SweepData& d, const CellSummary& cells,
                                                      const SweepFit& f,
                                                      const std::string& refused) {
    using probes::ProbeOutcome;
    const ServingSettings& s = *d.settings;
    const Calibration& c = cells.c;
    nlohmann::ordered_json files = nlohmann::ordered_json::object();
    if (s.outDir.empty()) return files;
    std::error_code ec;
    std::filesystem::create_directories(s.outDir, ec);
    if (ec)
        return ProbeOutcome{ExitCode::BadInput,
                            "--out " + s.outDir + ": cannot make the folder: " + ec.message()};
    const std::filesystem::path dir(s.outDir);
    if (auto st = writeFileAtomically(dir / "serving.csv", detail::paretoCsv(cells.rows)); !st)
        return ProbeOutcome{ExitCode::CannotRun, st.message()};
    files["pareto_csv"] = (dir / "serving.csv").string();
    // The calibration says whether a GPU was given, and how its hits were verified.
    auto cal = nlohmann::ordered_json::parse(calibrationToJson(c));
    cal["gpu"]["given"] = s.gpuGiven;
    if (!s.gpuGiven)
        cal["gpu"]["note"] = "no GPU was given (--gpu or --scenario): the fit's peak is the "
                             "default scenario's, and the machine is not named";
    cal["serving"] = {{"endpoint", s.endpoint},
                      {"engine", d.engine.empty() ? "unknown" : d.engine},
                      {"hits_verified", verificationText(d, cells)},
                      {"unverified_hits_fitted", cells.usedUnverified},
                      {"drift_relative", d.driftRelative}};
    if (auto st = writeFileAtomically(dir / "calibration.json", cal.dump(2) + "\n"); !st)
        return ProbeOutcome{ExitCode::CannotRun, st.message()};
    files["calibration"] = (dir / "calibration.json").string();
    if (!refused.empty()) return files;

    const Thresholds t = thresholdsFor(d, c, f, dir / "serving.csv", verificationText(d, cells));
    if (auto st = writeFileAtomically(dir / "pykvcache-v1.json", pyKvcacheV1Json(t.v2.thresholds));
        !st)
        return ProbeOutcome{ExitCode::CannotRun, st.message()};
    files["pykvcache_v1"] = (dir / "pykvcache-v1.json").string();
    if (auto st = writeFileAtomically(dir / "pykvcache-v2.json", pyKvcacheV2Json(t.v2)); !st)
        return ProbeOutcome{ExitCode::CannotRun, st.message()};
    files["pykvcache_v2"] = (dir / "pykvcache-v2.json").string();
    return files;
}

// The result event: the fitted values, how far to trust them and the files written.
nlohmann::ordered_json summary(const SweepData& d, const CellSummary& cells, const SweepFit& f,
                               const nlohmann::ordered_json& files, const std::string& refused) {
    const ServingSettings& s = *d.settings;
    nlohmann::ordered_json tiers = nlohmann::ordered_json::object();
    if (f.gpuTFixed)
        tiers["gpu"] = {{"t_fixed_s", *f.gpuTFixed},
                        {"breakeven_prefix_tokens", seconds(f.gpuPStar.value_or(NAN))}};
    for (const auto& [tier, o] : f.offload) {
        tiers[tier] = {{"bandwidth_Bps", o.fitted->bandwidthBps},
                       {"t_fixed_s", o.fitted->tFixedS},
                       {"t_layer_s", o.fitted->tLayerS},
                       {"layers", o.fitted->layers},
                       {"breakeven_prefix_tokens", seconds(o.pStar.value_or(NAN))}};
        const std::string why = unmeasurable(d, f, tier);
        tiers[tier]["bandwidth_measurable"] = why.empty();
        if (!why.empty()) tiers[tier]["bandwidth_why"] = why;
        if (tier == "nvme" && cells.restoreMs > 0)
            tiers[tier]["server_restore_Bps"] = cells.restoreBytes / (cells.restoreMs * 1e-3);
    }
    nlohmann::ordered_json offload = nlohmann::ordered_json::object();
    for (const auto& [tier, t] : cells.offload)
        offload[tier] = {
            {"hits", t.accepted}, {"queries", t.queries}, {"unverified", t.unverified}};
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
    int offloadHits = 0, offloadQueries = 0;
    for (const auto& [tier, t] : cells.offload) {
        offloadHits += t.accepted;
        offloadQueries += t.queries;
    }
    return {
        {"fitted_to", s.fitOnFastest ? "fastest" : "median"},
        {"pause_s", s.pauseS},
        {"engine",
         d.engine.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.engine)},
        {"gpu",
         s.gpuName.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s.gpuName)},
        {"utilisation", f.inputs.utilisation},
        {"overhead_s", f.fit.params.overheadS},
        {"per_request_floor_s",
         f.floorS ? nlohmann::ordered_json(*f.floorS) : nlohmann::ordered_json(nullptr)},
        {"rms_relative_residual", f.fit.params.rmsRelativeResidual},
        {"tiers", tiers},
        {"residuals", residuals},
        {"fixed_cost_form",
         f.fit.fixedCostForm ? nlohmann::ordered_json(std::string(toString(*f.fit.fixedCostForm)))
                             : nlohmann::ordered_json(nullptr)},
        {"fixed_cost_why", f.fit.fixedCostWhy},
        {"drift_relative", d.driftRelative},
        {"drift_limit", s.driftLimit},
        {"drift_rank_test_p", d.driftP},
        {"drifted", d.drifted},
        {"reference_samples", d.referenceSamples},
        {"reference_spread", d.referenceSpread},
        {"hits_verified", !cells.usedUnverified && cells.unverified == 0 && !d.verifiedBy.empty()},
        {"hit_verification", verificationText(d, cells)},
        {"verified_by", d.verifiedBy},
        {"unverified_hits", cells.unverified},
        {"unverified_hits_fitted", cells.usedUnverified},
        {"offload_tiers", offload},
        {"offload_hits", offloadHits},
        {"offload_queries", offloadQueries},
        {"thresholds_written", refused.empty()},
        {"thresholds_refused", refused},
        {"retries", d.retries},
        {"reset_retries", d.resetRetries},
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
    auto fit = fitSweep(d, cells->c, cells->gpuHits, sink);
    if (!fit) return fail(fit.error());

    auto& measured = cells->measured;
    measured.footnotes.push_back("hits verified: " + verificationText(d, *cells));
    if (cells->unverified > 0)
        measured.footnotes.push_back(
            std::to_string(cells->unverified) +
            " hit(s) that neither the response nor /metrics "
            "verified: " +
            (s.allowUnverified ? "fitted, labelled UNVERIFIED (--allow-unverified-hits)"
                               : "shown, not fitted (--allow-unverified-hits fits them)"));
    if (d.retries)
        measured.footnotes.push_back(std::to_string(d.retries) +
                                     " request(s) retried after 429/503");
    sink.table(measured);
    if (!cells->restores.rows.empty()) sink.table(cells->restores);
    sink.table(fitTable(s, *fit, d));

    const std::string refused = s.tierOffload ? thresholdsRefused(d, *cells, *fit) : "";
    if (s.tierOffload && !refused.empty()) sink.note("no thresholds written: " + refused);
    auto files = writeFiles(d, *cells, *fit, s.tierOffload ? refused : "no offload tier measured");
    if (!files) return fail(files.error());
    for (const auto& [tier, t] : cells->offload) {
        if (t.accepted > 0) continue;
        if (t.unverified > 0)
            return fail({ExitCode::Failed,
                         "none of the " + std::to_string(t.queries) + " " + tier +
                             " hits could be verified: neither the responses (timings.cache_n, "
                             "usage.prompt_tokens_details.cached_tokens) nor /metrics say what "
                             "the server reused, so no thresholds were written; "
                             "--allow-unverified-hits fits them anyway, labelled in every output"});
        return fail(
            {ExitCode::Failed, "the server counted none of the " + std::to_string(t.queries) + " " +
                                   tier + " hits as hits (" + t.reject +
                                   "); is the offload tier on (vLLM --kv-transfer-config, SGLang "
                                   "--enable-hierarchical-cache, llama.cpp --cache-ram)?"});
    }
    for (const auto& tier : d.offloadTiers)
        if (!fit->offload.count(tier))
            return fail({ExitCode::Failed,
                         "the offload tier '" + tier + "' could not be fitted; see the fit notes"});
    if (s.tierOffload && !refused.empty())
        return fail({ExitCode::Failed, "no thresholds written: " + refused +
                                           " (serving.csv and calibration.json hold what was "
                                           "measured)"});
    sink.result(summary(d, *cells, *fit, *files, s.tierOffload ? refused : ""));
    return {};
}

} // namespace kvbe::serving
