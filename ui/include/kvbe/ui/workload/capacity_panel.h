// The Workload view's Capacity tab: the Capacity chart (capacity_chart.h), below it the sentence
// with the servers each rule needs at the trace's own rate and the load each holds, and the
// latency target field ("p99=5s") with the search's progress and Cancel. The searches run on a
// worker thread while the tab is shown, for the view's latest replay and the target; a change of
// either cancels a running search and starts the latest.
#pragma once

#include "kvbe/trace/trace_capacity.h"
#include "kvbe/ui/charts/capacity_chart.h"

#include <QWidget>

#include <memory>
#include <optional>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace kvbe {

class BackgroundJob;

class CapacityPanel : public QWidget {
    Q_OBJECT
  public:
    // Takes the chart into the panel, above the sentence.
    explicit CapacityPanel(SloCapacityChart* chart, QWidget* parent = nullptr);
    ~CapacityPanel() override;

    SloCapacityChart* chart() const { return m_chart; }
    // The replay to search: now if the panel is shown and the replay's trace, scenario or
    // configuration differs from the last search's, else when it is shown.
    void setWorkload(WorkloadPtr w);
    // Sets the field and searches with it; text that does not parse shows its sentence in the
    // panel, keeps the last target and returns false.
    bool setTargetText(const QString& text);
    const LatencyTarget& target() const { return m_target; }
    // Stops a running search; nothing of it is kept, and it does not start again until the
    // replay or the target changes (or Enter in the field).
    void cancel();
    bool computing() const;
    const CapacityPtr& capacity() const { return m_capacity; }

  signals:
    // A search's result is shown (chart and sentence).
    void computed();
    // The latency target changed (setTargetText with a target that parses).
    void targetChanged();
    void cancelled();

  protected:
    void showEvent(QShowEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;

  private:
    // The wrapped lines' height at the panel's width is their minimum, so that the tab asks for
    // it (and scrolls) rather than squeeze the sentence onto the chart's axis.
    void holdTextHeight();
    // What a search depends on; a search for the same key is not run again.
    struct Key {
        const void* trace = nullptr;
        const void* eval = nullptr;
        WorkloadSettings settings; // without what the searches do not read
        LatencyTarget target;
        bool operator==(const Key& o) const;
    };
    Key keyNow() const;
    // Starts a search where the key differs from the last one's and the user did not cancel it.
    void request();
    void start();
    void apply(const std::shared_ptr<WorkloadCapacity>& c);
    void showError(const QString& message);

    SloCapacityChart* m_chart;
    QLabel* m_sentence = nullptr;
    QLabel* m_error = nullptr;
    QLineEdit* m_field = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QLabel* m_status = nullptr;

    WorkloadPtr m_workload;
    LatencyTarget m_target;
    QString m_targetError; // the field's text does not parse: why
    CapacityPtr m_capacity;
    std::optional<Key> m_searched;  // of the search shown or running
    std::optional<Key> m_cancelKey; // the user cancelled this one: not started again by itself

    BackgroundJob* m_job = nullptr;
};

} // namespace kvbe
