// Exports for a slide. The Pin-table image fills a 1600×900 slide and its scenario names are
// whole, or cut with "…" (never a word dropped silently: "…BF16 KV, FP8 compute" once lost
// "compute" and read as FP8 KV). The Plan chart's export ends its cost axis a nice step past the
// data, with several ticks (it ran to 100,000 for data ending near 57,000, with one tick).
#include "ui_test_support.h"

#include <QApplication>
#include <QImage>
#include <QLogValueAxis>
#include <QTemporaryDir>
#include <QValueAxis>

#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/charts/plan_chart.h"
#include "kvbe/ui/compare/pin_table.h"
#include "kvbe/ui/compare/pin_table_painter.h"
#include "kvbe/ui/workload/plan_section.h"

#include <cmath>

using namespace kvbe;
using namespace kvbe::test;

namespace {

const QString kFixtures = QStringLiteral(KVBE_FIXTURES);

// The smallest rectangle holding every pixel that differs from the corner's (the background).
QRect inkBox(const QImage& img) {
    const QRgb bg = img.pixel(0, 0);
    int left = img.width(), right = -1, top = img.height(), bottom = -1;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x)
            if (img.pixel(x, y) != bg) {
                left = std::min(left, x);
                right = std::max(right, x);
                top = std::min(top, y);
                bottom = std::max(bottom, y);
            }
    return right < 0 ? QRect() : QRect(QPoint(left, top), QPoint(right, bottom));
}

// Two unnamed scenarios, so that their labels are the long descriptions of their inputs: the
// current one 70B with FP8 compute (drawn bold), a pin of 3B.
std::unique_ptr<MainWindow> twoLongLabels() {
    auto w = makeWindow();
    Explorer* e = explorerOf(w);
    Scenario s = e->scenario();
    s.name.clear();
    e->edit(s, QStringLiteral("no name"));
    w->refreshNow();
    if (!w->pinCurrent(QString())) return nullptr;
    if (!panelOf(w).selectModel(QStringLiteral("meta-llama/Llama-3.3-70B-Instruct")))
        return nullptr;
    s = e->scenario();
    s.computeDtype = "fp8";
    e->edit(s, QStringLiteral("FP8 compute"));
    w->refreshNow();
    return w;
}

} // namespace

