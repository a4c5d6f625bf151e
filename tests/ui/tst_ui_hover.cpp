// The hover box: never cut at the chart's edges, however many lines it has (the Fleet files add
// a line each); gone from the chart and the status bar when the mouse leaves, and after F5 and
// Esc (it used to stay, empty and oversized, until the mouse moved). The status bar shows whole
// lines of it.
#include "ui_test_support.h"

#include <QApplication>
#include <QGraphicsRectItem>
#include <QStatusBar>

using namespace kvbe;
using namespace kvbe::test;

namespace {

// The crosshair's box: ChartView's rectangle item above everything else.
QGraphicsRectItem* tipBox(ChartView* c) {
    for (QGraphicsItem* i : c->scene()->items())
        if (auto* r = qgraphicsitem_cast<QGraphicsRectItem*>(i); r && r->zValue() == 100) return r;
    return nullptr;
}

} // namespace

class TestUiHover : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }

    void theBoxStaysInsideAndGoesAway() {
        auto w = std::make_unique<MainWindow>(presets());
        w->fitToScreen(QRect(0, 0, 1366, 768));
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(w->importCalibrations({QStringLiteral(KVBE_FIXTURES "/calibration")}));
        QVERIFY(QTest::qWaitFor([&] { return !fleetPanelOf(w)->importing(); }, 60000));
        w->setBottomDocksCollapsed(true);
        auto* c = chartOf(w, QStringLiteral("ttft"));
        tabsOf(w)->setCurrentWidget(c);
        w->refreshNow();
        QApplication::processEvents();
        QGraphicsRectItem* box = tipBox(c);
        QVERIFY(box);

        const QRectF plot = c->chart()->plotArea();
        const QRectF view = c->mapToScene(c->viewport()->rect()).boundingRect();
        const QPointF corners[] = {{plot.left() + 3, plot.top() + 3},
                                   {plot.left() + 3, plot.bottom() - 3},
                                   {plot.right() - 3, plot.top() + 3},
                                   {plot.right() - 3, plot.bottom() - 3},
                                   {plot.center().x(), plot.center().y()}};
        for (const QPointF p : corners) {
            QTest::mouseMove(c->viewport(), c->mapFromScene(p));
            QApplication::processEvents();
            QVERIFY(box->isVisible());
            const QRectF r = box->sceneBoundingRect();
            const QString where =
                QStringLiteral("box %1,%2 %3×%4 for the cursor at %5,%6 in a view of %7×%8")
                    .arg(r.x())
                    .arg(r.y())
                    .arg(r.width())
                    .arg(r.height())
                    .arg(p.x())
                    .arg(p.y())
                    .arg(view.width())
                    .arg(view.height());
            // Its left edge and top line are always in view; all of it where it fits.
            QVERIFY2(r.left() >= view.left() && r.top() >= view.top(), qPrintable(where));
            if (r.width() <= view.width()) QVERIFY2(r.right() <= view.right(), qPrintable(where));
            if (r.height() <= view.height())
                QVERIFY2(r.bottom() <= view.bottom(), qPrintable(where));
            const QString status = w->statusBar()->currentMessage();
            QVERIFY2(!status.isEmpty() &&
                         QFontMetrics(w->statusBar()->font()).horizontalAdvance(status) <=
                             w->statusBar()->width(),
                     qPrintable(status));
        }

        // The mouse leaves: no box, and no stale values in the status bar.
        QEvent leave(QEvent::Leave);
        QApplication::sendEvent(c, &leave);
        QVERIFY(!box->isVisible());
        QVERIFY2(w->statusBar()->currentMessage().isEmpty(),
                 qPrintable(w->statusBar()->currentMessage()));

        // F5 and Esc with the box shown: it does not stay behind.
        // (A move to where the cursor already is sends no event.)
        QTest::mouseMove(c->viewport(), c->mapFromScene(plot.center() + QPointF(-11, 6)));
        QApplication::processEvents();
        QVERIFY(box->isVisible());
        w->setPresentation(true);
        QTest::qWait(100); // full screen, laid out anew
        QVERIFY(!box->isVisible());
        QTest::mouseMove(c->viewport(),
                         c->mapFromScene(c->chart()->plotArea().center() + QPointF(9, 7)));
        QApplication::processEvents();
        QVERIFY(box->isVisible());
        w->setPresentation(false);
        QTest::qWait(100);
        QVERIFY(!box->isVisible());
    }
};

QTEST_MAIN(TestUiHover)
#include "tst_ui_hover.moc"
