// The report's trace section (the one-sentence answer, the lengths against p*, the cache-size
// and capacity charts) and its plan section (the front, the recommended configuration with its
// cost, payback, GPUs saved, drive life per tier and why it was chosen). The plan is core's
// (kvbe/plan/plan.h); this only lays it out.
#include "kvbe/report/report.h"

#include "report_text.h"

#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"
#include "kvbe/trace/trace_endurance.h"

#include <cmath>

namespace kvbe {

using report_detail::sig;

namespace {

std::string months(const std::optional<double>& m) {
    if (!m) return "never";
    return formatFixed(*m, *m < 10 ? 1 : 0) + " months";
}

// A sampled point's servers, GPUs saved and payback were not computed (kvbe/plan/plan.h).
std::string gpusSaved(const PlanPoint& p) {
    if (p.valueNotComputed) return "not computed (sampled)";
    return p.gpusSaved ? std::to_string(*p.gpusSaved) : std::string("-");
}

std::string payback(const PlanPoint& p) {
    return p.valueNotComputed ? std::string("not computed (sampled)") : months(p.paybackMonths);
}

std::string life(const PlanPoint& p) {
    return p.shortestLifeYears ? formatLife(*p.shortestLifeYears)
                               : (p.drives > 0 ? std::string("no wear figure") : std::string("-"));
}

// Each offload tier of a configuration: its drives, writes per day and life against warranty.
std::string tierLife(const PlanTier& t) {
    const TierEndurance& e = t.endurance;
    std::string s = t.name + " (" + formatBytes(t.capacityBytes) + "): ";
    if (!e.drive.rated()) return s + "DRAM, no drive wear";
    if (e.drives) s += std::to_string(*e.drives) + " x " + e.drive.model + "; ";
    if (e.driveWritesPerDay)
        s += sig(*e.driveWritesPerDay) + " drive writes per day (rated " +
             sig(*e.drive.writesPerDay) + "); ";
    s += e.yearsToRatedEndurance
             ? "rated endurance reached in " + formatLife(*e.yearsToRatedEndurance)
             : "no rated endurance figure (" + e.note + ")";
    if (!e.warning.empty()) s += ". " + e.warning;
    return s;
}

} // namespace

std::string formatUsd(double usd) {
    return (usd < 0 ? "-$" : "$") + formatTokens(std::round(std::abs(usd)));
}

ReportSection reportTraceSection(const ReportInputs& in) {
    const Trace& tr = *in.trace;
    const Evaluation& e = *in.eval;
    ReportSection sec{"The workload", {}};
    const double duration = tr.arrivalS.empty() ? 0 : tr.arrivalS.back();
    sec.blocks.push_back(
        {ReportBlock::Kind::Text,
         "Trace " + in.traceFile + ": " + formatTokens(double(tr.size())) + " requests over " +
             (duration >= 7200  ? formatFixed(duration / 3600, 1) + " h"
              : duration >= 120 ? formatFixed(duration / 60, 1) + " min"
                                : formatSeconds(duration)) +
             ", " + formatTokens(double(tr.summary.blockTokens)) + " tokens a block.",
         {},
         {},
         {}});
    if (!in.answer.empty())
        sec.blocks.push_back({ReportBlock::Kind::Answer, in.answer, {}, {}, {}});
    if (!in.replaySettings.empty())
        sec.blocks.push_back({ReportBlock::Kind::Text, in.replaySettings, {}, {}, {}});
    if (!in.saturation.empty())
        sec.blocks.push_back({ReportBlock::Kind::Text, in.saturation, {}, {}, {}});

    ReportTable lengths{{"Tier", "p*", "Requests at or above p*"}, {}};
    for (const auto& t : e.tiers) {
        const auto p = wholeBreakevenPrefix(e.cost.breakevenPrefix(t));
        std::size_t above = 0;
        if (p)
            for (std::size_t i = 0; i < tr.size(); ++i)
                if (double(tr.inputTokens[i]) >= *p) ++above;
        lengths.rows.push_back(
            {t.name, p ? formatTokens(*p) + " tokens" : "never pays",
             p && tr.size() ? sig(100.0 * double(above) / double(tr.size())) + " %" : "-"});
    }
    sec.blocks.push_back({ReportBlock::Kind::Table, {}, lengths, {}, {}});
    sec.blocks.push_back({ReportBlock::Kind::Figure,
                          "Prompt lengths of the trace against each tier's break-even prefix p*: "
                          "prompts to the right of a tier's line gain from a load from it.",
                          {},
                          {},
                          "workload-lengths"});
    sec.blocks.push_back({ReportBlock::Kind::Figure,
                          "Cache size: hit ratio and mean TTFT as the swept tier's capacity grows "
                          "(the trace replayed once per size).",
                          {},
                          {},
                          "workload-capacity"});
    if (in.capacityChart)
        sec.blocks.push_back({ReportBlock::Kind::Figure,
                              "Capacity: the prefill servers each rule needs to hold the latency "
                              "target, as the load grows.",
                              {},
                              {},
                              "capacity"});
    return sec;
}

ReportSection reportPlanSection(const ReportInputs& in) {
    ReportSection sec{"What to buy", {}};
    if (!in.plan || !in.planSetup) {
        sec.blocks.push_back(
            {ReportBlock::Kind::Text,
             "No plan: " + (in.planError.empty() ? std::string("no trace") : in.planError),
             {},
             {},
             {}});
        return sec;
    }
    const PlanResult& r = *in.plan;
    const PlanSetup& s = *in.planSetup;
    std::string limits = "Limits: every drive lasts " + sig(s.limits.lifeYears) +
                         " years at the trace's write rate (also the horizon of the savings)";
    if (s.limits.sloP99S) limits += ", p99 TTFT at most " + formatSeconds(*s.limits.sloP99S);
    if (s.limits.budgetUsd) limits += ", capital cost at most " + formatUsd(*s.limits.budgetUsd);
    limits +=
        ". Prices: " + s.prices.origin + ". " + std::to_string(r.points.size()) +
        " configurations" +
        (r.sampling.sampled ? " estimated on samples (" + r.sampling.reason + "), " +
                                  std::to_string(r.sampling.shortlisted) + " replayed in full."
                            : " replayed in full.");
    sec.blocks.push_back({ReportBlock::Kind::Text, limits, {}, {}, {}});
    // A fleet's plan: its servers, nodes and router, as trace plan's `fleet` line says them.
    if (r.fleetServers > 0)
        sec.blocks.push_back(
            {ReportBlock::Kind::Text, "Fleet: " + planFleetText(s, r) + ".", {}, {}, {}});

    if (r.recommended) {
        const PlanPoint& p = r.points[*r.recommended];
        sec.blocks.push_back(
            {ReportBlock::Kind::Answer, "Recommended: " + planPurchaseText(p) + ".", {}, {}, {}});
        ReportTable t{{"Recommended configuration", ""}, {}};
        t.rows.push_back({"configuration", describePlanPoint(p)});
        t.rows.push_back(
            {"capital cost", formatUsd(p.capexUsd) + " (DRAM " + formatUsd(p.dramUsd) +
                                 ", drives " + formatUsd(p.drivesUsd) +
                                 (p.pooled() ? ", links " + formatUsd(p.linksUsd) : std::string()) +
                                 ")"});
        t.rows.push_back(
            {"value", formatUsd(p.valuePerMonthUsd) + " a month" +
                          (p.valueFromGpusSaved ? " (GPUs saved)" : " (GPU-hours saved)")});
        t.rows.push_back({"payback", months(p.paybackMonths)});
        t.rows.push_back(
            {"net over " + sig(s.limits.lifeYears) + " years", formatUsd(p.netUsdOverLife)});
        t.rows.push_back(
            {"GPUs saved", gpusSaved(p) + (p.serversAtSlo ? " (" + std::to_string(*p.serversAtSlo) +
                                                                " prefill servers)"
                                                          : std::string())});
        t.rows.push_back({"GPU-hours saved a day", sig(p.gpuHoursSavedPerDay)});
        t.rows.push_back(
            {"mean / p99 TTFT", formatSeconds(p.ttftMeanS) + " / " + formatSeconds(p.ttftP99S)});
        t.rows.push_back({"shortest drive life", life(p)});
        sec.blocks.push_back({ReportBlock::Kind::Table, {}, t, {}, {}});
        std::vector<std::string> tiers;
        for (const auto& tier : p.tiers)
            tiers.push_back(tierLife(tier));
        if (!tiers.empty()) sec.blocks.push_back({ReportBlock::Kind::Items, {}, {}, tiers, {}});
        sec.blocks.push_back({ReportBlock::Kind::Text, "Why: " + r.why, {}, {}, {}});
    } else {
        sec.blocks.push_back({ReportBlock::Kind::Answer,
                              "No configuration meets the limits: " + r.unmet,
                              {},
                              {},
                              {}});
    }

    ReportTable front{
        {"On the front", "Capital", "Mean TTFT", "p99 TTFT", "GPUs saved", "Payback", "Drive life"},
        {}};
    for (std::size_t i : r.front) {
        const PlanPoint& p = r.points[i];
        front.rows.push_back(
            {describePlanPoint(p) +
                 (r.recommended && *r.recommended == i ? " (recommended)" : std::string()),
             formatUsd(p.capexUsd), formatSeconds(p.ttftMeanS), formatSeconds(p.ttftP99S),
             gpusSaved(p), payback(p), life(p)});
    }
    sec.blocks.push_back({ReportBlock::Kind::Table, {}, front, {}, {}});
    sec.blocks.push_back({ReportBlock::Kind::Figure,
                          "The plan: each configuration's capital cost against the mean TTFT it "
                          "saves; the front as a line, coloured by the shortest drive life, the "
                          "recommended configuration ringed.",
                          {},
                          {},
                          "plan"});
    return sec;
}

} // namespace kvbe
