// The smaller points. No "Logarithms of zero" on the console, the log-axis
// button says what the chart shows after a restart, the tier table writes bandwidths with a
// sensible precision, a custom tier is pipelined like the NVMe presets, a stale error leaves the
// status bar after a successful open, and export dialogs remember their folder.
#include "kvbe/ui/scenario/scenario_panel.h"
#include "ui_test_support.h"

#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolButton>

#include <functional>

using namespace kvbe;
using namespace kvbe::test;

namespace {

// Warnings on the console while a test drives the window: "Logarithms of zero and negative
// values are undefined." and its kin come from Qt Charts when a log axis meets a value <= 0.
QStringList g_warnings;
QtMessageHandler g_previous = nullptr;

void recordWarnings(QtMsgType type, const QMessageLogContext& ctx, const QString& msg) {
    if (type == QtWarningMsg || type == QtCriticalMsg) g_warnings << msg;
    if (g_previous) g_previous(type, ctx, msg);
}

// Answers the next file dialog once it is open: the static QFileDialog functions run their own
// event loop, so the answer comes from a timer that looks for the modal dialog, a bounded number
// of times (the dialog is up after the first few events; no wall-clock wait).
void answerNextFileDialog(std::function<void(QFileDialog*)> answer, int tries = 1000) {
    QTimer::singleShot(0, qApp, [answer = std::move(answer), tries]() mutable {
        if (auto* d = qobject_cast<QFileDialog*>(QApplication::activeModalWidget()))
            answer(d);
        else if (tries > 0)
            answerNextFileDialog(std::move(answer), tries - 1);
    });
}

} // namespace

