#include "kvbe/ui/charts/chart_view.h"

#include "kvbe/base/units.h"
#include "kvbe/calibration/calibration.h"
#include "kvbe/ui/charts/chart_legend.h"

#include <QAreaSeries>
#include <QFontMetricsF>
#include <QGraphicsLineItem>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLegend>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMouseEvent>
#include <QPainter>
#include <QRegularExpression>
#include <QRubberBand>
#include <QScatterSeries>
#include <QTextDocument>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace kvbe {

namespace {

// A label pinned to a data point, on a translucent backdrop of the chart's background: gridlines
// do not cross its text, and a curve under it still shows.
class LabelItem : public QGraphicsSimpleTextItem {
  public:
    QColor backdrop;
    void paint(QPainter* p, const QStyleOptionGraphicsItem* o, QWidget* w) override {
        p->setPen(Qt::NoPen);
        p->setBrush(backdrop);
        p->drawRect(boundingRect());
        QGraphicsSimpleTextItem::paint(p, o, w);
    }
};

// WCAG's relative luminance and contrast ratio.
double luminance(const QColor& c) {
    const auto lin = [](double v) {
        return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF());
}
double contrast(const QColor& a, const QColor& b) {
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

} // namespace

// A label's colour made readable on the background (contrast 4.5 : 1 at least): lighter on the
// dark theme, darker on the light one; its hue stays.
QColor readableOn(QColor c, const QColor& background) {
    c.setAlpha(255);
    const bool dark = luminance(background) < 0.5;
    // 5.5 rather than 4.5: the themes' gradients vary around the mean taken here.
    for (int i = 0; i < 12 && contrast(c, background) < 5.5; ++i)
        c = dark ? c.lighter(120) : c.darker(120);
    return c;
}

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
    connect(chart(), &QChart::plotAreaChanged, this, [this] {
        fitAxes();
        layoutOverlays();
    });
    applyFonts();
}

ChartView::~ChartView() = default;

void ChartView::setResults(ResultPtr current, std::vector<ResultPtr> pins) {
    m_current = std::move(current);
    m_pins = std::move(pins);
    if (m_current) refill();
    // The readout under a still pointer follows new results (a key changed u): it kept the old
    // value until the mouse moved.
    if (m_tipBox->isVisible())
        updateCrosshair(QPointF(m_crossV->line().x1(), m_crossH->line().y1()));
}

