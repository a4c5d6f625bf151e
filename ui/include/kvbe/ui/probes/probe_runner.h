// One probe run: `kvbe-cli probe …` in its own process (docs/architecture.md, "Probes run out of
// process"), its JSON Lines read as they arrive and turned into signals. A stop is "stopped",
// never a failure; a crash, a hang and each exit code get their own sentence. Destroying the
// runner kills the process and waits for it, so closing the window leaves nothing behind.
#pragma once

#include "kvbe/probe/probe_protocol.h"

#include <QObject>
#include <QProcess>
#include <QTimer>

#include <optional>

namespace kvbe {

class ProbeRunner : public QObject {
    Q_OBJECT
  public:
    enum class Outcome { NotStarted, Running, Succeeded, Failed, Stopped, Crashed, Hung };
    Q_ENUM(Outcome)

    explicit ProbeRunner(QObject* parent = nullptr);
    ~ProbeRunner() override;

    // kvbe-cli next to this executable, or $KVBE_CLI when set (tests point it at a fake).
    static QString cliPath();
    // The sentence for an exit code of kvbe-cli: core's (exitCodeSentence in probe_protocol.h),
    // or one naming a code kvbe-cli does not use.
    static QString exitSentence(int code);

    // A probe that sends no line for this long is stopped and reported as hung.
    void setHangTimeout(int ms) { m_hangMs = ms; }
    // How long a cancelled probe gets to stop on SIGTERM before it is killed.
    void setKillGrace(int ms) { m_graceMs = ms; }

    // Starts `kvbe-cli probe <args> --format jsonl`; args start with the probe's name.
    void start(const QStringList& args);
    // Terminate, then kill after the grace period; reported as stopped.
    void cancel();

    bool isRunning() const { return m_outcome == Outcome::Running; }
    Outcome outcome() const { return m_outcome; }
    QString message() const { return m_message; }
    qint64 pid() const { return m_pid; }
    QProcess::ProcessState processState() const { return m_process.state(); }
    QStringList arguments() const { return m_args; }
    double fraction() const { return m_fraction; }
    QString stage() const { return m_stage; }
    // The probe's notes so far (a fallback it took, a warning), kept after it ends.
    QStringList notes() const { return m_notes; }

  signals:
    void header(const kvbe::ProbeHeader& header);
    void progress(double fraction, const QString& stage);
    void note(const QString& message);
    void point(const kvbe::ProbePoint& point);
    void result(const kvbe::ProbeResult& result);
    void finished(kvbe::ProbeRunner::Outcome outcome, const QString& message);

  private:
    void readOutput();
    void onFinished(int code, QProcess::ExitStatus status);
    void onStartError(QProcess::ProcessError e);
    void stopProcess(Outcome reason, const QString& message);
    void finish(Outcome outcome, const QString& message);

    QProcess m_process;
    ProbeStreamReader m_reader;
    QTimer m_hangTimer;
    QTimer m_killTimer;
    QStringList m_args;
    int m_hangMs = 120000;
    int m_graceMs = 3000;
    qint64 m_pid = 0;
    Outcome m_outcome = Outcome::NotStarted;
    // Set when we stop the process ourselves: its exit then reports this, not a crash.
    std::optional<Outcome> m_stopReason;
    QString m_stopMessage;
    QString m_message;
    QString m_errorLine;     // the probe's own error line, the best sentence there is
    QString m_stderrTail;    // the last stderr line, for usage errors that come before any JSON
    QString m_protocolError; // a line the reader refused
    double m_fraction = 0;
    QString m_stage;
    QStringList m_notes;
};

} // namespace kvbe
