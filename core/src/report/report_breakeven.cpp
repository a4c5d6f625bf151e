// The report's break-even section (B*, p*, f*, the charts) and its measurements section (each
// imported calibration file fitted to the scenario, as `kvbe-cli calibration fit` fits it).
#include "kvbe/report/report.h"

#include "report_text.h"

#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"
#include "kvbe/calibration/published.h"

#include <algorithm>
#include <cmath>

namespace kvbe {

using report_detail::sig;

namespace {

std::string bw(const std::optional<double>& b) {
    return b ? formatBandwidth(*b) : std::string("none (recompute is cheaper at any bandwidth)");
}

} // namespace

std::vector<double> reportLengths(const Scenario& s) {
    std::vector<double> n = {4096, 8192, 16384, 32768, 65536, 131072};
    if (s.sweepTokens > 0 && std::find(n.begin(), n.end(), s.sweepTokens) == n.end())
        n.push_back(s.sweepTokens);
    std::sort(n.begin(), n.end());
    return n;
}

namespace {

// Whether the break-even chart draws published figures: as the chart does, from the shipped
// references that match the scenario, a published B* at its length or a p* of a tier the
// scenario has (70B on an H200 has none, and its caption named them).
bool publishedOnBreakevenChart(const ReportInputs& in) {
    if (!in.presets || !in.eval) return false;
    auto refs = builtinPublishedReferences(*in.presets);
    if (!refs) return false;
    for (const auto& m : publishedMatches(*refs, *in.eval))
        for (const auto& row : m.rows) {
            const PublishedPoint& p = row.point;
            if (p.quantity == PublishedQuantity::BreakevenBandwidth && p.tokens) return true;
            if (p.quantity == PublishedQuantity::BreakevenPrefix &&
                tierIndexFor(in.eval->tiers, p.tier) >= 0)
                return true;
        }
    return false;
}

} // namespace

ReportSection reportBreakevenSection(const ReportInputs& in) {
    const Evaluation& e = *in.eval;
    const Scenario& s = e.scenario;
    ReportSection sec{"Break-even", {}};
    const double n = s.sweepTokens > 0 ? s.sweepTokens : 32768;
    const auto bStar = e.cost.breakevenBandwidth(n);
    std::string answer =
        "A fully cached " + formatTokens(n) + "-token prompt ties with recompute " +
        "when its KV cache arrives at B* = " + bw(bStar) + " (" + formatBytes(e.cost.kvBytes(n)) +
        " of KV against " + formatSeconds(e.cost.tMiss(n)) + " of recompute).";
    for (std::size_t i = 0; i < e.tiers.size(); ++i) {
        const TierPath& t = e.tiers[i];
        const auto tb = e.cost.breakevenBandwidth(n, t);
        const bool wins = tb && t.effectiveBandwidthBps() >= *tb;
        answer += " " + t.name + " delivers " + formatBandwidth(t.effectiveBandwidthBps()) +
                  (wins ? ": loading wins." : ": recompute wins.");
    }
    sec.blocks.push_back({ReportBlock::Kind::Answer, answer, {}, {}, {}});

    ReportTable table{{"Prompt N", "KV bytes", "Recompute", "B*(N), t_fixed = 0"}, {}};
    for (const auto& t : e.tiers)
        table.header.push_back("B* with " + t.name + "'s t_fixed");
    for (double len : reportLengths(s)) {
        if (e.model.contextLimit > 0 && len > e.model.contextLimit) continue;
        std::vector<std::string> row = {formatTokens(len), formatBytes(e.cost.kvBytes(len)),
                                        formatSeconds(e.cost.tMiss(len)),
                                        bw(e.cost.breakevenBandwidth(len))};
        for (const auto& t : e.tiers) {
            const auto b = e.cost.breakevenBandwidth(len, t);
            row.push_back(b ? formatBandwidth(*b) : std::string("none"));
        }
        table.rows.push_back(std::move(row));
    }
    sec.blocks.push_back({ReportBlock::Kind::Table, {}, table, {}, {}});

    ReportTable prefix{{"Tier", "p* (break-even prefix)", "f*(N) at " + formatTokens(n)}, {}};
    for (const auto& t : e.tiers) {
        const auto p = wholeBreakevenPrefix(e.cost.breakevenPrefix(t));
        const auto f = e.cost.minCachedFraction(t, n);
        prefix.rows.push_back({t.name, p ? formatTokens(*p) + " tokens" : "never pays",
                               f ? sig(*f * 100, 3) + " %" : std::string("never pays")});
    }
    sec.blocks.push_back({ReportBlock::Kind::Table, {}, prefix, {}, {}});
    sec.blocks.push_back(
        {ReportBlock::Kind::Text,
         "B*(N) = kvbytes(N) / (t_re(N, 0) − t_fixed): the bandwidth a storage path must deliver "
         "for a fully cached N-token prompt to load as fast as it recomputes. p* is the shortest "
         "cached prefix whose load is no slower than its recompute; f*(N) = p*/N.",
         {},
         {},
         {}});

    const std::string measured =
        in.calibrations.empty()
            ? std::string()
            : " Where an imported calibration file implies B* or f* (py-kvcache v2 curves), "
              "its points are drawn too.";
    sec.blocks.push_back({ReportBlock::Kind::Figure,
                          "Break-even bandwidth B*(N) against prompt length, with each tier's "
                          "bandwidth" +
                              std::string(publishedOnBreakevenChart(in)
                                              ? " and the published figures for this model and GPU"
                                              : "") +
                              "." + measured,
                          {},
                          {},
                          "breakeven"});
    sec.blocks.push_back({ReportBlock::Kind::Figure,
                          "Minimum cached fraction f*(N) per tier: below the curve, recompute "
                          "wins." +
                              measured,
                          {},
                          {},
                          "fraction"});
    sec.blocks.push_back({ReportBlock::Kind::Figure,
                          "Time to first token at cached fraction " +
                              sig(s.cachedFraction * 100, 3) +
                              " %: recompute against a load from each tier.",
                          {},
                          {},
                          "ttft"});
    sec.blocks.push_back({ReportBlock::Kind::Figure,
                          "B* at " + formatTokens(n) +
                              " tokens across model sizes: where this model sits among others.",
                          {},
                          {},
                          "models"});
    return sec;
}

Result<FitResult> reportFit(const Calibration& c, const Evaluation& e) {
    return fitCalibration(c, e.cost.inputs(), e.tiers);
}

std::optional<ReportSection> reportMeasurementsSection(const ReportInputs& in) {
    if (in.calibrations.empty()) return std::nullopt;
    const Evaluation& e = *in.eval;
    ReportSection sec{"Measurements", {}};
    sec.blocks.push_back(
        {ReportBlock::Kind::Text,
         "Each imported calibration file, fitted to this scenario's model, GPU and tiers as "
         "`kvbe-cli calibration fit FILE` fits it. The fit is shown beside the scenario's values; "
         "it does not replace them.",
         {},
         {},
         {}});
    for (const Calibration& c : in.calibrations) {
        std::vector<std::string> items;
        items.push_back("format " + c.format + ", host " + (c.host.empty() ? "-" : c.host) +
                        ", date " + (c.date.empty() ? "-" : c.date) + ", GPU " +
                        (c.gpuName.empty() ? "-" : c.gpuName) + ", model " +
                        (c.model.empty() ? "-" : c.model));
        for (const auto& w : mismatchWarnings(c, e.model, e.cost.inputs().kvDtype))
            items.push_back("mismatch: " + w);
        auto fit = reportFit(c, e);
        if (!fit) {
            items.push_back("no fit: " + fit.message());
        } else {
            const FittedParameters& p = fit->params;
            if (p.utilisation) items.push_back("fitted utilisation u = " + sig(*p.utilisation));
            for (const auto& [name, t] : p.tiers)
                items.push_back("fitted tier " + name + ": B = " + formatBandwidth(t.bandwidthBps) +
                                ", t_fixed = " + formatSeconds(t.tFixedS) + ", amplification " +
                                sig(t.amplification));
            items.push_back("rms relative residual " + sig(p.rmsRelativeResidual * 100, 3) + " %" +
                            (p.rmsRelativeResidual > kReliableRmsResidual ? " (large)" : ""));
            for (const auto& u : fit->unreliable)
                items.push_back("unreliable: " + u);
            for (const auto& n : fit->notes)
                items.push_back(n);
        }
        for (const auto& w : c.warnings)
            items.push_back("read: " + w);
        sec.blocks.push_back({ReportBlock::Kind::Text, c.source, {}, {}, {}});
        sec.blocks.push_back({ReportBlock::Kind::Items, {}, {}, items, {}});
    }
    return sec;
}

} // namespace kvbe
