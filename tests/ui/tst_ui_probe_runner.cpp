// ProbeRunner against the fake probe: each way a probe can end is reported as what it was, and
// no process is left running afterwards.
#include "kvbe/ui/probes/probe_runner.h"

#include <QSignalSpy>
#include <QTest>

#include <cerrno>
#include <csignal>
#include <memory>

using namespace kvbe;

namespace {

// True when no process with this pid exists any more (QProcess has reaped it).
bool gone(qint64 pid) {
    return pid > 0 && ::kill(pid_t(pid), 0) == -1 && errno == ESRCH;
}

struct Run {
    std::unique_ptr<ProbeRunner> runner = std::make_unique<ProbeRunner>();
    std::vector<ProbePoint> points;
    std::vector<double> fractions;
    QStringList notes;
    int headers = 0, results = 0, finishes = 0;
    Run() {
        QObject::connect(runner.get(), &ProbeRunner::point,
                         [this](const ProbePoint& p) { points.push_back(p); });
        QObject::connect(runner.get(), &ProbeRunner::progress,
                         [this](double f, const QString&) { fractions.push_back(f); });
        QObject::connect(runner.get(), &ProbeRunner::note,
                         [this](const QString& n) { notes << n; });
        QObject::connect(runner.get(), &ProbeRunner::header,
                         [this](const ProbeHeader&) { ++headers; });
        QObject::connect(runner.get(), &ProbeRunner::result,
                         [this](const ProbeResult&) { ++results; });
        QObject::connect(runner.get(), &ProbeRunner::finished,
                         [this](ProbeRunner::Outcome, const QString&) { ++finishes; });
    }
    bool waitDone(int ms = 10000) {
        return QTest::qWaitFor([this] { return !runner->isRunning(); }, ms);
    }
};

} // namespace

class TestProbeRunner : public QObject {
    Q_OBJECT
  private slots:
    void init() {
        qputenv("KVBE_CLI", KVBE_FAKE_PROBE_PATH);
        qunsetenv("KVBE_FAKE_PROBE");
        qunsetenv("KVBE_FAKE_PROBE_DELAY_MS");
    }

    void cliPathFromEnvironment() {
        QCOMPARE(ProbeRunner::cliPath(), QStringLiteral(KVBE_FAKE_PROBE_PATH));
        qunsetenv("KVBE_CLI");
        QVERIFY(ProbeRunner::cliPath().endsWith(QStringLiteral("/kvbe-cli")));
    }

    void streamsLinesAndSucceeds() {
        Run r;
        r.runner->setHangTimeout(200);
        r.runner->start(
            {QStringLiteral("nvme-read"), QStringLiteral("--dir"), QStringLiteral("/tmp")});
        QVERIFY(r.waitDone());
        QTest::qWait(400); // past the hang timeout: a finished run stays finished
        QCOMPARE(r.runner->outcome(), ProbeRunner::Outcome::Succeeded);
        QCOMPARE(r.runner->message(), QStringLiteral("The probe finished."));
        QCOMPARE(r.headers, 1);
        QCOMPARE(r.results, 1);
        QCOMPARE(r.finishes, 1);
        QCOMPARE(r.points.size(), size_t(4));
        QCOMPARE(r.points[2].series, std::string("read_GBps"));
        QCOMPARE(r.points[2].x, 4194304.0);
        QCOMPARE(r.points[2].y, 6.5);
        QCOMPARE(r.fractions.size(), size_t(4));
        QCOMPARE(r.runner->fraction(), 1.0);
        // The probe's notes, each as it came and all of them kept after the run.
        QCOMPARE(r.notes.size(), 2);
        QCOMPARE(r.notes.front(), QStringLiteral("engine: psync: asked for with --engine psync"));
        QVERIFY(r.notes.back().startsWith(QStringLiteral("buffers not registered")));
        QCOMPARE(r.runner->notes(), r.notes);
        QVERIFY(gone(r.runner->pid()));
    }

    void exitCodesEachHaveTheirSentence_data() {
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("sentence");
        QTest::addColumn<int>("outcome");
        const int failed = int(ProbeRunner::Outcome::Failed);
        QTest::newRow("bad input")
            << 1 << QStringLiteral("The probe refused its settings") << failed;
        QTest::newRow("usage") << 2
                               << QStringLiteral("kvbe-cli did not understand the probe's options")
                               << failed;
        QTest::newRow("cannot run")
            << 3 << QStringLiteral("This machine or target cannot run the probe") << failed;
        QTest::newRow("probe failed")
            << 4 << QStringLiteral("The probe failed while measuring") << failed;
        QTest::newRow("other") << 7 << QStringLiteral("kvbe-cli exited with the unexpected code 7")
                               << failed;
        QTest::newRow("interrupted")
            << 130 << QStringLiteral("Stopped") << int(ProbeRunner::Outcome::Stopped);
    }
    void exitCodesEachHaveTheirSentence() {
        QFETCH(int, code);
        QFETCH(QString, sentence);
        QFETCH(int, outcome);
        qputenv("KVBE_FAKE_PROBE", QByteArray("exit:") + QByteArray::number(code));
        Run r;
        r.runner->start({QStringLiteral("nvme-read")});
        QVERIFY(r.waitDone());
        QCOMPARE(int(r.runner->outcome()), outcome);
        QVERIFY2(r.runner->message().startsWith(sentence), qPrintable(r.runner->message()));
        if (outcome == int(ProbeRunner::Outcome::Failed))
            QVERIFY(r.runner->message().endsWith(
                QStringLiteral(": O_DIRECT is not supported on tmpfs")));
        QCOMPARE(ProbeRunner::exitSentence(code), sentence);
        QVERIFY(gone(r.runner->pid()));
    }