class TestPolish : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        isolateSettings();
        // Qt's own file dialog, which a test can find and answer, on every platform.
        QApplication::setAttribute(Qt::AA_DontUseNativeDialogs);
    }
    void init() { QSettings().clear(); }

    // The console logged "Logarithms of zero" 11 times. Every path that did,
    // through the window: log and linear axes on each chart, with model and GPU changes, a tier
    // removed and added, pins, and the minimum-cached-fraction chart of a 70B model on a log
    // axis. No warning at all from the charts.
    void noLogarithmsOfZeroOnTheConsole() {
        g_warnings.clear();
        g_previous = qInstallMessageHandler(recordWarnings);
        {
            auto w = makeWindow();
            w->show();
            QVERIFY(QTest::qWaitForWindowExposed(w.get()));
            auto* logY = menuAction(w.get(), QStringLiteral("Log value axis"));
            QVERIFY(logY);
            // Each chart in turn on screen, its value axis to the other kind and back.
            const auto toggleEveryChart = [&] {
                for (int i = 0; i < tabsOf(w)->count(); ++i) {
                    tabsOf(w)->setCurrentIndex(i);
                    w->refreshNow();
                    QApplication::processEvents();
                    if (!logY->isEnabled()) continue;
                    for (int k = 0; k < 2; ++k) {
                        logY->trigger();
                        w->refreshNow();
                        QApplication::processEvents();
                    }
                }
            };
            toggleEveryChart();
            // Every chart on a log axis while the scenario changes under it.
            for (int i = 0; i < tabsOf(w)->count(); ++i) {
                tabsOf(w)->setCurrentIndex(i);
                w->refreshNow();
                if (logY->isEnabled() && !logY->isChecked()) logY->trigger();
            }
            QVERIFY(w->pinCurrent(QStringLiteral("the default")));
            for (const QString& model : {QStringLiteral("meta-llama/Llama-3.3-70B-Instruct"),
                                         QStringLiteral("meta-llama/Llama-3.2-3B")}) {
                QVERIFY(panelOf(w).selectModel(model));
                w->refreshNow();
                toggleEveryChart();
            }
            auto* gpu = panelOf(w).gpuBox();
            QVERIFY(gpu->count() > 1);
            gpu->setCurrentIndex((gpu->currentIndex() + 1) % gpu->count());
            w->refreshNow();
            toggleEveryChart();
            // A tier removed and one added from the presets' menu.
            auto* tiers = panelOf(w).tierModel();
            const int before = tiers->rowCount();
            tiers->removeTier(before - 1);
            w->refreshNow();
            toggleEveryChart();
            auto* add = w->findChild<QToolButton*>(QStringLiteral("addTier"));
            QVERIFY(add && add->menu() && !add->menu()->actions().isEmpty());
            add->menu()->actions().front()->trigger();
            w->refreshNow();
            QCOMPARE(tiers->rowCount(), before);
            // The added tier without a fixed cost: p* = 0, which a log length axis cannot place.
            Scenario s = explorerOf(w)->scenario();
            s.tiers.back().tFixedMs = 0;
            explorerOf(w)->edit(s, QStringLiteral("no fixed cost"));
            w->refreshNow();
            const auto& pStar = explorerOf(w)->result()->curves.tiers.back().breakevenPrefix;
            QVERIFY(pStar && *pStar == 0);
            QVERIFY(explorerOf(w)->scenario().lengths.log);
            toggleEveryChart();
            QVERIFY(w->pinCurrent(QStringLiteral("tiers changed")));
            toggleEveryChart();
            // The 70B model's minimum cached fraction on a log axis, with both pins.
            QVERIFY(panelOf(w).selectModel(QStringLiteral("meta-llama/Llama-3.3-70B-Instruct")));
            w->refreshNow();
            auto* fraction = chartOf(w, QStringLiteral("fraction"));
            tabsOf(w)->setCurrentWidget(fraction);
            w->refreshNow();
            if (!fraction->logY()) logY->trigger();
            w->refreshNow();
            QApplication::processEvents();
            QVERIFY(fraction->logY());
            explorerOf(w)->pins()->clear();
            w->refreshNow();
            QApplication::processEvents();
        }
        qInstallMessageHandler(g_previous);
        // Every warning counts, but for the platform plugin's notes on what it cannot do
        // ("This plugin does not support propagateSizeHints()" offscreen).
        QStringList warnings;
        for (const QString& m : std::as_const(g_warnings))
            if (!m.startsWith(QLatin1String("This plugin does not support"))) warnings << m;
        QVERIFY2(warnings.isEmpty(), qPrintable(QStringLiteral("%1 warnings: %2")
                                                    .arg(warnings.size())
                                                    .arg(warnings.join(QStringLiteral(" | ")))));
    }

    // Export dialogs open in the folder of the last export, also in a window opened later.
    void exportDialogsRememberTheirFolder() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString folder = QFileInfo(dir.path()).canonicalFilePath();
        {
            auto w = makeWindow();
            QString startedIn;
            answerNextFileDialog([&](QFileDialog* d) {
                startedIn = d->directory().canonicalPath();
                d->selectFile(QDir(folder).filePath(QStringLiteral("breakeven.svg")));
                static_cast<QDialog*>(d)->accept(); // QFileDialog::accept is protected
            });
            auto* svg = menuAction(w.get(), QStringLiteral("Chart as SVG"));
            QVERIFY(svg);
            svg->trigger();
            QVERIFY2(!startedIn.isEmpty(), "no file dialog opened");
            // A fresh settings store has no folder yet: not the one chosen now.
            QVERIFY(startedIn != folder);
            QVERIFY(QFile::exists(QDir(folder).filePath(QStringLiteral("breakeven.svg"))));
        }
        // A new window, as after a restart: the image and the data dialogs start there.
        auto w = makeWindow();
        for (const char* action : {"Chart data as CSV", "Chart as SVG"}) {
            QString startedIn, proposed;
            answerNextFileDialog([&](QFileDialog* d) {
                startedIn = d->directory().canonicalPath();
                proposed = d->selectedFiles().value(0);
                d->reject();
            });
            auto* a = menuAction(w.get(), QLatin1String(action));
            QVERIFY(a);
            a->trigger();
            QVERIFY2(!startedIn.isEmpty(), action);
            QCOMPARE(startedIn, folder);
            QVERIFY2(QFileInfo(proposed).canonicalPath() == folder || proposed.startsWith(folder),
                     qPrintable(proposed));
        }
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
