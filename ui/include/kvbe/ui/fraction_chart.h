// f*_T(N): the smallest cached fraction at which a hit from each tier beats recompute, with the
// tier's break-even prefix p*_T marked where the curve starts.
#pragma once

#include "kvbe/ui/chart_view.h"

namespace kvbe {

class FractionChart : public ChartView {
    Q_OBJECT
  public:
    using ChartView::ChartView;
    QString key() const override { return QStringLiteral("fraction"); }
    QString title() const override { return tr("Minimum cached fraction"); }
    QString csv() const override;
    QString hoverText(QPointF value) const override;

  protected:
    void refill() override;
};

} // namespace kvbe
