// The Probes dock: pick a probe and its settings, run it out of process, and follow every run
// since the window opened, each with its progress, stage sentence, Cancel button and outcome.
// The probes and their settings are the probe catalog's (kvbe/probe/probe_catalog.h): one form
// per probe (ProbeForm), so the dock runs any probe the catalog has without code of its own.
#pragma once

#include "kvbe/ui/probes/probe_runner.h"

#include <QWidget>

#include <vector>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QScrollArea;
class QStackedWidget;
class QTableWidget;
class QVBoxLayout;

namespace kvbe {

class ProbeForm;

class ProbePanel : public QWidget {
    Q_OBJECT
  public:
    explicit ProbePanel(QWidget* parent = nullptr);

    // The keys of every probe the dock offers: the catalog's, in its order.
    static QStringList probeNames();
    // The probe whose form shows (false for a key the catalog does not have), and its key.
    bool setProbe(const QString& key);
    QString probe() const;
    // Sets a field of the shown probe's form by its flag ("--block-sizes", "--dir"); false for
    // an option the form does not show (ProbeForm::setValue).
    bool setOption(const QString& flag, const QString& value);
    // The model a probe's Model field runs with when empty (the scenario's).
    void setDefaultModel(const QString& model);
    // The GPU preset a probe that asks for one (the serving probe's --gpu) runs with: the
    // scenario's, which the dock passes on.
    void setDefaultGpu(const QString& gpu);
    // The arguments after `kvbe-cli probe` for the form as it stands.
    QStringList arguments() const;
    // The model whose geometry a run of the form measures, as the form passes it: its Model
    // field (the serving probe's --config, a GPU probe's --model; the scenario's model where the
    // field is left empty), else --model (the serving probe's served name, without --config).
    QString runModel() const;

    // Starts a run of the form's probe; its row joins the history at the top.
    ProbeRunner* run();
    int runCount() const { return int(m_runs.size()); }
    ProbeRunner* runner(int i) const { return m_runs[size_t(i)].runner; }
    QString runStatus(int i) const;
    // The run's notes as they arrive, one per line under its status (objectName runNotes<i>);
    // they stay whatever the run's outcome.
    QString runNotes(int i) const;
    bool anyRunning() const;
    // A stopped or failed run with a partial result: its row says it was not used and offers
    // "Keep as a tier" (objectName keepRun<i>), which emits keepRequested.
    void offerKeep(int i, const QString& sentence);
    // A serving run's TTFT table (runTtft<i>) and, once it ends, its fit (runFit<i>):
    // TtftFitView.
    // The run's results table (objectName runResults<i>): one row per bandwidth point the
    // probe sent (block, QD, GB/s, IOPS, p50, p99). markTierRow marks the row whose rate the
    // scenario's tier has (none: gbps ≤ 0) and shows `why` under it (runTierWhy<i>).
    void markTierRow(int i, double gbps, const QString& why = QString());
    void setHangTimeout(int ms) { m_hangMs = ms; }

  signals:
    // A new run, before it starts: connect to its signals here.
    void runStarted(int index, kvbe::ProbeRunner* runner, const QString& probe);
    // The user keeps a stopped or failed run's partial result as a tier.
    void keepRequested(int index);
    // "Use selected row as the tier" (useRow<i>): the user picks another setting's rate.
    void tierRowChosen(int index, double gbps, const QString& setting);

  private:
    struct Run {
        ProbeRunner* runner = nullptr;
        QProgressBar* bar = nullptr;
        QLabel* status = nullptr;
        QLabel* notes = nullptr;
        QPushButton* cancel = nullptr;
        QPushButton* keep = nullptr;
        QTableWidget* results = nullptr;
        QLabel* why = nullptr;
        QPushButton* useRow = nullptr;
    };
    void addResultRow(Run& run, const ProbePoint& point);
    void showProbe();
    ProbeForm* form() const;

    QComboBox* m_probe = nullptr;
    QLabel* m_about = nullptr;
    QStackedWidget* m_forms = nullptr;
    QVBoxLayout* m_history = nullptr;
    QScrollArea* m_historyScroll = nullptr;
    std::vector<Run> m_runs;
    int m_hangMs = 120000;
};

} // namespace kvbe
