#include "kvbe/ui/charts/chart_legend.h"

#include <QCursor>
#include <QFontMetricsF>
#include <QGraphicsSceneMouseEvent>
#include <QGraphicsSimpleTextItem>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace kvbe {

namespace {
// Sizes from the font: a line of text, the sample of a series, the gap before its name.
struct Metrics {
    qreal line, swatch, gap;
    explicit Metrics(const QFont& f)
        : line(QFontMetricsF(f).height()), swatch(std::max<qreal>(22, line * 1.6)),
          gap(line * 0.35) {}
};
// Of the chart's height, the most the rows under the plot may take before the entries move to
// a list at the right; that list takes at most this share of the chart's width.
constexpr qreal kMaxRowsShare = 0.3;
constexpr qreal kMaxColumnShare = 0.38;
constexpr qreal kMaxCutShare = 0.5;
} // namespace

ChartLegend::ChartLegend(QGraphicsItem* parent) : QGraphicsObject(parent) {
    setAcceptedMouseButtons(Qt::LeftButton);
    setCursor(Qt::PointingHandCursor);
    setToolTip(tr("Click an entry to hide or show its series."));
    setFlag(ItemClipsChildrenToShape);
}

bool ChartLegend::setEntries(std::vector<Entry> entries, const QFont& font, QColor textColor) {
    if (entries == m_entries && font == m_font && textColor == m_textColor) return false;
    // A new font (presentation mode, and back) chooses the place afresh: the list at the right
    // kept for steadiness took 40 % of a presentation's width, and after Esc the chart's
    // margins were not those it had before.
    if (font != m_font) m_lastPlace = Place::Bottom;
    m_entries = std::move(entries);
    m_font = font;
    m_drawFont = font;
    m_textColor = textColor;
    // One text item per entry, kept across updates.
    while (m_slots.size() > m_entries.size()) {
        delete m_slots.back().text;
        m_slots.pop_back();
    }
    while (m_slots.size() < m_entries.size())
        m_slots.push_back(Slot{{}, {}, new QGraphicsSimpleTextItem(this)});
    for (size_t i = 0; i < m_entries.size(); ++i) {
        QColor c = m_textColor;
        if (m_entries[i].hidden) c.setAlphaF(0.35f);
        m_slots[i].text->setFont(m_drawFont);
        m_slots[i].text->setBrush(c);
    }
    update();
    return true;
}

qreal ChartLegend::naturalWidth(const Entry& e) const {
    const Metrics m(m_drawFont);
    return std::ceil(m.swatch + m.gap + QFontMetricsF(m_drawFont).horizontalAdvance(e.name)) + 1;
}

namespace {

QString wrapLine(const QString& name, const QFontMetricsF& fm, qreal width) {
    if (fm.horizontalAdvance(name) <= width) return name;
    QStringList lines;
    QString current;
    for (const QString& word : name.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QString candidate = current.isEmpty() ? word : current + QLatin1Char(' ') + word;
        if (fm.horizontalAdvance(candidate) <= width) {
            current = candidate;
            continue;
        }
        if (!current.isEmpty()) lines << current;
        current = word;
        while (fm.horizontalAdvance(current) > width && current.size() > 1) {
            qsizetype n = current.size() - 1;
            while (n > 1 && fm.horizontalAdvance(current.left(n)) > width)
                --n;
            lines << current.left(n);
            current = current.mid(n);
        }
    }
    if (!current.isEmpty()) lines << current;
    return lines.join(QLatin1Char('\n'));
}

} // namespace

// Greedy word wrap, line by line: as many words on a line as fit; a word wider than a line is
// split.
QString wrapText(const QString& text, const QFontMetricsF& fm, qreal width) {
    QStringList out;
    for (const QString& line : text.split(QLatin1Char('\n')))
        out << wrapLine(line, fm, width);
    return out.join(QLatin1Char('\n'));
}

QString ChartLegend::wrapped(const QString& name, qreal width) const {
    return wrapText(name, QFontMetricsF(m_drawFont), width);
}

