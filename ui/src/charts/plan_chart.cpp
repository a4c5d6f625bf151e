#include "kvbe/ui/charts/plan_chart.h"

#include "kvbe/base/units.h"
#include "kvbe/plan/plan_report.h"
#include "kvbe/plan/plan_setup.h"
#include "kvbe/scenario/prices.h"
#include "kvbe/ui/widgets/qt_error.h"

#include <QFileInfo>
#include <QLineSeries>
#include <QScatterSeries>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvbe {

namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

QString usdText(double v) {
    const QString n = QStringLiteral("%L1").arg(qint64(std::llround(std::abs(v))));
    return (v < 0 ? QStringLiteral("-$") : QStringLiteral("$")) + n;
}

// The shortest warranty among the configuration's rated drives; none without one.
std::optional<double> shortestWarranty(const PlanPoint& p) {
    std::optional<double> w;
    for (const auto& t : p.tiers)
        if (t.endurance.drive.warrantyYears)
            w = std::min(w.value_or(*t.endurance.drive.warrantyYears),
                         *t.endurance.drive.warrantyYears);
    return w;
}

constexpr LifeBand kBands[] = {LifeBand::Short, LifeBand::Fair, LifeBand::Long, LifeBand::NoDrives};

} // namespace

WorkloadPlan computePlan(WorkloadPtr w, const Presets& presets, const PlanLimits& limits,
                         const std::function<bool(double)>& progress,
                         const PlanSampleOptions& sampling, bool allRouters) {
    WorkloadPlan out;
    out.workload = w;
    out.limits = limits;
    if (!w || !w->trace) {
        out.error = QStringLiteral("Open a trace: the plan replays it.");
        return out;
    }
    if (!w->error.isEmpty()) {
        out.error = w->error;
        return out;
    }
    if (!w->trace->summary.hasBlocks()) {
        out.error = QStringLiteral("%1 has no block ids, so there is no cache to plan for.")
                        .arg(QFileInfo(w->file).fileName());
        return out;
    }
    PlanRequest req;
    // The tab's replay: above one server a fleet behind its router, as kvbe-cli trace plan
    // --servers N --router NAME plans it (each tier on every node, each cost every node's).
    req.replay = workloadRequest(w->settings, w->eval->scenario.tiers.size());
    // The plan places its tiers itself: on every node, and where the tab pools a tier and the
    // link has a price, in a pool over that link too (trace plan --placements local,pooled).
    req.replay.pooled.clear();
    req.replay.pooledScenarioTiers.clear();
    req.replay.poolBandwidths.clear();
    if (planPoolPriced(*w)) {
        req.placePooled = true;
        req.links = {planPoolLink(*w)};
    }
    req.limits = limits;
    req.rule = w->settings.admission;
    if (allRouters && w->config.isFleet()) req.otherRouters = {"all"};
    auto setup = planSetup(*w->eval, presets, *w->trace, req);
    if (!setup) {
        out.error = qs(setup.message());
        return out;
    }
    auto r = planTraceSampled(*setup, sampling, progress);
    if (!r) {
        out.error = qs(r.message());
        return out;
    }
    if (r->cancelled) {
        out.cancelled = true;
        return out;
    }
    out.setup = std::move(*setup);
    out.result = std::move(*r);
    return out;
}

std::string planPoolLink(const WorkloadResult& w) {
    const auto& pooled = w.settings.pooled;
    if (!w.config.isFleet() || std::find(pooled.begin(), pooled.end(), true) == pooled.end())
        return {};
    return kDefaultPoolLink;
}

bool planPoolPriced(const WorkloadResult& w) {
    const std::string link = planPoolLink(w);
    if (link.empty() || !w.eval) return false;
    return pricesInForce(w.eval->scenario.prices).link.count(link) > 0;
}

LifeBand lifeBand(const PlanPoint& p) {
    if (p.drives <= 0) return LifeBand::NoDrives;
    const auto warranty = shortestWarranty(p);
    if (!p.shortestLifeYears || !warranty) return LifeBand::Long;
    if (*p.shortestLifeYears < *warranty) return LifeBand::Short;
    if (*p.shortestLifeYears < 2 * *warranty) return LifeBand::Fair;
    return LifeBand::Long;
}

QString lifeBandName(LifeBand b) {
    switch (b) {
    case LifeBand::Short:
        return PlanChart::tr("drives wear out within their warranty");
    case LifeBand::Fair:
        return PlanChart::tr("drives last 1-2x their warranty");
    case LifeBand::Long:
        return PlanChart::tr("drives last over 2x their warranty");
    case LifeBand::NoDrives:
        break;
    }
    return PlanChart::tr("no drives (GPU or DRAM only)");
}

QColor lifeBandColor(LifeBand b) {
    switch (b) {
    case LifeBand::Short:
        return QColor("#d62828");
    case LifeBand::Fair:
        return QColor("#f4a261");
    case LifeBand::Long:
        return QColor("#2a9d8f");
    case LifeBand::NoDrives:
        break;
    }
    return QColor("#457b9d");
}

