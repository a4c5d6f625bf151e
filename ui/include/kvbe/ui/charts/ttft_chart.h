// Time to first token against prompt length: recompute against a hit from each tier at the
// chosen cached fraction, the speedup on the right axis, and measured prefill times overlaid.
#pragma once

#include "kvbe/ui/charts/chart_view.h"

#include <QColor>
#include <QHash>

#include <vector>

namespace kvbe {

class TtftChart : public ChartView {
    Q_OBJECT
  public:
    using ChartView::ChartView;
    QString csv() const override;
    QString hoverText(QPointF value) const override;

    // Measured cold prefills (tokens, seconds) from a probe run, drawn over the curves.
    // `model`: the model they were measured with (empty: the scenario's).
    void setMeasured(std::vector<QPointF> tokensSeconds, const QString& label,
                     const QString& model = {});
    size_t measuredCount() const { return m_imported.size(); }

    // Curves from elsewhere drawn over the scenario's: imported nodes' measured prefills, a
    // fit's curves. Points are (tokens, seconds); a line when `line`, else markers.
    struct Overlay {
        QString key; // series key, "overlay/<n>/<name>" so a legend click hides one group
        QString name;
        std::vector<QPointF> points;
        QColor color;
        bool line = true;
        QString model; // the model it was measured or fitted with; empty: not said
    };
    void setOverlays(std::vector<Overlay> overlays);
    const std::vector<Overlay>& overlays() const { return m_overlays; }
    void copyStateFrom(const ChartView& other) override;

  protected:
    void refill() override;

  private:
    // Sorted measured prefill points (tokens, ms), kept between refills: comparing 100,000
    // points costs far less than sorting them again every frame.
    std::vector<QPointF> m_measured;
    std::vector<std::pair<double, double>> m_measuredSource;
    std::vector<QPointF> m_imported; // sorted, (tokens, ms)
    struct DotsInput {
        const QPointF* data = nullptr;
        size_t size = 0;
        int columns = 0;
        double x0 = 0, x1 = 0;
        bool logX = false;
        qreal scale = 1;
        QRgb colour = 0;
        bool operator==(const DotsInput&) const = default;
    };
    QHash<QString, DotsInput> m_dotsInput; // what each dot series was last decimated from
    QString m_importedLabel;
    QString m_importedModel;
    std::vector<Overlay> m_overlays;
};

} // namespace kvbe
