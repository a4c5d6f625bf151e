// The Workload view's charts: prompt lengths against each tier's p*, hit ratio and TTFT saved
// against one tier's capacity (core's one-pass sweep), and the TTFT distribution under each
// admission rule. Each draws a WorkloadResult beside the scenario's result, and exports like the
// other charts (chart_export.h: the export copies the workload with the rest of the state).
#pragma once

#include "kvbe/ui/charts/chart_view.h"
#include "kvbe/ui/results/workload_result.h"

#include <vector>

namespace kvbe {

class WorkloadChart : public ChartView {
    Q_OBJECT
  public:
    using ChartView::ChartView;
    void setWorkload(WorkloadPtr w);
    // Both at once, drawn once.
    void setResultAndWorkload(ResultPtr r, WorkloadPtr w);
    const WorkloadPtr& workload() const { return m_workload; }
    void copyStateFrom(const ChartView& other) override;

  protected:
    // The titles and an empty plot while no trace is open.
    bool drawEmptyUnlessLoaded(const QString& headline);
    // A caching rule's colour and name (none, gpu-only, always, breakeven, optimal), the same on
    // every chart that draws the rules.
    QColor ruleColor(const QString& rule) const;
    QString ruleName(const QString& rule) const;
    WorkloadPtr m_workload;
};

// Requests per prompt-length bin (log bins), each tier's p* a vertical line labelled with the
// share of requests at or above it.
class PromptLengthChart : public WorkloadChart {
    Q_OBJECT
  public:
    using WorkloadChart::WorkloadChart;
    QString csv() const override;
    QString hoverText(QPointF value) const override;
    bool canToggleLogY() const override { return false; }

    struct Bin {
        double lo = 0, hi = 0;
        std::size_t requests = 0;
    };
    const std::vector<Bin>& bins() const { return m_bins; }

  protected:
    void refill() override;

  private:
    std::vector<Bin> m_bins;
};

// Hit ratio (token-weighted, any tier, and the varied tier's own share) and mean TTFT saved
// against GPU-only caching (always admission) over the varied tier's capacity in GiB.
class CapacityChart : public WorkloadChart {
    Q_OBJECT
  public:
    using WorkloadChart::WorkloadChart;
    QString csv() const override;
    QString hoverText(QPointF value) const override;
    bool canToggleLogY() const override { return false; }

  protected:
    void refill() override;
};

// The share of requests whose TTFT is at most t, for no caching, GPU-only caching and the tiers
// under each admission rule (with prefill servers: wait + prefill).
class TtftDistributionChart : public WorkloadChart {
    Q_OBJECT
  public:
    using WorkloadChart::WorkloadChart;
    QString csv() const override;
    QString hoverText(QPointF value) const override;
    bool canToggleLogY() const override { return false; }

    struct Curve {
        QString rule;
        // Every request's TTFT, ascending (in the workload).
        const std::vector<double>* sorted = nullptr;
    };
    const std::vector<Curve>& curves() const { return m_curves; }

  protected:
    void refill() override;

  private:
    std::vector<Curve> m_curves;
};

} // namespace kvbe
