// The part of a line segment inside a rectangle (Liang–Barsky): the SVG/PDF export draws only
// that part of each curve, and the chart's labels ask whether a curve passes under them.
#pragma once

#include <QLineF>
#include <QPointF>
#include <QRectF>

#include <algorithm>
#include <optional>

namespace kvbe {

// The part of the segment a–b inside r, if any.
inline std::optional<QLineF> clippedSegment(QPointF a, QPointF b, const QRectF& r) {
    double t0 = 0, t1 = 1;
    const double dx = b.x() - a.x(), dy = b.y() - a.y();
    const double p[] = {-dx, dx, -dy, dy};
    const double q[] = {a.x() - r.left(), r.right() - a.x(), a.y() - r.top(), r.bottom() - a.y()};
    for (int i = 0; i < 4; ++i) {
        if (p[i] == 0) {
            if (q[i] < 0) return std::nullopt;
            continue;
        }
        const double t = q[i] / p[i];
        if (p[i] < 0)
            t0 = std::max(t0, t);
        else
            t1 = std::min(t1, t);
        if (t0 > t1) return std::nullopt;
    }
    return QLineF(a + t0 * (b - a), a + t1 * (b - a));
}

} // namespace kvbe
