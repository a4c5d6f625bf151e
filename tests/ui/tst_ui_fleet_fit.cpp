// The Fleet dock's fit follows the scenario and Clear: node17 fitted while the scenario is
// Qwen3-32B says so; back on Llama 3.2 3B the fit is made again and says that instead; Clear
// leaves no fit, no residuals and no fitted curve; and the fit's sentence is whole in a short
// dock (it scrolls instead of losing its last line). The fit is made against the model the node was
// measured with, an unreliable one is flagged, p* = 0 is explained, and Adopt asks, shows each
// change and can be undone.
#include "kvbe/calibration/fit.h"
#include "ui_test_support.h"

#include <QAction>
#include <QApplication>
#include <QMessageBox>
#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>

#include <fstream>

using namespace kvbe;
using namespace kvbe::test;

namespace {

const QString kFixtures = QStringLiteral(KVBE_FIXTURES "/calibration");
const QString k70b = QStringLiteral("meta-llama/Llama-3.3-70B-Instruct");

bool waitImport(FleetPanel* f) {
    return QTest::qWaitFor([f] { return !f->importing(); }, 60000);
}

QString fitSummary(FleetPanel* f) {
    auto* l = f->findChild<QLabel*>(QStringLiteral("fitSummary"));
    return l ? l->text() : QString();
}

// The node17 fixture with every cold prefill five times faster than its GPU can run it: the
// fitted utilisation runs into its bound.
QString tooFastCalibration(const QTemporaryDir& dir) {
    const QString path = dir.filePath(QStringLiteral("too-fast.json"));
    std::ofstream out(path.toStdString());
    out << R"({"kvbe_calibration":1,"host":"fast","model":"meta-llama/Llama-3.2-3B","kv_dtype":"bf16",)"
        << R"("prefill":[[1024,0.0012],[8192,0.0042],[32768,0.06]]})";
    return path;
}

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
    void init() { QSettings().clear(); }

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

    void fitUsesTheModelTheNodeWasMeasuredWith() {
        auto w = makeWindow();
        QVERIFY(panelOf(w).selectModel(k70b));
        w->refreshNow();
        auto* fleet = fleetPanelOf(w);
        QVERIFY(w->importCalibrations({kFixtures + QStringLiteral("/kvbe-node17.json")}));
        QVERIFY(waitImport(fleet));
        fleet->selectRow(0);
        const auto st = fleet->fitSelected();
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
        // The same fit as core's against the scenario with the node's own model.
        Scenario measured = explorerOf(w)->scenario();
        measured.model = "meta-llama/Llama-3.2-3B";
        const auto ref = reference(measured);
        auto expect = fitCalibration(fleet->model()->at(0).calibration, ref.eval.cost.inputs(),
                                     ref.eval.tiers);
        QVERIFY(expect.ok());
        const auto& fit = *fleet->lastFit();
        QCOMPARE(*fit.params.utilisation, *expect->params.utilisation);
        QVERIFY(*fit.params.utilisation < 0.9);
        QVERIFY(fit.params.rmsRelativeResidual < 0.1);
        QVERIFY2(fitSummary(fleet).contains(QStringLiteral("Llama-3.2-3B")),
                 qPrintable(fitSummary(fleet)));
    }

    void anUnreliableFitIsFlagged() {
        QTemporaryDir dir;
        auto w = makeWindow();
        auto* fleet = fleetPanelOf(w);
        QVERIFY(w->importCalibrations({tooFastCalibration(dir)}));
        QVERIFY(waitImport(fleet));
        fleet->selectRow(0);
        QVERIFY(fleet->fitSelected().ok());
        QVERIFY(*fleet->lastFit()->params.utilisation > 0.99);
        QVERIFY2(fitSummary(fleet).contains(QStringLiteral("Unreliable")),
                 qPrintable(fitSummary(fleet)));
        QVERIFY2(fitSummary(fleet).contains(QStringLiteral("at its bound")),
                 qPrintable(fitSummary(fleet)));
    }

