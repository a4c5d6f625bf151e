// f*_T(N): the smallest cached fraction at which a hit from each tier beats recompute, with the
// tier's break-even prefix p*_T marked where the curve starts.
#pragma once

#include "kvbe/ui/charts/chart_view.h"
#include "kvbe/ui/charts/implied_overlay.h"

namespace kvbe {

class FractionChart : public ChartView {
    Q_OBJECT
  public:
    using ChartView::ChartView;
    QString csv() const override;
    QString hoverText(QPointF value) const override;

    // Imported py-kvcache v2 files: each tier's p* by py-kvcache's rule on the file's curves,
    // marked at (p*, 1) like the model's ("implied/<n>/<tier>-pstar").
    void setImplied(std::vector<ImpliedOverlay> implied);
    const std::vector<ImpliedOverlay>& implied() const { return m_implied; }
    void copyStateFrom(const ChartView& other) override;

  protected:
    void refill() override;

  private:
    std::vector<ImpliedOverlay> m_implied;
};

} // namespace kvbe
