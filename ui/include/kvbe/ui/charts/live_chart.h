// A live replay beside the model's prediction of it (docs/trace.md, "Replaying against live
// servers"): the share of requests whose TTFT is at most t, measured on the servers and predicted
// by the model on the same requests, servers, router and load (core's compareLiveReplay, the
// figures kvbe-cli trace replay --compare prints).
#pragma once

#include "kvbe/ui/charts/workload_charts.h"

namespace kvbe {

class LiveChart : public WorkloadChart {
    Q_OBJECT
  public:
    explicit LiveChart(QWidget* parent = nullptr);
    QString csv() const override;
    QString hoverText(QPointF value) const override;
    bool canToggleLogY() const override { return false; }

  protected:
    void refill() override;
};

} // namespace kvbe
