// ChartView's axes: log or linear, titles, the secondary axis, the range that fits the data,
// zoom's visible range and the mapping from values to pixels.
#include "kvbe/ui/charts/chart_view.h"

#include <QAreaSeries>
#include <QFontMetricsF>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QRegularExpression>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace kvbe {

namespace {

double axisMin(const QAbstractAxis* a) {
    if (auto* v = qobject_cast<const QValueAxis*>(a)) return v->min();
    if (auto* l = qobject_cast<const QLogValueAxis*>(a)) return l->min();
    return 0;
}
double axisMax(const QAbstractAxis* a) {
    if (auto* v = qobject_cast<const QValueAxis*>(a)) return v->max();
    if (auto* l = qobject_cast<const QLogValueAxis*>(a)) return l->max();
    return 1;
}

// QLogValueAxis labels only powers of its base: over a decade or two, base 10 leaves one label,
// so shorter ranges count in doublings (256, 512, 1024 …), and a zoom narrower than a few
// doublings gets a base of its own so that some five labels remain.
// How many labels fit along the axis: its length in pixels (set by fitAxes once the plot is laid
// out) over a label's width (across) or height (up), with room between them.
double labelRoom(const QLogValueAxis* l) {
    const double pixels = l->property("kvbePixels").toDouble();
    if (!(pixels > 0)) return 12;
    const QFontMetricsF fm(l->labelsFont());
    const bool across = l->orientation() == Qt::Horizontal;
    // Across: the range's longest label ("131072", not a 7-digit stand-in) with a gap of most of
    // a line; the stand-in's width turned a presentation's doublings into decades.
    const double widest = std::max(std::abs(l->min()), std::abs(l->max()));
    const QString longest = std::isfinite(widest) && widest < 1e15
                                ? QString::number(qint64(std::ceil(widest)))
                                : QStringLiteral("1048576");
    const double label =
        across ? fm.horizontalAdvance(longest) + 0.8 * fm.height() : fm.height() * 1.8;
    return pixels / label;
}

void tuneLogBase(QLogValueAxis* l) {
    const double ratio = l->max() / l->min();
    if (!(ratio > 1) || !std::isfinite(ratio)) return;
    double base = 10;
    const double room = labelRoom(l);
    // Per cent reads by decades (0.1 %, 1 %, 10 %), never 0.390625 %.
    if (l->property("kvbeDecades").toBool() && ratio >= 10)
        base = 10;
    else if (ratio < 4)
        base = std::max(1.001, std::pow(ratio, 1.0 / std::clamp(room - 1, 2.0, 5.0)));
    else if (std::log2(ratio) <= std::min(11.0, room - 1))
        base = 2;
    // Doublings that do not fit the axis's length count in fours, then in decades. Whole-number
    // axes (prompt lengths: 256, 1024, 4096 …) keep powers of two over any range that fits;
    // others (GB/s) read by decades past two of them.
    else if (std::log2(ratio) / 2 <= std::min(11.0, room - 1) &&
             (std::log10(ratio) < 2 || l->property("kvbeFormat").toByteArray() == "%.0f"))
        base = 4;
    if (base == l->base()) return;
    l->setBase(base);
    l->setMinorTickCount(base == 10 ? 8 : 0);
    // Labels between doublings need their decimals.
    l->setLabelFormat(base < 2 ? "%.4g" : l->property("kvbeFormat").toByteArray().constData());
}

// A linear axis's range widened to whole steps of 1, 2 or 5 × 10^k, some five of them. Not
// QValueAxis::applyNiceNumbers: it rounds the range up to a nice number before choosing the
// step, and it lowers the axis's tick count each time it runs, so the axes of a chart redrawn
// a few times ran on to 100,000 for data ending near 57,000, with one tick between.
struct NiceRange {
    double min, max;
    int ticks;
};
NiceRange niceRange(double min, double max) {
    constexpr int kSteps = 5;
    if (!(max > min) || !std::isfinite(min) || !std::isfinite(max)) return {min, max, 2};
    const double raw = (max - min) / kSteps;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / magnitude;
    const double step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * magnitude;
    // A hair of tolerance: 60000.0000001 still ends at 60000.
    const double lo = std::floor(min / step + 1e-9) * step;
    const double hi = std::ceil(max / step - 1e-9) * step;
    return {lo, hi, int(std::lround((hi - lo) / step)) + 1};
}

// A horizontal linear axis whose labels would not fit its length side by side (Qt then cuts them
// to "14…"): ticks at a multiple of the nice step, 2, 5, 10, 20 … times it, as few as fit, where
// the labels fit as they are the axis keeps its fixed ticks.
void fitValueTicks(QValueAxis* v, double length) {
    const double lo = v->min(), hi = v->max();
    if (!(hi > lo) || !(length > 0)) return;
    const QByteArray format = v->labelFormat().toLatin1();
    const QFontMetricsF fm(v->labelsFont());
    auto width = [&](double x) {
        return fm.horizontalAdvance(QString::asprintf(format.constData(), x));
    };
    const NiceRange r = niceRange(lo, hi);
    double step = r.ticks > 1 ? (r.max - r.min) / (r.ticks - 1) : hi - lo;
    auto ticks = [&](double st) { return int(std::floor((hi - lo) / st + 1e-9)) + 1; };
    const double label = std::max(width(lo), width(hi)) + 12;
    auto fits = [&](double st) { return ticks(st) * label <= length; };
    if (v->tickType() == QValueAxis::TicksFixed && double(v->tickCount()) * label <= length) return;
    for (double k : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0})
        if (fits(step * k) || k == 100.0) {
            step *= k;
            break;
        }
    if (ticks(step) >= v->tickCount() && v->tickType() == QValueAxis::TicksFixed) return;
    v->setTickType(QValueAxis::TicksDynamic);
    v->setTickAnchor(std::ceil(lo / step - 1e-9) * step);
    v->setTickInterval(step);
}