void ChartView::setChartStyle(ChartStyle style) {
    if (style == m_style) return;
    m_style = style;
    hideCrosshair(); // its font and colours change with the style
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

// The chart's background as one colour: the themes paint a gradient, whose stops are averaged
// (its brush's own colour is black).
QColor ChartView::backgroundColor() const {
    const QBrush b = chart()->backgroundBrush();
    const QGradient* g = b.gradient();
    if (!g || g->stops().isEmpty()) return b.color();
    double r = 0, gr = 0, bl = 0;
    for (const auto& stop : g->stops())
        r += stop.second.redF(), gr += stop.second.greenF(), bl += stop.second.blueF();
    const double n = double(g->stops().size());
    return QColor::fromRgbF(float(r / n), float(gr / n), float(bl / n));
}

QColor ChartView::textColor() const {
    return m_style.dark ? QColor(230, 230, 235) : QColor(30, 30, 35);
}

QColor ChartView::ghost(QColor c) const {
    c.setAlphaF(0.45f);
    return c;
}

bool ChartView::ofAnotherModel(const QString& model) const {
    return m_current && !model.isEmpty() &&
           !sameModelName(model.toStdString(), m_current->model().id);
}

QString ChartView::markedWithModel(const QString& name, const QString& model) const {
    return ofAnotherModel(model)
               ? tr("%1 [another model: %2]").arg(name, model.section(QLatin1Char('/'), -1))
               : name;
}

QColor ChartView::dimmed(QColor c) const {
    c.setAlphaF(0.3f);
    return c;
}

void ChartView::setTitles(const QString& headline, const QString& detail, const QString& note) {
    m_plainTitle = headline + QStringLiteral(" · ") + detail;
    // An export is for a slide: the note's on-screen hints, a menu path in parentheses
    // ("(File ▸ Built-in scenarios has one fitted …)"), stay on the screen.
    QString kept = note;
    if (property(kExportProperty).toBool())
        kept.remove(QRegularExpression(QStringLiteral("\\s*\\([^()]*▸[^()]*\\)")));
    m_titleParts = {headline, detail, kept};
    applyTitle();
}

// The title item takes rich text: the scenario goes on a second, lighter line, the note on a
// third, smaller one. Qt lays it out unwrapped and cuts what passes the chart's width, so each
// part is wrapped to that width here. A short chart gets a shorter title (the note left out,
// then the scenario in small type, then the headline alone) so that the title takes at most a
// quarter of its height and the plot keeps its half.
void ChartView::applyTitle() {
    const QMargins margins = chart()->margins();
    const qreal width =
        std::max(60, viewport()->width() - margins.left() - margins.right() - 2 * kMargin);
    const QFont bold = chart()->titleFont();
    QFont normal = bold;
    normal.setBold(false);
    QFont small = normal;
    small.setPointSizeF(normal.pointSizeF() * 0.85);
    QFont smallBold = small;
    smallBold.setBold(true);
    // A text whose own lines fit keeps them; else its words flow anew to the width.
    const auto html = [&](QString text, const QFont& f) {
        const QFontMetricsF fm(f);
        const QStringList lines = text.split(QLatin1Char('\n'));
        if (std::any_of(lines.begin(), lines.end(),
                        [&](const QString& l) { return fm.horizontalAdvance(l) > width * 0.97; }))
            text = wrapText(lines.join(QLatin1Char(' ')), fm, width * 0.97);
        return text.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"));
    };
    const auto [headline, detail, note] = m_titleParts;
    static const QString light = QStringLiteral("<span style=\"font-weight:normal\">%1</span>");
    static const QString lightSmall =
        QStringLiteral("<span style=\"font-weight:normal; font-size:small\">%1</span>");
    static const QString boldSmall = QStringLiteral("<span style=\"font-size:small\">%1</span>");
    const QString full = detail.isEmpty() ? html(headline, bold)
                                          : html(headline, bold) + QStringLiteral("<br>") +
                                                light.arg(html(detail, normal));
    QStringList levels;
    if (!note.isEmpty())
        levels << full + QStringLiteral("<br>") + lightSmall.arg(html(note, small));
    levels << full
           << (detail.isEmpty() ? full
                                : html(headline, bold) + QStringLiteral("<br>") +
                                      lightSmall.arg(html(detail, small)))
           << boldSmall.arg(html(headline, smallBold));
    // Of the height: at most a quarter, and no more than half less the x axis and the spacing
    // Qt puts around the title.
    const qreal height = viewport()->height();
    const QSizeF room(width, std::max<qreal>(0, std::min(height * kMaxTitleShare,
                                                         height * 0.5 - axisRoom() - 4 * kMargin)));
    QString title = levels.back();
    for (const QString& l : levels) {
        const QSizeF size = titleSize(l);
        if (size.height() <= room.height() && size.width() <= room.width()) {
            title = l;
            break;
        }
    }
    if (title != chart()->title()) chart()->setTitle(title);
}

qreal ChartView::axisRoom() const {
    // The x axis's labels and title, with Qt's padding around them.
    const QFont labels = m_x ? m_x->labelsFont() : chart()->legend()->font();
    const QFont title = m_x ? m_x->titleFont() : chart()->legend()->font();
    return 2 * QFontMetricsF(labels).height() + QFontMetricsF(title).height() + 2 * kMargin;
}

QSizeF ChartView::titleSize(const QString& html) const {
    if (html.isEmpty()) return {};
    QTextDocument doc;
    doc.setDocumentMargin(0);
    doc.setDefaultFont(chart()->titleFont());
    doc.setHtml(html);
    return QSizeF(doc.idealWidth(), doc.size().height());
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
                                   qreal size, bool inLegend, bool secondaryY) {
    m_touched.insert(key);
    auto* s = qobject_cast<QScatterSeries*>(m_series.value(key));
    if (!s) {
        s = new QScatterSeries;
        registerSeries(key, s, inLegend, secondaryY);
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
                      Qt::Alignment align, const QString& brief, int priority) {
    m_touchedLabels.insert(key);
    auto it = m_labels.find(key);
    if (it == m_labels.end()) {
        Label l;
        l.item = new LabelItem;
        l.item->setZValue(20);
        chart()->scene()->addItem(l.item);
        QFont f = font();
        f.setPointSizeF(m_style.presentation ? 16 : 9);
        l.item->setFont(f);
        it = m_labels.insert(key, l);
    }
    it->item->setText(text);
    it->text = text;
    it->brief = brief;
    const QColor background = backgroundColor();
    it->item->setBrush(readableOn(color, background));
    // Translucent: a curve the label could not avoid shows through (labels go where no curve is
    // wherever they can, chart_labels.cpp).
    QColor backdrop = background;
    backdrop.setAlphaF(0.6f);
    static_cast<LabelItem*>(it->item)->backdrop = backdrop;
    it->value = value;
    it->align = align;
    it->priority = priority;
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
    applyTitle();
    // The plot keeps at least half of the chart's height: the rows of the legend share the other
    // half with the title, the x axis's labels and title, and the margins.
    const qreal reserved = titleSize(chart()->title()).height() + axisRoom() + 6 * kMargin;
    const qreal rowsBudget = std::max<qreal>(0, area.height() * 0.5 - reserved);
    if (!changed && area.size() == m_legendArea.size() && rowsBudget == m_legendBudget) {
        m_legend->placeIn(area);
        return;
    }
    m_legendArea = area;
    m_legendBudget = rowsBudget;
    // The plot gives up the legend's room: the rows under it, or the list at its right.
    QMargins margins(kMargin, kMargin, kMargin, kMargin);
    if (!m_legend->isEmpty() && area.isValid()) {
        // In presentation mode the list at the right takes a quarter of the width at most (at
        // 38 % it took 40 % of the screen from the plot); the rows or a smaller type instead.
        const auto layout =
            m_legend->arrange(area.size(), rowsBudget, m_style.presentation ? 0.25 : -1);
        const int room = int(std::ceil(layout.extent)) + kMargin;
        if (layout.place == ChartLegend::Place::Bottom)
            margins.setBottom(kMargin + room);
        else
            margins.setRight(kMargin + room);
        m_legend->placeIn(area);
    }
    m_legend->setVisible(!m_legend->isEmpty());
    if (chart()->margins() != margins) {
        chart()->setMargins(margins);
        applyTitle(); // a list at the right leaves the title less width
    }
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
    return it == m_labels.end() ? QString() : it->text;
}

bool ChartView::labelShown(const QString& key) const {
    auto it = m_labels.find(key);
    return it != m_labels.end() && it->item->isVisible();
}

QString ChartView::labelShownText(const QString& key) const {
    return labelShown(key) ? m_labels.find(key)->item->text() : QString();
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
