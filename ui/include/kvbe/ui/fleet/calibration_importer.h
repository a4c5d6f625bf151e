// Reading calibration files off the UI thread: a worker thread parses them one by one (a node
// file can be tens of megabytes) and prepares what the window draws, so the window only moves
// finished results in.
#pragma once

#include "kvbe/calibration/calibration.h"

#include <QObject>
#include <QPointF>
#include <QStringList>

#include <atomic>
#include <memory>
#include <vector>

class QThread;

namespace kvbe {

// One imported file and its cold-prefill curve, thinned for drawing.
struct ImportedCalibration {
    Calibration calibration;
    std::vector<QPointF> prefillCurve; // (tokens, seconds), sorted, at most ~1000 points
    // Hits and golden points (tokens, seconds), drawn as points; at most ~4000 (evenly strided).
    std::vector<QPointF> hitPoints;
};

class CalibrationImporter : public QObject {
    Q_OBJECT
  public:
    explicit CalibrationImporter(QObject* parent = nullptr);
    // Waits for the worker (it stops between files).
    ~CalibrationImporter() override;

    // The files to read: files as given, and the calibration files directly inside folders,
    // sorted, by core's rule (filesToRead), the one readCalibrations and kvbe-cli follow; a
    // folder without any is an error.
    struct Files {
        QStringList files;
        QStringList errors;
    };
    static Files expand(const QStringList& paths);

    // One file, read and prepared for drawing on this thread (what the worker does for each).
    static Result<ImportedCalibration> read(const QString& path);

    bool isRunning() const { return m_thread != nullptr; }
    // Starts reading; false while a previous import runs.
    bool start(const QStringList& paths);

  signals:
    void progress(int done, int total, const QString& file);
    void finished(std::shared_ptr<std::vector<kvbe::ImportedCalibration>> imported,
                  const QStringList& errors);

  private:
    QThread* m_thread = nullptr;
    std::atomic<bool> m_stop{false};
};

} // namespace kvbe
