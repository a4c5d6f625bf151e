// The Workload view's Capacity chart: a TTFT statistic (p99 by default) against the load, one
// line per caching rule, on a number of prefill servers, the latency target as a horizontal line
// and each rule's largest load held marked; below it (capacity_panel.h) the servers each rule
// needs at the trace's own rate. The numbers are core's searches (trace_capacity.h) on the
// Workload view's replay: its trace, the scenario's cost and the tiers as the view sets them.
#pragma once

#include "kvbe/trace/trace_capacity.h"
#include "kvbe/ui/charts/workload_charts.h"

#include <QString>

#include <functional>
#include <memory>
#include <optional>

namespace kvbe {

// The latency target the chart opens with: p99 within 5 s (the conversation trace's longest
// prompts alone take 3.6 s to prefill, so p99 ≤ 2 s holds there on no number of servers).
inline constexpr const char* kDefaultLatencyTarget = "p99=5s";

struct WorkloadCapacity {
    WorkloadPtr workload; // the replay searched: its trace, scenario and configuration
    LatencyTarget target;
    // The servers the curve is drawn for: the view's prefill servers where set, else the fewest
    // GPU-only caching needs at the trace's own rate (or, where it needs more than the bound,
    // the fewest any rule needs). 0: none, no curve.
    int instances = 0;
    bool instancesSet = false; // from the view's prefill servers, not from the search
    // Both searches in one result: the servers needed at S = 1 and the load held on
    // `instances` servers with its curve.
    std::optional<CapacityResult> result;
    QString serversSentence; // capacityServersSentence
    QString loadSentence;    // capacityLoadSentence
    QString error;           // why there is no result (bad trace, no replay)
    bool cancelled = false;
    double seconds = 0; // wall time of both searches
};
using CapacityPtr = std::shared_ptr<const WorkloadCapacity>;

// Both searches on the workload's replay configuration. `progress` gets the share done and
// cancels by returning false (the result then has cancelled set and nothing else).
WorkloadCapacity computeCapacity(WorkloadPtr w, const LatencyTarget& target,
                                 const std::function<bool(double)>& progress = {});

class SloCapacityChart : public WorkloadChart {
    Q_OBJECT
  public:
    explicit SloCapacityChart(QWidget* parent = nullptr);
    QString csv() const override;
    QString hoverText(QPointF value) const override;
    void copyStateFrom(const ChartView& other) override;

    void setCapacity(CapacityPtr c);
    const CapacityPtr& capacity() const { return m_capacity; }
    // The target computeNow() searches with (the window's panel has its own field).
    Status setTargetText(const QString& text);
    // Both searches on the calling thread, for an export without a window.
    Status computeNow();

  protected:
    void refill() override;

  private:
    // The capacity drawn: only one computed for the workload's trace.
    const WorkloadCapacity* drawn() const;
    CapacityPtr m_capacity;
    LatencyTarget m_target = *parseLatencyTarget(kDefaultLatencyTarget);
};

} // namespace kvbe
