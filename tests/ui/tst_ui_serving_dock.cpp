// The serving probe in the Probes dock (against the fake kvbe-cli): the run is given the
// scenario's GPU; its TTFT medians fill a table, and once it ends the fitted values (u, overhead,
// each tier's bandwidth, t_fixed and p*) read as a sentence with a few digits, each sample's
// fitted TTFT and residual beside it; and a new run scrolls into view at the top of the list.
#include "ui_test_support.h"

#include <QApplication>
#include <QScrollArea>
#include <QScrollBar>
#include <QTableWidget>

using namespace kvbe;
using namespace kvbe::test;

class TestUiServingDock : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        isolateSettings();
        useFakeProbe();
    }
    void init() { resetFakeProbe(); }

    void theScenariosGpuGoesToTheProbe() {
        auto w = makeWindow();
        Scenario s = explorerOf(w)->scenario();
        s.gpu = "h200";
        explorerOf(w)->edit(s, QStringLiteral("H200"));
        auto* probes = probePanelOf(w);
        QVERIFY(probes->setProbe(QStringLiteral("serving")));
        const QStringList args = probes->arguments();
        const auto at = args.indexOf(QStringLiteral("--gpu"));
        QVERIFY2(at > 0 && at + 1 < args.size() && args[at + 1] == QLatin1String("h200"),
                 qPrintable(args.join(QLatin1Char(' '))));
        // A probe without a GPU preset option is not given one.
        QVERIFY(probes->setProbe(QStringLiteral("nvme-read")));
        QVERIFY(!probes->arguments().contains(QStringLiteral("--gpu")));
    }

    // The fake run's fit: u 0.4461234, overhead 14.7812 ms, nvme at 12.53 GB/s (12.5 shown) with
    // t_fixed 0.224 ms and p* 1,234.6 tokens, rms 4.31 %; the cold 1,024-token sample measured 45
    // ms and fitted 47 ms: +4.4 %; the 8,192-token hit 90 ms and 93 ms: +3.3 %.
    void theFitAndItsResidualsAreShown() {
        auto w = makeWindow();
        w->show();
        auto* probes = probePanelOf(w);
        QVERIFY(probes->setProbe(QStringLiteral("serving")));
        QVERIFY(probes->run());
        QVERIFY(QTest::qWaitFor([&] { return !probes->anyRunning(); }, 30000));
        auto* fit = child<QLabel>(probes, QStringLiteral("runFit0"));
        const QString text = fit->text();
        for (const char* part :
             {"u = 44.6 %", "overhead 14.78 ms", "nvme: 12.5 GB/s",
              "t_fixed 0.22 ms, p* 1,235 tokens", "gpu: t_fixed 3.10 ms", "rms residual 4.3 %"})
            QVERIFY2(text.contains(QString::fromUtf8(part)), qPrintable(text));
        QVERIFY2(!text.contains(QLatin1String("0.446123")), qPrintable(text));
        auto* table = child<QTableWidget>(probes, QStringLiteral("runTtft0"));
        QCOMPARE(table->rowCount(), 3);
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("cold"));
        QCOMPARE(table->item(0, 3)->text(), QStringLiteral("45.00"));
        QCOMPARE(table->item(0, 5)->text(), QStringLiteral("47.00"));
        QCOMPARE(table->item(0, 6)->text(), QStringLiteral("4.4 %"));
        QCOMPARE(table->item(2, 0)->text(), QStringLiteral("nvme"));
        QCOMPARE(table->item(2, 2)->text(), QStringLiteral("4,096"));
        QCOMPARE(table->item(2, 5)->text(), QStringLiteral("93.00"));
        QCOMPARE(table->item(2, 6)->text(), QStringLiteral("3.3 %"));
    }

    void aNewRunScrollsIntoView() {
        auto w = makeWindow();
        w->show();
        w->setBottomDocksCollapsed(false);
        auto* probes = probePanelOf(w);
        for (int i = 0; i < 6; ++i) {
            QVERIFY(probes->run());
            QVERIFY(QTest::qWaitFor([&] { return !probes->anyRunning(); }, 30000));
        }
        auto* scroll = child<QScrollArea>(probes, QStringLiteral("probeHistory"));
        QApplication::processEvents();
        QScrollBar* bar = scroll->verticalScrollBar();
        QVERIFY2(bar->maximum() > 0, "the history should be taller than its view");
        bar->setValue(bar->maximum());
        QVERIFY(probes->run());
        QVERIFY(QTest::qWaitFor([&] { return !probes->anyRunning(); }, 30000));
        QApplication::processEvents();
        QCOMPARE(bar->value(), bar->minimum());
    }
};

QTEST_MAIN(TestUiServingDock)
#include "tst_ui_serving_dock.moc"
