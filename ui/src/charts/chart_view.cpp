#include "kvbe/ui/charts/chart_view.h"

#include "kvbe/base/units.h"
#include "kvbe/ui/charts/chart_legend.h"

#include <QAreaSeries>
#include <QGraphicsLineItem>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLegend>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMouseEvent>
#include <QRubberBand>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

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
void tuneLogBase(QLogValueAxis* l) {
    const double ratio = l->max() / l->min();
    if (!(ratio > 1) || !std::isfinite(ratio)) return;
    double base = 10;
    // Per cent reads by decades (0.1 %, 1 %, 10 %), never 0.390625 %.
    if (l->property("kvbeDecades").toBool() && ratio >= 10)
        base = 10;
    else if (ratio < 4)
        base = std::max(1.001, std::pow(ratio, 1.0 / 5));
    else if (std::log2(ratio) <= 11)
        base = 2;
    if (base == l->base()) return;
    l->setBase(base);
    l->setMinorTickCount(base == 10 ? 8 : 0);
    // Labels between doublings need their decimals.
    l->setLabelFormat(base < 2 ? "%.4g" : l->property("kvbeFormat").toByteArray().constData());
}

void setAxisRange(QAbstractAxis* a, double min, double max) {
    if (auto* l = qobject_cast<QLogValueAxis*>(a)) {
        l->setRange(min, max);
    } else if (auto* v = qobject_cast<QValueAxis*>(a)) {
        v->setRange(min, max);
        v->applyNiceNumbers();
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

} // namespace

ChartView::ChartView(QWidget* parent) : QChartView(parent) {
    chart()->setAnimationOptions(QChart::NoAnimation);
    chart()->setBackgroundRoundness(0);
    chart()->setMargins(QMargins(kMargin, kMargin, kMargin, kMargin));
    // Qt's legend shortens names that do not fit ("hit from NV…"); ours wraps them
    // (chart_legend.h).
    chart()->legend()->setVisible(false);
    setRenderHint(QPainter::Antialiasing);
    setRubberBand(QChartView::NoRubberBand);
    setMouseTracking(true);
    viewport()->setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setMinimumSize(320, 220);

    m_anchor = new QLineSeries;
    m_anchor->setName(QStringLiteral("anchor"));
    chart()->addSeries(m_anchor);

    auto* scene = chart()->scene();
    m_crossV = scene->addLine(QLineF(), QPen(QColor(128, 128, 128, 160), 1, Qt::DashLine));
    m_crossH = scene->addLine(QLineF(), QPen(QColor(128, 128, 128, 160), 1, Qt::DashLine));
    m_tipBox = scene->addRect(QRectF(), QPen(QColor(128, 128, 128)), QColor(255, 255, 255, 235));
    m_tip = new QGraphicsSimpleTextItem(m_tipBox);
    for (QGraphicsItem* i :
         {static_cast<QGraphicsItem*>(m_crossV), static_cast<QGraphicsItem*>(m_crossH),
          static_cast<QGraphicsItem*>(m_tipBox)}) {
        i->setZValue(100);
        i->setVisible(false);
    }
    m_legend = new ChartLegend;
    m_legend->setObjectName(QStringLiteral("chartLegend"));
    m_legend->setZValue(15);
    scene->addItem(m_legend);
    connect(m_legend, &ChartLegend::clicked, this,
            [this](const QString& key) { setSeriesHidden(key, !isSeriesHidden(key)); });
    connect(chart(), &QChart::plotAreaChanged, this, [this] { layoutOverlays(); });
    applyFonts();
}

ChartView::~ChartView() = default;

void ChartView::setResults(ResultPtr current, std::vector<ResultPtr> pins) {
    m_current = std::move(current);
    m_pins = std::move(pins);
    if (m_current) refill();
}

void ChartView::setChartStyle(ChartStyle style) {
    if (style == m_style) return;
    m_style = style;
    // setTheme resets fonts, colours and pens; everything is re-applied after it.
    chart()->setTheme(style.dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart()->setBackgroundRoundness(0);
    setBackgroundBrush(chart()->backgroundBrush());
    m_tipBox->setBrush(style.dark ? QColor(40, 40, 46, 235) : QColor(255, 255, 255, 235));
    m_tip->setBrush(textColor());
    applyFonts();
    if (m_current) refill();
}

void ChartView::setLogY(bool log) {
    m_logYSet = true;
    if (log == m_logY) return;
    m_logY = log;
    m_zoomed = false;
    rebuildAxes();
    if (m_current) refill();
}

void ChartView::applyFonts() {
    const bool big = m_style.presentation;
    QFont title = font();
    title.setPointSizeF(big ? 22 : 12);
    title.setBold(true);
    chart()->setTitleFont(title);
    chart()->setTitleBrush(textColor());
    QFont small = font();
    small.setPointSizeF(big ? 16 : 9);
    chart()->legend()->setFont(small);
    chart()->legend()->setLabelColor(textColor());
    QFont axisTitle = font();
    axisTitle.setPointSizeF(big ? 18 : 10);
    for (auto* a : chart()->axes()) {
        a->setLabelsFont(small);
        a->setTitleFont(axisTitle);
        a->setLabelsColor(textColor());
        a->setTitleBrush(textColor());
    }
    m_tip->setFont(small);
    for (auto& l : m_labels)
        l.item->setFont(small);
    updateLegend();
}

QColor ChartView::textColor() const {
    return m_style.dark ? QColor(230, 230, 235) : QColor(30, 30, 35);
}

QColor ChartView::ghost(QColor c) const {
    c.setAlphaF(0.45f);
    return c;
}

void ChartView::setTitles(const QString& headline, const QString& detail, const QString& note) {
    m_plainTitle = headline + QStringLiteral(" · ") + detail;
    // The title item takes rich text: the scenario goes on a second, lighter line.
    QString title = QStringLiteral("%1<br><span style=\"font-weight:normal\">%2</span>")
                        .arg(headline.toHtmlEscaped(), detail.toHtmlEscaped());
    if (!note.isEmpty())
        title += QStringLiteral("<br><span style=\"font-weight:normal; font-size:small\">%1</span>")
                     .arg(note.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
    chart()->setTitle(title);
}

// ---- axes and ranges

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
}

void ChartView::rebuildAxes() {
    for (auto* a : chart()->axes()) {
        chart()->removeAxis(a);
        delete a;
    }
    m_x = makeAxis(m_logX, m_xTitle, "%.0f");
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
    layoutOverlays();
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

// ---- series pool

void ChartView::beginRefill() {
    m_published.clear();
    m_touched.clear();
    m_touchedLabels.clear();
}

void ChartView::registerSeries(const QString& key, QAbstractSeries* s, bool inLegend,
                               bool secondaryY) {
    s->setObjectName(key);
    chart()->addSeries(s);
    m_series.insert(key, s);
    if (secondaryY) m_secondary.insert(s);
    attach(s, secondaryY);
    if (!inLegend) m_outOfLegend.insert(key);
    m_structureChanged = true;
}

QLineSeries* ChartView::line(const QString& key, const QString& name, QColor color, qreal width,
                             Qt::PenStyle style, bool inLegend, bool secondaryY) {
    m_touched.insert(key);
    auto* s = qobject_cast<QLineSeries*>(m_series.value(key));
    if (!s) {
        s = new QLineSeries;
        registerSeries(key, s, inLegend, secondaryY);
    }
    s->setName(name);
    QPen pen(color, width * penScale(), style);
    pen.setCapStyle(Qt::FlatCap);
    s->setPen(pen);
    return s;
}

QScatterSeries* ChartView::scatter(const QString& key, const QString& name, QColor color,
                                   qreal size, bool inLegend) {
    m_touched.insert(key);
    auto* s = qobject_cast<QScatterSeries*>(m_series.value(key));
    if (!s) {
        s = new QScatterSeries;
        registerSeries(key, s, inLegend, false);
    }
    s->setName(name);
    s->setMarkerSize(size * penScale());
    s->setColor(color);
    s->setBorderColor(color.darker(130));
    return s;
}

QAreaSeries* ChartView::area(const QString& key, const QString& name, QColor color, bool inLegend) {
    m_touched.insert(key);
    auto* s = qobject_cast<QAreaSeries*>(m_series.value(key));
    if (!s) {
        // The area does not own its boundary series; parenting them to it does.
        s = new QAreaSeries;
        s->setUpperSeries(new QLineSeries(s));
        s->setLowerSeries(new QLineSeries(s));
        registerSeries(key, s, inLegend, false);
    }
    s->setName(name);
    s->setPen(Qt::NoPen);
    s->setBrush(color);
    return s;
}

void ChartView::label(const QString& key, const QString& text, QPointF value, QColor color,
                      Qt::Alignment align) {
    m_touchedLabels.insert(key);
    auto it = m_labels.find(key);
    if (it == m_labels.end()) {
        Label l;
        l.item = new QGraphicsSimpleTextItem;
        l.item->setZValue(20);
        chart()->scene()->addItem(l.item);
        QFont f = font();
        f.setPointSizeF(m_style.presentation ? 16 : 9);
        l.item->setFont(f);
        it = m_labels.insert(key, l);
    }
    it->item->setText(text);
    it->item->setBrush(color);
    it->value = value;
    it->align = align;
}

void ChartView::endRefill() {
    for (auto it = m_series.begin(); it != m_series.end();) {
        if (m_touched.contains(it.key())) {
            ++it;
            continue;
        }
        chart()->removeSeries(it.value());
        m_secondary.remove(it.value());
        m_outOfLegend.remove(it.key());
        delete it.value();
        it = m_series.erase(it);
        m_structureChanged = true;
    }
    for (auto it = m_labels.begin(); it != m_labels.end();) {
        if (m_touchedLabels.contains(it.key())) {
            ++it;
            continue;
        }
        delete it->item;
        delete it->leader;
        it = m_labels.erase(it);
    }
    if (m_structureChanged) {
        m_structureChanged = false;
        applyVisibility();
    } else {
        updateLegend(); // names change with the data ("chosen fraction, 40 %")
    }
    layoutOverlays();
}

void ChartView::applyVisibility() {
    for (auto it = m_series.cbegin(); it != m_series.cend(); ++it)
        it.value()->setVisible(!isSeriesHidden(it.key()));
    for (auto it = m_labels.cbegin(); it != m_labels.cend(); ++it)
        if (isSeriesHidden(it.key())) it->item->setVisible(false);
    updateLegend();
}

void ChartView::updateLegend() {
    if (!m_legend) return;
    std::vector<ChartLegend::Entry> entries;
    // In the order the series were first drawn.
    for (QAbstractSeries* s : chart()->series()) {
        if (s == m_anchor || m_outOfLegend.contains(s->objectName())) continue;
        ChartLegend::Entry e;
        e.key = s->objectName();
        e.name = s->name();
        e.hidden = isSeriesHidden(e.key);
        if (auto* sc = qobject_cast<QScatterSeries*>(s)) {
            e.kind = ChartLegend::Entry::Kind::Scatter;
            e.brush = sc->brush();
            e.pen = QPen(sc->borderColor(), 1);
            e.shape = sc->markerShape();
            e.markerSize = sc->markerSize();
        } else if (auto* xy = qobject_cast<QXYSeries*>(s)) {
            e.pen = xy->pen();
            e.points = xy->pointsVisible();
        } else if (auto* a = qobject_cast<QAreaSeries*>(s)) {
            e.kind = ChartLegend::Entry::Kind::Area;
            e.brush = a->brush();
        }
        entries.push_back(std::move(e));
    }
    const bool changed =
        m_legend->setEntries(std::move(entries), chart()->legend()->font(), textColor());
    const QRectF area = chart()->geometry().adjusted(kMargin, kMargin, -kMargin, -kMargin);
    if (!changed && area.size() == m_legendArea.size()) {
        m_legend->placeIn(area);
        return;
    }
    m_legendArea = area;
    // The plot gives up the legend's room: the rows under it, or the list at its right.
    QMargins margins(kMargin, kMargin, kMargin, kMargin);
    if (!m_legend->isEmpty() && area.isValid()) {
        const auto layout = m_legend->arrange(area.size());
        const int room = int(std::ceil(layout.extent)) + kMargin;
        if (layout.place == ChartLegend::Place::Bottom)
            margins.setBottom(kMargin + room);
        else
            margins.setRight(kMargin + room);
        m_legend->placeIn(area);
    }
    m_legend->setVisible(!m_legend->isEmpty());
    if (chart()->margins() != margins) chart()->setMargins(margins);
}

void ChartView::setSeriesHidden(const QString& key, bool hidden) {
    if (hidden)
        m_hidden.insert(seriesGroup(key));
    else
        m_hidden.remove(seriesGroup(key));
    applyVisibility();
}

bool ChartView::isSeriesHidden(const QString& key) const {
    for (const QString& h : m_hidden)
        if (key == h || key.startsWith(h + QLatin1Char('/'))) return true;
    return false;
}

QXYSeries* ChartView::seriesByKey(const QString& key) const {
    return qobject_cast<QXYSeries*>(m_series.value(key));
}
QAreaSeries* ChartView::areaByKey(const QString& key) const {
    return qobject_cast<QAreaSeries*>(m_series.value(key));
}
QStringList ChartView::seriesKeys() const {
    QStringList keys = m_series.keys();
    keys.sort();
    return keys;
}
QString ChartView::labelText(const QString& key) const {
    auto it = m_labels.find(key);
    return it == m_labels.end() ? QString() : it->item->text();
}

void ChartView::copyStateFrom(const ChartView& other) {
    m_hidden = other.m_hidden;
    m_logYSet = other.m_logYSet;
    m_logY = other.m_logY;
    setChartStyle(other.m_style);
    setResults(other.m_current, other.m_pins);
    if (other.m_zoomed) {
        const QRectF r = other.visibleRange();
        m_zoomed = true;
        applyRange(r.left(), r.right(), r.top(), r.bottom());
    }
    applyVisibility();
}

namespace {
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

void ChartView::layoutOverlays() {
    if (!m_x) return;
    const QRectF plot = chart()->plotArea();
    std::vector<QRectF> taken;
    std::vector<std::pair<QPointF, Label*>> automatic;
    std::vector<std::pair<QPointF, Label*>> fixed;
    for (auto it = m_labels.begin(); it != m_labels.end(); ++it) {
        Label& l = it.value();
        QPointF p =
            toPixel(QPointF(std::isinf(l.value.x()) ? axisMin(m_x) : l.value.x(), l.value.y()));
        if (std::isinf(l.value.x())) p.setX(l.value.x() > 0 ? plot.right() - 4 : plot.left() + 4);
        const bool shown = plot.adjusted(-2, -2, 2, 2).contains(p) && std::isfinite(p.y()) &&
                           !isSeriesHidden(it.key());
        l.item->setVisible(shown);
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
    // Labels on their own side of a point (tier levels, p*), top to bottom. One that would
    // cover another moves up or down by whole label heights to the nearest free place in the
    // plot, with a leader line back to its point: close bandwidths stack.
    std::sort(fixed.begin(), fixed.end(),
              [](const auto& a, const auto& b) { return a.first.y() < b.first.y(); });
    for (auto& [p, l] : fixed) {
        const QRectF home = placed(p, l->item->boundingRect().size(), l->align);
        QRectF r = home;
        if (!isFree(r)) {
            const double step = r.height() + 1;
            const double lowest = plot.bottom() + 2, highest = plot.top() - r.height();
            bool found = false;
            for (int k = 1; k < 40 && !found; ++k)
                for (const double dir : {1.0, -1.0}) {
                    const QRectF c = home.translated(0, dir * k * step);
                    if (c.top() < highest || c.bottom() > lowest || !isFree(c)) continue;
                    r = c;
                    found = true;
                    break;
                }
        }
        l->item->setPos(r.topLeft());
        taken.push_back(r);
        if (r != home) {
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
    // other labels and markers, left to right, so neighbours of similar size stay readable.
    std::sort(automatic.begin(), automatic.end(),
              [](const auto& a, const auto& b) { return a.first.x() < b.first.x(); });
    static const Qt::Alignment around[] = {
        Qt::AlignHCenter | Qt::AlignTop,   Qt::AlignHCenter | Qt::AlignBottom,
        Qt::AlignRight | Qt::AlignVCenter, Qt::AlignLeft | Qt::AlignVCenter,
        Qt::AlignRight | Qt::AlignTop,     Qt::AlignLeft | Qt::AlignBottom,
        Qt::AlignRight | Qt::AlignBottom,  Qt::AlignLeft | Qt::AlignTop};
    // Where the places next to a point are taken, farther rings, with a leader line; where none
    // is free the label stays hidden rather than cover another (the hover text names the point).
    for (auto& [p, l] : automatic) {
        const QSizeF size = l->item->boundingRect().size();
        std::optional<QRectF> best;
        double gap = 15;
        for (const double g : {15.0, 32.0, 52.0, 75.0}) {
            for (Qt::Alignment a : around) {
                const QRectF r = placed(p, size, a, g);
                if (plot.contains(r) && isFree(r)) {
                    best = r;
                    break;
                }
            }
            if (best) {
                gap = g;
                break;
            }
        }
        if (!best) {
            l->item->setVisible(false);
            continue;
        }
        l->item->setPos(best->topLeft());
        taken.push_back(*best);
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
