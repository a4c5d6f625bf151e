// The window on any screen: after each thing a person does (open a trace, open another, import
// the Fleet files, run a probe, fit, pin), the window still fits a laptop's 1366×768, a
// 1600×1000 screen and a 2560×1600 screen at ×2 (1280×800 in Qt's pixels): its minimum size
// never passes the available screen, so nothing can spill off it. This suite also runs with
// QT_SCALE_FACTOR=2 (tst_ui_screens_x2). And the Workload tab's capacity sliders keep a length a
// mouse can use at every size.
#include "ui_test_support.h"

#include <QApplication>
#include <QDockWidget>
#include <QScreen>
#include <QSlider>
#include <QStatusBar>

using namespace kvbe;
using namespace kvbe::test;

namespace {

const QString kFixtures = QStringLiteral(KVBE_FIXTURES);
// A window manager's title bar: the window's own height is the screen's less this.
constexpr int kTitleBar = 32;

WorkloadView* workloadOf(MainWindow& w) {
    return child<WorkloadView>(&w, QStringLiteral("workloadView"));
}

bool settled(MainWindow& w) {
    auto* v = workloadOf(w);
    auto* fleet = fleetPanelOf(&w);
    auto* probes = probePanelOf(&w);
    return QTest::qWaitFor(
        [&] {
            return !v->loading() && !v->replaying() && !fleet->importing() &&
                   !probes->anyRunning() && !explorerOf(&w)->recomputePending();
        },
        120000);
}

// Says what does not fit after an action: a window that grew past the size it was given for the
// screen (its right edge and status bar off the screen), then, sized to the screen's available
// area as a person maximising it would, a minimum size past the screen, a window that would not
// shrink to it, or a status bar below the window's bottom edge.
QString misfit(MainWindow& w, QSize screen, QSize fitted, const QString& after) {
    QStringList grew;
    if (w.width() > fitted.width() || w.height() > fitted.height())
        grew << QStringLiteral("grew to %1×%2 from %3×%4")
                    .arg(w.width())
                    .arg(w.height())
                    .arg(fitted.width())
                    .arg(fitted.height());
    const QSize room(screen.width(), screen.height() - kTitleBar);
    w.resize(room);
    QApplication::processEvents();
    QApplication::processEvents();
    const QSize min = w.minimumSize().expandedTo(w.minimumSizeHint());
    QStringList out = grew;
    if (min.width() > room.width() || min.height() > room.height())
        out << QStringLiteral("minimum %1×%2 > %3×%4")
                   .arg(min.width())
                   .arg(min.height())
                   .arg(room.width())
                   .arg(room.height());
    if (w.size() != room)
        out << QStringLiteral("window %1×%2, asked %3×%4")
                   .arg(w.width())
                   .arg(w.height())
                   .arg(room.width())
                   .arg(room.height());
    const QRect bar(w.statusBar()->mapTo(&w, QPoint(0, 0)), w.statusBar()->size());
    if (!w.rect().contains(bar))
        out << QStringLiteral("status bar at %1..%2 of %3")
                   .arg(bar.top())
                   .arg(bar.bottom())
                   .arg(w.height());
    if (out.isEmpty()) return {};
    return after + QStringLiteral(": ") + out.join(QStringLiteral("; "));
}

} // namespace