    void crashIsReportedAsACrash() {
        qputenv("KVBE_FAKE_PROBE", "crash");
        Run r;
        r.runner->start({QStringLiteral("nvme-read")});
        QVERIFY(r.waitDone());
        QCOMPARE(r.runner->outcome(), ProbeRunner::Outcome::Crashed);
        QVERIFY2(r.runner->message().contains(QStringLiteral("signal %1").arg(SIGABRT)),
                 qPrintable(r.runner->message()));
        QVERIFY(r.runner->message().contains(QStringLiteral("warming up")));
        QVERIFY(gone(r.runner->pid()));
    }

    void hangIsStoppedAndReported() {
        qputenv("KVBE_FAKE_PROBE", "hang");
        Run r;
        r.runner->setHangTimeout(300);
        r.runner->start({QStringLiteral("nvme-read")});
        QVERIFY(r.waitDone());
        QCOMPARE(r.runner->outcome(), ProbeRunner::Outcome::Hung);
        QVERIFY(r.runner->message().contains(QStringLiteral("stopped answering")));
        QCOMPARE(r.headers, 1);
        QVERIFY(gone(r.runner->pid()));
        QCOMPARE(r.runner->processState(), QProcess::NotRunning);
    }

    void cancelIsAStopNotAFailure() {
        qputenv("KVBE_FAKE_PROBE_DELAY_MS", "200");
        Run r;
        r.runner->start({QStringLiteral("nvme-read")});
        QVERIFY(QTest::qWaitFor([&] { return !r.points.empty(); }, 5000));
        r.runner->cancel();
        QVERIFY(r.waitDone());
        QCOMPARE(r.runner->outcome(), ProbeRunner::Outcome::Stopped);
        QCOMPARE(r.runner->message(), QStringLiteral("Stopped"));
        QVERIFY(r.points.size() < 4);
        QCOMPARE(r.finishes, 1);
        // A stopped run keeps the notes it had (the first comes before any point).
        QVERIFY(!r.runner->notes().isEmpty());
        QCOMPARE(r.runner->notes().front(), r.notes.front());
        QVERIFY(gone(r.runner->pid()));
    }

    void cancelKillsAProbeThatIgnoresTerm() {
        qputenv("KVBE_FAKE_PROBE", "stubborn");
        Run r;
        r.runner->setKillGrace(200);
        r.runner->start({QStringLiteral("nvme-read")});
        QVERIFY(QTest::qWaitFor([&] { return r.headers == 1; }, 5000));
        r.runner->cancel();
        QVERIFY(r.waitDone());
        QCOMPARE(r.runner->outcome(), ProbeRunner::Outcome::Stopped);
        QVERIFY(gone(r.runner->pid()));
    }

    void unreadableOutputFails() {
        qputenv("KVBE_FAKE_PROBE", "garbage");
        Run r;
        r.runner->start({QStringLiteral("nvme-read")});
        QVERIFY(r.waitDone());
        QCOMPARE(r.runner->outcome(), ProbeRunner::Outcome::Failed);
        QVERIFY2(
            r.runner->message().startsWith(QStringLiteral("The probe's output was not understood")),
            qPrintable(r.runner->message()));
    }

    void missingExecutableFails() {
        qputenv("KVBE_CLI", "/nonexistent/kvbe-cli");
        Run r;
        r.runner->start({QStringLiteral("nvme-read")});
        QVERIFY(r.waitDone());
        QCOMPARE(r.runner->outcome(), ProbeRunner::Outcome::Failed);
        QVERIFY(r.runner->message().startsWith(
            QStringLiteral("Could not start /nonexistent/kvbe-cli")));
    }

    void destroyingTheRunnerLeavesNoProcess() {
        qputenv("KVBE_FAKE_PROBE", "stubborn");
        Run r;
        r.runner->setKillGrace(200);
        r.runner->start({QStringLiteral("nvme-read")});
        QVERIFY(QTest::qWaitFor([&] { return r.headers == 1; }, 5000));
        const qint64 pid = r.runner->pid();
        QVERIFY(!gone(pid));
        r.runner.reset();
        QVERIFY(gone(pid));
        QCOMPARE(r.finishes, 0); // a closing window hears nothing more
    }
};

QTEST_GUILESS_MAIN(TestProbeRunner)
#include "tst_ui_probe_runner.moc"
