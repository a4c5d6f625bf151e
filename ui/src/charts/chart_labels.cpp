// ChartView's labels pinned to data points: placed beside their point where there is room, with
// a leader line where they had to move, hidden when the point leaves the plot.
#include "kvbe/ui/charts/chart_view.h"

#include "kvbe/ui/charts/chart_legend.h"
#include "kvbe/ui/charts/segment_clip.h"

#include <QGraphicsLineItem>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace kvbe {

namespace {
// How far a rectangle is from a point: 0 inside it.
double distance(const QRectF& r, QPointF p) {
    const double dx = std::max({r.left() - p.x(), 0.0, p.x() - r.right()});
    const double dy = std::max({r.top() - p.y(), 0.0, p.y() - r.bottom()});
    return std::hypot(dx, dy);
}

// The curves drawn in the plot (visible line series), as pixel segments: a label's backdrop
// hides what it covers, so a label goes where no curve is wherever it can.
std::vector<QLineF> curveSegments(QChart* chart, const QRectF& plot) {
    std::vector<QLineF> out;
    for (QAbstractSeries* s : chart->series()) {
        auto* line = qobject_cast<QLineSeries*>(s);
        if (!line || !line->isVisible() || line->count() < 2 || line->attachedAxes().size() < 2)
            continue;
        QPointF prev = chart->mapToPosition(line->at(0), line);
        for (int i = 1; i < line->count(); ++i) {
            const QPointF next = chart->mapToPosition(line->at(i), line);
            if (std::isfinite(prev.y()) && std::isfinite(next.y()) &&
                QRectF(prev, next).normalized().adjusted(-1, -1, 1, 1).intersects(plot))
                out.emplace_back(prev, next);
            prev = next;
        }
    }
    return out;
}

QRectF placed(QPointF p, QSizeF b, Qt::Alignment a, double gap = 3) {
    double x = p.x(), y = p.y();
    if (a & Qt::AlignLeft)
        x -= b.width() + gap;
    else if (a & Qt::AlignHCenter)
        x -= b.width() / 2;
    else
        x += gap;
    if (a & Qt::AlignTop)
        y -= b.height() + gap / 3;
    else if (a & Qt::AlignVCenter)
        y -= b.height() / 2;
    else
        y += gap / 3;
    return QRectF(QPointF(x, y), b);
}
} // namespace

// Pixels kept clear around a placed label, so that two labels never touch ("gpu-only: S = 1.81"
// ran into "breakeven: S = 2.35" on the capacity chart).
constexpr double kLabelGap = 3;

