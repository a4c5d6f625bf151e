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

} // namespace kvbe
