// The Probes dock: pick a probe and its settings, run it out of process, and follow every run
// since the window opened, each with its progress, stage sentence, Cancel button and outcome.
#pragma once

#include "kvbe/ui/probes/probe_runner.h"

#include <QWidget>

#include <vector>

class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QVBoxLayout;

namespace kvbe {

class ProbePanel : public QWidget {
    Q_OBJECT
  public:
    explicit ProbePanel(QWidget* parent = nullptr);

    static QStringList probeNames();
    // The form's fields, for tests and for a model that follows the scenario.
    void setProbe(const QString& name);
    QString probe() const;
    void setTarget(const QString& path, bool isFile);
    void setFileSize(const QString& size);
    void setBlockSizes(const QString& list);
    void setQueueDepths(const QString& list);
    void setDuration(const QString& duration);
    void setModel(const QString& model);
    void setLengths(const QString& list);
    void setGpuDevice(int index);
    // probe serving: the server's OpenAI base URL, the served model name, the cached fractions
    // and the folder the calibration and py-kvcache files go to.
    void setEndpoint(const QString& url);
    void setServedModel(const QString& name);
    void setFractions(const QString& list);
    void setOutFolder(const QString& path);
    // The model a drive or GPU probe uses when the Model field is empty (the scenario's).
    void setDefaultModel(const QString& model);
    // The arguments after `kvbe-cli probe` for the form as it stands.
    QStringList arguments() const;

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
    void updateRows();
    void browse();

    QComboBox* m_probe = nullptr;
    QFormLayout* m_form = nullptr;
    QComboBox* m_targetKind = nullptr;
    QLineEdit* m_target = nullptr;
    QWidget* m_targetRow = nullptr;
    QLineEdit* m_fileSize = nullptr;
    QLineEdit* m_blockSizes = nullptr;
    QLineEdit* m_queueDepths = nullptr;
    QLineEdit* m_duration = nullptr;
    QLineEdit* m_sizes = nullptr;
    QLineEdit* m_model = nullptr;
    QLineEdit* m_lengths = nullptr;
    QLineEdit* m_endpoint = nullptr;
    QLineEdit* m_servedModel = nullptr;
    QLineEdit* m_fractions = nullptr;
    QLineEdit* m_outFolder = nullptr;
    QSpinBox* m_device = nullptr;
    QVBoxLayout* m_history = nullptr;
    std::vector<Run> m_runs;
    int m_hangMs = 120000;
    QString m_defaultModel;
};

} // namespace kvbe