void ChartView::layoutOverlays() {
    if (!m_x) return;
    const QRectF plot = chart()->plotArea();
    std::vector<QRectF> taken;
    // The legend is no place for a label.
    if (m_legend && m_legend->isVisible())
        for (QGraphicsItem* t : m_legend->childItems())
            if (t->isVisible()) taken.push_back(t->sceneBoundingRect());
    std::vector<std::pair<QPointF, Label*>> automatic;
    std::vector<std::pair<QPointF, Label*>> fixed;
    for (auto it = m_labels.begin(); it != m_labels.end(); ++it) {
        Label& l = it.value();
        QPointF p = toPixel(
            QPointF(std::isinf(l.value.x()) ? visibleRange().left() : l.value.x(), l.value.y()));
        if (std::isinf(l.value.x())) p.setX(l.value.x() > 0 ? plot.right() - 4 : plot.left() + 4);
        const bool shown = plot.adjusted(-2, -2, 2, 2).contains(p) && std::isfinite(p.y()) &&
                           !isSeriesHidden(it.key());
        l.item->setVisible(shown);
        l.item->setText(l.text);
        if (l.leader) l.leader->setVisible(false);
        if (!shown) continue;
        if (l.align == Qt::Alignment()) {
            automatic.emplace_back(p, &l);
            taken.emplace_back(p - QPointF(5, 5), QSizeF(10, 10)); // its own marker
            continue;
        }
        fixed.emplace_back(p, &l);
    }
    const auto isFree = [&](const QRectF& r) {
        return std::none_of(taken.begin(), taken.end(),
                            [&](const QRectF& t) { return t.intersects(r); });
    };
    const std::vector<QLineF> curves = curveSegments(chart(), plot);
    const auto clearOfCurves = [&](const QRectF& r) {
        return std::none_of(curves.begin(), curves.end(), [&](const QLineF& c) {
            return QRectF(c.p1(), c.p2()).normalized().adjusted(-1, -1, 1, 1).intersects(r) &&
                   clippedSegment(c.p1(), c.p2(), r).has_value();
        });
    };
    // Labels on their own side of a point (tier levels, p*), top to bottom. One that would
    // cover another moves up or down by whole label heights to the nearest free place in the
    // plot, with a leader line back to its point: close bandwidths stack.
    std::sort(fixed.begin(), fixed.end(),
              [](const auto& a, const auto& b) { return a.first.y() < b.first.y(); });
    // Where none is free, the label's short form tries again; without one, or where that finds
    // no place either, the label stays hidden rather than cover another or the legend.
    const auto findPlace = [&](QPointF p, const Label& l) -> std::optional<QRectF> {
        Qt::Alignment align = l.align;
        const QSizeF size = l.item->boundingRect().size();
        // A label that would leave the plot sideways goes to the other side of its point.
        if (QRectF r = placed(p, size, align);
            r.right() > plot.right() + 2 && (align & Qt::AlignRight))
            align = (align & ~Qt::AlignRight) | Qt::AlignLeft;
        else if (r.left() < plot.left() - 2 && (align & Qt::AlignLeft))
            align = (align & ~Qt::AlignLeft) | Qt::AlignRight;
        const QRectF home = placed(p, size, align);
        if (home.left() < plot.left() - 2 || home.right() > plot.right() + 2) return std::nullopt;
        const double step = home.height() + 1;
        const double lowest = plot.bottom() + 2, highest = plot.top() - home.height();
        // Free of labels and curves at home or a few heights from it; else free of labels.
        if (isFree(home) && clearOfCurves(home)) return home;
        for (int k = 1; k <= 3; ++k)
            for (const double dir : {-1.0, 1.0}) {
                const QRectF c = home.translated(0, dir * k * step);
                if (c.top() < highest || c.bottom() > lowest || !isFree(c) || !clearOfCurves(c))
                    continue;
                return c;
            }
        if (isFree(home)) return home;
        for (int k = 1; k < 40; ++k)
            for (const double dir : {1.0, -1.0}) {
                const QRectF c = home.translated(0, dir * k * step);
                if (c.top() < highest || c.bottom() > lowest || !isFree(c)) continue;
                return c;
            }
        return std::nullopt;
    };
    for (auto& [p, l] : fixed) {
        std::optional<QRectF> place = findPlace(p, *l);
        if (!place && !l->brief.isEmpty()) {
            l->item->setText(l->brief);
            place = findPlace(p, *l);
        }
        if (!place) {
            l->item->setVisible(false);
            continue;
        }
        const QRectF r = *place;
        const QRectF home = placed(p, l->item->boundingRect().size(), l->align);
        l->item->setPos(r.topLeft());
        taken.push_back(r.adjusted(-kLabelGap, -kLabelGap, kLabelGap, kLabelGap));
        if (r.top() != home.top()) {
            if (!l->leader) {
                l->leader = new QGraphicsLineItem;
                l->leader->setZValue(19);
                chart()->scene()->addItem(l->leader);
            }
            l->leader->setPen(QPen(l->item->brush().color(), 1));
            const double y = r.center().y() < p.y() ? r.bottom() : r.top();
            l->leader->setLine(QLineF(p, QPointF(std::clamp(p.x(), r.left(), r.right()), y)));
            l->leader->setVisible(true);
        }
    }
    // Labels without a fixed side take the first place around their point that is free of
    // other labels and markers: those of a higher priority first, then left to right, so
    // neighbours of similar size stay readable.
    std::sort(automatic.begin(), automatic.end(), [](const auto& a, const auto& b) {
        if (a.second->priority != b.second->priority)
            return a.second->priority > b.second->priority;
        return a.first.x() < b.first.x();
    });
    static const Qt::Alignment around[] = {
        Qt::AlignHCenter | Qt::AlignTop,   Qt::AlignHCenter | Qt::AlignBottom,
        Qt::AlignRight | Qt::AlignVCenter, Qt::AlignLeft | Qt::AlignVCenter,
        Qt::AlignRight | Qt::AlignTop,     Qt::AlignLeft | Qt::AlignBottom,
        Qt::AlignRight | Qt::AlignBottom,  Qt::AlignLeft | Qt::AlignTop};
    // Where the places next to a point are taken, farther rings, with a leader line; where none
    // is free the label stays hidden rather than cover another (the hover text names the point).
    // A place clearly nearer another labelled point than its own would name the wrong one.
    // Points a few pixels apart (a load held by two rules at S = 2.351 and 2.37) are one spot:
    // either may take any place around it.
    constexpr double kSameSpot = 6;
    const auto nearestIsOwn = [&](const QRectF& r, QPointF own) {
        const double d = distance(r, own);
        return std::none_of(automatic.begin(), automatic.end(), [&](const auto& other) {
            return other.first != own && distance(r, other.first) < d - kSameSpot;
        });
    };
    const auto findAround = [&](QPointF p, QSizeF size, double& gap,
                                bool avoidCurves) -> std::optional<QRectF> {
        for (const double g : {15.0, 32.0, 52.0, 75.0})
            for (Qt::Alignment a : around) {
                const QRectF r = placed(p, size, a, g);
                if (plot.contains(r) && isFree(r) && nearestIsOwn(r, p) &&
                    (!avoidCurves || clearOfCurves(r))) {
                    gap = g;
                    return r;
                }
            }
        return std::nullopt;
    };
    for (auto& [p, l] : automatic) {
        double gap = 15;
        std::optional<QRectF> best;
        // Where no curve is, whole, else in its brief form; only then over a curve, whole or
        // brief.
        for (const bool avoidCurves : {true, false}) {
            l->item->setText(l->text);
            best = findAround(p, l->item->boundingRect().size(), gap, avoidCurves);
            if (!best && !l->brief.isEmpty()) {
                l->item->setText(l->brief);
                best = findAround(p, l->item->boundingRect().size(), gap, avoidCurves);
            }
            if (best) break;
        }
        if (!best) {
            l->item->setVisible(false);
            continue;
        }
        l->item->setPos(best->topLeft());
        taken.push_back(best->adjusted(-kLabelGap, -kLabelGap, kLabelGap, kLabelGap));
        if (gap > 15) {
            if (!l->leader) {
                l->leader = new QGraphicsLineItem;
                l->leader->setZValue(19);
                chart()->scene()->addItem(l->leader);
            }
            l->leader->setPen(QPen(ghost(l->item->brush().color()), 1));
            const QPointF to(std::clamp(p.x(), best->left(), best->right()),
                             std::clamp(p.y(), best->top(), best->bottom()));
            l->leader->setLine(QLineF(p, to));
            l->leader->setVisible(true);
        }
    }
}

} // namespace kvbe
