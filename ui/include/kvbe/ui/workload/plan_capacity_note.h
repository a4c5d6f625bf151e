// Under the Plan's sentence: where the plan and the Capacity tab count servers differently, a
// sentence that says so and a button that plans at the Capacity tab's p99 target. A plan with no
// p99 limit values the prefill time it saves; the Capacity tab counts whole servers at its
// target, so the two can tell different stories (a purchase that pays back in GPU-hours while
// no server is saved). Hidden where they agree.
#pragma once

#include "kvbe/trace/trace_capacity.h"

#include <QWidget>

#include <optional>

class QLabel;
class QPushButton;

namespace kvbe {

class PlanCapacityNote : public QWidget {
    Q_OBJECT
  public:
    explicit PlanCapacityNote(QWidget* parent = nullptr);

    // The plan's p99 limit (none: no limit) and the Capacity tab's target (none: no tab).
    void setLimits(std::optional<double> planP99S, std::optional<LatencyTarget> capacity);
    // The sentence for them; empty where they count alike.
    static QString text(std::optional<double> planP99S,
                        const std::optional<LatencyTarget>& capacity);

  signals:
    // The button: plan at this p99 limit (the Plan field's text, "5s").
    void useLimit(const QString& sloText);

  private:
    QLabel* m_text = nullptr;
    QPushButton* m_use = nullptr;
    QString m_limit;
};

} // namespace kvbe
