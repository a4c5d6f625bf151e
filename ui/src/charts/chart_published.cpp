// Published markers and nominal notes, shared by the charts (see chart_view.h).
#include "kvbe/ui/charts/chart_view.h"

#include <QScatterSeries>

#include <cmath>

namespace kvbe {

void ChartView::publishedMarkers(const QString& name, const QList<PublishedMarker>& points) {
    if (points.isEmpty()) return;
    auto* s = scatter(kPublishedKey, name, QColor("#ffb703"), 13);
    s->setMarkerShape(QScatterSeries::MarkerShapeRotatedRectangle);
    s->setBorderColor(QColor("#1d1d1d"));
    QPen pen = s->pen();
    pen.setColor(QColor("#1d1d1d"));
    pen.setWidthF(1.6 * penScale());
    s->setPen(pen);
    QList<QPointF> pts;
    for (const auto& p : points)
        pts.append(p.value);
    s->replace(pts);
    m_published = points;
}

QString ChartView::publishedHover(QPointF cursorValue) const {
    if (m_published.isEmpty() || isSeriesHidden(kPublishedKey)) return {};
    const QPointF at = toPixel(cursorValue);
    QString out;
    for (const auto& p : m_published) {
        const QPointF d = toPixel(p.value) - at;
        if (std::hypot(d.x(), d.y()) <= 24) out += tr("\npublished: %1").arg(p.text);
    }
    return out;
}

QString ChartView::publishedText(const PublishedComparison& row) {
    const auto& p = row.point;
    QString text = QString::fromStdString(p.describe());
    if (row.model)
        text += tr("; model %1")
                    .arg(QString::fromStdString(formatPublishedValue(p.quantity, *row.model)));
    return text;
}

QString ChartView::nominalNote(const ScenarioResult& r) {
    bool any = false;
    for (bool n : r.nominalFixedCost)
        any = any || n;
    if (!any) return {};
    // Two lines: one would be elided at a laptop's chart width (about 830 px at 1366×768).
    return tr("A nominal t_fixed is a preset estimate, not measured or fitted: it leaves out\n"
              "the per-hit overhead that dominates short prompts (File ▸ Built-in scenarios has "
              "one fitted to the study).");
}

} // namespace kvbe
