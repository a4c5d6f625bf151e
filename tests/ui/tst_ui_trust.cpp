// The explorer you can trust with measured data: labels that say what a scenario is,
// an unsaved marker and questions before changes are lost, fits against the model a node was
// measured with and flagged when unreliable, Adopt that asks and can be undone, and probe runs
// that become data only when they finish.
#include "kvbe/calibration/fit.h"
#include "kvbe/ui/fleet/fleet_panel.h"
#include "kvbe/ui/probes/probe_panel.h"
#include "kvbe/ui/scenario/scenario_panel.h"
#include "ui_test_support.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QTableWidget>
#include <QTemporaryDir>

#include <fstream>

using namespace kvbe;
using namespace kvbe::test;

namespace {

const QString kFixtures = QStringLiteral(KVBE_FIXTURES "/calibration");
const QString k70b = QStringLiteral("meta-llama/Llama-3.3-70B-Instruct");

// The GPU's preset name as labels shorten it ("H200 SXM 141GB").
QString gpuLabel(const char* key) {
    return QString::fromStdString(presets().findGpu(key)->name).remove(QStringLiteral("NVIDIA "));
}

bool waitImport(FleetPanel* f) {
    return QTest::qWaitFor([f] { return !f->importing(); }, 60000);
}

bool waitRun(ProbeRunner* r) {
    return QTest::qWaitFor([r] { return !r->isRunning(); }, 10000);
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

} // namespace

class TestTrust : public QObject {
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

    // ---- 1. labels that say what the scenario is

    void pinAfterAModelChangeIsLabelledFromItsInputs() {
        auto w = makeWindow();
        QVERIFY(panelOf(w).selectModel(k70b));
        panelOf(w).pickGpu(QStringLiteral("h200"));
        w->refreshNow();
        QVERIFY(w->pinCurrent(QString())); // the label the window proposes
        const QString label = explorerOf(w)->pins()->pins().front()->label;
        const QString expect =
            QStringLiteral("Llama-3.3-70B-Instruct on %1, u = 50 %, BF16 KV").arg(gpuLabel("h200"));
        QCOMPARE(label, expect);
        QVERIFY(chartOf(w, QStringLiteral("breakeven"))
                    ->seriesByKey(QStringLiteral("pin/0/bstar"))
                    ->name()
                    .startsWith(expect));
        // Nothing about the default's "Llama 3.2 3B on an H100 SXM" is left in the legend.
        QVERIFY(!chartOf(w, QStringLiteral("breakeven"))
                     ->seriesByKey(QStringLiteral("pin/0/bstar"))
                     ->name()
                     .contains(QStringLiteral("3.2 3B")));
    }

    void savedScenarioIsNamedFromItsInputs() {
        QTemporaryDir dir;
        auto w = makeWindow();
        QVERIFY(panelOf(w).selectModel(QStringLiteral("deepseek-ai/DeepSeek-V3")));
        w->refreshNow();
        const QString file = dir.filePath(QStringLiteral("ds.kvbe.json"));
        QVERIFY(w->saveScenario(file).ok());
        auto back = loadScenario(file.toStdString(), presets());
        QVERIFY(back.ok());
        QCOMPARE(QString::fromStdString(back->name),
                 QStringLiteral("DeepSeek-V3 on %1, u = 50 %, BF16 KV").arg(gpuLabel("h100-sxm")));
    }

    void anEditMarksTheWindowUnsaved() {
        auto w = makeWindow();
        QVERIFY(!w->isWindowModified());
        panelOf(w).utilisationSlider()->setValue(70);
        QVERIFY(w->isWindowModified());
        QVERIFY(w->windowTitle().contains(QStringLiteral("[*]")));
        // Back to what it was: nothing left to save.
        panelOf(w).utilisationSlider()->setValue(50);
        QVERIFY(!w->isWindowModified());
    }

    void aNameTheUserGaveStays() {
        auto w = makeWindow();
        auto* name = panelOf(w).nameField();
        name->setText(QStringLiteral("Plan B"));
        emit name->editingFinished();
        QVERIFY(panelOf(w).selectModel(k70b));
        w->refreshNow();
        QCOMPARE(explorerOf(w)->result()->label, QStringLiteral("Plan B"));
        QCOMPARE(w->proposedPinLabel(), QStringLiteral("Plan B"));
        // Cleared, the scenario describes itself again.
        name->setText(QString());
        emit name->editingFinished();
        w->refreshNow();
        QVERIFY(explorerOf(w)->result()->label.startsWith(
            QStringLiteral("Llama-3.3-70B-Instruct on ")));
    }

    void quittingAndResettingAskFirst() {
        auto w = makeWindow();
        QStringList asked;
        QMessageBox::StandardButton answer = QMessageBox::Cancel;
        w->setAsk([&](QWidget*, const Question& q) {
            asked << q.text;
            return answer;
        });
        QVERIFY(w->close()); // nothing changed: no question
        QVERIFY(asked.isEmpty());
        panelOf(w).utilisationSlider()->setValue(70);
        QVERIFY(!w->close());
        QCOMPARE(asked.size(), 1);
        QVERIFY(asked.back().contains(QStringLiteral("not saved")));
        QVERIFY(!w->resetToDefault());
        QCOMPARE(explorerOf(w)->scenario().utilisation, 0.7);
        answer = QMessageBox::Discard;
        QVERIFY(w->resetToDefault());
        QCOMPARE(asked.size(), 3);
        QCOMPARE(explorerOf(w)->scenario(), *defaultScenario(presets()));
        QVERIFY(!w->isWindowModified());
    }

