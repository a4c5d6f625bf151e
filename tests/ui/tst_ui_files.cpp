// What the window does with a file is what the file is (core's classifyFile): open, drop and
// folder imports read the files core and kvbe-cli read, and the dialogs offer the extensions of
// core's table of file kinds; a successful open clears a stale error from the status bar.
#include "ui_test_support.h"

#include "kvbe/calibration/calibration.h"
#include "kvbe/files/file_kind.h"
#include "kvbe/ui/widgets/file_dialogs.h"

#include <QDropEvent>
#include <QMimeData>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QUrl>

using namespace kvbe;
using namespace kvbe::test;

namespace {

const QString kFixtures = QStringLiteral(KVBE_SOURCE_DIR "/tests/fixtures/");

bool waitImport(FleetPanel* f) {
    return QTest::qWaitFor([f] { return !f->importing(); }, 300000);
}

void write(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
}

void drop(MainWindow& w, const QStringList& paths) {
    QMimeData mime;
    QList<QUrl> urls;
    for (const QString& p : paths)
        urls << QUrl::fromLocalFile(p);
    mime.setUrls(urls);
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&w, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent event(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&w, &event);
}

} // namespace

class TestUiFiles : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }

    // A folder of node files with notes beside them: the window reads the calibration files in
    // it, as core's readCalibrations and `kvbe-cli calibration inspect` do, not every file.
    void folderImportReadsWhatCoreReads() {
        QTemporaryDir dir;
        QVERIFY(
            QFile::copy(kFixtures + "calibration/kvbe-node17.json", dir.filePath("node17.json")));
        QVERIFY(
            QFile::copy(kFixtures + "calibration/pareto-measure.csv", dir.filePath("pareto.csv")));
        write(dir.filePath("notes.txt"), "node17 was rebooted before the run\n");
        write(dir.filePath("README.md"), "# Runs of 29 November\n");
        const auto core = readCalibrations({dir.path().toStdString()});
        QCOMPARE(core.calibrations.size(), size_t(2));
        QCOMPARE(core.errors.size(), size_t(0));

        auto w = makeWindow();
        auto* fleet = fleetPanelOf(w);
        QVERIFY(w->importCalibrations({dir.path()}));
        QVERIFY(waitImport(fleet));
        QCOMPARE(fleet->model()->rowCount(), int(core.calibrations.size()));
        QVERIFY2(fleet->importErrors().isEmpty(),
                 qPrintable(fleet->importErrors().join(QLatin1Char('\n'))));
        for (int i = 0; i < fleet->model()->rowCount(); ++i)
            QCOMPARE(fleet->model()->at(i).calibration.source, core.calibrations[size_t(i)].source);
    }

    // A folder without calibration files says so in the Fleet view, as core does.
    void folderWithoutCalibrationsSaysSo() {
        QTemporaryDir dir;
        write(dir.filePath("notes.txt"), "nothing here\n");
        const auto core = readCalibrations({dir.path().toStdString()});
        QCOMPARE(core.errors.size(), size_t(1));
        auto w = makeWindow();
        auto* fleet = fleetPanelOf(w);
        QVERIFY(w->importCalibrations({dir.path()}));
        QVERIFY(waitImport(fleet));
        QCOMPARE(fleet->importErrors(), QStringList{QString::fromStdString(core.errors[0])});
    }

    // Each file opens as what its content says, whatever way it comes in.
    void openAndDropByContent() {
        auto w = makeWindow();
        // A calibration file: to the Fleet view.
        QVERIFY(w->openFile(kFixtures + "calibration/pykvcache-v2.json").ok());
        QVERIFY(waitImport(fleetPanelOf(w)));
        QCOMPARE(fleetPanelOf(w)->model()->rowCount(), 1);
        // A trace: to the Workload view.
        auto* view = child<WorkloadView>(&*w, QStringLiteral("workloadView"));
        drop(*w, {kFixtures + "traces/kvbe.csv"});
        QTRY_COMPARE_WITH_TIMEOUT(view->traceFile(), kFixtures + "traces/kvbe.csv", 30000);
        QCOMPARE(tabsOf(w)->currentWidget(), view);
        // A scenario opens; a config.json becomes the model.
        QVERIFY(w->openFile(KVBE_SOURCE_DIR "/resources/scenarios/default.kvbe.json").ok());
        const QString config =
            QStringLiteral(KVBE_SOURCE_DIR "/resources/models/Qwen__Qwen3-8B.json");
        drop(*w, {config});
        QCOMPARE(QString::fromStdString(explorerOf(w)->scenario().model), config);
        // What kvbe does not read is refused with a sentence naming it.
        QTemporaryDir dir;
        write(dir.filePath("notes.json"), "{\"note\": 1}");
        const auto st = w->openFile(dir.filePath("notes.json"));
        QVERIFY(!st.ok());
        QVERIFY2(st.message().find("notes.json: not a file kvbe knows") != std::string::npos,
                 st.message().c_str());
    }

    // The dialogs' filters are core's extensions.
    void dialogFiltersFromTheTable() {
        QCOMPARE(fileDialogFilter({FileKind::Calibration}),
                 QStringLiteral("Calibrations (*.json *.csv);;All files (*)"));
        QCOMPARE(fileDialogFilter({FileKind::Scenario, FileKind::ModelConfig}),
                 QStringLiteral("Scenarios and model configs (*.kvbe.json *.json);;Scenarios "
                                "(*.kvbe.json);;Model configs (*.json);;All files (*)"));
        QVERIFY(mayDrop(kFixtures + "traces/hand.jsonl"));
        QVERIFY(mayDrop(kFixtures + "calibration"));
        QVERIFY(!mayDrop(kFixtures + "calibration-sources.md"));
    }

    void aSuccessfulOpenClearsAStaleError() {
        QTemporaryDir dir;
        auto w = makeWindow();
        const QString file = dir.filePath(QStringLiteral("a.kvbe.json"));
        QVERIFY(w->saveScenario(file).ok());
        w->statusBar()->showMessage(QStringLiteral("an error from before"));
        QVERIFY(w->openFile(file).ok());
        QVERIFY2(!w->statusBar()->currentMessage().contains(QStringLiteral("an error from before")),
                 qPrintable(w->statusBar()->currentMessage()));
    }
};

QTEST_MAIN(TestUiFiles)
#include "tst_ui_files.moc"
