// The scenario panel's fields refuse impossible values with a reason; the tier model passes
// QAbstractItemModelTester; a scenario opened, saved, dropped and restored; presentation mode and
// themes.
#include "control_test_support.h"
#include "ui_test_support.h"

#include "kvbe/base/units.h"
#include "kvbe/scenario/builtin_scenarios.h"
#include "kvbe/ui/charts/breakeven_chart.h"
#include "kvbe/ui/charts/frontier_chart.h"
#include "kvbe/ui/charts/ttft_chart.h"
#include "kvbe/ui/scenario/scenario_panel.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QAreaSeries>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QLegendMarker>
#include <QLineEdit>
#include <QMimeData>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>

#include <algorithm>

using namespace kvbe;
using namespace kvbe::test;

class TestUiControlInputs : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }
    // Windows own every timer and dialog; none may outlive the test that made it.
    void cleanup() { QTRY_VERIFY(QApplication::topLevelWidgets().isEmpty()); }

    void invalidInputIsRefusedWithItsReason_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("negative peak") << "peak"
                                       << "-5"
                                       << "Peak must be from";
        QTest::newRow("peak not a number") << "peak"
                                           << "fast"
                                           << "Peak must be a number of TFLOP/s";
        QTest::newRow("tokens not a count") << "min"
                                            << "12q"
                                            << "Shortest prompt:";
        QTest::newRow("zero tokens") << "max"
                                     << "0"
                                     << "Longest prompt: '0' is not a positive token count";
        QTest::newRow("too many tokens") << "max"
                                         << "200m"
                                         << "Longest prompt must be from";
        QTest::newRow("sweep length") << "sweep"
                                      << "-1k"
                                      << "Model-size length";
    }

    void invalidInputIsRefusedWithItsReason() {
        QFETCH(QString, field);
        QFETCH(QString, text);
        QFETCH(QString, message);
        auto w = makeWindow();
        const auto p = panelOf(w);
        NumberField* f = field == "peak"  ? p.peakField()
                         : field == "min" ? p.minTokensField()
                         : field == "max" ? p.maxTokensField()
                                          : p.sweepTokensField();
        const Scenario before = explorerOf(w)->scenario();
        typeInto(f->edit(), text);
        w->refreshNow();
        QVERIFY(!f->isValid());
        QVERIFY2(f->errorText().contains(message), qPrintable(f->errorText()));
        QCOMPARE(explorerOf(w)->scenario(), before);
    }

    void tierAndRangeRefusals() {
        auto w = makeWindow();
        auto* m = panelOf(w).tierModel();
        const Scenario before = explorerOf(w)->scenario();
        QSignalSpy rejected(m, &TierTableModel::rejected);
        QVERIFY(!m->setData(m->index(0, TierTableModel::Bandwidth), QStringLiteral("-1"),
                            Qt::EditRole));
        QCOMPARE(rejected.count(), 1);
        QVERIFY2(
            panelOf(w).messageText().contains("Read bandwidth must be a positive number of GB/s"),
            qPrintable(rejected.front().front().toString() + " / " + panelOf(w).messageText()));
        QVERIFY(!m->setData(m->index(0, TierTableModel::FixedCost), QStringLiteral("soon"),
                            Qt::EditRole));
        QVERIFY(!m->setData(m->index(0, TierTableModel::StagingColumn), QStringLiteral("teleport"),
                            Qt::EditRole));
        QVERIFY(
            !m->setData(m->index(0, TierTableModel::Colour), QStringLiteral("#12"), Qt::EditRole));
        QVERIFY(!m->setData(m->index(0, TierTableModel::Name), QStringLiteral("  "), Qt::EditRole));
        QCOMPARE(rejected.count(), 5);
        QVERIFY(panelOf(w).messageText().contains("A tier needs a name"));
        typeInto(panelOf(w).minTokensField()->edit(), QStringLiteral("200k"));
        QVERIFY(panelOf(w).messageText().contains("longest prompt must be longer"));
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario(), before);
        // A model file that isn't there is refused and the scenario keeps its model.
        QVERIFY(!panelOf(w).selectModel(QStringLiteral("/nonexistent/config.json")));
        QVERIFY(!panelOf(w).messageText().isEmpty());
        QCOMPARE(explorerOf(w)->scenario().model, before.model);
    }

    void tierModelPassesTheModelTester() {
        TierTableModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const Scenario s = *builtinScenario("illustrative", presets()); // three tiers
        m.setTiers(s.tiers);
        QCOMPARE(m.rowCount(), 3);
        QCOMPARE(m.columnCount(), int(TierTableModel::ColumnCount));
        m.addTier(tierFromPreset(*presets().findTier("dram-pcie4")));
        QVERIFY(
            m.setData(m.index(3, TierTableModel::Colour), QStringLiteral("#123456"), Qt::EditRole));
        QCOMPARE(m.data(m.index(3, TierTableModel::Colour), Qt::DecorationRole).value<QColor>(),
                 QColor("#123456"));
        m.removeTier(0);
        m.removeTier(7); // out of range: ignored
        m.setTiers({});
        QCOMPARE(m.rowCount(), 0);
    }

    void openSaveDropAndRestore() {
        QTemporaryDir dir;
        const QString file = dir.filePath("mine.kvbe.json");
        {
            auto w = makeWindow();
            panelOf(w).utilisationSlider()->setValue(70);
            w->refreshNow();
            QVERIFY(w->saveScenario(file).ok());
            QCOMPARE(w->recentFiles().front(), QFileInfo(file).absoluteFilePath());
            panelOf(w).utilisationSlider()->setValue(35);
            w->refreshNow();
            w->close(); // saves layout and the last scenario
        }
        auto w = makeWindow();
        QCOMPARE(explorerOf(w)->scenario().utilisation, 0.35); // restored from QSettings
        QVERIFY(w->openFile(file).ok());
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().utilisation, 0.7);
        QCOMPARE(panelOf(w).utilisationSlider()->value(), 70);

        // A config.json dropped on the window becomes the model.
        const QString config =
            QStringLiteral(KVBE_SOURCE_DIR "/resources/models/Qwen__Qwen3-8B.json");
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(config)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                              Qt::NoModifier);
        QCoreApplication::sendEvent(w.get(), &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(w.get(), &drop);
        w->refreshNow();
        QCOMPARE(QString::fromStdString(explorerOf(w)->scenario().model), config);
        const auto ref = reference(explorerOf(w)->scenario());
        expectSeries(chartOf(w, "breakeven")->seriesByKey("bstar"), ref.curves.tokens,
                     ref.curves.breakevenBandwidth, 1e-9);
        QVERIFY(!w->openFile(dir.filePath("missing.kvbe.json")).ok());
    }

    void presentationAndThemes() {
        auto w = makeWindow();
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        auto* dock = w->findChild<QDockWidget*>("scenarioDock");
        QVERIFY(dock->isVisible());
        w->setPresentation(true);
        QVERIFY(!dock->isVisible());
        for (auto* c : chartsOf(w))
            QVERIFY(c->chartStyle().presentation);
        w->setDark(true);
        for (auto* c : chartsOf(w))
            QVERIFY(c->chartStyle().dark);
        // Refills keep working under the new style.
        panelOf(w).utilisationSlider()->setValue(90);
        w->refreshNow();
        const auto ref = reference(explorerOf(w)->scenario());
        expectSeries(chartOf(w, "breakeven")->seriesByKey("bstar"), ref.curves.tokens,
                     ref.curves.breakevenBandwidth, 1e-9);
        w->setPresentation(false);
        QVERIFY(dock->isVisible());
        w->close();
    }
};

QTEST_MAIN(TestUiControlInputs)
#include "tst_ui_control_inputs.moc"
