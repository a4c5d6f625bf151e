// The charts' legend: every entry with its series' full name, never shortened. Entries flow in
// rows under the plot, a name wider than the chart wrapping onto lines of its own; where those
// rows would take too much of the chart's height, the entries stand in a list at its right
// instead. Drawn in the chart's scene, so exports (PNG, SVG, PDF) carry it as on screen. A click
// on an entry hides or shows its series.
#pragma once

#include <QBrush>
#include <QFont>
#include <QGraphicsObject>
#include <QPen>
#include <QScatterSeries>

#include <vector>

class QFontMetricsF;
class QGraphicsSimpleTextItem;

namespace kvbe {

// Greedy word wrap to `width` pixels, each of the text's own lines apart; a word wider than a
// line is split. Lines are joined with '\n'. (The legend's names, the charts' titles.)
QString wrapText(const QString& text, const QFontMetricsF& fm, qreal width);

class ChartLegend : public QGraphicsObject {
    Q_OBJECT
  public:
    struct Entry {
        enum class Kind { Line, Scatter, Area };
        QString key;  // the series' key: what a click hides
        QString name; // the series' full name
        Kind kind = Kind::Line;
        QPen pen;
        QBrush brush;
        QScatterSeries::MarkerShape shape = QScatterSeries::MarkerShapeCircle;
        qreal markerSize = 8;
        bool points = false; // a line that marks its points
        bool hidden = false;
        bool operator==(const Entry&) const = default;
    };
    enum class Place { Bottom, Right };

    explicit ChartLegend(QGraphicsItem* parent = nullptr);

    // What to show and how; returns whether anything changed.
    bool setEntries(std::vector<Entry> entries, const QFont& font, QColor textColor);
    const std::vector<Entry>& entries() const { return m_entries; }
    bool isEmpty() const { return m_entries.empty(); }

    // Lays the entries out for a chart of `chartSize` and says where they went and how much room
    // they take: the height of the rows at the bottom, or the width of the list at the right.
    struct Layout {
        Place place = Place::Bottom;
        qreal extent = 0;
    };
    // Rows go under the plot where they take at most `rowsBudget` (by default 30 % of the
    // height); else a list at the right where it fits the height; else the same at a smaller
    // type (down to 70 %); else the rows, cut at the budget, the names that did not fit listed
    // in the tooltip.
    // The list takes at most `columnShare` of the width (by default 38 %).
    Layout arrange(QSizeF chartSize, qreal rowsBudget = -1, qreal columnShare = -1);
    // Puts the laid-out legend in its place: `area` is the chart's rectangle in the scene less
    // its outer margins; the legend takes its bottom or right edge.
    void placeIn(const QRectF& area);

    // Where the entry of a series is, in scene coordinates (a click there hides or shows it);
    // empty if it has none.
    QRectF entryRect(const QString& key) const;

    QRectF boundingRect() const override { return m_bounds; }
    void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

  signals:
    void clicked(const QString& key);

  protected:
    void mousePressEvent(QGraphicsSceneMouseEvent* e) override;

  private:
    struct Slot {
        QRectF swatch; // where the series' sample is drawn
        QRectF rect;   // the whole entry: the area a click hits
        QGraphicsSimpleTextItem* text = nullptr;
    };
    // The entries in rows no wider than `width`, or in one column `width` wide; the size taken.
    QSizeF flowRows(qreal width);
    QSizeF stackColumn(qreal width);
    // One try at the legend's place at the type m_drawFont; the names cut for room.
    QStringList arrangeOnce(QSizeF area, qreal rowsBudget, qreal columnShare);
    QString wrapped(const QString& name, qreal width) const;
    qreal naturalWidth(const Entry& e) const;

    std::vector<Entry> m_entries;
    std::vector<Slot> m_slots;
    QFont m_font;
    QFont m_drawFont; // m_font, or smaller where the names would not fit whole
    QColor m_textColor;
    Layout m_layout;
    QSizeF m_size;                     // of the arranged entries
    Place m_lastPlace = Place::Bottom; // where the last arrange put it
    QRectF m_bounds;
};

} // namespace kvbe
