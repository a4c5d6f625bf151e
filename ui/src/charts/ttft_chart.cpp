#include "kvbe/ui/charts/ttft_chart.h"

#include <QLineSeries>
#include <QPainter>
#include <QScatterSeries>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvbe {

namespace {
// Measured points (a probe run's, a Fleet file's, the scenario's table): one size for all, in
// pixels before penScale, as large as the Fleet files' points (a probe run's were 6 px).
constexpr qreal kMeasuredPoint = 8;
} // namespace

void TtftChart::refill() {
    const ScenarioResult& r = *m_current;
    const CurveSet& c = r.curves;
    constexpr double ms = 1e3;
    setAxes(r.scenario.lengths.log, tr("Prompt length N (tokens)"), tr("Time to first token (ms)"),
            true);
    double maxSpeedup = 1;
    for (const auto& tc : c.tiers)
        for (double v : tc.speedup)
            if (std::isfinite(v)) maxSpeedup = std::max(maxSpeedup, v);
    setSecondaryAxis(tr("Speedup of a hit (×), dotted"), 0, std::ceil(maxSpeedup * 1.1));
    setTitles(
        tr("Time to first token, %1 % of the prompt cached").arg(c.cachedFraction * 100, 0, 'f', 0),
        describeScenario(r));
    beginRefill();
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    auto extend = [&](const std::vector<double>& v) {
        for (double x : v)
            if (x > 0 && std::isfinite(x)) lo = std::min(lo, x * ms), hi = std::max(hi, x * ms);
    };

    for (size_t k = 0; k < m_pins.size(); ++k) {
        const auto& pin = *m_pins[k];
        line(QStringLiteral("pin/%1/miss").arg(k), tr("%1 (pinned)").arg(pin.label),
             ghost(textColor()), 2, Qt::DashLine)
            ->replace(toPoints(pin.curves.tokens, pin.curves.tMiss, ms));
        for (size_t t = 0; t < pin.curves.tiers.size(); ++t)
            line(QStringLiteral("pin/%1/hit%2").arg(k).arg(t), tr("%1 (pinned)").arg(pin.label),
                 ghost(tierColor(pin, t)), 2, Qt::DashLine, false)
                ->replace(toPoints(pin.curves.tokens, pin.curves.tiers[t].tHit, ms));
        extend(pin.curves.tMiss);
    }

    // Where a dotted speedup curve crosses this line, a hit stops paying off.
    line(QStringLiteral("parity"), tr("speedup = 1"), ghost(textColor()), 1, Qt::DashDotLine, false,
         true)
        ->replace(QList<QPointF>{{c.tokens.front(), 1.0}, {c.tokens.back(), 1.0}});
    line(QStringLiteral("miss"), tr("recompute (miss)"), textColor(), 3)
        ->replace(toPoints(c.tokens, c.tMiss, ms));
    extend(c.tMiss);
    for (size_t t = 0; t < c.tiers.size(); ++t) {
        const auto& tc = c.tiers[t];
        const QColor col = tierColor(r, t);
        const QString g = QStringLiteral("tier/%1/").arg(t);
        const QString name = QString::fromStdString(tc.tier.name);
        line(g + "hit", tr("hit from %1").arg(name), col, 2.5)
            ->replace(toPoints(c.tokens, tc.tHit, ms));
        line(g + "speedup", tr("%1 speedup (right axis)").arg(name), col, 1.5, Qt::DotLine, true,
             true)
            ->replace(toPoints(c.tokens, tc.speedup, 1));
        extend(tc.tHit);
    }

    // Measured cold prefills, decimated to the plot's pixel columns before Qt sees them: the
    // scenario's own table, and points imported from a probe run.
    const auto& measured = r.scenario.measuredPrefill;
    if (measured != m_measuredSource) {
        m_measured.clear();
        m_measured.reserve(measured.size());
        for (const auto& [n, t] : measured)
            m_measured.emplace_back(n, t * ms);
        std::sort(m_measured.begin(), m_measured.end(),
                  [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
        m_measuredSource = measured;
        m_dotsInput.clear();
    }
    const int columns = std::max(64, int(chart()->plotArea().width()));
    const QRectF vr = visibleRange();
    const double x0 = vr.width() > 0 ? vr.left() : c.tokens.front();
    const double x1 = vr.width() > 0 ? vr.right() : c.tokens.back();
    auto dots = [&](const QString& key, const QString& name, const std::vector<QPointF>& pts,
                    QColor col) {
        if (pts.empty()) return;
        auto* s = scatter(key, name, col, kMeasuredPoint);
        // The points only change with the data, the visible range or the plot's width, not
        // with a slider: then the last decimation still holds.
        const DotsInput in{pts.data(), pts.size(), columns, x0, x1, logX(), penScale(), col.rgba()};
        if (m_dotsInput.value(key) == in) return;
        m_dotsInput.insert(key, in);
        const auto shown = decimateToColumns(pts, columns, x0, x1, logX());
        // A light marker is painted, not one graphics item per point: thousands stay cheap.
        const int d = int(kMeasuredPoint * penScale());
        QImage dot(d + 2, d + 2, QImage::Format_ARGB32_Premultiplied);
        dot.fill(Qt::transparent);
        QPainter p(&dot);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(col.darker(130));
        p.setBrush(col);
        p.drawEllipse(QRectF(1, 1, d, d));
        p.end();
        s->setLightMarker(dot);
        s->replace(QList<QPointF>(shown.begin(), shown.end()));
    };
    dots(QStringLiteral("measured"),
         tr("measured prefill in the scenario (%1 points)").arg(m_measured.size()), m_measured,
         QColor("#3a86ff"));
    // Measurements of another model: dimmed and marked with it, or left out (View menu).
    const bool importedOther = ofAnotherModel(m_importedModel);
    if (importedOther && !chartStyle().otherModels)
        m_dotsInput.remove(QStringLiteral("imported"));
    else
        dots(QStringLiteral("imported"),
             markedWithModel(tr("%1 (%2 points)").arg(m_importedLabel).arg(m_imported.size()),
                             m_importedModel),
             m_imported, importedOther ? dimmed(QColor("#ff006e")) : QColor("#ff006e"));
    for (const auto& o : m_overlays) {
        const bool other = ofAnotherModel(o.model);
        if (other && !chartStyle().otherModels) continue;
        const QColor col = other ? dimmed(o.color) : o.color;
        const QString name = markedWithModel(o.name, o.model);
        QList<QPointF> pts;
        for (const auto& p : o.points) {
            pts.append(QPointF(p.x(), p.y() * ms));
            if (p.y() > 0 && !other) lo = std::min(lo, p.y() * ms), hi = std::max(hi, p.y() * ms);
        }
        if (o.line) {
            auto* l = line(o.key, name, col, 2, Qt::DashDotLine);
            // Measured curves have few points: show where they were measured.
            l->setPointsVisible(pts.size() <= 64);
            l->replace(pts);
        } else
            scatter(o.key, name, col, kMeasuredPoint)->replace(pts);
    }
    endRefill();
    setHomeRange(c.tokens.front(), c.tokens.back(), logY() ? lo / 1.5 : 0,
                 hi * (logY() ? 1.5 : 1.05));
}

void TtftChart::setMeasured(std::vector<QPointF> tokensSeconds, const QString& label,
                            const QString& model) {
    m_importedModel = model;
    for (auto& p : tokensSeconds)
        p.setY(p.y() * 1e3);
    std::sort(tokensSeconds.begin(), tokensSeconds.end(),
              [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
    m_imported = std::move(tokensSeconds);
    m_dotsInput.clear(); // a new buffer may reuse the old address
    m_importedLabel = label;
    if (m_current) refill();
}

void TtftChart::setOverlays(std::vector<Overlay> overlays) {
    m_overlays = std::move(overlays);
    if (m_current) refill();
}

void TtftChart::copyStateFrom(const ChartView& other) {
    if (auto* t = qobject_cast<const TtftChart*>(&other)) {
        m_overlays = t->m_overlays;
        m_imported = t->m_imported;
        m_importedLabel = t->m_importedLabel;
        m_importedModel = t->m_importedModel;
    }
    ChartView::copyStateFrom(other);
}

QString TtftChart::hoverText(QPointF v) const {
    const CurveSet& c = m_current->curves;
    const size_t i = nearestIndex(c.tokens, v.x());
    QString s = tr("N = %1, %2 % cached\n")
                    .arg(tokensText(c.tokens[i]))
                    .arg(c.cachedFraction * 100, 0, 'f', 0);
    s += tr("recompute: %1").arg(millisText(c.tMiss[i]));
    for (const auto& tc : c.tiers)
        s += tr("\nhit from %1: %2, speedup %3×")
                 .arg(tierNameText(tc.tier), millisText(tc.tHit[i]))
                 .arg(tc.speedup[i], 0, 'f', 2);
    for (const auto& pin : m_pins) {
        const size_t k = nearestIndex(pin->curves.tokens, v.x());
        s += tr("\n%1 (pinned): recompute %2").arg(pin->label, millisText(pin->curves.tMiss[k]));
    }
    // Imported curves near the cursor, each with the model it was measured with where that is
    // not the scenario's.
    for (const auto& o : m_overlays) {
        if (o.points.empty() || !o.line || isSeriesHidden(o.key)) continue;
        if (ofAnotherModel(o.model) && !chartStyle().otherModels) continue;
        const auto near = std::min_element(
            o.points.begin(), o.points.end(), [&](const QPointF& a, const QPointF& b) {
                return std::abs(std::log(a.x() / v.x())) < std::abs(std::log(b.x() / v.x()));
            });
        if (std::abs(std::log(near->x() / v.x())) > std::log(1.5)) continue;
        s += tr("\n%1: %2 at N = %3")
                 .arg(markedWithModel(o.name, o.model), millisText(near->y()),
                      tokensText(near->x()));
    }
    s += tr("\ncursor: %1 ms").arg(v.y(), 0, 'g', 4);
    return s;
}

QString TtftChart::csv() const {
    return curvesCsv(m_current);
}

} // namespace kvbe
