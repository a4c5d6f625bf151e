#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>

class QLabel;
class QProgressBar;
class QPushButton;
class QThread;
class QTimer;

namespace kvbe {

// Called first on a worker thread of the window's (a trace read, a replay, a plan, a capacity
// search): lowers its scheduling priority (Linux: nice +10 over the caller's, and SCHED_BATCH,
// both inherited by the threads it starts, such as the plan's pool), so that on a machine whose
// cores the work fills the UI thread still gets a core the moment it has an event to handle.
// Core's threads never change their own priority: kvbe-cli's run at the caller's. Elsewhere it
// does nothing.
inline constexpr int kWorkerNiceIncrement = 10;
void yieldToTheWindow();
// Deletes a worker's QThread once its thread has returned, from the event loop, without making
// the UI thread wait for it: for the handler of its finished() signal, instead of deleteLater().
void deleteWhenReturned(QThread* thread);

// One computation at a time on a worker thread, for a panel that shows its progress bar, a Cancel
// button and a status line (the Capacity chart's search, the Plan section's grid). A run asked
// for while one is under way stops that one and starts when it returns; a stopped run's result is
// never handed back.
class BackgroundJob : public QObject {
    Q_OBJECT
  public:
    // The work reports its fraction done and learns whether to go on (false: stop now).
    using Progress = std::function<bool(double)>;
    using Work = std::function<void(const Progress&)>;

    BackgroundJob(QProgressBar* progress, QPushButton* cancel, QLabel* status, QObject* parent);
    ~BackgroundJob() override; // stops a run and waits for it

    // Runs `work` on the worker with `startText` in the status line, and `done` on this thread
    // when it returns unstopped. Where a run is under way, it is stopped and this one starts
    // when it returns. `liveText`, asked on this thread with each progress update, replaces the
    // status line while the run lasts where it says something (the stage the work is at).
    void run(Work work, std::function<void()> done, const QString& startText,
             std::function<QString()> liveText = {});
    // Stops the run (and forgets a queued one): nothing of it is kept, and cancelled() is
    // emitted when it returns.
    void cancel();
    bool running() const { return m_thread != nullptr; }
    bool pending() const { return static_cast<bool>(m_next); }

  signals:
    void cancelled();

  private:
    struct Run {
        Work work;
        std::function<void()> done;
        QString startText;
        std::function<QString()> liveText;
    };
    void start(Run r);

    QProgressBar* m_progress;
    QPushButton* m_cancel;
    QLabel* m_status;
    QTimer* m_progressTimer;
    QThread* m_thread = nullptr;
    std::shared_ptr<std::atomic<bool>> m_stop;
    std::shared_ptr<std::atomic<double>> m_fraction;
    std::function<QString()> m_liveText;
    std::unique_ptr<Run> m_next;
    bool m_userCancelled = false;
};

} // namespace kvbe
