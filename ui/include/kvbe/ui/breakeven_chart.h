// B*(N): the bandwidth a storage path needs for a fully cached prompt to beat recompute, with
// each tier as a labelled horizontal line and the prompt lengths where it wins shaded.
#pragma once

#include "kvbe/ui/chart_view.h"

namespace kvbe {

class BreakevenChart : public ChartView {
    Q_OBJECT
  public:
    using ChartView::ChartView;
    QString key() const override { return QStringLiteral("breakeven"); }
    QString title() const override { return tr("Break-even bandwidth"); }
    QString csv() const override;
    QString hoverText(QPointF value) const override;

  protected:
    void refill() override;
};

} // namespace kvbe