void setAxisRange(QAbstractAxis* a, double min, double max) {
    if (auto* l = qobject_cast<QLogValueAxis*>(a)) {
        l->setRange(min, max);
    } else if (auto* v = qobject_cast<QValueAxis*>(a)) {
        const NiceRange r = niceRange(min, max);
        v->setTickType(QValueAxis::TicksFixed);
        v->setRange(r.min, r.max);
        v->setTickCount(std::max(2, r.ticks));
    }
}
QAbstractAxis* makeAxis(bool log, const QString& title, const char* logFormat) {
    QAbstractAxis* axis;
    if (log) {
        auto* l = new QLogValueAxis;
        l->setBase(10);
        l->setLabelFormat(logFormat);
        l->setProperty("kvbeFormat", QByteArray(logFormat));
        l->setMinorTickCount(8);
        // Every range change (data, zoom, pan) picks the base that keeps labels on screen.
        QObject::connect(l, &QLogValueAxis::rangeChanged, l, [l] { tuneLogBase(l); });
        axis = l;
    } else {
        auto* v = new QValueAxis;
        v->setLabelFormat("%g");
        v->setTickCount(6);
        axis = v;
    }
    axis->setTitleText(title);
    return axis;
}

// An axis title that fits `length` pixels: whole, or shortened step by step while keeping its
// unit, the part in the last parentheses: "(GiB; 1 GiB holds …)" becomes "(GiB)", "Hit ratio,
// token-weighted (%)" becomes "Hit ratio (%)", then words go from the end of the name
// ("Mean TTFT saved (%)"). Qt would cut it instead, unit first ("B* (G…").
QString fittedAxisTitle(const QString& title, double length, const QFont& font) {
    const QFontMetricsF fm(font);
    if (title.isEmpty() || fm.horizontalAdvance(title) <= length) return title;
    QString t = title;
    static const QRegularExpression clause(QStringLiteral("\\(([^;()]*);[^()]*\\)"));
    t.replace(clause, QStringLiteral("(\\1)"));
    if (fm.horizontalAdvance(t) <= length) return t;
    const qsizetype open = t.lastIndexOf(QStringLiteral(" ("));
    const QString unit = open > 0 && t.endsWith(QLatin1Char(')')) ? t.mid(open) : QString();
    QString name = open > 0 && !unit.isEmpty() ? t.left(open) : t;
    if (const qsizetype comma = name.indexOf(QStringLiteral(", ")); comma > 0)
        name = name.left(comma);
    QStringList words = name.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    // Nor may a name end on a word that leads to the next ("saved vs", "capacity of").
    static const QStringList leading{"vs", "of",  "with", "and",  "at", "for", "the",
                                     "a",  "per", "by",   "from", "to", "in",  "on"};
    const auto trim = [&] {
        while (words.size() > 1 && leading.contains(words.back().toLower()))
            words.removeLast();
    };
    while (words.size() > 1 && fm.horizontalAdvance(words.join(QLatin1Char(' ')) + unit) > length) {
        words.removeLast();
        trim();
    }
    return words.join(QLatin1Char(' ')) + unit;
}

} // namespace

