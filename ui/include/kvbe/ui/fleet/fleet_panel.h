// The Fleet dock: imported calibration files (ours, py-kvcache, pareto CSV, fio, nvbandwidth) as
// a table of nodes, their measured curves over the TTFT chart, a visible warning when a file was
// made for another model or KV dtype, and fitting the selected file to the scenario: fitted
// against nominal curves, residuals, adopting the fitted values, and the py-kvcache export.
#pragma once

#include "kvbe/calibration/fit.h"
#include "kvbe/ui/charts/chart_catalog.h"
#include "kvbe/ui/fleet/calibration_importer.h"
#include "kvbe/ui/fleet/fleet_model.h"
#include "kvbe/ui/widgets/ask.h"

#include <QWidget>

#include <optional>

class QHBoxLayout;
class QLabel;
class QListWidget;
class QToolButton;
class QProgressBar;
class QPushButton;
class QSplitter;
class QTableView;
class QTableWidget;
class QTimer;

namespace kvbe {

class Explorer;

class FleetPanel : public QWidget {
    Q_OBJECT
  public:
    explicit FleetPanel(Explorer* explorer, QWidget* parent = nullptr);

    FleetModel* model() { return &m_model; }
    QTableView* table() const { return m_table; }
    bool importing() const { return m_importer.isRunning(); }
    QString warningText() const;
    QStringList importErrors() const { return m_errors; }

    // Questions (adopt these values?) go through this; the window passes its own.
    void setAsk(std::function<QMessageBox::StandardButton(const Question&)> ask) {
        m_ask = std::move(ask);
    }

    // Files or folders; read on a worker thread. False while another import runs.
    bool importPaths(const QStringList& paths);
    void selectRow(int row);
    int selectedRow() const;

    // Fits the selected row's calibration to the current scenario with core's fitter.
    Status fitSelected();
    // Fits one row of the table (fitSelected's, and again when the scenario changes).
    Status fitRow(int row);
    const std::optional<FitResult>& lastFit() const { return m_fit; }
    QTableWidget* residualTable() const { return m_residuals; }
    // The scenario with the last fit's values (adoptFit), made current.
    Status adoptFitted();
    // py-kvcache v1 for the scenario, or for the selected calibration, written atomically.
    Status exportPyKvcache(const QString& path, bool fromCalibration);

    // What the imported files and the last fit draw on the charts (fleet_drawing.h): what the
    // window draws on every overlaysChanged.
    ImportDrawing drawing() const;

  signals:
    void overlaysChanged();
    void imported(int files, int errors);
    void message(const QString& text);

  private:
    // The parts of the panel, each made, named and connected by one builder.
    QHBoxLayout* buildButtons();
    QWidget* buildWarnings();
    QSplitter* buildTableAndFit();
    void connectImporter();
    // Clear: every imported file, the fit and its residuals.
    void clearAll();
    void clearFit(); // no fit: its values, curves, residuals and sentence gone
    void updateMismatches();
    void updateButtons();
    void showFit();
    // The evaluation a calibration is fitted against: the scenario, with the model the file
    // was measured with (refused with a sentence where kvbe cannot read it). `said`: which.
    Result<Evaluation> fitBasis(const Calibration& c, QString& said);
    // "utilisation: 50 % → 44.6 %", per changed field.
    static QStringList adoptChanges(const Scenario& from, const Scenario& to);

    Explorer* m_explorer;
    std::function<QMessageBox::StandardButton(const Question&)> m_ask;
    FleetModel m_model;
    CalibrationImporter m_importer;
    QTableView* m_table = nullptr;
    // The warnings, folded to one line ("⚠ 3 warnings") over a list, one per row.
    QWidget* m_warning = nullptr;
    QToolButton* m_warningToggle = nullptr;
    QListWidget* m_warningList = nullptr;
    QLabel* m_fitSummary = nullptr;
    static QString kNoFit() { return tr("Select a file and fit it to the scenario."); }
    QProgressBar* m_progress = nullptr;
    QTableWidget* m_residuals = nullptr;
    QPushButton* m_fitButton = nullptr;
    QPushButton* m_adoptButton = nullptr;
    QStringList m_errors;
    std::optional<FitResult> m_fit;
    int m_fitRow = -1;
    Scenario m_fitScenario; // the scenario the fit was made against
    QTimer* m_refit = nullptr;
    QString m_fitAgainst;   // the sentence naming the model the fit was made with
    std::string m_fitModel; // that model's id
    // The cost model with the fitted utilisation, and the fitted tiers: drawn at the scenario's
    // current lengths and cached fraction, so they follow the sliders.
    std::optional<CostModel> m_fitCost;
    std::vector<TierPath> m_fitTiers;
};

} // namespace kvbe
