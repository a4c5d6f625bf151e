#include "kvbe/ui/probes/probe_runner.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include <cstring>

namespace kvbe {

ProbeRunner::ProbeRunner(QObject* parent) : QObject(parent) {
    m_process.setProcessChannelMode(QProcess::SeparateChannels);
    m_hangTimer.setSingleShot(true);
    m_killTimer.setSingleShot(true);
    connect(&m_process, &QProcess::readyReadStandardOutput, this, &ProbeRunner::readOutput);
    connect(&m_process, &QProcess::readyReadStandardError, this, [this] {
        const auto lines = QString::fromUtf8(m_process.readAllStandardError())
                               .split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        if (!lines.isEmpty()) m_stderrTail = lines.back().trimmed();
        m_hangTimer.start(m_hangMs);
    });
    connect(&m_process, &QProcess::finished, this, &ProbeRunner::onFinished);
    connect(&m_process, &QProcess::errorOccurred, this, &ProbeRunner::onStartError);
    connect(&m_hangTimer, &QTimer::timeout, this, [this] {
        if (!isRunning()) return;
        stopProcess(Outcome::Hung,
                    tr("The probe stopped answering: no line for %1 s, so it was stopped.")
                        .arg(m_hangMs / 1000.0, 0, 'g', 3));
    });
    connect(&m_killTimer, &QTimer::timeout, this, [this] { m_process.kill(); });
}

ProbeRunner::~ProbeRunner() {
    if (m_process.state() == QProcess::NotRunning) return;
    // The window is going: no more signals to it, and no process outlives it. SIGTERM first, so
    // a drive probe removes its scratch file; a probe that does not stop in time is killed.
    m_process.disconnect(this);
    m_process.terminate();
    if (!m_process.waitForFinished(m_graceMs)) {
        m_process.kill();
        m_process.waitForFinished(5000);
    }
}

QString ProbeRunner::cliPath() {
    const QString env = qEnvironmentVariable("KVBE_CLI");
    if (!env.isEmpty()) return env;
    return QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("kvbe-cli"));
}

QString ProbeRunner::exitSentence(int code) {
    if (const auto exit = exitCodeFromInt(code)) return QString::fromUtf8(exitCodeSentence(*exit));
    return tr("kvbe-cli exited with the unexpected code %1").arg(code);
}

void ProbeRunner::start(const QStringList& args) {
    if (isRunning()) return;
    m_args = args;
    m_reader = ProbeStreamReader{};
    m_stopReason.reset();
    m_errorLine.clear();
    m_stderrTail.clear();
    m_protocolError.clear();
    m_notes.clear();
    m_fraction = 0;
    m_stage = tr("starting");
    m_outcome = Outcome::Running;
    QStringList full{QStringLiteral("probe")};
    full << args << QStringLiteral("--format") << QStringLiteral("jsonl");
    m_process.start(cliPath(), full, QIODevice::ReadOnly);
    m_pid = m_process.processId();
    m_hangTimer.start(m_hangMs);
}

void ProbeRunner::cancel() {
    if (!isRunning()) return;
    stopProcess(Outcome::Stopped, exitSentence(exitCode(ExitCode::Stopped)));
}

void ProbeRunner::stopProcess(Outcome reason, const QString& message) {
    if (m_stopReason) return;
    m_stopReason = reason;
    m_stopMessage = message;
    m_hangTimer.stop();
    if (m_process.state() == QProcess::NotRunning) {
        finish(reason, message);
        return;
    }
    // SIGTERM lets the probe remove its scratch file; a probe that ignores it is killed.
    m_process.terminate();
    m_killTimer.start(m_graceMs);
}

void ProbeRunner::readOutput() {
    m_hangTimer.start(m_hangMs);
    const QByteArray bytes = m_process.readAllStandardOutput();
    if (m_stopReason) return; // a stopping probe's last words change nothing
    auto events = m_reader.feed(std::string_view(bytes.constData(), size_t(bytes.size())));
    if (!events) {
        m_protocolError = QString::fromStdString(events.message());
        stopProcess(Outcome::Failed,
                    tr("The probe's output was not understood: %1").arg(m_protocolError));
        return;
    }
    for (const auto& e : *events) {
        if (const auto* h = e.header()) {
            emit header(*h);
        } else if (const auto* p = e.progress()) {
            m_fraction = p->fraction;
            m_stage = QString::fromStdString(p->message);
            emit progress(m_fraction, m_stage);
        } else if (const auto* n = e.note()) {
            m_notes << QString::fromStdString(n->message);
            emit note(m_notes.back());
        } else if (const auto* pt = e.point()) {
            emit point(*pt);
        } else if (const auto* r = e.result()) {
            m_fraction = 1;
            emit result(*r);
        } else if (const auto* err = e.error()) {
            m_errorLine = QString::fromStdString(err->message);
        }
    }
}

void ProbeRunner::onStartError(QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart || !isRunning()) return;
    m_hangTimer.stop();
    finish(Outcome::Failed, tr("Could not start %1: %2").arg(cliPath(), m_process.errorString()));
}

void ProbeRunner::onFinished(int code, QProcess::ExitStatus status) {
    if (!isRunning()) return;
    readOutput();
    // After the last read: reading restarts the hang timer.
    m_hangTimer.stop();
    m_killTimer.stop();
    // A probe that finished its stream before the stop reached it has succeeded.
    const bool complete = status == QProcess::NormalExit && code == 0 && m_reader.finished();
    if (m_stopReason && !(complete && m_stopReason == Outcome::Stopped)) {
        finish(*m_stopReason, m_stopMessage);
        return;
    }
    if (status == QProcess::CrashExit) {
        // Qt reports the signal's number as the exit code of a crash.
        finish(Outcome::Crashed, tr("The probe crashed (%1, signal %2); its last stage was: %3")
                                     .arg(QString::fromLocal8Bit(::strsignal(code)))
                                     .arg(code)
                                     .arg(m_stage));
        return;
    }
    const QString detail = !m_errorLine.isEmpty() ? m_errorLine : m_stderrTail;
    if (exitCodeFromInt(code) == ExitCode::Stopped) {
        finish(Outcome::Stopped, exitSentence(code));
        return;
    }
    if (code != 0) {
        finish(Outcome::Failed, detail.isEmpty()
                                    ? exitSentence(code) + QLatin1Char('.')
                                    : exitSentence(code) + QStringLiteral(": ") + detail);
        return;
    }
    if (auto st = m_reader.finish(); !st) {
        finish(Outcome::Failed, tr("The probe exited without finishing its output: %1")
                                    .arg(QString::fromStdString(st.message())));
        return;
    }
    finish(Outcome::Succeeded, exitSentence(exitCode(ExitCode::Ok)) + QLatin1Char('.'));
}

void ProbeRunner::finish(Outcome outcome, const QString& message) {
    m_outcome = outcome;
    m_message = message;
    emit finished(outcome, message);
}

} // namespace kvbe
