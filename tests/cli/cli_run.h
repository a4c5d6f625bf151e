// Running kvbe-cli (or kvbe) from a test: exit code (-1 for a crash or a hang), stdout and stderr.
#pragma once

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStringList>

#include <algorithm>
#include <cmath>

namespace kvbe::test {

struct CliRun {
    int exitCode = -1;
    QProcess::ExitStatus status = QProcess::CrashExit;
    QByteArray out, err;
};

// Runs `program` (kvbe-cli, or kvbe) with `args`, in `dir` where one is given.
inline CliRun runProgram(const QString& program, const QStringList& args,
                         const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(),
                         int timeoutMs = 120000, const QString& dir = {}) {
    QProcess p;
    p.setProcessEnvironment(env);
    if (!dir.isEmpty()) p.setWorkingDirectory(dir);
    p.start(program, args);
    CliRun r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.status = p.exitStatus();
    if (r.status == QProcess::NormalExit) r.exitCode = p.exitCode();
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

inline CliRun runCli(const QStringList& args,
                     const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(),
                     int timeoutMs = 120000) {
    return runProgram(QStringLiteral(KVBE_CLI_PATH), args, env, timeoutMs);
}

// A run's stdout as a JSON object (empty where it is none).
inline QJsonObject jsonOut(const CliRun& r) {
    return QJsonDocument::fromJson(r.out).object();
}

// Equal within a relative tolerance (absolute below 1).
inline bool closeTo(double a, double b, double rel = 1e-9) {
    return std::abs(a - b) <= rel * std::max(1.0, std::abs(b));
}

} // namespace kvbe::test
