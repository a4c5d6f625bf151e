// The base of every chart: a QChartView that owns its series by key and refills them with
// replace(), a crosshair with exact values, zoom (wheel, rubber band), pan, reset, legend
// markers that hide their series, log/linear axes, themes, and labels pinned to data points.
#pragma once

#include "kvbe/ui/results/scenario_result.h"

#include <QChartView>
#include <QHash>
#include <QPointer>
#include <QSet>

#include <array>

class QAreaSeries;
class QGraphicsLineItem;
class QGraphicsRectItem;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QRubberBand;
class QScatterSeries;
class QXYSeries;

namespace kvbe {

class ChartLegend;

// The property an export's copy of a chart carries (chart_export.cpp): its title leaves out
// on-screen hints.
inline constexpr const char* kExportProperty = "kvbeExport";

struct ChartStyle {
    bool dark = false;
    bool presentation = false; // large fonts and lines, for a room
    // Measurements made with another model than the scenario's (imported files, probe runs):
    // drawn dimmed and marked with their model, or left out.
    bool otherModels = true;
    bool operator==(const ChartStyle&) const = default;
};

class ChartView : public QChartView {
    Q_OBJECT
  public:
    explicit ChartView(QWidget* parent = nullptr);
    ~ChartView() override;

    // Both from the chart table (chart_catalog.h), by the chart's class.
    QString key() const;   // "breakeven": the --chart name
    QString title() const; // the tab's title
    // The data behind the chart, as CSV.
    virtual QString csv() const = 0;
    // The exact values at a point in data coordinates (what the crosshair shows).
    virtual QString hoverText(QPointF value) const = 0;

    void setResults(ResultPtr current, std::vector<ResultPtr> pins);
    const ResultPtr& current() const { return m_current; }
    // "headline · scenario", for file metadata (the chart shows them on two lines).
    const QString& plainTitle() const { return m_plainTitle; }
    const std::vector<ResultPtr>& pins() const { return m_pins; }

    void setChartStyle(ChartStyle style);
    ChartStyle chartStyle() const { return m_style; }
    void setLogY(bool log);
    bool logY() const { return m_logY; }
    virtual bool canToggleLogY() const { return true; }
    // The chart's own controls, shown above it in the window (the frontier map's tier picker),
    // parented to `parent`; none by default. The chart keeps them in step with its results.
    virtual QWidget* createControls(QWidget* parent) {
        Q_UNUSED(parent);
        return nullptr;
    }

    // Zoom and pan in data coordinates; reset returns to the range that fits the data.
    void zoomBy(double factor, QPointF centreValue);
    void panBy(QPointF pixels);
    void resetZoom();
    bool isZoomed() const { return m_zoomed; }
    QRectF visibleRange() const; // x: tokens or parameters, y: the value axis

    // Series by key (tests and the legend use them); hiding works like a legend click.
    QXYSeries* seriesByKey(const QString& key) const;
    QAreaSeries* areaByKey(const QString& key) const;
    QStringList seriesKeys() const;
    // Keys are "name" or "group/index/name"; a legend click hides the whole group (a tier, a pin).
    void setSeriesHidden(const QString& key, bool hidden);
    bool isSeriesHidden(const QString& key) const;
    QString labelText(const QString& key) const;
    // Whether the label is on the chart now (placed, not hidden for want of room), and its text
    // as shown (its brief form where the whole did not fit).
    bool labelShown(const QString& key) const;
    QString labelShownText(const QString& key) const;

    // Copies what the user did to this chart (hidden series, zoom, axes, style) onto another
    // of the same kind, so an export renders what is on screen at any size.
    virtual void copyStateFrom(const ChartView& other);

  signals:
    void hovered(const QString& text);

  protected:
    // Called by setResults (and when axes or style change) to refill every series.
    virtual void refill() = 0;
    // Repositions the items drawn over the plot (labels, the frontier's image).
    virtual void layoutOverlays();