class TestUiScreens : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        isolateSettings();
        qputenv("KVBE_CLI", KVBE_FAKE_PROBE_PATH);
        qInfo("device pixel ratio %.1f", qApp->devicePixelRatio());
    }
    void init() { QSettings().clear(); }
    void cleanup() { QTRY_VERIFY(QApplication::topLevelWidgets().isEmpty()); }

    void theWindowFitsTheScreenAfterEachAction_data() {
        QTest::addColumn<QSize>("screen");
        QTest::newRow("1366x768") << QSize(1366, 768);
        QTest::newRow("1600x1000") << QSize(1600, 1000);
        // 2560×1600 at QT_SCALE_FACTOR=2: the window lays itself out in 1280×800 of Qt's pixels.
        QTest::newRow("2560x1600 at x2") << QSize(1280, 800);
    }
    void theWindowFitsTheScreenAfterEachAction() {
        QFETCH(QSize, screen);
        auto w = std::make_unique<MainWindow>(presets());
        w->fitToScreen(QRect(QPoint(0, 0), screen));
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        w->refreshNow();
        QApplication::processEvents();
        const QRect fitted = w->geometry();
        QStringList misfits;
        auto check = [&](const QString& after) {
            QVERIFY(settled(*w));
            if (const QString m = misfit(*w, screen, fitted.size(), after); !m.isEmpty()) {
                qWarning("%s", qPrintable(m));
                misfits << m;
            }
            // Back to the size it was given, as the next action finds it.
            w->setGeometry(fitted);
            QApplication::processEvents();
        };
        check(QStringLiteral("opening"));

        QVERIFY(w->openTrace(kFixtures + QStringLiteral("/traces/mooncake-conversation.jsonl")));
        check(QStringLiteral("a trace open"));
        // A second trace, with its longer description, on the same tab.
        QVERIFY(w->openTrace(kFixtures + QStringLiteral("/traces/bailian-chain.jsonl")));
        check(QStringLiteral("a second trace open"));

        QVERIFY(w->importCalibrations({kFixtures + QStringLiteral("/calibration")}));
        check(QStringLiteral("the Fleet import"));
        auto* fleet = fleetPanelOf(w);
        for (int row = 0; row < fleet->model()->rowCount(); ++row)
            if (fleet->model()->at(row).calibration.source.find("node17") != std::string::npos) {
                fleet->selectRow(row);
                QVERIFY(fleet->fitSelected().ok());
            }
        check(QStringLiteral("a fit"));

        auto* probes = probePanelOf(w);
        probes->setProbe(QStringLiteral("nvme-read"));
        child<QDockWidget>(w.get(), QStringLiteral("probeDock"))->raise();
        QVERIFY(probes->run());
        check(QStringLiteral("a probe run"));

        QVERIFY(w->pinCurrent(QStringLiteral("pinned")));
        check(QStringLiteral("a pin"));

        // Every tab in turn: none may ask for more than the screen.
        auto* tabs = tabsOf(w);
        for (int i = 0; i < tabs->count(); ++i) {
            tabs->setCurrentIndex(i);
            check(QStringLiteral("the %1 tab").arg(tabs->tabText(i)));
        }
        QVERIFY2(misfits.isEmpty(), qPrintable(QStringLiteral("%1 misfits, the first: %2")
                                                   .arg(misfits.size())
                                                   .arg(misfits.value(0))));
    }

    // The capacity sliders keep a usable length (a thumb and room to drag it), at every size.
    void capacitySlidersKeepAUsableLength_data() { theWindowFitsTheScreenAfterEachAction_data(); }
    void capacitySlidersKeepAUsableLength() {
        QFETCH(QSize, screen);
        auto w = std::make_unique<MainWindow>(presets());
        w->fitToScreen(QRect(QPoint(0, 0), screen));
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(w->openTrace(kFixtures + QStringLiteral("/traces/mooncake-conversation.jsonl")));
        QVERIFY(settled(*w));
        w->resize(screen.width(), screen.height() - kTitleBar);
        QApplication::processEvents();
        const auto sliders = workloadOf(*w)->findChildren<QSlider*>();
        QVERIFY(!sliders.isEmpty());
        // 120 px: some 30 positions of 4 px for the 68 steps' thumb, a length a hand can follow.
        const int usable = 120;
        for (QSlider* s : sliders) {
            QVERIFY2(s->isVisible(), qPrintable(s->objectName()));
            QVERIFY2(s->width() >= usable,
                     qPrintable(
                         QStringLiteral("%1 is %2 px long").arg(s->objectName()).arg(s->width())));
        }
    }
};

QTEST_MAIN(TestUiScreens)
#include "tst_ui_screens.moc"