QString planSentence(const WorkloadPlan& p) {
    if (!p.error.isEmpty()) return p.error;
    if (!p.result) return {};
    const PlanResult& r = *p.result;
    if (!r.recommended) return qs(r.unmet);
    return PlanChart::tr("Recommended: %1").arg(qs(r.why));
}

QStringList driveLifeLines(const PlanPoint& p) {
    QStringList lines;
    for (const auto& t : p.tiers) {
        const TierEndurance& e = t.endurance;
        QString line = qs(t.name) + QStringLiteral(": ");
        if (!e.drive.rated()) {
            line += PlanChart::tr("DRAM, no drive wear");
        } else {
            if (e.drives) line += PlanChart::tr("%1 × %2; ").arg(*e.drives).arg(qs(e.drive.model));
            if (e.driveWritesPerDay)
                line += PlanChart::tr("%1 drive writes per day (rated %2); ")
                            .arg(*e.driveWritesPerDay, 0, 'g', 3)
                            .arg(*e.drive.writesPerDay, 0, 'g', 3);
            line += e.yearsToRatedEndurance
                        ? PlanChart::tr("rated endurance reached in %1")
                              .arg(qs(formatLife(*e.yearsToRatedEndurance)))
                        : PlanChart::tr("no rated endurance figure (%1)").arg(qs(e.note));
            if (!e.warning.empty()) line += QStringLiteral(". ") + qs(e.warning);
        }
        lines << line;
    }
    return lines;
}

QString planPointText(const PlanPoint& p) {
    QString s = PlanChart::tr("%1: %2, mean TTFT %3 (p99 %4)")
                    .arg(qs(describePlanPoint(p)), usdText(p.capexUsd),
                         qs(formatSeconds(p.ttftMeanS)), qs(formatSeconds(p.ttftP99S)));
    if (p.shortestLifeYears)
        s += PlanChart::tr(", drives last %1").arg(qs(formatLife(*p.shortestLifeYears)));
    if (p.gpuHoursSavedPerDay > 0)
        s += PlanChart::tr(", %1 GPU-hours saved a day").arg(p.gpuHoursSavedPerDay, 0, 'f', 1);
    return s;
}

// ---- the chart

PlanChart::PlanChart(QWidget* parent) : WorkloadChart(parent) {}

const WorkloadPlan* PlanChart::drawn() const {
    if (!m_plan || !m_workload || !m_plan->workload) return nullptr;
    return m_plan->workload->trace == m_workload->trace ? m_plan.get() : nullptr;
}

void PlanChart::setPlan(PlanPtr p) {
    m_plan = std::move(p);
    if (m_current) refill();
}

void PlanChart::copyStateFrom(const ChartView& other) {
    if (auto* o = qobject_cast<const PlanChart*>(&other)) m_plan = o->m_plan;
    WorkloadChart::copyStateFrom(other);
}

Status PlanChart::computeNow() {
    auto presets = Presets::loadBuiltin();
    if (!presets) return presets.error();
    auto p = std::make_shared<WorkloadPlan>(computePlan(m_workload, *presets, PlanLimits{}));
    if (!p->error.isEmpty()) return fail(p->error);
    setPlan(std::move(p));
    return Ok{};
}

double PlanChart::ttftSavedS(const PlanResult& r, const PlanPoint& p) {
    return r.points.empty() ? 0 : r.points.front().ttftMeanS - p.ttftMeanS;
}