    void beginRefill();
    void endRefill();
    QLineSeries* line(const QString& key, const QString& name, QColor color, qreal width = 2,
                      Qt::PenStyle style = Qt::SolidLine, bool inLegend = true,
                      bool secondaryY = false);
    QScatterSeries* scatter(const QString& key, const QString& name, QColor color, qreal size,
                            bool inLegend = true, bool secondaryY = false);
    QAreaSeries* area(const QString& key, const QString& name, QColor color, bool inLegend = false);
    // A text pinned to a data point; hidden when the point leaves the plot. With no alignment
    // it takes a free place around the point. Where it would cover another label or the legend
    // it moves, then shows `brief` where given, else hides (the legend and hover name it).
    // Labels of a higher `priority` take their places first, so that where room runs out the
    // ones a sentence under the chart names are the ones shown.
    void label(const QString& key, const QString& text, QPointF value, QColor color,
               Qt::Alignment align = Qt::AlignRight | Qt::AlignTop, const QString& brief = {},
               int priority = 0);

    // Published figures (resources/published/): one scatter per chart in a style of their own
    // (amber diamonds with a dark rim, not a tier's colour, not a measured point's disc), under
    // the key "published/0/points", so a legend click or setSeriesHidden hides them; the hover
    // text names each point near the cursor with its value and source.
    struct PublishedMarker {
        QPointF value;
        QString text;
    };
    void publishedMarkers(const QString& name, const QList<PublishedMarker>& points);
    QString publishedHover(QPointF cursorValue) const;
    // A published point's hover text: what it is and, where the scenario gives one, the model's
    // value beside it.
    static QString publishedText(const PublishedComparison& row);
    // The sentence the charts add where a tier's t_fixed is a preset's nominal value.
    static QString nominalNote(const ScenarioResult& r);

    // A note, where given, goes on a third, smaller line (the nominal sentence).
    void setTitles(const QString& headline, const QString& detail, const QString& note = {});
    void setAxes(bool logX, const QString& xTitle, const QString& yTitle, bool logYDefault);
    void setSecondaryAxis(const QString& title, double min, double max); // empty title: none
    // The range that fits the data; applied unless the user has zoomed.
    void setHomeRange(double xMin, double xMax, double yMin, double yMax);
    bool logX() const { return m_logX; }
    // The points a log axis can place: without those at or below zero on it (Qt Charts logs
    // "Logarithms of zero and negative values are undefined." for each and draws nothing).
    QList<QPointF> plottable(QList<QPointF> points) const;
    qreal penScale() const { return m_style.presentation ? 2.0 : 1.0; }
    QColor ghost(QColor c) const;
    // Measurements of another model: whether `model` (empty: not said) is another than the
    // scenario's, their series' name marked with it, and their colour dimmed.
    bool ofAnotherModel(const QString& model) const;
    QString markedWithModel(const QString& name, const QString& model) const;
    QColor dimmed(QColor c) const;
    QColor textColor() const;
    QColor backgroundColor() const;
    QPointF toPixel(QPointF value) const;

