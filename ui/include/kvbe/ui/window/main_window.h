// The explorer's window: the scenario panel, the scenario charts in tabs, the pinned scenarios,
// files (open, save, recent, drag and drop), export and presentation mode.
#pragma once

#include "kvbe/files/file_kind.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/ui/charts/chart_view.h"
#include "kvbe/ui/scenario/explorer.h"
#include "kvbe/ui/widgets/ask.h"

#include <QMainWindow>
#include <QPointF>

#include <map>
#include <optional>
#include <vector>

class QAction;
class QComboBox;
class QDockWidget;
class QListView;
class QMenu;
class QTabWidget;

#include "kvbe/ui/probes/probe_runner.h"

namespace kvbe {

class BreakevenChart;
class FleetPanel;
class FractionChart;
class PinTableView;
class TtftChart;
class ProbePanel;
class ScenarioPanel;
class WorkloadView;

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    explicit MainWindow(Presets presets, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Its parts have object names (explorer, scenarioPanel, chartTabs, <key>Chart, pinView,
    // pinTable, probePanel, fleetPanel, the docks, undo and redo): tests find them with
    // findChild.

    // Any file kvbe reads, as what its content says it is (classifyFile): a scenario or a model's
    // config.json opens, a calibration file goes to the Fleet view, a trace to the Workload
    // view, a probe's output of prefill times onto the TTFT chart.
    Status openFile(const QString& path);
    Status saveScenario(const QString& path);
    // Measured cold-prefill times (probe JSON Lines) overlaid on the TTFT chart.
    Status importMeasured(const QString& path);
    // Calibration files or folders, read on a worker thread into the Fleet view.
    bool importCalibrations(const QStringList& paths);
    // The scenario tier a probe run's bandwidth became ("nvme-read #1, measured"), if any.
    QString measuredTierName(int run) const;
    QStringList recentFiles() const;

    bool pinCurrent(const QString& label);
    // The label "Pin current…" proposes: the scenario's name, or its inputs described.
    QString proposedPinLabel() const;

    // Questions to the user (unsaved changes, adopting a fit) go through this; tests answer it.
    void setAsk(AskFn ask);
    QMessageBox::StandardButton ask(const Question& q);
    // The scenario differs from the file it came from (or the default, for a new one).
    bool hasUnsavedChanges() const;
    // File > Reset to the default scenario, asking first where there are unsaved changes.
    bool resetToDefault();
    // F5: the chart alone, full screen; Esc (or F5 again) restores the window as it was.
    void setPresentation(bool on);
    void setDark(bool on);
    // The default layout for a screen's available geometry (QScreen::availableGeometry): a
    // window that fits it, the chart taking most of the height, the Probes and Fleet docks
    // collapsed to their tabs until used. Applied where no saved geometry fits the screen.
    void fitToScreen(const QRect& available);
    // The Probes and Fleet docks shown as their title and tabs only (their contents hidden).
    void setBottomDocksCollapsed(bool collapsed);
    bool presentation() const { return m_style.presentation; }

    // Recomputes and draws every chart now, without waiting for the frame timer. (Live updates
    // redraw only the visible chart; the others catch up when their tab is shown.)
    void refreshNow();
    // Shows the Workload tab and reads a request trace there (off the UI thread); false while
    // another trace is still being read.
    bool openTrace(const QString& path);
    // The visible chart as an image on the clipboard.
    void copyToClipboard();
    // File > Export report…: the sign-off report of what is open (the scenario, the Fleet's
    // imported files, the Workload tab's trace and the Plan section's plan) as PDF or HTML
    // (kvbe/ui/report/report_writer.h), written to `path` without asking.
    Status exportReportTo(const QString& path);

  protected:
    void showEvent(QShowEvent* e) override;
    void closeEvent(QCloseEvent* e) override;
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

  private:
    ChartView* currentChart() const;
    void buildActions();
    // main_window_layout.cpp: collapsible bottom docks, the screen's default layout.
    void buildDockTitles();
    // The window's geometry for a screen's available geometry, its frame included.
    void placeOnScreen(const QRect& available);
    // main_window_measured.cpp: the Probes and Fleet docks and what streams from them.
    void buildMeasured();
    void connectRun(int index, ProbeRunner* runner, const QString& probe);
    void applyBandwidth(int run, const QString& probe, double gbps);
    void showProvisional(int run);
    void finishRun(int run, ProbeRunner::Outcome outcome);
    void addMeasuredTier(int run, const QString& name);
    void applyPrefill(int run, const QString& probe, double tokens, double seconds);
    void refreshCharts(bool all);
    void askPin();
    void reportError(const QString& message);
    void showHover(const QString& text);
    // main_window_files.cpp: the scenario's file, opening files by what they are, recent files,
    // drops, and the session kept between runs.
    // Dropped files and folders: calibrations and folders imported together, the rest opened.
    void sniffAndOpen(const QStringList& paths);
    Status openAs(const QString& path, const FileClass& kind);
    void open();
    void save(bool as);
    void restoreSettings();
    void saveSettings() const;
    void addRecent(const QString& path);
    void fillRecentMenu();
    void updateTitle();
    // Asks before unsaved changes are dropped: false when the user keeps them (Cancel).
    bool maybeKeepChanges(const QString& doing);
    // Starts over with a scenario (open, reset, built-in): no undo, a new saved baseline.
    void startOver(const Scenario& s, const QString& file);
    // Whether a scenario's name is a user's: not a description of its inputs, not a built-in's.
    bool isUserName(const Scenario& s);
    // main_window_export.cpp: the visible chart or the pin table to a file or the clipboard.
    void exportImage(const QString& format);
    void exportCsv();
    void exportReport(); // asks for the file, then exportReportTo
    // The Pin table tab as CSV or an image ("csv", "png", "svg", "pdf"), asking for the file.
    void exportPinTable(const QString& format);
    // The PNG size dialog of the exports; false when cancelled.
    bool askPngSize(QSize& size, int& dpi);

    Explorer m_explorer;
    ScenarioPanel* m_panel = nullptr;
    QDockWidget* m_panelDock = nullptr;
    QDockWidget* m_pinDock = nullptr;
    QTabWidget* m_tabs = nullptr;
    std::vector<ChartView*> m_charts; // the tabs' charts, the chart table's scenario charts
    BreakevenChart* m_breakeven = nullptr;
    FractionChart* m_fraction = nullptr;
    TtftChart* m_ttft = nullptr;
    std::vector<bool> m_stale; // per chart: results arrived while its tab was hidden
    QListView* m_pinView = nullptr;
    QMenu* m_recentMenu = nullptr;
    QAction* m_presentationAction = nullptr;
    QAction* m_darkAction = nullptr;
    QAction* m_logYAction = nullptr;
    QMenu* m_fileMenu = nullptr;
    QAction* m_saveAction = nullptr; // File > Save scenario: the imports go before it
    QMenu* m_viewMenu = nullptr;
    ProbePanel* m_probePanel = nullptr;
    FleetPanel* m_fleetPanel = nullptr;
    QDockWidget* m_probeDock = nullptr;
    QDockWidget* m_fleetDock = nullptr;
    WorkloadView* m_workload = nullptr;
    PinTableView* m_pinTable = nullptr; // the Pin table tab, after Workload
    // Probe runs of this window: their best bandwidth so far, and whether it became a tier.
    struct LiveRun {
        QString probe;
        QString name; // the tier it becomes
        double best = 0;
        std::optional<double> latencyMs; // a read's median at queue depth 1: its t_fixed
        double fraction = 0;
        bool inScenario = false;
        QString why;   // the sentence under its results table
        QString model; // the model it ran (--model), where it names one
    };
    std::map<int, LiveRun> m_liveRuns;
    std::vector<QPointF> m_streamedPrefill; // (tokens, seconds)
    QString m_streamedModel;                // the model they were measured with
    QString m_file;
    QString m_hoverMessage; // what the status bar shows of a chart's hover, while it does
    Scenario m_saved;       // the baseline of the unsaved marker
    AskFn m_ask;
    QAction* m_undoAction = nullptr;
    QAction* m_redoAction = nullptr;
    ChartStyle m_style;
    bool m_bottomCollapsed = false;
    QRect m_fittedTo;             // the available geometry fitToScreen was given
    bool m_layoutSettled = false; // after the first show: dock visibility changes are the user's
    // Rows of chart-specific controls (ChartView::createControls), hidden in presentation mode.
    std::vector<QWidget*> m_chartControls;
    QAction* m_leavePresentationAction = nullptr;
    // What presentation mode hid, to put back exactly.
    QByteArray m_stateBeforePresentation;
    QByteArray m_geometryBeforePresentation;
    QRect m_rectBeforePresentation;
    Qt::WindowStates m_windowStateBeforePresentation;
    bool m_menuBarBeforePresentation = true;
    bool m_statusBarBeforePresentation = true;
};

} // namespace kvbe
