// Issue 12, defect 9: the smaller points. No "Logarithms of zero" on the console, the log-axis
// button says what the chart shows after a restart, the tier table writes bandwidths with a
// sensible precision, a custom tier is pipelined like the NVMe presets, a stale error leaves the
// status bar after a successful open, and export dialogs remember their folder.
#include "kvbe/ui/scenario_panel.h"
#include "ui_test_support.h"

#include <QAction>
#include <QApplication>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QToolButton>

using namespace kvbe;
using namespace kvbe::test;

namespace {

QStringList g_logZero;
QtMessageHandler g_previous = nullptr;

void recordLogZero(QtMsgType type, const QMessageLogContext& ctx, const QString& msg) {
    if (msg.contains(QLatin1String("Logarithms of zero"))) g_logZero << msg;
    if (g_previous) g_previous(type, ctx, msg);
}

} // namespace

class TestPolish : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }

    void noLogarithmsOfZeroOnTheConsole() {
        g_logZero.clear();
        g_previous = qInstallMessageHandler(recordLogZero);
        {
            auto w = makeWindow();
            w->show();
            QVERIFY(QTest::qWaitForWindowExposed(w.get()));
            auto* logY = menuAction(w.get(), QStringLiteral("Log value axis"));
            QVERIFY(logY);
            // Every chart, both axes kinds, a few scenarios (a 70B model, a tiny utilisation).
            for (const QString& model : {QStringLiteral("meta-llama/Llama-3.2-3B"),
                                         QStringLiteral("meta-llama/Llama-3.3-70B-Instruct")}) {
                QVERIFY(panelOf(w).selectModel(model));
                w->refreshNow();
                for (int i = 0; i < tabsOf(w)->count(); ++i) {
                    tabsOf(w)->setCurrentIndex(i);
                    QApplication::processEvents();
                    if (!logY->isEnabled()) continue;
                    logY->trigger();
                    QApplication::processEvents();
                    logY->trigger();
                    QApplication::processEvents();
                }
            }
        }
        qInstallMessageHandler(g_previous);
        QVERIFY2(g_logZero.isEmpty(),
                 qPrintable(
                     QStringLiteral("%1 times: %2").arg(g_logZero.size()).arg(g_logZero.value(0))));
    }

    void theLogAxisButtonMatchesTheChartAfterARestart() {
        QSettings().setValue(QStringLiteral("window/tab"), 1); // the fraction chart: linear
        auto w = makeWindow();
        auto* c = currentChartOf(w);
        QVERIFY(c);
        auto* logY = menuAction(w.get(), QStringLiteral("Log value axis"));
        QVERIFY(logY);
        QCOMPARE(logY->isChecked(), c->logY());
    }

    void tierBandwidthsReadWithASensiblePrecision() {
        auto w = makeWindow();
        Scenario s = explorerOf(w)->scenario();
        s.tiers[1].bandwidthGBps = 12.5031;
        explorerOf(w)->edit(s, QStringLiteral("measured"));
        auto* table = w->findChild<QTableView*>(QStringLiteral("tierView"));
        QVERIFY(table);
        const QModelIndex idx = table->model()->index(1, 1);
        QCOMPARE(idx.data(Qt::DisplayRole).toString(), QStringLiteral("12.5"));
        // Edited, the value is whole.
        QCOMPARE(idx.data(Qt::EditRole).toString(), QStringLiteral("12.5031"));
    }

    void aCustomTierIsPipelinedLikeTheNvmePresets() {
        auto w = makeWindow();
        auto* add = w->findChild<QToolButton*>(QStringLiteral("addTier"));
        QVERIFY(add && add->menu());
        QAction* custom = nullptr;
        for (QAction* a : add->menu()->actions())
            if (a->text().startsWith(QStringLiteral("Custom"))) custom = a;
        QVERIFY(custom);
        custom->trigger();
        w->refreshNow();
        const auto& tiers = explorerOf(w)->scenario().tiers;
        QCOMPARE(QString::fromStdString(std::string(toString(tiers.back().staging))),
                 QString::fromStdString(std::string(toString(Staging::Pipelined))));
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

QTEST_MAIN(TestPolish)
#include "tst_ui_polish.moc"