    void mouseMoveEvent(QMouseEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void mouseDoubleClickEvent(QMouseEvent* e) override;
    void wheelEvent(QWheelEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;
    void leaveEvent(QEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;

    ResultPtr m_current;
    std::vector<ResultPtr> m_pins;
    // The value axis in per cent (its values are per cent): labels "1 %", log ticks by decades.
    bool m_yPercent = false;
    // The log x axis's label format: whole numbers (tokens, parameters) unless a chart says.
    const char* m_xLogFormat = "%.0f";

  private:
    struct Label {
        QGraphicsSimpleTextItem* item = nullptr;
        QGraphicsLineItem* leader = nullptr; // to its point, where the label had to move away
        QString text, brief;                 // its whole text, and a short form for little room
        QPointF value;
        Qt::Alignment align;
        int priority = 0;
    };
    void registerSeries(const QString& key, QAbstractSeries* s, bool inLegend, bool secondaryY);
    void attach(QAbstractSeries* s, bool secondaryY);
    // Shows or hides series and labels as the user chose; the legend follows.
    void applyVisibility();
    // The legend's entries from the series (those in it, hidden ones too, so that a click brings
    // them back); the chart's margins make room for it.
    void updateLegend();
    void applyRange(double xMin, double xMax, double yMin, double yMax);
    // After a pan: the data's range as the home view shows it stays on the plot (zoomed in, the
    // view stays within it; zoomed out, it stays within the view): a pan never leaves blank.
    void keepHomeInView();
    void applyFonts();
    // The title for the chart's size now (setTitles), and the room a title takes.
    void applyTitle();
    QSizeF titleSize(const QString& html) const;
    qreal axisRoom() const; // the height the x axis takes under the plot
    void rebuildAxes();
    // Axis titles shortened to the plot's size, log axes' label bases to their length.
    void fitAxes();
    void updateCrosshair(QPointF pos);
    void hideCrosshair();

    QString m_plainTitle;
    std::array<QString, 3> m_titleParts; // headline, detail, note
    static constexpr qreal kMaxTitleShare = 0.25;
    QList<PublishedMarker> m_published;
    QHash<QString, QAbstractSeries*> m_series;
    QSet<QAbstractSeries*> m_secondary;
    QSet<QString> m_outOfLegend;
    QSet<QString> m_touched;
    QSet<QString> m_hidden; // by key: survives refills
    QHash<QString, Label> m_labels;
    QSet<QString> m_touchedLabels;
    bool m_structureChanged = false;

    QAbstractAxis* m_x = nullptr;
    QAbstractAxis* m_y = nullptr;
    QAbstractAxis* m_y2 = nullptr;
    QLineSeries* m_anchor = nullptr; // empty, attached to x/y: the reference for mapping
    bool m_logX = true;
    bool m_logY = true;
    bool m_logYSet = false;
    QString m_xTitle, m_yTitle, m_y2Title;
    double m_y2Min = 0, m_y2Max = 1;
    double m_home[4] = {1, 10, 1, 10};
    bool m_homeSet = false;
    bool m_zoomed = false;
    ChartStyle m_style;

    static constexpr int kMargin = 6; // around the chart, inside the view
    ChartLegend* m_legend = nullptr;
    QRectF m_legendArea;      // the area it was last laid out in
    qreal m_legendBudget = 0; // and the height its rows could take

    QGraphicsLineItem* m_crossV = nullptr;
    QGraphicsLineItem* m_crossH = nullptr;
    QGraphicsRectItem* m_tipBox = nullptr;
    QGraphicsSimpleTextItem* m_tip = nullptr;
    QRubberBand* m_band = nullptr;
    QPoint m_pressPos;
    QPointF m_lastPan;
    enum class Drag { None, Band, Pan } m_drag = Drag::None;
};

QString seriesGroup(const QString& key);
// A text colour of the same hue with a contrast of 4.5 : 1 at least on `background`.
QColor readableOn(QColor c, const QColor& background);
QColor tierColor(const ScenarioResult& r, size_t tierIndex);
// The tier palette: the colour of the i-th tier, for tiers without a colour of their own and
// for a tier the scenario panel adds.
QColor tierPaletteColor(size_t tierIndex);
inline const QString kPublishedKey = QStringLiteral("published/0/points");
QString describeScenario(const ScenarioResult& r); // "Llama-3.2-3B on H100 SXM5 80GB, u = 50 %, …"
// The scenario's curves as core's calc table in CSV (what `kvbe-cli calc --csv` writes): the data
// of the charts drawn from them (TTFT, break-even, fraction). Empty with no scenario.
QString curvesCsv(const ResultPtr& r);
size_t nearestIndex(const std::vector<double>& sortedXs, double x);
// Series points from core's vectors, skipping the points core left empty (no break-even).
QList<QPointF> toPoints(const std::vector<double>& xs, const std::vector<std::optional<double>>& ys,
                        double scale);
QList<QPointF> toPoints(const std::vector<double>& xs, const std::vector<double>& ys, double scale);

// Formatting shared by the charts' hover texts and labels.
QString tokensText(double tokens);
QString bandwidthText(double bytesPerSecond);
// "13.5 GB/s", or with amplification "13.5 GB/s × 2.3 = 5.87 GB/s effective".
QString tierRateText(const TierPath& tier);
// The tier's name, with "(× 2.3 amplification: 5.87 GB/s effective)" when it has any.
QString tierNameText(const TierPath& tier);
QString millisText(double seconds);
QString paramsText(double params);

} // namespace kvbe
