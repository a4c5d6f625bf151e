// Each offload tier's links over the trace's time (docs/workload-model.md, "Saturation"): the
// reads its hits ask against its bandwidth, the busy share of its read link under the view's
// rule (with prefill servers) and of its write path, per minute. Drawn under the TTFT chart.
#pragma once

#include "kvbe/ui/charts/workload_charts.h"

namespace kvbe {

class LinkUseChart : public WorkloadChart {
    Q_OBJECT
  public:
    using WorkloadChart::WorkloadChart;
    QString csv() const override;
    QString hoverText(QPointF value) const override;
    bool canToggleLogY() const override { return false; }

  protected:
    void refill() override;
};

} // namespace kvbe
