// The Fleet dock's fit follows the scenario and Clear: node17 fitted while the scenario is
// Qwen3-32B says so; back on Llama 3.2 3B the fit is made again and says that instead; Clear
// leaves no fit, no residuals and no fitted curve; and the fit's sentence is whole in a short
// dock (it scrolls instead of losing its last line).
#include "ui_test_support.h"

#include <QApplication>
#include <QPushButton>
#include <QTableWidget>

using namespace kvbe;
using namespace kvbe::test;

namespace {

QLabel* summaryOf(FleetPanel* f) {
    return child<QLabel>(f, QStringLiteral("fitSummary"));
}

int node17Row(FleetPanel* f) {
    for (int row = 0; row < f->model()->rowCount(); ++row)
        if (f->model()->at(row).calibration.host == "node17") return row;
    return -1;
}

void useModel(MainWindow* w, const char* model) {
    Scenario s = explorerOf(w)->scenario();
    s.model = model;
    explorerOf(w)->edit(s, QStringLiteral("model"));
    explorerOf(w)->recomputeNow();
}

} // namespace

class TestUiFleetFit : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }

    void theFitFollowsTheScenarioAndClear() {
        auto w = std::make_unique<MainWindow>(presets());
        w->fitToScreen(QRect(0, 0, 1366, 768));
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(w->importCalibrations({QStringLiteral(KVBE_FIXTURES "/calibration")}));
        auto* fleet = fleetPanelOf(w);
        QVERIFY(QTest::qWaitFor([&] { return !fleet->importing(); }, 60000));
        const int row = node17Row(fleet);
        QVERIFY(row >= 0);

        useModel(w.get(), "Qwen/Qwen3-32B");
        fleet->selectRow(row);
        QVERIFY(fleet->fitSelected().ok());
        QVERIFY2(
            summaryOf(fleet)->text().contains(QLatin1String("the scenario uses Qwen/Qwen3-32B")),
            qPrintable(summaryOf(fleet)->text()));

        // Another scenario: the fit is made again against it, and says so.
        useModel(w.get(), "meta-llama/Llama-3.2-3B");
        QTRY_VERIFY2(!summaryOf(fleet)->text().contains(QLatin1String("Qwen3-32B")),
                     qPrintable(summaryOf(fleet)->text()));
        QVERIFY2(summaryOf(fleet)->text().contains(
                     QLatin1String("fitted against meta-llama/Llama-3.2-3B")),
                 qPrintable(summaryOf(fleet)->text()));
        QVERIFY(fleet->lastFit().has_value());

        // The sentence is whole in a short dock: its label as tall as its text needs.
        w->setBottomDocksCollapsed(false);
        QApplication::processEvents();
        QLabel* summary = summaryOf(fleet);
        QVERIFY2(summary->height() >= summary->heightForWidth(summary->width()),
                 qPrintable(QStringLiteral("%1 px of %2")
                                .arg(summary->height())
                                .arg(summary->heightForWidth(summary->width()))));

        // Clear: no fit, no residuals, no fitted curve, and the sentence asks for a file again.
        child<QPushButton>(fleet, QStringLiteral("fleetClear"))->click();
        QApplication::processEvents();
        QVERIFY(!fleet->lastFit().has_value());
        QCOMPARE(summaryOf(fleet)->text(),
                 QStringLiteral("Select a file and fit it to the scenario."));
        QCOMPARE(fleet->findChild<QTableWidget*>()->rowCount(), 0);
        auto* ttft = chartOf(w, QStringLiteral("ttft"));
        tabsOf(w)->setCurrentWidget(ttft);
        w->refreshNow();
        QVERIFY(!ttft->seriesByKey(QStringLiteral("overlay/fit/recompute")));
        // And a scenario change afterwards brings no fit back.
        useModel(w.get(), "Qwen/Qwen3-32B");
        QTest::qWait(300);
        QVERIFY(!fleet->lastFit().has_value());
        QCOMPARE(summaryOf(fleet)->text(),
                 QStringLiteral("Select a file and fit it to the scenario."));
    }
};

QTEST_MAIN(TestUiFleetFit)
#include "tst_ui_fleet_fit.moc"
