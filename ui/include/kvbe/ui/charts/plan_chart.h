// The Workload view's Plan chart: what to buy for the open trace (core's planTrace, kvbe/plan):
// every configuration of the plan's grid as capital cost against the mean TTFT it saves over
// GPU-only caching, the Pareto front drawn as a line, each front point coloured by the shortest
// drive life in its configuration (a legend of life bands), the recommended configuration ringed
// and coloured the same way.
// The section around it (plan_section.h) holds the limits, the recommended configuration's
// sentence and each tier's drive life. The CSV is the plan's table, as `kvbe-cli trace plan
// --output csv` writes it.
#pragma once

#include "kvbe/plan/plan.h"
#include "kvbe/plan/plan_sample.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/ui/charts/workload_charts.h"

#include <QColor>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

namespace kvbe {

struct WorkloadPlan {
    WorkloadPtr workload; // the replay planned for: it keeps the trace and the scenario alive
    PlanLimits limits;
    std::optional<PlanSetup> setup;
    std::optional<PlanResult> result;
    QString error; // why there is no plan (no trace, no block ids, a limit no point can meet)
    bool cancelled = false;
};
using PlanPtr = std::shared_ptr<const WorkloadPlan>;

// The plan for the workload's trace, scenario and replay settings (GPU cache, policy, placement,
// write queue, prefill servers, admission rule) over the default grid, under `limits`: as
// `kvbe-cli trace plan` plans it (planTraceSampled), from samples for a large trace unless
// `sampling` asks for every configuration in full. `progress` gets the share done and cancels by
// returning false (cancelled is then set); sampling.stages gets the stage.
// allRouters: on a fleet, GPU-only caching behind every other router too (PlanRequest's
// otherRouters "all").
WorkloadPlan computePlan(WorkloadPtr w, const Presets& presets, const PlanLimits& limits,
                         const std::function<bool(double)>& progress = {},
                         const PlanSampleOptions& sampling = {}, bool allRouters = false);

// The link a plan of the tab's fleet reaches a pool by, where the tab pools a tier (a fleet,
// some offload tier "pooled"): net-400g, trace plan's default; empty where it pools none. The
// plan then places its tiers on each node and in a pool over that link (--placements
// local,pooled) once the link has a price in force (the shipped table under the scenario's own
// prices); planPoolPriced says whether it has.
std::string planPoolLink(const WorkloadResult& w);
bool planPoolPriced(const WorkloadResult& w);

// A configuration's shortest drive life against its drives' warranty: the colour bands of the
// chart's points.
enum class LifeBand {
    NoDrives, // no NVMe tier
    Short,    // a drive reaches its rated endurance within its warranty
    Fair,     // within twice the warranty
    Long,     // later, or never (no writes reach the drives)
};
LifeBand lifeBand(const PlanPoint& p);
QString lifeBandName(LifeBand b);
QColor lifeBandColor(LifeBand b);

// "Recommended: …, because …", or the sentence saying which limit fails and by how much.
QString planSentence(const WorkloadPlan& p);
// One line per offload tier of the configuration: its drive writes per day and years to rated
// endurance, with the warning in words where that is shorter than the warranty.
QStringList driveLifeLines(const PlanPoint& p);
// A configuration for the hover and the section's table: "512 GiB DRAM + 2 × nvme-gen5-mu,
// store at the 2nd sighting: $12,345, mean TTFT 210 ms (p99 1.2 s), drives last 3.2 years".
QString planPointText(const PlanPoint& p);

class PlanChart : public WorkloadChart {
    Q_OBJECT
  public:
    explicit PlanChart(QWidget* parent = nullptr);
    QString csv() const override;
    QString hoverText(QPointF value) const override;
    bool canToggleLogY() const override { return false; }
    void copyStateFrom(const ChartView& other) override;

    void setPlan(PlanPtr p);
    const PlanPtr& plan() const { return m_plan; }
    // The plan drawn: only one computed for the workload's trace.
    const WorkloadPlan* drawn() const;
    // Plans on the calling thread with the default limits and the built-in presets, for an
    // export without a window.
    Status computeNow();
    // The mean TTFT saved over GPU-only caching, seconds (the chart's y).
    static double ttftSavedS(const PlanResult& r, const PlanPoint& p);

  protected:
    void refill() override;

  private:
    PlanPtr m_plan;
};

} // namespace kvbe
