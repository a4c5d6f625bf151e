// The Plan section's words about how a plan ran: its progress line, its mode and the fleet it
// planned for (plan_section.cpp lays the section out).
#include "kvbe/ui/workload/plan_section.h"

#include "kvbe/plan/plan_report.h"

#include <algorithm>
#include <cmath>

namespace kvbe {

namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

QString percent(double rate) {
    return QString::number(rate * 100, 'f', 2);
}

} // namespace

QString PlanSection::progressText(const PlanProgress& p) {
    const int pct = int(std::clamp(p.stageDone, 0.0, 1.0) * 100);
    switch (p.stage) {
    case PlanStage::Full:
        return tr("Exact mode: replaying every configuration in full (%1 %)").arg(pct);
    case PlanStage::DriveCounts:
        return tr("Fast mode, sample rate %1 %: replaying in full the configurations the drive "
                  "counts are read from (%2 %)")
            .arg(percent(p.rate))
            .arg(pct);
    case PlanStage::Sampling:
        return tr("Fast mode: drawing sample %1 of 2 at a rate of %2 % of the prefix subtrees")
            .arg(p.sample)
            .arg(percent(p.rate));
    case PlanStage::Sample: {
        const auto done = std::min(
            p.configurations, std::size_t(std::llround(p.stageDone * double(p.configurations))));
        return tr("Fast mode, sample %1 of 2 at a rate of %2 %: replaying the grid, "
                  "configuration %L3 of %L4")
            .arg(p.sample)
            .arg(percent(p.rate))
            .arg(std::min(done + 1, p.configurations))
            .arg(p.configurations);
    }
    case PlanStage::Shortlist:
        return tr("Fast mode (sample rate %1 %): evaluating the %L2 shortlisted configurations in "
                  "full (%3 %)")
            .arg(percent(p.rate))
            .arg(p.configurations)
            .arg(pct);
    }
    return {};
}

QString PlanSection::modeText(const PlanResult& r, bool exactAsked) {
    const PlanSampling& m = r.sampling;
    if (!m.sampled)
        return exactAsked ? tr("Exact mode: every configuration replayed in full, as the Exact box "
                               "asks.")
                          : tr("Exact mode: %1.").arg(qs(m.reason));
    return tr("Fast mode: sampled at %1 % of the prefix subtrees (%L2 and %L3 requests in two "
              "samples; blocks in %L4 requests or more are trunk, %L5 blocks). Error bound (the "
              "two samples' largest difference): hit ratio %6 points, mean TTFT %7 %, p99 %8 %, "
              "GPU-hours %9 %, drive life %10 %. %L11 configurations replayed in full, the "
              "recommendation among them (its figures are exact); the others are a sample's "
              "estimates, marked sampled. Tick Exact to replay all.")
        .arg(percent(m.rate))
        .arg(qulonglong(m.sampleRequests[0]))
        .arg(qulonglong(m.sampleRequests[1]))
        .arg(qulonglong(m.trunkMinRequests))
        .arg(qulonglong(m.trunkBlocks))
        .arg(m.hitsError * 100, 0, 'f', 2)
        .arg(m.ttftMeanError * 100, 0, 'f', 1)
        .arg(m.ttftP99Error * 100, 0, 'f', 1)
        .arg(m.gpuHoursError * 100, 0, 'f', 1)
        .arg(m.lifeError * 100, 0, 'f', 1)
        .arg(qulonglong(m.shortlisted));
}

QString PlanSection::fleetText(const WorkloadPlan& p) {
    // The servers it planned for, as trace plan's fleet line says them.
    if (!p.result || !p.setup || p.result->fleetServers <= 0) return {};
    QString out = tr(" Fleet: %1.").arg(qs(planFleetText(*p.setup, *p.result)));
    // The tab pools a tier: a pool is planned beside each tier on every node once its link has
    // a price (computePlan).
    const QString link = qs(planPoolLink(*p.workload));
    if (link.isEmpty()) return out;
    if (planPoolPriced(*p.workload))
        out += tr(" As the tab pools a tier, each configuration is also planned with a pool for "
                  "the fleet (its drives, or its DRAM where it has none) over a %1 link on each "
                  "node, as kvbe-cli trace plan --placements local,pooled.")
                   .arg(link);
    else
        out += tr(" The tab pools a tier, but the %1 link to a pool has no price: give it under "
                  "Prices for the plan to weigh a pool; until then each tier is on every node.")
                   .arg(link);
    return out;
}

} // namespace kvbe
