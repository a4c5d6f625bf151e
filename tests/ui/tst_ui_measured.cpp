// The window's measured side: probes run through the fake kvbe-cli with their points on the
// charts. Only a finished run makes a measured tier (one undo away): a cancelled, failed or killed
// run never reaches the scenario, unless kept on purpose; a drive's tier takes its t_fixed from the
// read at queue depth 1 and its block sizes read as asked.
#include "kvbe/calibration/fit.h"
#include "kvbe/ui/charts/breakeven_chart.h"
#include "kvbe/ui/charts/chart_legend.h"
#include "kvbe/ui/charts/fraction_chart.h"
#include "kvbe/ui/charts/ttft_chart.h"
#include "kvbe/ui/fleet/fleet_panel.h"
#include "kvbe/ui/probes/probe_panel.h"
#include "ui_event_clock.h"
#include "ui_test_support.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QMimeData>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QXYSeries>

#include <cerrno>
#include <csignal>
#include <fstream>

using namespace kvbe;
using namespace kvbe::test;

namespace {

bool gone(qint64 pid) {
    return pid > 0 && ::kill(pid_t(pid), 0) == -1 && errno == ESRCH;
}

bool waitRun(ProbeRunner* r) {
    return QTest::qWaitFor([r] { return !r->isRunning(); }, 10000);
}

int tierIndex(const Scenario& s, const QString& name) {
    for (size_t i = 0; i < s.tiers.size(); ++i)
        if (QString::fromStdString(s.tiers[i].name) == name) return int(i);
    return -1;
}

} // namespace

