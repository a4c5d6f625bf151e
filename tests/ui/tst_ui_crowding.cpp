// Crowded charts: with a trace open, the Fleet files imported and their dock unfolded, and a pin,
// every chart of every tab keeps at least half of its height for the plot, cuts no title, axis
// title or tick label short, and places its labels where they cover neither one another nor the
// legend, on a laptop's 1366×768, on 1600×1000 and on 2560×1600 at ×2 (1280×800 in Qt's pixels).
#include "ui_test_support.h"

#include <QApplication>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>

using namespace kvbe;
using namespace kvbe::test;

namespace {

const QString kFixtures = QStringLiteral(KVBE_FIXTURES);
constexpr int kTitleBar = 32;

bool settled(MainWindow& w) {
    auto* v = child<WorkloadView>(&w, QStringLiteral("workloadView"));
    return QTest::qWaitFor(
        [&] {
            return !v->loading() && !v->replaying() && !fleetPanelOf(&w)->importing() &&
                   !explorerOf(&w)->recomputePending();
        },
        120000);
}

QString oneLine(QString s) {
    return s.replace(QLatin1Char('\n'), QLatin1Char(' '));
}

// What is wrong with a chart as drawn: a plot under half the view's height, a text cut short, a
// label over another or over the legend.
QStringList crowding(ChartView* c, const QString& where) {
    QStringList out;
    const double view = c->viewport()->height();
    const QRectF plot = c->chart()->plotArea();
    if (plot.height() < 0.5 * view)
        out << QStringLiteral("%1: plot %2 px high in a chart of %3 px")
                   .arg(where)
                   .arg(plot.height(), 0, 'f', 0)
                   .arg(view, 0, 'f', 0);
    std::vector<QGraphicsSimpleTextItem*> labels, legend;
    ChartLegend* l = legendOf(c);
    for (QGraphicsItem* i : c->scene()->items()) {
        if (!i->isVisible()) continue;
        if (auto* t = dynamic_cast<QGraphicsTextItem*>(i)) {
            const QString text = t->toPlainText();
            if (text.contains(QChar(0x2026)) || text.contains(QLatin1String("...")))
                out << QStringLiteral("%1: \"%2\" is cut").arg(where, oneLine(text));
        }
        if (auto* t = dynamic_cast<QGraphicsSimpleTextItem*>(i)) {
            if (l && t->parentItem() == l)
                legend.push_back(t);
            else if (t->zValue() == 20) // ChartView's labels pinned to data points
                labels.push_back(t);
        }
    }
    for (std::size_t a = 0; a < labels.size(); ++a) {
        const QRectF ra = labels[a]->sceneBoundingRect();
        for (std::size_t b = a + 1; b < labels.size(); ++b)
            if (ra.intersects(labels[b]->sceneBoundingRect()))
                out << QStringLiteral("%1: \"%2\" covers \"%3\"")
                           .arg(where, oneLine(labels[a]->text()), oneLine(labels[b]->text()));
        for (auto* e : legend)
            if (ra.intersects(e->sceneBoundingRect()))
                out << QStringLiteral("%1: \"%2\" covers the legend's \"%3\"")
                           .arg(where, oneLine(labels[a]->text()), oneLine(e->text()));
        if (!QRectF(c->viewport()->rect()).contains(ra))
            out << QStringLiteral("%1: \"%2\" leaves the chart")
                       .arg(where, oneLine(labels[a]->text()));
    }
    return out;
}

} // namespace

class TestUiCrowding : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void cleanup() { QTRY_VERIFY(QApplication::topLevelWidgets().isEmpty()); }

    void everyChartKeepsHalfItsHeight_data() {
        QTest::addColumn<QSize>("screen");
        QTest::newRow("1366x768") << QSize(1366, 768);
        QTest::newRow("1600x1000") << QSize(1600, 1000);
        QTest::newRow("2560x1600 at x2") << QSize(1280, 800);
    }
    void everyChartKeepsHalfItsHeight() {
        QFETCH(QSize, screen);
        auto w = std::make_unique<MainWindow>(presets());
        w->fitToScreen(QRect(QPoint(0, 0), QSize(screen.width(), screen.height())));
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        w->refreshNow();
        QVERIFY(w->openTrace(kFixtures + QStringLiteral("/traces/mooncake-conversation.jsonl")));
        QVERIFY(settled(*w));
        QVERIFY(w->importCalibrations({kFixtures + QStringLiteral("/calibration")}));
        QVERIFY(settled(*w));
        QVERIFY(w->pinCurrent(QStringLiteral("pinned")));
        w->setBottomDocksCollapsed(false);
        w->resize(screen.width(), screen.height() - kTitleBar);
        QApplication::processEvents();

        QStringList problems;
        auto* tabs = tabsOf(w);
        for (int i = 0; i < tabs->count(); ++i) {
            tabs->setCurrentIndex(i);
            QVERIFY(settled(*w));
            QTest::qWait(50);
            if (auto* v = qobject_cast<WorkloadView*>(tabs->currentWidget())) {
                auto* inner = child<QTabWidget>(v, QStringLiteral("workloadCharts"));
                for (int k = 0; k < inner->count(); ++k) {
                    inner->setCurrentIndex(k);
                    QTest::qWait(50); // the chart lays out, then fits its axes' titles
                    problems << crowding(v->visibleChart(), tabs->tabText(i) +
                                                                QStringLiteral(" ▸ ") +
                                                                inner->tabText(k));
                }
                continue;
            }
            if (auto* c = tabs->currentWidget()->findChild<ChartView*>();
                c || (c = qobject_cast<ChartView*>(tabs->currentWidget())))
                problems << crowding(c, tabs->tabText(i));
        }
        for (const QString& p : problems)
            qWarning("%s", qPrintable(p));
        QVERIFY2(problems.isEmpty(), qPrintable(QStringLiteral("%1 problems, the first: %2")
                                                    .arg(problems.size())
                                                    .arg(problems.value(0))));
    }
};

QTEST_MAIN(TestUiCrowding)
#include "tst_ui_crowding.moc"
