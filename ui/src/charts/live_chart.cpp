#include "kvbe/ui/charts/live_chart.h"

#include "kvbe/base/statistics.h"

#include <QFileInfo>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvbe {

namespace {

struct Curve {
    const char* key;
    const std::vector<double>* sorted;
};

std::vector<Curve> curves(const LiveComparison& c) {
    return {{"measured", &c.measuredSorted}, {"predicted", &c.predictedSorted}};
}

// Share of the sorted times at most s.
double shareAtMost(const std::vector<double>& sorted, double s) {
    const auto k = std::upper_bound(sorted.begin(), sorted.end(), s) - sorted.begin();
    return sorted.empty() ? 0 : double(k) / double(sorted.size());
}

} // namespace

LiveChart::LiveChart(QWidget* parent) : WorkloadChart(parent) {
    m_xLogFormat = "%g"; // a prediction may fall below a millisecond
}

void LiveChart::refill() {
    if (!drawEmptyUnlessLoaded(tr("Live replay"))) return;
    const WorkloadResult& w = *m_workload;
    setAxes(true, tr("TTFT t (ms)"), tr("Requests with TTFT ≤ t (%)"), false);
    setSecondaryAxis(QString(), 0, 1);
    if (!w.live) {
        QString why = w.liveNote;
        if (why.isEmpty() && !w.settings.liveDir.empty())
            why = !w.error.isEmpty() ? w.error
                                     : tr("not compared: the trace has no block ids to replay");
        setTitles(tr("Live replay: not compared"),
                  !why.isEmpty() ? why
                                 : tr("Open a live replay: the folder kvbe-cli probe replay --out "
                                      "wrote for this trace, to draw its TTFT beside the "
                                      "model's"));
        beginRefill();
        endRefill();
        setHomeRange(1, 1e3, 0, 100);
        return;
    }
    const LiveComparison& c = *w.live;
    const auto rows = liveComparisonRows(c);
    auto err = [&](std::size_t i) { return QString::fromStdString(rows[i][3]); };
    setTitles((c.live.servers == 1 ? tr("Predicted against measured TTFT on one server")
                                   : tr("Predicted against measured TTFT on %1 servers behind %2")
                                         .arg(c.live.servers)
                                         .arg(QString::fromStdString(c.live.router))),
              tr("%1: %2 of %3 requests, rate scale %4; the model: %5, %6 admission%7")
                  .arg(QFileInfo(QString::fromStdString(c.live.dir)).fileName())
                  .arg(c.compared)
                  .arg(c.live.requests)
                  .arg(c.live.rateScale)
                  .arg(describeScenario(*m_current))
                  .arg(QString::fromStdString(std::string(toString(c.rule))))
                  .arg((w.settings.engine.empty()
                            ? QString()
                            : tr(", engine %1").arg(QString::fromStdString(w.settings.engine))) +
                       (c.asRouted ? tr(", as routed live") : QString())),
              tr("error: hit ratio %1, mean %2, p50 %3, p90 %4; per request %5 % (MAPE)")
                  .arg(err(0).isEmpty() ? tr("not reported") : err(0), err(1), err(2), err(3))
                  .arg(c.mape * 100, 0, 'f', 1));
    beginRefill();
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const Curve& cv : curves(c)) {
        const std::vector<double>& v = *cv.sorted;
        const std::size_t n = v.size();
        QList<QPointF> pts;
        const std::size_t steps = std::min<std::size_t>(n, 600);
        for (std::size_t q = 0; q <= steps && n > 0; ++q) {
            const std::size_t i = steps ? (q * (n - 1)) / steps : 0;
            const double ms = std::max(1e-3, v[i] * 1e3);
            pts << QPointF(ms, double(i + 1) / double(n) * 100);
            lo = std::min(lo, ms);
            hi = std::max(hi, ms);
        }
        const bool measured = QLatin1String(cv.key) == QLatin1String("measured");
        line(QStringLiteral("live/") + QLatin1String(cv.key),
             measured ? tr("measured on the servers") : tr("predicted by the model"),
             measured ? textColor() : ruleColor(QStringLiteral("always")), measured ? 3 : 2.5,
             measured ? Qt::SolidLine : Qt::DashLine)
            ->replace(pts);
    }
    endRefill();
    if (!std::isfinite(lo)) lo = 1, hi = 1e3;
    setHomeRange(lo / 1.3, hi * 1.3, 0, 100);
}

QString LiveChart::hoverText(QPointF v) const {
    if (!m_workload || !m_workload->live) return {};
    const double s = v.x() / 1e3;
    QString out = tr("TTFT ≤ %1:").arg(millisText(s));
    for (const Curve& cv : curves(*m_workload->live))
        out += tr("\n%1: %2 % of requests")
                   .arg(QLatin1String(cv.key))
                   .arg(shareAtMost(*cv.sorted, s) * 100, 0, 'f', 1);
    return out;
}

QString LiveChart::csv() const {
    if (!m_workload) return {};
    // With no live replay compared: the header alone.
    QString s = QStringLiteral("percentile,ttft_s_measured,ttft_s_predicted\n");
    if (!m_workload->live) return s;
    const auto cs = curves(*m_workload->live);
    for (int q = 0; q <= 100; ++q) {
        s += QString::number(q);
        for (const Curve& cv : cs) {
            s += QLatin1Char(',');
            if (!cv.sorted->empty())
                s += QString::number(quantileOfSorted(*cv.sorted, q / 100.0), 'g', 10);
        }
        s += QLatin1Char('\n');
    }
    return s;
}

} // namespace kvbe
