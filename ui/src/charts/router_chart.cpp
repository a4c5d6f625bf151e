#include "kvbe/ui/charts/router_chart.h"

#include "kvbe/base/units.h"

#include <QScatterSeries>

#include <algorithm>
#include <cmath>

namespace kvbe {

namespace {

// A router's point: its p99 TTFT under the view's rule (seconds) and its hit ratio in per cent.
struct RouterPoint {
    QString name;
    double p99 = 0, anyHit = 0, gpuHit = 0;
    const ReplayResult* result = nullptr;
};

std::vector<RouterPoint> points(const WorkloadResult& w) {
    std::vector<RouterPoint> out;
    const std::string rule(toString(w.settings.admission));
    for (const auto& run : w.routers) {
        const RuleResult* r = run.result.rule(rule);
        if (!r) continue;
        RouterPoint p;
        p.name = QString::fromStdString(run.router);
        p.p99 = r->ttft.p99;
        p.anyHit = run.result.anyTier.tokenWeighted * 100;
        p.gpuHit = run.result.tiers.empty() ? 0 : run.result.tiers[0].hits.tokenWeighted * 100;
        p.result = &run.result;
        out.push_back(p);
    }
    return out;
}

} // namespace

void RouterChart::refill() {
    if (!drawEmptyUnlessLoaded(tr("Routers"))) return;
    const WorkloadResult& w = *m_workload;
    const auto pts = points(w);
    const QString rule = QString::fromStdString(std::string(toString(w.settings.admission)));
    setAxes(false, tr("p99 TTFT (s), %1 admission, each server its own queue").arg(rule),
            tr("Hit ratio, tokens (%)"), false);
    setSecondaryAxis(QString(), 0, 1);
    if (pts.empty()) {
        setTitles(tr("Routers: not compared"),
                  !w.routersNote.isEmpty()
                      ? w.routersNote
                      : tr("Set Prefill servers above one: each server then has its own GPU "
                           "cache, and every router is replayed on the fleet"));
        beginRefill();
        endRefill();
        setHomeRange(0, 1, 0, 100);
        return;
    }
    const int servers = w.config.instances;
    setTitles(tr("Routers on %1 servers: hit ratio against p99 TTFT").arg(servers),
              tr("each router at its shipped defaults on the same fleet; large: any tier, "
                 "small: the GPUs alone"),
              tr("up and to the left is better; (chosen): the Router set above"));
    beginRefill();
    QList<QPointF> any, gpu;
    double right = 0, top = 0;
    for (const auto& p : pts) {
        any << QPointF(p.p99, p.anyHit);
        gpu << QPointF(p.p99, p.gpuHit);
        right = std::max(right, p.p99);
        top = std::max(top, p.anyHit);
    }
    const QColor col = ruleColor(rule);
    scatter(QStringLiteral("routers/any"), tr("hits, any tier"), col, 11)->replace(any);
    scatter(QStringLiteral("routers/gpu"), tr("hits, the GPUs"), ghost(col), 7)->replace(gpu);
    const QString chosen = QString::fromStdString(w.settings.router);
    for (std::size_t i = 0; i < pts.size(); ++i) {
        const bool isChosen = pts[i].name == chosen;
        label(QStringLiteral("router/%1").arg(i),
              isChosen ? tr("%1 (chosen)").arg(pts[i].name) : pts[i].name,
              QPointF(pts[i].p99, pts[i].anyHit), textColor(), Qt::Alignment(), pts[i].name);
    }
    endRefill();
    setHomeRange(0, right * 1.15 + 1e-3, 0, std::min(100.0, std::ceil(top * 1.15 / 5) * 5 + 5));
}

QString RouterChart::hoverText(QPointF v) const {
    if (!m_workload) return {};
    const auto pts = points(*m_workload);
    if (pts.empty()) return {};
    // The router nearest the cursor, in pixels.
    const QPointF at = toPixel(v);
    std::size_t best = 0;
    double bestD = 1e300;
    for (std::size_t i = 0; i < pts.size(); ++i) {
        const QPointF p = toPixel(QPointF(pts[i].p99, pts[i].anyHit));
        const double d = std::hypot(p.x() - at.x(), p.y() - at.y());
        if (d < bestD) {
            bestD = d;
            best = i;
        }
    }
    const RouterPoint& p = pts[best];
    const FleetReport f = p.result->fleet ? *p.result->fleet : FleetReport{};
    return tr("%1: hits %2 % (GPUs %3 %), p99 TTFT %4; busiest server %5× the mean requests, "
              "%6 % routed away from their best cache")
        .arg(p.name)
        .arg(p.anyHit, 0, 'f', 1)
        .arg(p.gpuHit, 0, 'f', 1)
        .arg(QString::fromStdString(formatSeconds(p.p99)))
        .arg(f.requestSkew, 0, 'f', 2)
        .arg(f.routedAwayShare * 100, 0, 'f', 1);
}

QString RouterChart::csv() const {
    if (!m_workload) return {};
    QString s = QStringLiteral("router,hit_any_tier,hit_gpu,ttft_p99_s,request_skew,busy_skew,"
                               "routed_away_share\n");
    for (const auto& p : points(*m_workload)) {
        const FleetReport f = p.result->fleet ? *p.result->fleet : FleetReport{};
        s += QStringLiteral("%1,%2,%3,%4,%5,%6,%7\n")
                 .arg(p.name)
                 .arg(p.anyHit / 100, 0, 'g', 10)
                 .arg(p.gpuHit / 100, 0, 'g', 10)
                 .arg(p.p99, 0, 'g', 10)
                 .arg(f.requestSkew, 0, 'g', 10)
                 .arg(f.busySkew, 0, 'g', 10)
                 .arg(f.routedAwayShare, 0, 'g', 10);
    }
    return s;
}

} // namespace kvbe
