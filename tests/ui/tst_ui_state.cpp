// No stale or surprising state (issue 40): the hover readout follows a keyboard change under a
// still pointer; "Discard" on quit does not bring the changes back at the next start; times past
// a second read in seconds.
#include "ui_test_support.h"

#include <QApplication>
#include <QGuiApplication>
#include <QScreen>
#include <QSignalSpy>

using namespace kvbe;
using namespace kvbe::test;

namespace {
QString rectText(const QRect& r) {
    return QStringLiteral("%1×%2 at %3,%4").arg(r.width()).arg(r.height()).arg(r.x()).arg(r.y());
}
} // namespace

class TestUiState : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }

    // The TTFT chart's readout at the plot's centre, then u from 50 % to 60 % by a key on the
    // slider: the readout says the new recompute time without the mouse moving.
    void theHoverReadoutFollowsAKeyboardChange() {
        auto w = std::make_unique<MainWindow>(presets());
        w->fitToScreen(QRect(0, 0, 1366, 768));
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        auto* c = chartOf(w, QStringLiteral("ttft"));
        tabsOf(w)->setCurrentWidget(c);
        w->refreshNow();
        QApplication::processEvents();
        QSignalSpy hovered(c, &ChartView::hovered);
        QTest::mouseMove(c->viewport(), c->mapFromScene(c->chart()->plotArea().center()));
        QApplication::processEvents();
        QVERIFY(!hovered.isEmpty());
        const QString before = hovered.last().at(0).toString();
        QVERIFY2(before.contains(QLatin1String("recompute")), qPrintable(before));

        QSlider* u = panelOf(w).utilisationSlider();
        u->setValue(60); // as the arrow keys move it
        w->refreshNow();
        QApplication::processEvents();
        const QString after = hovered.last().at(0).toString();
        QVERIFY2(after != before && after.contains(QLatin1String("recompute")),
                 qPrintable(before + QStringLiteral(" | ") + after));
        QCOMPARE(explorerOf(w)->scenario().utilisation, 0.6);
    }

    // Quit with unsaved changes: "Discard" starts the next session without them; unattended
    // (nobody to answer), they are kept for it, marked unsaved.
    void discardOnQuitIsNotBroughtBack() {
        const Scenario defaults = *defaultScenario(presets());
        {
            auto w = makeWindow();
            w->setAsk([](QWidget*, const Question&) { return QMessageBox::Discard; });
            panelOf(w).utilisationSlider()->setValue(70);
            w->refreshNow();
            QVERIFY(w->close());
        }
        {
            auto w = makeWindow();
            QCOMPARE(explorerOf(w)->scenario(), defaults);
            QVERIFY(!w->isWindowModified());
            panelOf(w).utilisationSlider()->setValue(65);
            w->refreshNow();
            QVERIFY(w->close()); // offscreen, nobody answers
        }
        auto w = makeWindow();
        QCOMPARE(explorerOf(w)->scenario().utilisation, 0.65);
        QVERIFY(w->isWindowModified());
    }

    // A layout saved on another screen (a run at 2560×1600 ×2, then a smaller screen) opens
    // with this screen's own layout, not at its old size in a corner (issue 40, item 7); one
    // saved on this screen but partly off it is moved onto it whole; either way the window's
    // frame lies within the screen's available area.
    void restoredGeometryIsClampedToTheScreen() {
        const QRect avail = QGuiApplication::primaryScreen()->availableGeometry();
        const auto savedAt = [](const QRect& g) {
            QWidget w;
            w.setGeometry(g);
            return w.saveGeometry();
        };
        const QSize saved = avail.size() * 3 / 4;
        QRect fitted;
        {
            MainWindow reference(presets());
            reference.fitToScreen(avail);
            fitted = reference.geometry();
        }
        // Saved in the corner of a screen twice this one's size.
        QSettings().setValue(QStringLiteral("window/geometry"),
                             savedAt(QRect(avail.topLeft(), saved)));
        QSettings().setValue(QStringLiteral("window/screen"), avail.size() * 2);
        {
            MainWindow w(presets());
            QVERIFY2(avail.contains(w.frameGeometry()), qPrintable(rectText(w.frameGeometry())));
            QCOMPARE(w.geometry(), fitted);
        }
        // Saved on this screen, three quarters of it past the right and bottom edges.
        QSettings().setValue(
            QStringLiteral("window/geometry"),
            savedAt(QRect(avail.topLeft() + QPoint(avail.width() - saved.width() / 4,
                                                   avail.height() - saved.height() / 4),
                          saved)));
        QSettings().setValue(QStringLiteral("window/screen"), avail.size());
        {
            MainWindow w(presets());
            QVERIFY2(avail.contains(w.frameGeometry()), qPrintable(rectText(w.frameGeometry())));
            QVERIFY2(w.width() <= avail.width() && w.height() <= avail.height(),
                     qPrintable(rectText(w.geometry())));
        }
        // A window closed on this screen saves the screen it was laid out for.
        {
            MainWindow w(presets());
            w.setAsk([](QWidget*, const Question&) { return QMessageBox::Discard; });
            QVERIFY(w.close());
        }
        QCOMPARE(QSettings().value(QStringLiteral("window/screen")).toSize(), avail.size());
    }

    // 12191.6 ms reads 12.19 s; under a second, milliseconds as before.
    void timesPastASecondReadInSeconds() {
        QCOMPARE(millisText(12.1916), QStringLiteral("12.19 s"));
        QCOMPARE(millisText(1.0), QStringLiteral("1.00 s"));
        QCOMPARE(millisText(0.4646), QStringLiteral("464.6 ms"));
        QCOMPARE(millisText(0.0012345), QStringLiteral("1.234 ms"));
        QCOMPARE(millisText(250.0), QStringLiteral("250.0 s"));
    }
};

QTEST_MAIN(TestUiState)
#include "tst_ui_state.moc"