class TestUiSlides : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }

    void thePinTableFillsTheSlide() {
        auto w = twoLongLabels();
        QVERIFY(w);
        const PinComparison& t =
            child<PinTableView>(w.get(), QStringLiteral("pinTable"))->comparison();
        QCOMPARE(t.rows.size(), std::size_t(2));
        QVERIFY2(t.rows[0].label.endsWith(QStringLiteral("FP8 compute")),
                 qPrintable(t.rows[0].label));
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("pins.png"));
        QVERIFY(exportPinTable(t, png, QSize(1600, 900)).ok());
        // scripts/screenshots keeps the export for the README (docs/img).
        if (const QString keep = qEnvironmentVariable("KVBE_KEEP_EXPORTS"); !keep.isEmpty())
            QVERIFY(exportPinTable(t, keep + QStringLiteral("/pin-table-1600x900.png"),
                                   QSize(1600, 900))
                        .ok());
        const QImage img(png);
        const QRect ink = inkBox(img);
        qInfo("ink %d,%d %d×%d of 1600×900", ink.x(), ink.y(), ink.width(), ink.height());
        // The table spans the slide's width and, centred, with its rows grown, holds some half
        // of its area (it once took a quarter, small and top-centred).
        QVERIFY2(ink.width() >= 0.85 * img.width(), qPrintable(QString::number(ink.width())));
        QVERIFY2(double(ink.width()) * ink.height() >= 0.45 * img.width() * img.height(),
                 qPrintable(QStringLiteral("%1×%2").arg(ink.width()).arg(ink.height())));
    }

    void theNamesAreWholeOrCutWithAnEllipsis_data() {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1600x900") << QSize(1600, 900);
        QTest::newRow("natural") << QSize();
        QTest::newRow("800x450") << QSize(800, 450);
        QTest::newRow("600x900") << QSize(600, 900);
    }
    void theNamesAreWholeOrCutWithAnEllipsis() {
        QFETCH(QSize, size);
        auto w = twoLongLabels();
        QVERIFY(w);
        const PinComparison& t =
            child<PinTableView>(w.get(), QStringLiteral("pinTable"))->comparison();
        if (size.isEmpty()) size = pinTableNaturalSize(t).toSize();
        const auto lines = pinTableLabelLines(t, size);
        QCOMPARE(lines.size(), t.rows.size());
        for (std::size_t r = 0; r < lines.size(); ++r) {
            const QString drawn = lines[r].join(QLatin1Char(' '));
            const QString label = t.rows[r].label.simplified();
            if (drawn == label) continue;
            // Cut: what is drawn is the label's beginning, then "…".
            QVERIFY2(drawn.endsWith(QChar(0x2026)),
                     qPrintable(QStringLiteral("\"%1\" drawn as \"%2\"").arg(label, drawn)));
            QVERIFY2(label.startsWith(drawn.chopped(1).trimmed()),
                     qPrintable(QStringLiteral("\"%1\" drawn as \"%2\"").arg(label, drawn)));
        }
        // On a slide the current scenario's name is whole, its last words included.
        if (size.width() >= 1600)
            QVERIFY2(lines[0].join(QLatin1Char(' ')).endsWith(QStringLiteral("FP8 compute")),
                     qPrintable(lines[0].join(QLatin1Char('|'))));
    }

    // The Plan chart of the conversation trace as exported: the cost axis ends within one tick
    // step of the dearest configuration (and its marker's margin), with five ticks or more.
    void thePlanExportHasANiceCostAxis() {
        auto w = makeWindow();
        QVERIFY(w->openTrace(kFixtures + QStringLiteral("/traces/mooncake-conversation.jsonl")));
        auto* view = child<WorkloadView>(w.get(), QStringLiteral("workloadView"));
        QVERIFY(QTest::qWaitFor([&] { return !view->loading() && !view->replaying(); }, 120000));
        auto* plan = child<PlanChart>(w.get(), QStringLiteral("plan"));
        QVERIFY(plan->computeNow().ok());
        double dataMax = 0;
        for (const PlanPoint& p : plan->plan()->result->points)
            dataMax = std::max(dataMax, p.capexUsd);
        QVERIFY(dataMax > 0);
        // Redrawn a few times, as a window redraws it (QValueAxis::applyNiceNumbers lowered the
        // tick count on each).
        for (int i = 0; i < 3; ++i)
            plan->setPlan(plan->plan());
        // As the export lays it out: a fresh chart at the slide's size given the state.
        auto copy = createChart(QStringLiteral("plan"));
        copy->setAttribute(Qt::WA_DontShowOnScreen);
        copy->resize(1600, 900);
        copy->show();
        QApplication::processEvents();
        copy->copyStateFrom(*plan);
        QApplication::processEvents();
        for (ChartView* c : {static_cast<ChartView*>(plan), copy.get()}) {
            QValueAxis* x = nullptr;
            for (QAbstractAxis* a : c->chart()->axes(Qt::Horizontal))
                if (auto* v = qobject_cast<QValueAxis*>(a)) x = v;
            QVERIFY(x);
            const double step = (x->max() - x->min()) / (x->tickCount() - 1);
            qInfo("x axis %g..%g, %d ticks; data to %g", x->min(), x->max(), x->tickCount(),
                  dataMax);
            QVERIFY2(x->tickCount() >= 5, qPrintable(QString::number(x->tickCount())));
            QVERIFY(x->max() >= dataMax);
            // The chart leaves 6 % for the dearest point's marker; then at most one step more.
            QVERIFY2(x->max() <= 1.06 * dataMax + step,
                     qPrintable(QStringLiteral("axis to %1, data to %2, step %3")
                                    .arg(x->max())
                                    .arg(dataMax)
                                    .arg(step)));
        }
        // And the image is written.
        QTemporaryDir dir;
        QVERIFY(
            exportChart(*plan, dir.filePath(QStringLiteral("plan.png")), QSize(1600, 900)).ok());
    }

    // Presentation mode (F5) on a laptop with the Fleet files imported: the legend leaves the
    // plot most of the width, the length axis keeps its doublings, and Esc gives the chart back
    // its margins and legend as they were.
    void presentationKeepsTheChartsProportions() {
        auto w = std::make_unique<MainWindow>(presets());
        w->fitToScreen(QRect(0, 0, 1366, 768));
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        w->refreshNow();
        QVERIFY(w->importCalibrations({kFixtures + QStringLiteral("/calibration")}));
        QVERIFY(QTest::qWaitFor([&] { return !fleetPanelOf(w)->importing(); }, 60000));
        auto* c = chartOf(w, QStringLiteral("breakeven"));
        tabsOf(w)->setCurrentWidget(c);
        w->refreshNow();
        QApplication::processEvents();
        QTest::qWait(50);
        const auto state = [&] {
            return QStringLiteral("chart %9×%10, margins %1 %2 %3 %4, legend %5,%6 %7×%8")
                .arg(c->chart()->margins().left())
                .arg(c->chart()->margins().top())
                .arg(c->chart()->margins().right())
                .arg(c->chart()->margins().bottom())
                .arg(legendOf(c)->pos().x())
                .arg(legendOf(c)->pos().y())
                .arg(legendOf(c)->boundingRect().width())
                .arg(legendOf(c)->boundingRect().height())
                .arg(c->width())
                .arg(c->height());
        };
        const QString before = state();

        w->setPresentation(true);
        QApplication::processEvents();
        QTest::qWait(100);
        const double share = legendOf(c)->boundingRect().width() / c->viewport()->width();
        const bool right = legendOf(c)->pos().x() > c->chart()->plotArea().right();
        qInfo("presentation: legend %s, %.0f %% of the width", right ? "at the right" : "below",
              100 * share);
        QVERIFY2(!right || share <= 0.25, qPrintable(QString::number(share)));

        // The chart at a 2560×1600 ×2 screen's size (the offscreen platform's full screen is
        // 800×600): the length axis labels powers of two (each doubling, or every other one where
        // the labels would not fit), not decades.
        auto big = createChart(QStringLiteral("breakeven"));
        big->setAttribute(Qt::WA_DontShowOnScreen);
        big->resize(1280, 800);
        big->show();
        QApplication::processEvents();
        big->copyStateFrom(*c);
        QApplication::processEvents();
        QLogValueAxis* x = nullptr;
        for (QAbstractAxis* a : big->chart()->axes(Qt::Horizontal))
            if (auto* l = qobject_cast<QLogValueAxis*>(a)) x = l;
        QVERIFY(x);
        qInfo("x axis base %g over %g px, %g..%g", x->base(), big->chart()->plotArea().width(),
              x->min(), x->max());
        QVERIFY2(x->base() == 2.0 || x->base() == 4.0, qPrintable(QString::number(x->base())));

        w->setPresentation(false);
        QApplication::processEvents();
        QTest::qWait(100);
        QTRY_COMPARE(state(), before);
    }
};

QTEST_MAIN(TestUiSlides)
#include "tst_ui_slides.moc"