class TestMeasured : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        isolateSettings();
        useFakeProbe();
    }
    void init() {
        QSettings().clear();
        resetFakeProbe();
    }
    void cleanup() { qunsetenv("KVBE_FAKE_PROBE_QD1_US"); }

    void driveBandwidthBecomesAMeasuredTier() {
        auto w = makeWindow();
        auto* probeDock = child<QDockWidget>(w.get(), QStringLiteral("probeDock"));
        QCOMPARE(probeDock->isVisible() || !probeDock->isHidden(), true);
        QCOMPARE(w->dockWidgetArea(probeDock), Qt::BottomDockWidgetArea);
        auto* panel = probePanelOf(w);
        panel->setProbe(QStringLiteral("nvme-read"));
        QVERIFY(panel->setOption(QStringLiteral("--dir"), QStringLiteral("/tmp/scratch")));
        QVERIFY(panel->setOption(QStringLiteral("--file-size"), QStringLiteral("256MiB")));
        QVERIFY(panel->setOption(QStringLiteral("--duration"), QStringLiteral("1s")));
        const QStringList args = panel->arguments();
        QCOMPARE(args.mid(0, 5),
                 (QStringList{QStringLiteral("nvme-read"), QStringLiteral("--dir"),
                              QStringLiteral("/tmp/scratch"), QStringLiteral("--file-size"),
                              QStringLiteral("256MiB")}));
        QVERIFY(args.contains(QStringLiteral("--duration")));
        // With an empty Model field, the scenario's model is measured.
        QCOMPARE(args.back(), QString::fromStdString(explorerOf(w)->scenario().model));

        const size_t nominal = explorerOf(w)->scenario().tiers.size();
        ProbeRunner* r = panel->run();
        QVERIFY(waitRun(r));
        QCOMPARE(r->outcome(), ProbeRunner::Outcome::Succeeded);
        QCOMPARE(panel->runCount(), 1);
        QCOMPARE(panel->runStatus(0), QStringLiteral("The probe finished."));
        w->refreshNow();

        const Scenario& s = explorerOf(w)->scenario();
        QCOMPARE(s.tiers.size(), nominal + 1);
        const QString name = w->measuredTierName(0);
        QCOMPARE(name, QStringLiteral("nvme-read #1, measured"));
        const int t = tierIndex(s, name);
        QVERIFY(t >= 0);
        QCOMPARE(s.tiers[size_t(t)].bandwidthGBps, 6.5); // the best streamed rate

        // The break-even chart draws the tier at its staged bandwidth, the fraction chart its p*.
        const auto ref = reference(s);
        auto* level = chartOf(w, QStringLiteral("breakeven"))
                          ->seriesByKey(QStringLiteral("tier/%1/level").arg(t));
        QVERIFY(level);
        QVERIFY(sameValue(level->at(0).y(), ref.eval.tiers[size_t(t)].bandwidthBps * 1e-9));
        const auto pstar = ref.eval.cost.breakevenPrefix(ref.eval.tiers[size_t(t)]);
        QVERIFY(pstar);
        auto* mark = chartOf(w, QStringLiteral("fraction"))
                         ->seriesByKey(QStringLiteral("tier/%1/pmark").arg(t));
        QVERIFY(mark);
        QCOMPARE(mark->count(), 1);
        QVERIFY(sameValue(mark->at(0).x(), *pstar, 1e-6));
    }

    void copyBandwidthBecomesAMeasuredTier() {
        auto w = makeWindow();
        probePanelOf(w)->setProbe(QStringLiteral("gpu-copy"));
        ProbeRunner* r = probePanelOf(w)->run();
        QVERIFY(waitRun(r));
        w->refreshNow();
        const int t = tierIndex(explorerOf(w)->scenario(), w->measuredTierName(0));
        QVERIFY(t >= 0);
        QCOMPARE(explorerOf(w)->scenario().tiers[size_t(t)].bandwidthGBps, 52.0);
    }

    void prefillPointsLandOnTtftAndBreakeven() {
        auto w = makeWindow();
        probePanelOf(w)->setProbe(QStringLiteral("gpu-prefill"));
        QVERIFY(
            probePanelOf(w)->setOption(QStringLiteral("--lengths"), QStringLiteral("1k,8k,32k")));
        QVERIFY(probePanelOf(w)->arguments().contains(QStringLiteral("--lengths")));
        ProbeRunner* r = probePanelOf(w)->run();
        QVERIFY(waitRun(r));
        QCOMPARE(r->outcome(), ProbeRunner::Outcome::Succeeded);
        w->refreshNow();
        auto* ttft = static_cast<TtftChart*>(chartOf(w, QStringLiteral("ttft")));
        QCOMPARE(ttft->measuredCount(), size_t(3));
        auto* dots = ttft->seriesByKey(QStringLiteral("imported"));
        QVERIFY(dots);
        const double expectMs[][2] = {{1024, 31}, {8192, 290}, {32768, 1700}};
        QCOMPARE(dots->count(), 3);
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(dots->at(i).x(), expectMs[i][0]);
            QVERIFY(sameValue(dots->at(i).y(), expectMs[i][1], 1e-12));
        }
        auto* be = static_cast<BreakevenChart*>(chartOf(w, QStringLiteral("breakeven")));
        auto* bstar = be->seriesByKey(QStringLiteral("measured-bstar"));
        QVERIFY(bstar);
        QCOMPARE(bstar->count(), 3);
        const auto ref = reference(explorerOf(w)->scenario());
        for (int i = 0; i < 3; ++i) {
            const double n = expectMs[i][0], t = expectMs[i][1] / 1e3;
            QCOMPARE(bstar->at(i).x(), n);
            QVERIFY(sameValue(bstar->at(i).y(), ref.eval.cost.kvBytes(n) / t * 1e-9, 1e-12));
        }
    }

    void failuresAndStopsInTheHistory() {
        auto w = makeWindow();
        auto* panel = probePanelOf(w);
        qputenv("KVBE_FAKE_PROBE", "exit:3");
        QVERIFY(waitRun(panel->run()));
        QCOMPARE(
            panel->runStatus(0),
            QStringLiteral(
                "This machine or target cannot run the probe: O_DIRECT is not supported on tmpfs"));
        qputenv("KVBE_FAKE_PROBE", "crash");
        QVERIFY(waitRun(panel->run()));
        QVERIFY(panel->runStatus(1).startsWith(QStringLiteral("The probe crashed")));
        qputenv("KVBE_FAKE_PROBE", "stream");
        qputenv("KVBE_FAKE_PROBE_DELAY_MS", "300");
        ProbeRunner* r = panel->run();
        QVERIFY(QTest::qWaitFor([r] { return r->fraction() > 0; }, 5000));
        r->cancel();
        QVERIFY(waitRun(r));
        // A stop that had measured something says its partial result was not used.
        QVERIFY(panel->runStatus(2).startsWith(QStringLiteral("Stopped")));
        QCOMPARE(r->outcome(), ProbeRunner::Outcome::Stopped);
        QCOMPARE(panel->runCount(), 3);
        // A failed run without notes shows none; a stopped one keeps the notes it had.
        QVERIFY(child<QLabel>(w.get(), QStringLiteral("runNotes0"))->isHidden());
        auto* stoppedNotes = child<QLabel>(w.get(), QStringLiteral("runNotes2"));
        QVERIFY(!stoppedNotes->isHidden());
        QVERIFY2(stoppedNotes->text().startsWith(
                     QStringLiteral("• engine: psync: asked for with --engine psync")),
                 qPrintable(stoppedNotes->text()));
        // A run that fails after its second note shows both, in order, beside its failure.
        qputenv("KVBE_FAKE_PROBE", "fail-after:2");
        qunsetenv("KVBE_FAKE_PROBE_DELAY_MS");
        QVERIFY(waitRun(panel->run()));
        QCOMPARE(panel->runner(3)->outcome(), ProbeRunner::Outcome::Failed);
        auto* failedNotes = child<QLabel>(w.get(), QStringLiteral("runNotes3"));
        QVERIFY(!failedNotes->isHidden());
        const QStringList lines = failedNotes->text().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 2);
        QCOMPARE(lines[0], QStringLiteral("• engine: psync: asked for with --engine psync"));
        QVERIFY2(lines[1].startsWith(QStringLiteral("• buffers not registered")),
                 qPrintable(lines[1]));
        QCOMPARE(panel->runNotes(3), failedNotes->text());
    }

    void closingTheWindowLeavesNoProcess() {
        auto w = makeWindow();
        qputenv("KVBE_FAKE_PROBE", "hang");
        ProbeRunner* a = probePanelOf(w)->run();
        qputenv("KVBE_FAKE_PROBE", "stream");
        qputenv("KVBE_FAKE_PROBE_DELAY_MS", "1000");
        ProbeRunner* b = probePanelOf(w)->run();
        QVERIFY(QTest::qWaitFor(
            [&] {
                return a->processState() == QProcess::Running &&
                       b->processState() == QProcess::Running;
            },
            5000));
        const qint64 pa = a->pid(), pb = b->pid();
        QVERIFY(!gone(pa) && !gone(pb));
        QVERIFY(probePanelOf(w)->anyRunning());
        w->close();
        w.reset();
        QVERIFY(gone(pa));
        QVERIFY(gone(pb));
    }

    // The fake drive probe reads 4 KiB at queue depth 1 in 224 µs: the measured tier's t_fixed is
    // 0.224 ms, not a preset's nominal 1 ms shown without "(nominal)". And its 4 MiB blocks read
    // "4 MiB", not "4.19 MB".
    void aMeasuredTierTakesItsLatencyAndSizesReadAsAsked() {
        qputenv("KVBE_FAKE_PROBE_QD1_US", "224");
        auto w = makeWindow();
        auto* panel = probePanelOf(w);
        panel->setProbe(QStringLiteral("nvme-read"));
        QVERIFY(panel->setOption(QStringLiteral("--dir"), QStringLiteral("/tmp/scratch")));
        QVERIFY(panel->run());
        QVERIFY(QTest::qWaitFor([&] { return !panel->anyRunning(); }, 30000));
        const Scenario& s = explorerOf(w)->scenario();
        const int t = tierIndex(s, w->measuredTierName(0));
        QVERIFY(t >= 0);
        QCOMPARE(s.tiers[size_t(t)].tFixedMs, 0.224);
        auto* table = child<QTableWidget>(panel, QStringLiteral("runResults0"));
        QStringList sizes;
        for (int r = 0; r < table->rowCount(); ++r)
            sizes << table->item(r, 1)->text();
        QVERIFY2(sizes.contains(QStringLiteral("4 MiB")) && sizes.contains(QStringLiteral("4 KiB")),
                 qPrintable(sizes.join(QStringLiteral(", "))));
    }

    void aFinishedRunBecomesATierThatCanBeUndone() {
        auto w = makeWindow();
        const Scenario before = explorerOf(w)->scenario();
        ProbeRunner* r = probePanelOf(w)->run();
        QVERIFY(waitRun(r));
        QCOMPARE(explorerOf(w)->scenario().tiers.size(), before.tiers.size() + 1);
        QCOMPARE(explorerOf(w)->scenario().tiers.back().bandwidthGBps, 6.5);
        QVERIFY(w->isWindowModified());
        // Said where the user looks: not "The probe finished" alone, but the tier it added.
        const QString status = w->statusBar()->currentMessage();
        const QString tier = QString::fromStdString(explorerOf(w)->scenario().tiers.back().name);
        QVERIFY2(status.contains(QStringLiteral("added the tier")) && status.contains(tier) &&
                     status.contains(QStringLiteral("6.50 GB/s")) &&
                     status.contains(QStringLiteral("Undo")),
                 qPrintable(status));
        child<QAction>(w.get(), QStringLiteral("undo"))->trigger();
        QCOMPARE(explorerOf(w)->scenario(), before);
    }

    void aCancelledRunNeverReachesTheScenario() {
        auto w = makeWindow();
        const Scenario before = explorerOf(w)->scenario();
        qputenv("KVBE_FAKE_PROBE", "hang-after:2");
        ProbeRunner* r = probePanelOf(w)->run();
        QSignalSpy points(r, &ProbeRunner::point);
        QVERIFY(QTest::qWaitFor([&] { return points.count() >= 2; }, 10000));
        w->refreshNow();
        // Running: drawn as provisional, not a tier of the scenario.
        QCOMPARE(explorerOf(w)->scenario(), before);
        auto* live =
            chartOf(w, QStringLiteral("breakeven"))->seriesByKey(QStringLiteral("running/0"));
        QVERIFY(live);
        QVERIFY(live->name().contains(QStringLiteral("running")));
        QCOMPARE(live->pen().style(), Qt::DashLine);
        QCOMPARE(live->at(0).y(), 5.25);
        r->cancel();
        QVERIFY(waitRun(r));
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario(), before);
        QVERIFY(w->measuredTierName(0).isEmpty());
        QVERIFY(!chartOf(w, QStringLiteral("breakeven"))->seriesByKey(QStringLiteral("running/0")));
        QVERIFY2(probePanelOf(w)->runStatus(0).contains(QStringLiteral("not used")),
                 qPrintable(probePanelOf(w)->runStatus(0)));

        // Kept on purpose, it joins the scenario, named for what it is.
        auto* keep = probePanelOf(w)->findChild<QPushButton*>(QStringLiteral("keepRun0"));
        QVERIFY(keep);
        QVERIFY(keep->isVisible() || !keep->isHidden());
        keep->click();
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().tiers.size(), before.tiers.size() + 1);
        QVERIFY(QString::fromStdString(explorerOf(w)->scenario().tiers.back().name)
                    .contains(QStringLiteral("stopped")));
        QCOMPARE(explorerOf(w)->scenario().tiers.back().bandwidthGBps, 5.25);
    }

    void aFailedRunNeverReachesTheScenario() {
        auto w = makeWindow();
        const Scenario before = explorerOf(w)->scenario();
        qputenv("KVBE_FAKE_PROBE", "fail-after:3");
        ProbeRunner* r = probePanelOf(w)->run();
        QVERIFY(waitRun(r));
        QCOMPARE(r->outcome(), ProbeRunner::Outcome::Failed);
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario(), before);
        QVERIFY(!chartOf(w, QStringLiteral("breakeven"))->seriesByKey(QStringLiteral("running/0")));
    }

    void aRunKilledByClosingDoesNotComeBack() {
        const size_t nominal = defaultScenario(presets())->tiers.size();
        {
            auto w = makeWindow();
            qputenv("KVBE_FAKE_PROBE", "hang-after:2");
            ProbeRunner* r = probePanelOf(w)->run();
            QSignalSpy points(r, &ProbeRunner::point);
            QVERIFY(QTest::qWaitFor([&] { return points.count() >= 2; }, 10000));
            w->close();
        }
        auto w = makeWindow();
        QCOMPARE(explorerOf(w)->scenario().tiers.size(), nominal);
    }
};

KVBE_UI_EVENT_CLOCK_MAIN(TestMeasured)
#include "tst_ui_measured.moc"
