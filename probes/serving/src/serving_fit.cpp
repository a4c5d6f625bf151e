#include "serving_fit.h"

#include "kvbe/probes/stream.h"
#include "serving_parts.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvbe::serving::detail {
namespace {

using probes::ExitCode;

std::string ms(double s) {
    return probes::fixedDecimals(s * 1e3, 2);
}

} // namespace

probes::ExitResult<SweepFit> fitSweep(const SweepData& d, Calibration& c,
                                      const std::vector<HitSample>& gpuHits,
                                      probes::ProbeSink& sink) {
    using probes::ProbeOutcome;
    const ServingSettings& s = *d.settings;
    if (c.prefill.empty())
        return ProbeOutcome{ExitCode::Failed,
                            "no cold prompt was measured, so nothing can be fitted"};
    FitOptions fo;
    fo.fitOverhead = true;
    fo.fitRamp = false;
    auto fit = fitCalibration(c, s.costInputs, s.nominalTiers, fo);
    if (!fit) return ProbeOutcome{ExitCode::Failed, "the fit failed: " + fit.message()};
    std::optional<double> floorS;
    if (!d.floorSamples.empty()) {
        // The floor every request pays, cold or hit: one-block cold prompts less their compute.
        CostInputs first = s.costInputs;
        first.utilisation = std::min(1.0, fit->params.utilisation.value_or(first.utilisation));
        if (auto m = CostModel::create(first)) {
            const double t = s.fitOnFastest
                                 ? *std::min_element(d.floorSamples.begin(), d.floorSamples.end())
                                 : quantile(d.floorSamples, 0.5);
            floorS = std::max(0.0, t - m->tMiss(static_cast<double>(d.floorTokens)));
        }
    }
    // llama.cpp: a slot hit is the base every tier's hit shares (the completion after a restore
    // or a prompt-cache load is a slot hit), so each offload hit is fitted on what it takes over
    // the slot hit of the same length and prefix: the tier's load alone, whatever the FLOP model
    // makes of a CPU's one-token step.
    bool overSlotHit = false;
    if (d.engine == "llama.cpp" && !gpuHits.empty()) {
        CostInputs first = s.costInputs;
        first.utilisation = std::min(1.0, fit->params.utilisation.value_or(first.utilisation));
        auto m = CostModel::create(first);
        Calibration over = c;
        int matched = 0;
        for (auto& h : over.hits) {
            if (!m) break;
            // The slot file: its load is the restore request, on the client's clock.
            std::optional<double> load;
            for (const auto& cell : d.cells)
                if (cell.tier == h.tier && !cell.restoreWallS.empty() &&
                    static_cast<double>(cell.tokens) == h.tokens && !cell.counted.empty() &&
                    std::abs(quantile(cell.counted, 0.5) - h.prefix) < 1)
                    load = d.settings->fitOnFastest ? *std::min_element(cell.restoreWallS.begin(),
                                                                        cell.restoreWallS.end())
                                                    : quantile(cell.restoreWallS, 0.5);
            // The host-RAM prompt cache: its load is inside the completion, over a slot hit.
            const auto g = std::find_if(gpuHits.begin(), gpuHits.end(), [&](const HitSample& x) {
                return x.tokens == h.tokens && x.prefix == h.prefix;
            });
            if (!load && g != gpuHits.end()) load = std::max(1e-6, h.seconds - g->seconds);
            if (!load) continue;
            h.seconds =
                *load + fit->params.overheadS + m->tRecompute(h.tokens - h.prefix, h.prefix);
            ++matched;
        }
        if (matched > 0) {
            auto again = fitCalibration(over, s.costInputs, s.nominalTiers, fo);
            if (!again) return ProbeOutcome{ExitCode::Failed, "the fit failed: " + again.message()};
            sink.note("fit: llama.cpp's offload tiers are fitted on their loads alone (" +
                      std::to_string(matched) +
                      " points): the slot file's restore request as the client timed it, the "
                      "host-RAM prompt cache's hit less the slot hit of the same length and "
                      "prefix; the completion after either is a slot hit");
            fit = std::move(again);
            overSlotHit = true;
        }
    }
    if (!overSlotHit && floorS && fit->params.overheadS < 0.5 * *floorS) {
        // The cold prompts alone cannot place the shared overhead (it sits at a bound on a slow
        // or noisy server), so each tier's t_fixed would take the floor in. Fitted again with
        // the measured floor as the shared overhead: every sample less the floor, no overhead.
        Calibration shifted = c;
        for (auto& p : shifted.prefill)
            p.seconds = std::max(1e-6, p.seconds - *floorS);
        for (auto& h : shifted.hits)
            h.seconds = std::max(1e-6, h.seconds - *floorS);
        FitOptions fixed = fo;
        fixed.fitOverhead = false;
        auto again = fitCalibration(shifted, s.costInputs, s.nominalTiers, fixed);
        if (!again) return ProbeOutcome{ExitCode::Failed, "the fit failed: " + again.message()};
        sink.note("fit: the cold prompts alone put the shared overhead at " +
                  ms(fit->params.overheadS) + " ms, under the per-request floor measured with " +
                  std::to_string(d.floorTokens) + "-token cold prompts (" + ms(*floorS) +
                  " ms): fitted again with that floor as the overhead every request pays, so "
                  "each tier's t_fixed holds only its own cost");
        double sq = 0;
        for (auto& r : again->residuals) {
            r.measuredS += *floorS;
            r.fittedS += *floorS;
            sq += r.relative() * r.relative();
        }
        again->params.overheadS = *floorS;
        if (!again->residuals.empty())
            again->params.rmsRelativeResidual =
                std::sqrt(sq / static_cast<double>(again->residuals.size()));
        fit = std::move(again);
    }
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
    SweepFit out{*fit, fittedInputs, *fitted, {}, {}, {}, floorS};
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
    for (const auto& tier : d.offloadTiers) {
        const auto it = c.fitted->tiers.find(tier);
        if (it == c.fitted->tiers.end()) continue;
        SweepFit::Offload o{&it->second, {}};
        if (const auto p = fit->breakevenPrefix.find(tier); p != fit->breakevenPrefix.end())
            o.pStar = p->second;
        out.offload[tier] = o;
    }
    return out;
}

} // namespace kvbe::serving::detail