QSizeF ChartLegend::flowRows(qreal width) {
    const Metrics m(m_drawFont);
    const qreal line = m.line, swatch = m.swatch, gap = m.gap;
    const qreal spacing = line * 1.2, rowGap = line * 0.2;
    qreal x = 0, y = 0, rowHeight = 0;
    size_t rowStart = 0;
    const auto centreRow = [&](size_t end) {
        if (end == rowStart) return;
        const qreal used = m_slots[end - 1].rect.right();
        const qreal shift = std::max<qreal>(0, (width - used) / 2);
        for (size_t k = rowStart; k < end; ++k) {
            m_slots[k].rect.translate(shift, 0);
            m_slots[k].swatch.translate(shift, 0);
        }
    };
    for (size_t i = 0; i < m_entries.size(); ++i) {
        Slot& s = m_slots[i];
        s.text->setText(wrapped(m_entries[i].name, std::max<qreal>(40, width - swatch - gap)));
        const QSizeF text = s.text->boundingRect().size();
        const qreal w = swatch + gap + text.width();
        if (x > 0 && x + w > width) {
            centreRow(i);
            rowStart = i;
            x = 0;
            y += rowHeight + rowGap;
            rowHeight = 0;
        }
        s.rect = QRectF(x, y, w, std::max(line, text.height()));
        s.swatch = QRectF(x, y, swatch, line);
        rowHeight = std::max(rowHeight, s.rect.height());
        x += w + spacing;
    }
    centreRow(m_entries.size());
    return QSizeF(width, m_entries.empty() ? 0 : y + rowHeight);
}

QSizeF ChartLegend::stackColumn(qreal width) {
    const Metrics m(m_drawFont);
    const qreal line = m.line, swatch = m.swatch, gap = m.gap;
    const qreal rowGap = line * 0.3;
    qreal y = 0, used = 0;
    for (size_t i = 0; i < m_entries.size(); ++i) {
        Slot& s = m_slots[i];
        s.text->setText(wrapped(m_entries[i].name, std::max<qreal>(40, width - swatch - gap)));
        const QSizeF text = s.text->boundingRect().size();
        s.rect = QRectF(0, y, swatch + gap + text.width(), std::max(line, text.height()));
        s.swatch = QRectF(0, y, swatch, line);
        used = std::max(used, s.rect.width());
        y += s.rect.height() + rowGap;
    }
    return QSizeF(used, m_entries.empty() ? 0 : y - rowGap);
}

QStringList ChartLegend::arrangeOnce(QSizeF area, qreal rowsBudget, qreal columnShare) {
    m_layout = Layout{};
    QStringList cut;
    if (m_entries.empty()) {
        m_size = QSizeF();
    } else {
        m_size = flowRows(area.width());
        m_layout = Layout{Place::Bottom, m_size.height()};
        // A list at the right stays there while it fits and the rows would take more than half
        // their budget: names that change as a probe runs ("running, 42 % · 6.1 GB/s") made the
        // legend jump between the bottom and the right.
        const bool stayRight = m_lastPlace == Place::Right && m_size.height() > rowsBudget * 0.5;
        if (m_size.height() > rowsBudget || stayRight) {
            qreal widest = 0;
            for (const Entry& e : m_entries)
                widest = std::max(widest, naturalWidth(e));
            const QSizeF column = stackColumn(std::min(widest, area.width() * columnShare));
            // The list where it fits beside the plot; else the rows after all (the plot keeps
            // its width, the names stay whole); where not even two rows are left for them, the
            // list, cut at the chart's height (the plot keeps its height).
            const qreal line = QFontMetricsF(m_drawFont).height();
            if (column.height() <= area.height()) {
                m_size = column, m_layout = Layout{Place::Right, column.width()};
            } else if (rowsBudget < 2 * line) {
                m_size = QSizeF(column.width(), area.height());
                m_layout = Layout{Place::Right, column.width()};
                for (std::size_t i = 0; i < m_slots.size(); ++i)
                    if (m_slots[i].rect.bottom() > m_size.height() + 0.5) cut << m_entries[i].name;
            } else {
                m_size = flowRows(area.width());
                // A chart too small for its names keeps its plot; the rows are cut at the
                // budget (one line at least) rather than push the window larger.
                m_size.setHeight(
                    std::min(m_size.height(),
                             std::max(line, std::min(rowsBudget, area.height() * kMaxCutShare))));
                m_layout = Layout{Place::Bottom, m_size.height()};
                for (std::size_t i = 0; i < m_slots.size(); ++i)
                    if (m_slots[i].rect.bottom() > m_size.height() + 0.5) cut << m_entries[i].name;
            }
        }
    }
    return cut;
}