void ChartView::fitAxes() {
    if (!m_x) return;
    const QRectF plot = chart()->plotArea();
    if (!plot.isValid()) return;
    const std::pair<QAbstractAxis*, const QString*> axes[] = {
        {m_x, &m_xTitle}, {m_y, &m_yTitle}, {m_y2, &m_y2Title}};
    for (const auto& [axis, title] : axes) {
        if (!axis) continue;
        const double length = axis->orientation() == Qt::Horizontal ? plot.width() : plot.height();
        const QString text = fittedAxisTitle(*title, length - 8, axis->titleFont());
        if (axis->titleText() != text) axis->setTitleText(text);
        if (auto* v = qobject_cast<QValueAxis*>(axis); v && axis->orientation() == Qt::Horizontal)
            fitValueTicks(v, length);
        if (auto* l = qobject_cast<QLogValueAxis*>(axis)) {
            if (l->property("kvbePixels").toDouble() == length) continue;
            l->setProperty("kvbePixels", length);
            tuneLogBase(l);
        }
    }
}

void ChartView::setAxes(bool logXAxis, const QString& xTitle, const QString& yTitle,
                        bool logYDefault) {
    const bool logYNow = m_logYSet ? m_logY : logYDefault;
    const bool changed = !m_x || logXAxis != m_logX || logYNow != m_logY;
    m_xTitle = xTitle;
    m_yTitle = yTitle;
    m_logY = logYNow;
    if (logXAxis != m_logX) m_zoomed = false;
    m_logX = logXAxis;
    if (changed) rebuildAxes();
    m_x->setTitleText(xTitle);
    m_y->setTitleText(yTitle);
    fitAxes();
}

void ChartView::setSecondaryAxis(const QString& title, double min, double max) {
    const bool had = m_y2 != nullptr;
    m_y2Title = title;
    m_y2Min = min;
    m_y2Max = max;
    if (had != !title.isEmpty()) rebuildAxes();
    if (m_y2) {
        m_y2->setTitleText(title);
        if (!m_zoomed) setAxisRange(m_y2, min, max);
    }
    fitAxes();
}

void ChartView::rebuildAxes() {
    for (auto* a : chart()->axes()) {
        chart()->removeAxis(a);
        delete a;
    }
    m_x = makeAxis(m_logX, m_xTitle, m_xLogFormat);
    m_y = makeAxis(m_logY, m_yTitle, m_yPercent ? "%g %%" : "%g");
    if (m_yPercent) {
        m_y->setProperty("kvbeDecades", true);
        if (auto* v = qobject_cast<QValueAxis*>(m_y)) v->setLabelFormat("%g %%");
    }
    chart()->addAxis(m_x, Qt::AlignBottom);
    chart()->addAxis(m_y, Qt::AlignLeft);
    m_y2 = nullptr;
    if (!m_y2Title.isEmpty()) {
        m_y2 = makeAxis(false, m_y2Title, "%g");
        m_y2->setRange(m_y2Min, m_y2Max);
        chart()->addAxis(m_y2, Qt::AlignRight);
    }
    attach(m_anchor, false);
    // The points drawn for the old axes stay until the refill that follows; those a log axis
    // cannot place go now, or Qt Charts logs each while attaching.
    const auto keepPlottable = [this](QXYSeries* xy, bool secondaryY) {
        if (!xy) return;
        const QList<QPointF> points = xy->points();
        QList<QPointF> kept = points;
        kept.removeIf([&](const QPointF& p) {
            return (m_logX && !(p.x() > 0)) || (m_logY && !secondaryY && !(p.y() > 0));
        });
        if (kept.size() != points.size()) xy->replace(kept);
    };
    for (auto* s : std::as_const(m_series)) {
        const bool secondaryY = m_secondary.contains(s);
        if (auto* a = qobject_cast<QAreaSeries*>(s)) {
            keepPlottable(a->upperSeries(), secondaryY);
            keepPlottable(a->lowerSeries(), secondaryY);
        } else {
            keepPlottable(qobject_cast<QXYSeries*>(s), secondaryY);
        }
        attach(s, secondaryY);
    }
    applyFonts();
    if (m_homeSet) applyRange(m_home[0], m_home[1], m_home[2], m_home[3]);
}

