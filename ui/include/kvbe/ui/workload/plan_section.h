// The Workload view's Plan tab: the limits a configuration must meet (drive life in years, a p99
// TTFT limit, a budget), the Plan chart (plan_chart.h), the recommended configuration with its
// sentence, each of its tiers' drive life, and the front as a table. The plan runs on a worker
// thread while the tab is shown, for the view's latest replay and the limits, a short while after
// the last change (edits in a row start one plan); a change cancels a running plan and starts the
// latest. Progress and Cancel as on the Capacity tab, with the stage the plan is at and its
// sample rate. Like `kvbe-cli trace plan`, a large trace is planned from samples (fast mode,
// kvbe/plan/plan_sample.h) unless the Exact box is ticked (an undoable edit); the status line
// leads with the mode when it is done, and the line under the recommendation says which mode ran,
// the sample rate and the error bound.
#pragma once

#include "kvbe/trace/trace_capacity.h"
#include "kvbe/ui/charts/plan_chart.h"

#include <QWidget>

#include <memory>
#include <optional>

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableWidget;
class QTimer;
class QUndoStack;

namespace kvbe {

class BackgroundJob;
class ExactCommand;
class PlanCapacityNote;

class PlanSection : public QWidget {
    Q_OBJECT
  public:
    // Takes the chart into the section; the presets are the window's (drives and their prices).
    PlanSection(PlanChart* chart, const Presets* presets, QWidget* parent = nullptr);
    ~PlanSection() override;

    PlanChart* chart() const { return m_chart; }
    // The replay to plan for: after the debounce if the section is shown and the trace, the
    // scenario or a setting the plan reads differs from the last plan's, else when it is shown.
    void setWorkload(WorkloadPtr w);
    // A part of the window's own in the answer's column (the prices, price_fields.h).
    void addToAnswer(QWidget* w);
    // Sets the fields; text that does not parse shows its sentence and keeps the last limits.
    bool setLimitsText(double lifeYears, const QString& sloP99, const QString& budgetUsd);
    // The Capacity tab's target: where the plan counts servers otherwise, a sentence under the
    // answer says so and offers to plan at it (plan_capacity_note.h).
    void setCapacityTarget(const LatencyTarget& t);
    const PlanLimits& limits() const { return m_limits; }
    // Exact: every configuration replayed in full, whatever the trace's size; otherwise a trace
    // of the sample options' exactBelow requests or more is planned from samples. setExact is the
    // user's tick (an undoable step where an undo stack is set).
    bool exact() const;
    void setExact(bool exact);
    // All routers: on a fleet, a row of GPU-only caching behind each other router the field
    // ships (kvbe-cli trace plan --routers all); off without a fleet.
    bool allRouters() const;
    // Where the Exact box's ticks go as undoable steps (the window's Edit menu; none: not undone).
    void setUndoStack(QUndoStack* undo) { m_undo = undo; }
    // How a trace is sampled: the CLI's defaults (PlanSampleOptions: 200,000 requests or more,
    // at 62,500 / requests), a lower threshold and a set rate for a test on a small trace. Its
    // `exact` and `stages` are the section's own.
    void setSampleOptions(const PlanSampleOptions& o);
    // The progress line for a stage: "Fast mode, sample 1 of 2 at 6.25 %: replaying configuration
    // 12 of 268".
    static QString progressText(const PlanProgress& p);
    // Which mode ran, with a sample its rate and the error bound, as `kvbe-cli trace plan` says
    // it; exactAsked: the Exact box was ticked.
    static QString modeText(const PlanResult& r, bool exactAsked);
    // " Fleet: 8 servers on 4 nodes …": the fleet the plan was for ("" for servers sharing one
    // cache, or one server), and where the tab pools a tier, the pool it weighs or the link price
    // it waits for.
    static QString fleetText(const WorkloadPlan& p);
    // Stops a running plan; nothing of it is kept, and it does not start again until the replay
    // or the limits change.
    void cancel();
    bool computing() const;
    // What the plan waits for (the trace being read), in the status line unless a plan runs.
    void showWaiting(const QString& text);
    bool scheduled() const;
    const PlanPtr& plan() const { return m_plan; }
    // The milliseconds a change waits for the next before the plan starts.
    static constexpr int kDebounceMs = 300;

  signals:
    void computed();
    void cancelled();

  protected:
    void showEvent(QShowEvent* e) override;

  private:
    friend class ExactCommand;
    struct Key {
        const void* trace = nullptr;
        const void* eval = nullptr;
        WorkloadSettings settings; // without what the plan varies itself
        double lifeYears = 0;
        std::optional<double> slo, budget;
        bool exact = false, allRouters = false;
        std::size_t exactBelow = 0, sampleRequests = 0;
        double rate = 0;
        bool operator==(const Key& o) const;
    };
    Key keyNow() const;
    void readFields();
    void request();
    void start();
    void apply(const std::shared_ptr<WorkloadPlan>& p, bool exactAsked);
    void fillTable(const WorkloadPlan& p);

    PlanChart* m_chart;
    const Presets* m_presets;
    QDoubleSpinBox* m_life = nullptr;
    QLineEdit* m_slo = nullptr;
    QLineEdit* m_budget = nullptr;
    QLabel* m_sentence = nullptr;
    QLabel* m_driveLife = nullptr;
    QLabel* m_error = nullptr;
    QTableWidget* m_table = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QLabel* m_status = nullptr;
    QCheckBox* m_exact = nullptr;
    QCheckBox* m_routers = nullptr;
    QLabel* m_mode = nullptr;
    PlanCapacityNote* m_capacityNote = nullptr;
    std::optional<LatencyTarget> m_capacityTarget;
    QTimer* m_debounce = nullptr;
    QUndoStack* m_undo = nullptr;
    bool m_undoing = false; // an undo step sets the box: not a new step
    PlanSampleOptions m_sampleOptions;

    WorkloadPtr m_workload;
    PlanLimits m_limits;
    PlanPtr m_plan;
    std::optional<Key> m_planned;
    std::optional<Key> m_cancelKey;

    BackgroundJob* m_job = nullptr;
};

} // namespace kvbe