    // ---- 2. fit and adopt with a guard, and undo

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

    void adoptChangesNothingWithoutConfirmationAndUndoRestores() {
        auto w = makeWindow();
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

    void everyScenarioEditCanBeUndone() {
        auto w = makeWindow();
        const Scenario before = explorerOf(w)->scenario();
        QAction* undo = menuAction(w.get(), QStringLiteral("Undo"));
        QVERIFY(undo);
        QCOMPARE(undo->shortcut(), QKeySequence(QKeySequence::Undo));
        QVERIFY(menuAction(w.get(), QStringLiteral("Redo"))
                    ->shortcuts()
                    .contains(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)));
        // A drag is one step.
        for (int v = 51; v <= 80; ++v)
            panelOf(w).utilisationSlider()->setValue(v);
        emit panelOf(w).utilisationSlider()->sliderReleased();
        QVERIFY(panelOf(w).selectModel(k70b));
        panelOf(w).pickGpu(QStringLiteral("h200"));
        undo->trigger();
        undo->trigger();
        QCOMPARE(explorerOf(w)->scenario().model, std::string("meta-llama/Llama-3.2-3B"));
        QCOMPARE(explorerOf(w)->scenario().utilisation, 0.8);
        undo->trigger();
        QCOMPARE(explorerOf(w)->scenario(), before);
        QCOMPARE(panelOf(w).utilisationSlider()->value(), 50);
        // The default's name comes back with its inputs.
        w->refreshNow();
        QCOMPARE(explorerOf(w)->result()->label, QString::fromStdString(before.name));
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

    // ---- 3. only a finished run makes a measured tier

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

    void aFinishedRunBecomesATierThatCanBeUndone() {
        auto w = makeWindow();
        const Scenario before = explorerOf(w)->scenario();
        ProbeRunner* r = probePanelOf(w)->run();
        QVERIFY(waitRun(r));
        QCOMPARE(explorerOf(w)->scenario().tiers.size(), before.tiers.size() + 1);
        QCOMPARE(explorerOf(w)->scenario().tiers.back().bandwidthGBps, 6.5);
        QVERIFY(w->isWindowModified());
        child<QAction>(w.get(), QStringLiteral("undo"))->trigger();
        QCOMPARE(explorerOf(w)->scenario(), before);
    }

    // ---- 4. the Probes dock shows the run's results

    void theDockShowsTheRunsTableAndWhichRowIsTheTier() {
        auto w = makeWindow();
        ProbeRunner* r = probePanelOf(w)->run();
        QVERIFY(waitRun(r));
        auto* table = probePanelOf(w)->findChild<QTableWidget*>(QStringLiteral("runResults0"));
        QVERIFY(table);
        QCOMPARE(table->rowCount(), 4); // one row per block size × queue depth the probe sent
        QStringList headers;
        for (int c = 0; c < table->columnCount(); ++c)
            headers << table->horizontalHeaderItem(c)->text();
        for (const char* h : {"GB/s", "IOPS", "p50", "p99", "QD"})
            QVERIFY2(headers.join(QLatin1Char('|')).contains(QLatin1String(h)), h);
        const int gbps = int(headers.indexOf(QStringLiteral("GB/s")));
        const int iops = int(headers.indexOf(QStringLiteral("IOPS")));
        QCOMPARE(table->item(2, gbps)->text(), QStringLiteral("6.50"));
        // IOPS = 6.5 GB/s over 4 MiB blocks.
        QCOMPARE(table->item(2, iops)->text(), QString::number(6.5e9 / 4194304, 'f', 0));
        // The row that became the tier is marked, and why is said.
        QVERIFY(table->item(2, 0)->text().contains(QStringLiteral("tier")));
        for (int row : {0, 1, 3})
            QVERIFY(!table->item(row, 0)->text().contains(QStringLiteral("tier")));
        auto* why = probePanelOf(w)->findChild<QLabel*>(QStringLiteral("runTierWhy0"));
        QVERIFY(why);
        QVERIFY2(why->text().contains(QStringLiteral("sustained")), qPrintable(why->text()));

        // Another row as the tier: the tier takes its rate, in one undoable edit.
        const int t = int(explorerOf(w)->scenario().tiers.size()) - 1;
        table->selectRow(1);
        auto* use = probePanelOf(w)->findChild<QPushButton*>(QStringLiteral("useRow0"));
        QVERIFY(use);
        use->click();
        QCOMPARE(explorerOf(w)->scenario().tiers[size_t(t)].bandwidthGBps, 5.25);
        QVERIFY(table->item(1, 0)->text().contains(QStringLiteral("tier")));
        QVERIFY(!table->item(2, 0)->text().contains(QStringLiteral("tier")));
        child<QAction>(w.get(), QStringLiteral("undo"))->trigger();
        QCOMPARE(explorerOf(w)->scenario().tiers[size_t(t)].bandwidthGBps, 6.5);
    }
};

QTEST_MAIN(TestTrust)
#include "tst_ui_trust.moc"