    // The Adopt question says when the file was measured on another GPU than the scenario's
    // (it said so for another model only): node17 measured an H100; the scenario on an H200.
    void adoptWarnsOfAnotherGpu() {
        auto w = makeWindow();
        auto* fleet = fleetPanelOf(w);
        QVERIFY(w->importCalibrations({kFixtures + QStringLiteral("/kvbe-node17.json")}));
        QVERIFY(waitImport(fleet));
        QString details;
        w->setAsk([&](QWidget*, const Question& q) {
            details = q.details;
            return QMessageBox::No;
        });
        fleet->selectRow(0);
        QVERIFY(fleet->fitSelected().ok());
        fleet->adoptFitted();
        QVERIFY2(!details.isEmpty() && !details.contains(QStringLiteral("measured on")),
                 qPrintable(details));

        panelOf(w).pickGpu(QStringLiteral("h200"));
        w->refreshNow();
        QVERIFY(fleet->fitSelected().ok());
        fleet->adoptFitted();
        QVERIFY2(details.contains(QStringLiteral(
                     "The file was measured on NVIDIA H100 80GB HBM3; the scenario's GPU is "
                     "NVIDIA H200 SXM 141GB")),
                 qPrintable(details));
    }

    void adoptChangesNothingWithoutConfirmationAndUndoRestores() {
        auto w = makeIllustrativeWindow(); // u = 50 %, the NVMe preset's 13.5 GB/s
        auto* fleet = fleetPanelOf(w);
        QVERIFY(w->importCalibrations({kFixtures + QStringLiteral("/kvbe-node17.json")}));
        QVERIFY(waitImport(fleet));
        fleet->selectRow(0);
        QVERIFY(fleet->fitSelected().ok());
        const Scenario before = explorerOf(w)->scenario();
        // Nobody answers (offscreen): nothing changes.
        fleet->adoptFitted();
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario(), before);

        // The question shows each change, old → new; "No" changes nothing either.
        QString details;
        QMessageBox::StandardButton answer = QMessageBox::No;
        w->setAsk([&](QWidget*, const Question& q) {
            details = q.details;
            return answer;
        });
        fleet->adoptFitted();
        QCOMPARE(explorerOf(w)->scenario(), before);
        QVERIFY2(details.contains(QStringLiteral("utilisation: 50 % → 44.6 %")),
                 qPrintable(details));
        QVERIFY2(
            details.contains(QStringLiteral("NVMe (PCIe 5.0) bandwidth: 13.5 GB/s → 12.5 GB/s")),
            qPrintable(details));
        answer = QMessageBox::Yes;
        QVERIFY(fleet->adoptFitted().ok());
        // u changed: the default's name no longer fits, the scenario describes itself.
        Scenario adopted = adoptFit(before, fleet->lastFit()->params);
        adopted.name.clear();
        QCOMPARE(explorerOf(w)->scenario(), adopted);

        QAction* undo = menuAction(w.get(), QStringLiteral("Undo"));
        QVERIFY(undo);
        QVERIFY(undo->isEnabled());
        undo->trigger();
        QCOMPARE(explorerOf(w)->scenario(), before);
        QAction* redo = menuAction(w.get(), QStringLiteral("Redo"));
        QVERIFY(redo);
        redo->trigger();
        QCOMPARE(explorerOf(w)->scenario(), adopted);
    }

    void pStarZeroIsExplained() {
        auto w = makeWindow();
        auto* fleet = fleetPanelOf(w);
        QVERIFY(w->importCalibrations({kFixtures + QStringLiteral("/kvbe-node17.json")}));
        QVERIFY(waitImport(fleet));
        fleet->selectRow(0);
        QVERIFY(fleet->fitSelected().ok());
        const auto p = fleet->lastFit()->breakevenPrefix.at("nvme");
        QVERIFY(p);
        QCOMPARE(*p, 0.0);
        const QString text = fitSummary(fleet);
        QVERIFY2(text.contains(QStringLiteral("p* = 0")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("from the first token")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("held at 0")), qPrintable(text));
    }
};

QTEST_MAIN(TestUiFleetFit)
#include "tst_ui_fleet_fit.moc"
