// The Workload view's Plan tab: the limits a configuration must meet (drive life in years, a p99
// TTFT limit, a budget), the Plan chart (plan_chart.h), the recommended configuration with its
// sentence, each of its tiers' drive life, and the front as a table. The plan runs on a worker
// thread while the tab is shown, for the view's latest replay and the limits, a short while after
// the last change (edits in a row start one plan); a change cancels a running plan and starts the
// latest. Progress and Cancel as on the Capacity tab.
#pragma once

#include "kvbe/ui/charts/plan_chart.h"

#include <QWidget>

#include <memory>
#include <optional>

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableWidget;
class QTimer;

namespace kvbe {

class BackgroundJob;

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
    const PlanLimits& limits() const { return m_limits; }
    // Stops a running plan; nothing of it is kept, and it does not start again until the replay
    // or the limits change.
    void cancel();
    bool computing() const;
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
    struct Key {
        const void* trace = nullptr;
        const void* eval = nullptr;
        WorkloadSettings settings; // without what the plan varies itself
        double lifeYears = 0;
        std::optional<double> slo, budget;
        bool operator==(const Key& o) const;
    };
    Key keyNow() const;
    void readFields();
    void request();
    void start();
    void apply(const std::shared_ptr<WorkloadPlan>& p);
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
    QTimer* m_debounce = nullptr;

    WorkloadPtr m_workload;
    PlanLimits m_limits;
    PlanPtr m_plan;
    std::optional<Key> m_planned;
    std::optional<Key> m_cancelKey;

    BackgroundJob* m_job = nullptr;
};

} // namespace kvbe