void ChartView::attach(QAbstractSeries* s, bool secondaryY) {
    for (auto* a : s->attachedAxes())
        s->detachAxis(a);
    s->attachAxis(m_x);
    s->attachAxis(secondaryY && m_y2 ? m_y2 : m_y);
}

void ChartView::setHomeRange(double xMin, double xMax, double yMin, double yMax) {
    if (m_logY && yMin <= 0) yMin = yMax > 0 ? yMax * 1e-3 : 1e-3;
    if (!(yMax > yMin)) yMax = yMin * (m_logY ? 10 : 1) + (m_logY ? 0 : 1);
    m_home[0] = xMin;
    m_home[1] = xMax;
    m_home[2] = yMin;
    m_home[3] = yMax;
    m_homeSet = true;
    if (!m_zoomed) applyRange(xMin, xMax, yMin, yMax);
}

QList<QPointF> ChartView::plottable(QList<QPointF> points) const {
    if (m_logX || m_logY)
        points.removeIf([this](const QPointF& p) {
            return (m_logX && !(p.x() > 0)) || (m_logY && !(p.y() > 0));
        });
    return points;
}

void ChartView::applyRange(double xMin, double xMax, double yMin, double yMax) {
    setAxisRange(m_x, xMin, xMax);
    setAxisRange(m_y, yMin, yMax);
    if (auto* v = qobject_cast<QValueAxis*>(m_x); v && chart()->plotArea().isValid())
        fitValueTicks(v, chart()->plotArea().width());
    layoutOverlays();
}

void ChartView::keepHomeInView() {
    if (!m_homeSet || !m_x || !m_y) return;
    const QRectF plot = chart()->plotArea();
    if (!plot.isValid()) return;
    // The home range as its axes show it: a linear axis widened to its nice steps.
    auto shown = [](QAbstractAxis* a, double lo, double hi) {
        if (qobject_cast<QValueAxis*>(a)) {
            const NiceRange r = niceRange(lo, hi);
            return std::pair(r.min, r.max);
        }
        return std::pair(lo, hi);
    };
    const auto [x0, x1] = shown(m_x, m_home[0], m_home[1]);
    const auto [y0, y1] = shown(m_y, m_home[2], m_home[3]);
    const QPointF a = toPixel(QPointF(x0, y1)),
                  b = toPixel(QPointF(x1, y0)); // top left, bottom right
    double dx = 0, dy = 0;                      // how far the content must move: right and down
    if (b.x() - a.x() >= plot.width()) {
        if (a.x() > plot.left()) dx = plot.left() - a.x();
        if (b.x() < plot.right()) dx = plot.right() - b.x();
    } else {
        if (a.x() < plot.left()) dx = plot.left() - a.x();
        if (b.x() > plot.right()) dx = plot.right() - b.x();
    }
    if (b.y() - a.y() >= plot.height()) {
        if (a.y() > plot.top()) dy = plot.top() - a.y();
        if (b.y() < plot.bottom()) dy = plot.bottom() - b.y();
    } else {
        if (a.y() < plot.top()) dy = plot.top() - a.y();
        if (b.y() > plot.bottom()) dy = plot.bottom() - b.y();
    }
    // QChart::scroll moves the view: the content moves the other way (x) and the same way (y).
    if (std::abs(dx) > 0.5 || std::abs(dy) > 0.5) chart()->scroll(-dx, dy);
}

QRectF ChartView::visibleRange() const {
    if (!m_x) return {};
    return QRectF(QPointF(axisMin(m_x), axisMin(m_y)), QPointF(axisMax(m_x), axisMax(m_y)));
}

QPointF ChartView::toPixel(QPointF value) const {
    return chart()->mapToPosition(value, m_anchor);
}

void ChartView::resetZoom() {
    m_zoomed = false;
    if (m_y2) setAxisRange(m_y2, m_y2Min, m_y2Max);
    if (m_homeSet) applyRange(m_home[0], m_home[1], m_home[2], m_home[3]);
}

} // namespace kvbe
