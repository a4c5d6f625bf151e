// The window on a laptop screen (1366×768: the chart keeps most of
// the height, nothing falls off the bottom, the Probes and Fleet docks folded to their tabs until
// used), presentation mode (the chart alone; Esc puts everything back) and the keyboard (Tab
// leaves the tier table; the utilisation slider shows its focus).
#include "kvbe/ui/fleet/fleet_panel.h"
#include "ui_test_support.h"

#include <QAbstractButton>
#include <QApplication>
#include <QDockWidget>
#include <QHeaderView>
#include <QListWidget>
#include <QMenuBar>
#include <QScrollBar>
#include <QSlider>
#include <QStatusBar>
#include <QTabBar>
#include <QTableView>
#include <QToolBar>
#include <QToolButton>

using namespace kvbe;
using namespace kvbe::test;

namespace {

const QString kFixtures = QStringLiteral(KVBE_FIXTURES "/calibration");

// The widgets a user sees: visible, in the window, not a popup, and not parked outside it (Qt
// keeps a dock area's unused tab bar "visible" far off the window).
QSet<QWidget*> visibleWidgets(QWidget* w) {
    QSet<QWidget*> out;
    for (QWidget* c : w->findChildren<QWidget*>())
        if (c->isVisible() && c->window() == w && !c->visibleRegion().isEmpty()) out.insert(c);
    return out;
}

QString describe(const QWidget* v) {
    return QStringLiteral("%1 \"%2\" in %3")
        .arg(QString::fromLatin1(v->metaObject()->className()), v->objectName(),
             v->parentWidget() ? v->parentWidget()->objectName() : QString());
}

// The layout as the user sees it: each visible widget's kind, name and place in the window
// (tab bars by their tabs: Qt makes new ones when it restores dock tabs).
QStringList layoutOf(QWidget* w) {
    QStringList out;
    for (QWidget* v : visibleWidgets(w)) {
        const QRect r(v->mapTo(w, QPoint(0, 0)), v->size());
        QString s =
            describe(v) +
            QStringLiteral(" at %1,%2 %3x%4").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
        if (auto* tb = qobject_cast<QTabBar*>(v))
            for (int i = 0; i < tb->count(); ++i)
                s += QLatin1Char(' ') + tb->tabText(i);
        out << s;
    }
    out.sort();
    return out;
}

QString differences(const QStringList& before, const QStringList& after) {
    QStringList out;
    for (const QString& v : before)
        if (!after.contains(v)) out << QStringLiteral("gone: ") + v;
    for (const QString& v : after)
        if (!before.contains(v)) out << QStringLiteral("new: ") + v;
    return out.join(QStringLiteral("; "));
}

bool isAncestorOrSelf(const QWidget* a, const QWidget* of) {
    for (const QWidget* p = of; p; p = p->parentWidget())
        if (p == a) return true;
    return false;
}

std::unique_ptr<MainWindow> shownOnLaptop() {
    auto w = std::make_unique<MainWindow>(presets());
    w->fitToScreen(QRect(0, 0, 1366, 768));
    w->show();
    if (!QTest::qWaitForWindowExposed(w.get())) return nullptr;
    w->refreshNow();
    QApplication::processEvents();
    return w;
}

} // namespace

