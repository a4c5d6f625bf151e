// Time to first token against prompt length: recompute against a hit from each tier at the
// chosen cached fraction, the speedup on the right axis, and measured prefill times overlaid.
#pragma once

#include "kvbe/ui/chart_view.h"

namespace kvbe {

class TtftChart : public ChartView {
    Q_OBJECT
  public:
    using ChartView::ChartView;
    QString key() const override { return QStringLiteral("ttft"); }
    QString title() const override { return tr("Time to first token"); }
    QString csv() const override;
    QString hoverText(QPointF value) const override;

  protected:
    void refill() override;

  private:
    // Sorted measured prefill points (tokens, ms), kept between refills: comparing 100,000
    // points costs far less than sorting them again every frame.
    std::vector<QPointF> m_measured;
    std::vector<std::pair<double, double>> m_measuredSource;
};

} // namespace kvbe
