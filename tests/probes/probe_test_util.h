// Helpers shared by the probe tests: scratch folders on the drive, folder listings, and running
// kvbe-cli as a child process.
#pragma once

#include "kvbe/probes/stream.h"

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>
#include <memory>

namespace kvbe::test {

// A fresh folder under the build directory (on a drive, so O_DIRECT works).
inline std::unique_ptr<QTemporaryDir> driveDir() {
    auto dir =
        std::make_unique<QTemporaryDir>(QStringLiteral(KVBE_TEST_SCRATCH "/probe-scratch-XXXXXX"));
    return dir;
}

// Every entry but . and .., hidden ones included: a scratch file must not be among them.
inline QStringList entries(const QString& path) {
    return QDir(path).entryList(QDir::AllEntries | QDir::Hidden | QDir::System |
                                QDir::NoDotAndDotDot);
}

struct CliRun {
    int exitCode = -1;
    QProcess::ExitStatus status = QProcess::CrashExit;
    QByteArray out, err;
};

inline CliRun runCli(const QStringList& args, std::function<void()> childSetup = {}) {
    QProcess p;
#if QT_VERSION >= QT_VERSION_CHECK(6, 0, 0)
    if (childSetup) p.setChildProcessModifier(childSetup);
#endif
    p.start(QStringLiteral(KVBE_CLI_PATH), args);
    CliRun r;
    if (!p.waitForStarted(10000)) return r;
    p.waitForFinished(120000);
    r.exitCode = p.exitCode();
    r.status = p.exitStatus();
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

// Parses a whole JSONL stream; fails the test on a malformed one.
inline std::vector<probes::ProbeEvent> parseStream(const QByteArray& out, QString* problem) {
    probes::ProbeStreamReader reader;
    auto events = reader.feed(std::string_view(out.constData(), static_cast<size_t>(out.size())));
    if (!events) {
        *problem = QString::fromStdString(events.message());
        return {};
    }
    if (auto done = reader.finish(); !done) {
        *problem = QString::fromStdString(done.message());
        return {};
    }
    return *events;
}

} // namespace kvbe::test
