// B* at one prompt length for every preset and loaded model against its parameter count
// (log–log), with the tiers' bandwidths as lines: the slide about model size.
#pragma once

#include "kvbe/ui/charts/chart_view.h"

namespace kvbe {

class ModelSizeChart : public ChartView {
    Q_OBJECT
  public:
    using ChartView::ChartView;
    QString csv() const override;
    QString hoverText(QPointF value) const override;

  protected:
    void refill() override;
};

} // namespace kvbe
