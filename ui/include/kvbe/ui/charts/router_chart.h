// The routers on the open trace's fleet (docs/workload-model.md, "The fleet"): each router at its
// shipped defaults, its hit ratio against its p99 TTFT, from core's compareRouters (the table
// kvbe-cli trace replay --router compare prints). Up and to the left is better.
#pragma once

#include "kvbe/ui/charts/workload_charts.h"

namespace kvbe {

class RouterChart : public WorkloadChart {
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
