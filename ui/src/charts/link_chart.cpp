#include "kvbe/ui/charts/link_chart.h"

#include "kvbe/base/units.h"

#include <QFileInfo>
#include <QLineSeries>

#include <algorithm>
#include <cmath>

namespace kvbe {

namespace {

// The three series of a tier: what its hits ask, its reads under the rule, its writes.
struct TierLines {
    QString name;
    const LinkUse* asked = nullptr;
    const LinkUse* reads = nullptr; // empty without prefill servers
    const LinkUse* writes = nullptr;
};

std::vector<TierLines> tierLines(const WorkloadResult& w) {
    std::vector<TierLines> out;
    if (!w.replay) return out;
    const ReplayResult& r = *w.replay;
    const RuleResult* rule = r.rule(toString(w.settings.admission));
    for (std::size_t k = 1; k < r.tiers.size(); ++k) {
        TierLines t;
        t.name = QString::fromStdString(r.tiers[k].name);
        t.asked = &r.tiers[k].readOffered;
        if (rule && k < rule->tiers.size() && !rule->tiers[k].read.share.empty())
            t.reads = &rule->tiers[k].read;
        if (!r.tiers[k].write.share.empty()) t.writes = &r.tiers[k].write;
        out.push_back(t);
    }
    return out;
}

QList<QPointF> steps(const LinkUse& u, double binMin) {
    QList<QPointF> pts;
    for (std::size_t b = 0; b < u.share.size(); ++b) {
        const double y = double(u.share[b]) * 100;
        pts << QPointF(double(b) * binMin, y) << QPointF(double(b + 1) * binMin, y);
    }
    return pts;
}

} // namespace

void LinkUseChart::refill() {
    if (!drawEmptyUnlessLoaded(tr("Links over the trace"))) return;
    const WorkloadResult& w = *m_workload;
    const auto tiers = tierLines(w);
    const double binMin = w.replay ? w.replay->binS / 60 : 1;
    setAxes(false, tr("Trace time (minutes)"), tr("Busy share of the link (%)"), false);
    setSecondaryAxis(QString(), 0, 1);
    const QString rule = QString::fromStdString(std::string(toString(w.settings.admission)));
    const QString bin = binMin == 1 ? tr("per minute") : tr("per %1 minutes").arg(binMin);
    setTitles(tiers.empty() ? tr("Links: no offload tier") : tr("Links, busy %1").arg(bin),
              w.settings.instances > 0
                  ? tr("dashed: reads asked; solid: reads, %1; dotted: writes").arg(rule)
                  : tr("dashed: reads asked; dotted: writes"),
              w.settings.instances > 0
                  ? tr("colour: the tier; over 100 %: more than its bandwidth")
                  : tr("colour: the tier; over 100 %: more than its bandwidth; with prefill "
                       "servers also its reads"));
    beginRefill();
    double top = 100, right = binMin;
    for (std::size_t i = 0; i < tiers.size(); ++i) {
        const TierLines& t = tiers[i];
        const int scenarioTier = i < w.configTierOf.size() ? w.configTierOf[i] : int(i);
        const QColor col = tierColor(*m_current, std::size_t(std::max(0, scenarioTier)));
        const QString k = QString::number(i);
        // No legend (the tab is narrow): the note and the hover name the lines.
        line(QStringLiteral("asked/") + k, tr("%1: reads asked").arg(t.name), col, 1.5,
             Qt::DashLine, false)
            ->replace(steps(*t.asked, binMin));
        top = std::max(top, t.asked->peakShare * 100);
        right = std::max(right, double(t.asked->share.size()) * binMin);
        if (t.reads) {
            line(QStringLiteral("reads/") + k, tr("%1: reads, %2").arg(t.name, rule), col, 2.5,
                 Qt::SolidLine, false)
                ->replace(steps(*t.reads, binMin));
            right = std::max(right, double(t.reads->share.size()) * binMin);
        }
        if (t.writes)
            line(QStringLiteral("writes/") + k, tr("%1: writes").arg(t.name), col, 1.5, Qt::DotLine,
                 false)
                ->replace(steps(*t.writes, binMin));
    }
    if (!tiers.empty())
        line(QStringLiteral("bandwidth"), tr("the link's bandwidth"), ghost(textColor()), 1,
             Qt::DashDotLine, false)
            ->replace(QList<QPointF>{{0, 100}, {right, 100}});
    endRefill();
    setHomeRange(0, right, 0, std::ceil(top * 1.08 / 10) * 10);
}

QString LinkUseChart::hoverText(QPointF v) const {
    if (!m_workload || !m_workload->replay) return {};
    const auto tiers = tierLines(*m_workload);
    if (tiers.empty()) return {};
    const double binMin = m_workload->replay->binS / 60;
    const auto b = static_cast<std::size_t>(std::max(0.0, std::floor(v.x() / binMin)));
    auto at = [&](const LinkUse* u) {
        return u && b < u->share.size()
                   ? QString::number(double(u->share[b]) * 100, 'f', 0) + QStringLiteral(" %")
                   : QStringLiteral("-");
    };
    QString s = tr("minute %1").arg(double(b) * binMin, 0, 'f', 0);
    for (const auto& t : tiers)
        s += tr("\n%1: reads asked %2, reads %3, writes %4")
                 .arg(t.name, at(t.asked), at(t.reads), at(t.writes));
    return s;
}

QString LinkUseChart::csv() const {
    if (!m_workload || !m_workload->replay) return {};
    const auto tiers = tierLines(*m_workload);
    QString s = QStringLiteral("tier,minute,reads_asked_share,read_busy_share,write_busy_share\n");
    const double binMin = m_workload->replay->binS / 60;
    for (const auto& t : tiers) {
        std::size_t n = t.asked->share.size();
        if (t.reads) n = std::max(n, t.reads->share.size());
        for (std::size_t b = 0; b < n; ++b) {
            auto at = [&](const LinkUse* u) {
                return u && b < u->share.size() ? QString::number(double(u->share[b]), 'g', 6)
                                                : QString();
            };
            s += QStringLiteral("%1,%2,%3,%4,%5\n")
                     .arg(t.name)
                     .arg(double(b) * binMin, 0, 'g', 10)
                     .arg(at(t.asked), at(t.reads), at(t.writes));
        }
    }
    return s;
}

} // namespace kvbe