ChartLegend::Layout ChartLegend::arrange(QSizeF area, qreal rowsBudget, qreal columnShare) {
    if (rowsBudget < 0) rowsBudget = area.height() * kMaxRowsShare;
    if (columnShare <= 0) columnShare = kMaxColumnShare;
    // Every name whole: where the entries fit neither in rows nor in the list, a smaller type
    // (down to 70 %) before any entry is cut for room (the Fleet files add seven or more).
    QStringList cut;
    for (const qreal scale : {1.0, 0.9, 0.8, 0.7}) {
        m_drawFont = m_font;
        if (m_font.pointSizeF() > 0)
            m_drawFont.setPointSizeF(m_font.pointSizeF() * scale);
        else
            m_drawFont.setPixelSize(std::max(1, int(std::lround(m_font.pixelSize() * scale))));
        for (Slot& s : m_slots)
            s.text->setFont(m_drawFont);
        cut = arrangeOnce(area, rowsBudget, columnShare);
        if (cut.isEmpty()) break;
    }
    const Metrics m(m_drawFont);
    for (const Slot& s : m_slots)
        s.text->setPos(s.swatch.right() + m.gap, s.rect.top());
    m_lastPlace = m_layout.place;
    setToolTip(cut.isEmpty() ? tr("Click an entry to hide or show its series.")
                             : tr("Click an entry to hide or show its series. Cut for room: %1")
                                   .arg(cut.join(QStringLiteral("; "))));
    prepareGeometryChange();
    m_bounds = QRectF(QPointF(0, 0), m_size).adjusted(-2, -2, 2, 2);
    update();
    return m_layout;
}

void ChartLegend::placeIn(const QRectF& area) {
    if (m_layout.place == Place::Bottom)
        setPos(area.left(), area.bottom() - m_size.height());
    else
        setPos(area.right() - m_size.width(), area.top() + (area.height() - m_size.height()) / 2);
}

void ChartLegend::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
    p->setRenderHint(QPainter::Antialiasing);
    p->setClipRect(m_bounds);
    const qreal line = QFontMetricsF(m_drawFont).height();
    for (size_t i = 0; i < m_entries.size() && i < m_slots.size(); ++i) {
        const Entry& e = m_entries[i];
        const QRectF r = m_slots[i].swatch;
        const QPointF c = r.center();
        p->save();
        if (e.hidden) p->setOpacity(0.35);
        switch (e.kind) {
        case Entry::Kind::Line: {
            QPen pen = e.pen;
            pen.setWidthF(std::min<qreal>(pen.widthF(), line * 0.3));
            p->setPen(pen);
            p->drawLine(QPointF(r.left() + 1, c.y()), QPointF(r.right() - 1, c.y()));
            if (e.points) {
                p->setBrush(pen.color());
                p->drawEllipse(c, line * 0.15, line * 0.15);
            }
            break;
        }
        case Entry::Kind::Scatter: {
            const qreal h = std::clamp<qreal>(e.markerSize, line * 0.4, line * 0.8) / 2;
            p->setPen(e.pen);
            p->setBrush(e.brush);
            if (e.shape == QScatterSeries::MarkerShapeRectangle) {
                p->drawRect(QRectF(c - QPointF(h, h), c + QPointF(h, h)));
            } else if (e.shape == QScatterSeries::MarkerShapeRotatedRectangle) {
                p->drawPolygon(QPolygonF{c + QPointF(0, -h), c + QPointF(h, 0), c + QPointF(0, h),
                                         c + QPointF(-h, 0)});
            } else if (e.shape == QScatterSeries::MarkerShapeTriangle) {
                p->drawPolygon(
                    QPolygonF{c + QPointF(0, -h), c + QPointF(h, h), c + QPointF(-h, h)});
            } else {
                p->drawEllipse(c, h, h);
            }
            break;
        }
        case Entry::Kind::Area: {
            QColor edge = e.brush.color();
            edge.setAlphaF(1);
            p->setPen(QPen(edge, 1));
            p->setBrush(e.brush);
            p->drawRect(QRectF(r.left() + 2, c.y() - line * 0.3, r.width() - 4, line * 0.6));
            break;
        }
        }
        p->restore();
    }
}

QRectF ChartLegend::entryRect(const QString& key) const {
    for (size_t i = 0; i < m_slots.size() && i < m_entries.size(); ++i)
        if (m_entries[i].key == key) return mapRectToScene(m_slots[i].rect);
    return {};
}

void ChartLegend::mousePressEvent(QGraphicsSceneMouseEvent* e) {
    for (size_t i = 0; i < m_slots.size() && i < m_entries.size(); ++i)
        if (m_slots[i].rect.contains(e->pos())) {
            emit clicked(m_entries[i].key);
            e->accept();
            return;
        }
    e->ignore();
}

} // namespace kvbe
