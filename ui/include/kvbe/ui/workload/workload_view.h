// The explorer's Workload view: open a request trace (read off the UI thread, with
// progress and Cancel), replay it through the scenario's tiers with the capacities, policy and
// admission rule set here, and answer in one sentence and three charts. Replays run on a worker
// thread, the latest request winning; they follow the scenario as the main window edits it.
#pragma once

#include "kvbe/ui/results/workload_result.h"
#include "kvbe/ui/scenario/explorer.h"

#include <QPointer>
#include <QStringList>
#include <QWidget>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

class QCheckBox;
class QToolButton;
class QComboBox;
class QGridLayout;
class QLabel;
class QProgressBar;
class QPushButton;
class QSlider;
class QSpinBox;
class QTabWidget;
class QThread;
class QTimer;

namespace kvbe {

class CapacityPanel;
class ChartView;
class WorkloadChart;

// The TTFT tab: the distribution with the links over time and the saturation sentence beside it,
// or under it where the tab is tall enough (workload_view.cpp).
class TtftLinksTab : public QWidget {
    Q_OBJECT
  public:
    TtftLinksTab(ChartView* ttft, QWidget* parent);
    // Adds the links chart and returns the label the sentence goes in.
    QLabel* addLinks(ChartView* links);

  protected:
    void resizeEvent(QResizeEvent* e) override;

  private:
    ChartView* m_ttft;
    QWidget* m_side = nullptr;
    class QBoxLayout* m_box = nullptr;
};

class WorkloadView : public QWidget {
    Q_OBJECT
  public:
    explicit WorkloadView(Explorer* explorer, QWidget* parent = nullptr);
    ~WorkloadView() override;

    // Starts reading a trace on a worker thread; false while another read runs. The trace shown
    // until then stays until the new one has been read whole.
    bool openTrace(const QString& path);
    // Asks for a file, then openTrace().
    void chooseTraceFile();
    // Stops a running read: nothing of it is kept.
    void cancelLoad();
    bool loading() const { return m_loadThread != nullptr; }
    // A replay runs, or its result is still being handed to the charts.
    bool replaying() const { return m_replayThread != nullptr || !m_applySteps.empty(); }

    const WorkloadPtr& result() const { return m_result; }
    const QString& traceFile() const { return m_file; }
    std::shared_ptr<const Trace> trace() const { return m_trace; }
    WorkloadSettings settings() const { return m_settings; }
    // Sets the controls and replays.
    void setSettings(const WorkloadSettings& s);
    // The Live tab's live replay folder and engine (WorkloadSettings::liveDir, engine); replays.
    void setLiveReplay(const QString& dir, const QString& engine, bool asRouted = false);
    std::vector<WorkloadChart*> charts() const { return m_charts; }
    // The Capacity tab: its chart, target field and sentence.
    CapacityPanel* capacityPanel() const { return m_capacity; }
    // The chart on the view's visible tab (the window's Export menu and clipboard act on it).
    WorkloadChart* visibleChart() const;
    // Replays of this long or shorter follow a slider as it moves; longer ones on release.
    static constexpr double kLiveSeconds = 0.1;
    // The least height of each chart (titles, a plot to hover, the axis, the legend); where the
    // tab is shorter it scrolls.
    static constexpr int kMinChartHeight = 330;
    bool live() const { return m_lastSeconds <= kLiveSeconds; }

  signals:
    void traceLoaded(const QString& path);
    void loadFailed(const QString& message);
    void loadCancelled();
    // A replay's result is shown (summary and charts).
    void replayed();

  private:
    // The capacity rows and the replay's rules, side by side where the tab is wide enough.
    QWidget* buildControls();
    void layRules(bool besideTiers);
    void syncTierRows();
    void syncControls();
    void requestReplay();
    void startReplay();
    void apply(WorkloadPtr w);
    void applyStep(quint64 generation);
    void finishApply(); // the last step: the capacity and plan panels, the rows, replayed()
    void showError(const QString& message);
    void onCapacityMoved(int row, int step);
    void exportVisible(bool csv);
    QString tierValueText(double bytes) const;
    std::optional<double> rowBytes(std::size_t row) const;
    QString rowText(std::size_t row) const;
    void showRow(std::size_t row);

    Explorer* m_explorer;
    std::vector<WorkloadChart*> m_charts;
    QTabWidget* m_chartTabs = nullptr;
    CapacityPanel* m_capacity = nullptr;
    QLabel* m_fileLabel = nullptr;
    QLabel* m_error = nullptr;
    QLabel* m_summary = nullptr;
    QLabel* m_gpuAdvice = nullptr;  // links to the tensor-parallel sizes that hold the weights
    QLabel* m_saturation = nullptr; // whether a tier is the bottleneck
    QLabel* m_timing = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QGridLayout* m_tierGrid = nullptr;
    struct TierRow {
        QLabel* name = nullptr;
        QSlider* slider = nullptr;
        QLabel* value = nullptr;
        QCheckBox* pooled = nullptr; // offload tiers: one pool for the fleet, else on each node
        QToolButton* automatic = nullptr; // the GPU's: back to the default HBM for KV
    };
    std::vector<TierRow> m_rows; // row 0: the GPU, row k: the scenario's tier k-1
    QStringList m_tierNames;
    QGridLayout* m_rulesGrid = nullptr;
    std::vector<std::pair<QWidget*, QWidget*>> m_ruleCells; // a label and its field, in order
    QComboBox* m_policy = nullptr;
    QComboBox* m_placement = nullptr;
    QComboBox* m_admission = nullptr;
    QComboBox* m_sweepTier = nullptr;
    QSpinBox* m_instances = nullptr;
    QComboBox* m_router = nullptr;
    QSpinBox* m_nodeServers = nullptr;
    QSpinBox* m_storeAfter = nullptr;
    QCheckBox* m_writeQueue = nullptr;
    QCheckBox* m_sharedLink = nullptr;

    WorkloadSettings m_settings;
    std::shared_ptr<const Trace> m_trace;
    QString m_file;
    WorkloadPtr m_result;

    QThread* m_loadThread = nullptr;
    std::shared_ptr<std::atomic<bool>> m_loadCancel;
    std::shared_ptr<std::atomic<double>> m_loadFraction;
    QTimer* m_progressTimer = nullptr;

    QThread* m_replayThread = nullptr;
    std::shared_ptr<std::atomic<bool>> m_replayCancel;
    bool m_replayPending = false;
    quint64 m_generation = 0;
    double m_lastSeconds = 0;                       // the last replay and sweep, on the worker
    std::deque<std::function<void()>> m_applySteps; // a result's hand-over, one step a turn
    quint64 m_applyGeneration = 0;
};

} // namespace kvbe