class TestLayout : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }

    // ---- 5. laptop screens

    void aLaptopScreenLeavesTheChartMostOfTheHeight() {
        auto w = shownOnLaptop();
        QVERIFY(w);
        auto* chart = chartOf(w, QStringLiteral("breakeven"));
        QVERIFY(chart);
        QVERIFY(chart->isVisible());
        const double share = double(chart->height()) / w->height();
        qInfo("chart height %d of %d (%.0f %%)", chart->height(), w->height(), 100 * share);
        // Nothing falls off a 768 px screen.
        QTRY_VERIFY2(
            w->frameGeometry().bottom() < 768,
            qPrintable(QStringLiteral("window bottom at %1").arg(w->frameGeometry().bottom())));
        QVERIFY(w->frameGeometry().right() < 1366);
        QVERIFY2(
            share >= 0.60,
            qPrintable(
                QStringLiteral("the chart has %1 % of the height").arg(100 * share, 0, 'f', 0)));
    }

    void probesAndFleetStartFoldedToTheirTabs() {
        auto w = shownOnLaptop();
        QVERIFY(w);
        auto* probes = w->findChild<QDockWidget*>(QStringLiteral("probeDock"));
        auto* fleet = w->findChild<QDockWidget*>(QStringLiteral("fleetDock"));
        QVERIFY(probes && fleet);
        QVERIFY(probes->isVisible());
        QVERIFY(!probes->widget()->isVisible());
        QVERIFY(!fleet->widget()->isVisible());
        // Unfolded by its button, the dock shows its contents, Run included, inside the window.
        auto* toggle = w->findChild<QToolButton*>(QStringLiteral("probeDockToggle"));
        QVERIFY(toggle);
        toggle->click();
        QApplication::processEvents();
        QVERIFY(probes->widget()->isVisible());
        auto* run = w->findChild<QWidget*>(QStringLiteral("runProbe"));
        QVERIFY(run && run->isVisible());
        const QRect inWindow(run->mapTo(w.get(), QPoint(0, 0)), run->size());
        QVERIFY(w->rect().contains(inWindow));
        // And folded again.
        toggle->click();
        QApplication::processEvents();
        QVERIFY(!probes->widget()->isVisible());
    }

    void anImportUnfoldsTheFleetDock() {
        auto w = shownOnLaptop();
        QVERIFY(w);
        auto* fleet = w->findChild<QDockWidget*>(QStringLiteral("fleetDock"));
        QVERIFY(w->importCalibrations({kFixtures + QStringLiteral("/kvbe-node17.json")}));
        QVERIFY(QTest::qWaitFor([&] { return !fleetPanelOf(w)->importing(); }, 60000));
        QApplication::processEvents();
        QVERIFY(fleet->widget()->isVisible());
    }

    void fleetWarningsAreAFoldedList() {
        auto w = shownOnLaptop();
        QVERIFY(w);
        QVERIFY(
            w->importCalibrations({kFixtures + QStringLiteral("/pykvcache-v1-qwen3-4b-h100.json"),
                                   kFixtures + QStringLiteral("/kvbe-node17.json")}));
        QVERIFY(QTest::qWaitFor([&] { return !fleetPanelOf(w)->importing(); }, 60000));
        QApplication::processEvents();
        auto* list = w->findChild<QListWidget*>(QStringLiteral("fleetWarnings"));
        auto* toggle = w->findChild<QAbstractButton*>(QStringLiteral("fleetWarningsToggle"));
        QVERIFY(list && toggle);
        QVERIFY(toggle->isVisible());
        QVERIFY(list->count() >= 1);
        // Folded, the button says how many there are; a click lists them one per row.
        QVERIFY(!list->isVisible());
        QVERIFY2(toggle->text().contains(QString::number(list->count())),
                 qPrintable(toggle->text()));
        toggle->click();
        QApplication::processEvents();
        QVERIFY(list->isVisible());
    }

    // ---- 6. presentation mode

    void presentationShowsOnlyTheChart() {
        auto w = shownOnLaptop();
        QVERIFY(w);
        const QStringList before = layoutOf(w.get());
        const QRect geometryBefore = w->geometry();
        auto* chart = chartOf(w, QStringLiteral("breakeven"));
        QVERIFY(chart && chart->isVisible());
        QTest::keyClick(w.get(), Qt::Key_F5);
        QApplication::processEvents();
        QVERIFY(w->presentation());
        QVERIFY(w->windowState() & Qt::WindowFullScreen);
        for (QWidget* v : visibleWidgets(w.get())) {
            if (isAncestorOrSelf(chart, v) || isAncestorOrSelf(v, chart)) continue;
            QFAIL(qPrintable(
                QStringLiteral("visible in presentation mode: %1 \"%2\" in %3")
                    .arg(QString::fromLatin1(v->metaObject()->className()), v->objectName(),
                         QString::fromLatin1(v->parentWidget()->metaObject()->className()))));
        }
        // Esc leaves, and the window is as it was.
        QTest::keyClick(w.get(), Qt::Key_Escape);
        QApplication::processEvents();
        QVERIFY(!w->presentation());
        QVERIFY(!(w->windowState() & Qt::WindowFullScreen));
        QTRY_VERIFY2(layoutOf(w.get()) == before,
                     qPrintable(differences(before, layoutOf(w.get()))));
        QTRY_COMPARE(w->geometry(), geometryBefore);
    }

    void presentationKeepsTheDocksAsTheUserLeftThem() {
        auto w = shownOnLaptop();
        QVERIFY(w);
        auto* compare = w->findChild<QDockWidget*>(QStringLiteral("compareDock"));
        compare->hide(); // the user closed it
        auto* probes = w->findChild<QDockWidget*>(QStringLiteral("probeDock"));
        w->setBottomDocksCollapsed(false);
        QApplication::processEvents();
        w->setPresentation(true);
        QApplication::processEvents();
        w->setPresentation(false);
        QApplication::processEvents();
        QVERIFY(!compare->isVisible());
        QVERIFY(probes->widget()->isVisible());
        QVERIFY(w->menuBar()->isVisible());
        QVERIFY2(w->statusBar()->isVisible(),
                 qPrintable(QStringLiteral("hidden %1 window visible %2")
                                .arg(w->statusBar()->isHidden())
                                .arg(w->isVisible())));
        QVERIFY(w->findChild<QToolBar*>(QStringLiteral("mainToolbar"))->isVisible());
    }

    // ---- 9. the tier table at the panel's width

    void everyTierColumnIsInView() {
        auto w = shownOnLaptop();
        QVERIFY(w);
        auto* table = w->findChild<QTableView*>(QStringLiteral("tierView"));
        QVERIFY(table && table->isVisible());
        auto* header = table->horizontalHeader();
        const int viewport = table->viewport()->width();
        for (int c = 0; c < header->count(); ++c) {
            const QString name =
                table->model()->headerData(c, Qt::Horizontal).toString().replace('\n', ' ');
            const int left = header->sectionViewportPosition(c);
            const int width = header->sectionSize(c);
            qInfo("column %d \"%s\": %d..%d px of %d", c, qPrintable(name), left, left + width,
                  viewport);
            QVERIFY2(!header->isSectionHidden(c), qPrintable(name));
            QVERIFY2(left >= 0 && left + width <= viewport,
                     qPrintable(QStringLiteral("column \"%1\" spans %2 to %3 px of a %4 px view")
                                    .arg(name)
                                    .arg(left)
                                    .arg(left + width)
                                    .arg(viewport)));
            // Wide enough for its header and cells; a long tier name may elide (its tooltip
            // holds it whole), a short one may not.
            const int needed =
                c == TierTableModel::Name
                    ? table->fontMetrics().horizontalAdvance(QStringLiteral("NVMe (PCIe 5.0)"))
                    : std::max(header->sectionSizeHint(c),
                               static_cast<QAbstractItemView*>(table)->sizeHintForColumn(c));
            QVERIFY2(width >= needed, qPrintable(QStringLiteral("column \"%1\" is %2 px, needs %3")
                                                     .arg(name)
                                                     .arg(width)
                                                     .arg(needed)));
        }
        QCOMPARE(table->horizontalScrollBar()->maximum(), 0);
    }

    // ---- 8. keyboard

    void tabLeavesTheTierTable() {
        auto w = makeWindow();
        w->show();
        QApplication::setActiveWindow(w.get());
        QVERIFY(QTest::qWaitForWindowActive(w.get()));
        auto* table = w->findChild<QTableView*>(QStringLiteral("tierView"));
        QVERIFY(table);
        table->setFocus(Qt::TabFocusReason);
        table->setCurrentIndex(table->model()->index(0, 0));
        QTRY_VERIFY(table->hasFocus());
        // The control after the table in the focus chain: what Tab must reach.
        QWidget* next = table->nextInFocusChain();
        while (next && (!(next->focusPolicy() & Qt::TabFocus) || !next->isVisible() ||
                        !next->isEnabled() || table->isAncestorOf(next)))
            next = next->nextInFocusChain();
        QVERIFY(next);
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        QVERIFY2(!table->hasFocus() && !table->isAncestorOf(QApplication::focusWidget()),
                 "Tab stayed in the tier table");
        QCOMPARE(QApplication::focusWidget(), next);
        // And Shift+Tab goes back into it.
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Backtab);
        QVERIFY(table->hasFocus());
    }

    void theUtilisationSliderShowsItsFocus() {
        auto w = makeWindow();
        w->show();
        QApplication::setActiveWindow(w.get());
        QVERIFY(QTest::qWaitForWindowActive(w.get()));
        auto* slider = w->findChild<QSlider*>(QStringLiteral("utilisation"));
        QVERIFY(slider);
        QVERIFY(slider->focusPolicy() & Qt::TabFocus);
        auto* other = w->findChild<QTableView*>(QStringLiteral("tierView"));
        other->setFocus(Qt::TabFocusReason);
        QTRY_VERIFY(other->hasFocus());
        const QImage unfocused = slider->grab().toImage();
        slider->setFocus(Qt::TabFocusReason);
        QTRY_VERIFY(slider->hasFocus());
        const QImage focused = slider->grab().toImage();
        QVERIFY2(focused != unfocused, "the slider looks the same with and without focus");
    }
};

QTEST_MAIN(TestLayout)
#include "tst_ui_layout.moc"