void PlanChart::refill() {
    const QString headline = tr("Cost against TTFT saved over GPU-only caching");
    if (!drawEmptyUnlessLoaded(headline)) return;
    const WorkloadPlan* pl = drawn();
    const PlanResult* r = pl && pl->result ? &*pl->result : nullptr;
    const QString file = QFileInfo(m_workload->file).fileName();
    // A plan that weighs a pool counts the nodes' links to it in the cost too.
    const bool links = r && std::any_of(r->points.begin(), r->points.end(),
                                        [](const PlanPoint& p) { return p.linksUsd > 0; });
    setAxes(false,
            links ? tr("Capital cost (USD: DRAM, drives and links to a pool)")
                  : tr("Capital cost (USD: DRAM and drives)"),
            tr("Mean TTFT saved (ms)"), false);
    setSecondaryAxis(QString(), 0, 1);
    if (!r) {
        setTitles(headline, describeScenario(*m_current),
                  pl && !pl->error.isEmpty()
                      ? pl->error
                      : tr("%1: the plan runs when this tab is shown (progress beside)").arg(file));
        beginRefill();
        endRefill();
        setHomeRange(0, 1, 0, 1);
        return;
    }
    double xHi = 1, yLo = 0, yHi = 1;
    QList<QPointF> others, front, bound;
    QList<QPointF> banded[4];
    // Another router slower than the fleet's (GPU-only caching behind it loses TTFT) would
    // stretch the axis down and squeeze every purchase into a line: it is drawn, and named in
    // the note, but the chart's home range leaves it below.
    QStringList below;
    for (const PlanPoint& p : r->points) {
        const QPointF v(p.capexUsd, ttftSavedS(*r, p) * 1e3);
        const bool rec = r->recommended && &p == &r->points[*r->recommended];
        if (p.otherRouter && v.y() < 0 && !p.onTtftFront && !p.onGpuHoursFront && !rec)
            below << tr("%1 (%2 ms)").arg(qs(p.router)).arg(v.y(), 0, 'f', 0);
        else
            yLo = std::min(yLo, v.y());
        xHi = std::max(xHi, v.x());
        yHi = std::max(yHi, v.y());
        if (p.onTtftFront) front << v;
        if (p.bandwidthBound) bound << v;
        if (p.onTtftFront || p.onGpuHoursFront || rec)
            banded[std::size_t(lifeBand(p))] << v;
        else
            others << v;
    }
    setTitles(headline, describeScenario(*m_current),
              tr("%1 configurations; colour: the shortest drive life").arg(r->points.size()) +
                  (below.isEmpty() ? QString()
                                   : tr("; below the chart, GPU-only caching behind %1")
                                         .arg(below.join(QStringLiteral(", ")))));
    std::sort(front.begin(), front.end(), [](QPointF a, QPointF b) { return a.x() < b.x(); });
    beginRefill();
    scatter(QStringLiteral("others"), tr("other configurations"), ghost(textColor()), 6)
        ->replace(others);
    line(QStringLiteral("front"), tr("Pareto front (cost against mean TTFT)"), textColor(), 1.5,
         Qt::DashLine)
        ->replace(front);
    for (std::size_t i = 0; i < std::size(kBands); ++i) {
        const LifeBand b = kBands[i];
        scatter(QStringLiteral("life/%1/points").arg(i), lifeBandName(b), lifeBandColor(b), 12)
            ->replace(banded[std::size_t(b)]);
    }
    // Bandwidth-bound configurations: a tier saturated (its hits ask more reads than it
    // carries, or the rule declined hits for its backlog), ringed in orange.
    auto* boundRing = scatter(QStringLiteral("bandwidth-bound"),
                              tr("bandwidth-bound (a tier saturated)"), QColor("#e76f51"), 15);
    boundRing->setColor(Qt::transparent);
    boundRing->setBorderColor(QColor("#e76f51"));
    boundRing->setPen(QPen(QColor("#e76f51"), 1.8 * penScale()));
    boundRing->replace(bound);
    QList<QPointF> rec;
    if (r->recommended) {
        const PlanPoint& p = r->points[*r->recommended];
        rec << QPointF(p.capexUsd, ttftSavedS(*r, p) * 1e3);
    }
    auto* ring = scatter(QStringLiteral("recommended"), tr("recommended"), textColor(), 22);
    ring->setColor(Qt::transparent);
    ring->setBorderColor(textColor());
    ring->setPen(QPen(textColor(), 2.5 * penScale()));
    ring->replace(rec);
    endRefill();
    const double dy = std::max(1e-3, yHi - yLo);
    // From 0: GPU-only caching costs nothing, and negative dollars would only puzzle.
    setHomeRange(0, 1.06 * xHi, yLo - 0.06 * dy, yHi + 0.12 * dy);
}

QString PlanChart::hoverText(QPointF v) const {
    const WorkloadPlan* pl = drawn();
    if (!pl || !pl->result) return {};
    const PlanResult& r = *pl->result;
    // The configuration nearest the cursor on screen, within 20 pixels.
    const QPointF at = toPixel(v);
    const PlanPoint* best = nullptr;
    double bestD = 20 * 20;
    for (const PlanPoint& p : r.points) {
        const QPointF d = toPixel(QPointF(p.capexUsd, ttftSavedS(r, p) * 1e3)) - at;
        const double dd = d.x() * d.x() + d.y() * d.y();
        if (dd <= bestD) {
            bestD = dd;
            best = &p;
        }
    }
    if (!best) return {};
    QString s = planPointText(*best);
    s += tr("\nsaves %1 of mean TTFT; %2")
             .arg(qs(formatSeconds(ttftSavedS(r, *best))), lifeBandName(lifeBand(*best)));
    for (const QString& l : driveLifeLines(*best))
        s += QLatin1Char('\n') + l;
    if (best->bandwidthBound) s += QLatin1Char('\n') + qs(best->saturation);
    if (best->drivesForBandwidth)
        s += tr("\ndrives needed: %1 for bandwidth, %2 for endurance")
                 .arg(*best->drivesForBandwidth)
                 .arg(best->drivesForEndurance ? QString::number(*best->drivesForEndurance)
                                               : QStringLiteral("-"));
    if (!best->fails.empty()) {
        QStringList f;
        for (const auto& x : best->fails)
            f << qs(x);
        s += tr("\nfails: %1").arg(f.join(QStringLiteral("; ")));
    }
    return s;
}

QString PlanChart::csv() const {
    const WorkloadPlan* pl = drawn();
    if (!pl || !pl->result || !pl->setup) return {};
    const PlanReport report{pl->workload->trace.get(), pl->workload->file.toStdString(),
                            pl->workload->eval->scenario.name, &*pl->setup, &*pl->result};
    return qs(planCsv(report));
}

} // namespace kvbe
