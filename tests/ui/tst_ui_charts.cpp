// Issue 12, defect 7: charts with several series stay readable. Tier labels never overlap (close
// bandwidths are stacked, with a leader line to their level), legends keep full names, model
// names on the Model size chart do not collide, and the minimum-cached-fraction chart takes its
// range from the data with log ticks written as percentages.
#include "kvbe/ui/scenario_panel.h"
#include "ui_test_support.h"

#include <QApplication>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QLegend>
#include <QLegendMarker>
#include <QLogValueAxis>
#include <QValueAxis>

using namespace kvbe;
using namespace kvbe::test;

namespace {

// The labels a chart pins to its data (tier names, p*, model names): its simple text items.
std::vector<QGraphicsSimpleTextItem*> pinnedLabels(ChartView* c) {
    std::vector<QGraphicsSimpleTextItem*> out;
    for (QGraphicsItem* i : c->scene()->items())
        if (auto* t = dynamic_cast<QGraphicsSimpleTextItem*>(i);
            t && t->isVisible() && t->zValue() == 20)
            out.push_back(t);
    return out;
}

QString overlaps(ChartView* c) {
    const auto labels = pinnedLabels(c);
    QStringList out;
    for (size_t i = 0; i < labels.size(); ++i)
        for (size_t j = i + 1; j < labels.size(); ++j)
            if (labels[i]->sceneBoundingRect().intersects(labels[j]->sceneBoundingRect()))
                out << QStringLiteral("\"%1\" and \"%2\"")
                           .arg(labels[i]->text(), labels[j]->text());
    return out.join(QStringLiteral("; "));
}

} // namespace

class TestCharts : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }

    void tierLabelsOfCloseBandwidthsDoNotOverlap() {
        auto w = makeWindow();
        Scenario s = explorerOf(w)->scenario();
        QCOMPARE(s.tiers.size(), size_t(3));
        s.tiers[0].bandwidthGBps = 55;
        s.tiers[1].bandwidthGBps = 7.03;
        s.tiers[2].bandwidthGBps = 6;
        TierConfig near = s.tiers[0];
        near.name = "Host DRAM (second socket)";
        near.preset.clear();
        near.bandwidthGBps = 50;
        near.color = "#1b9e77";
        s.tiers.push_back(near);
        explorerOf(w)->edit(s, QStringLiteral("close tiers"));
        for (const QSize size : {QSize(1400, 900), QSize(1366, 768), QSize(1000, 600)}) {
            w->resize(size);
            w->show();
            QVERIFY(QTest::qWaitForWindowExposed(w.get()));
            w->refreshNow();
            for (const char* key : {"breakeven", "models"}) {
                auto* c = chartOf(w, key);
                QVERIFY(c);
                tabsOf(w)->setCurrentWidget(c);
                QApplication::processEvents();
                QVERIFY2(pinnedLabels(c).size() >= 4, key);
                const QString o = overlaps(c);
                QVERIFY2(o.isEmpty(), qPrintable(QStringLiteral("%1 at %2×%3: %4")
                                                     .arg(QLatin1String(key))
                                                     .arg(size.width())
                                                     .arg(size.height())
                                                     .arg(o)));
            }
        }
    }

    // A 70B model's f* stays under a few per cent: the axis follows the data, log ticks read
    // as per cent by decades, and no curve is cut at the bottom.
    void theFractionAxisFollowsTheData() {
        auto w = makeWindow();
        QVERIFY(panelOf(w).selectModel(QStringLiteral("meta-llama/Llama-3.3-70B-Instruct")));
        w->refreshNow();
        auto* c = chartOf(w, QStringLiteral("fraction"));
        QVERIFY(c);
        tabsOf(w)->setCurrentWidget(c);
        w->refreshNow();
        double hi = 0, lo = 1e9;
        for (const QString& key : c->seriesKeys())
            if (key.endsWith(QLatin1String("/fstar")))
                for (const QPointF& p : c->seriesByKey(key)->points())
                    if (p.y() > 0) hi = std::max(hi, p.y()), lo = std::min(lo, p.y());
        QVERIFY(hi > 0);
        QVERIFY2(hi < 50, qPrintable(QString::number(hi))); // the point of the test: small values
        QVERIFY(!c->logY());
        const QRectF linear = c->visibleRange();
        QVERIFY2(linear.bottom() <= hi * 2,
                 qPrintable(QStringLiteral("linear axis to %1 for data up to %2")
                                .arg(linear.bottom())
                                .arg(hi)));
        QVERIFY(linear.bottom() >= hi);
        c->setLogY(true);
        const QRectF log = c->visibleRange();
        QVERIFY2(log.top() <= lo && log.bottom() >= hi,
                 qPrintable(QStringLiteral("log axis %1–%2 for data %3–%4")
                                .arg(log.top())
                                .arg(log.bottom())
                                .arg(lo)
                                .arg(hi)));
        auto* axis = qobject_cast<QLogValueAxis*>(c->chart()->axes(Qt::Vertical).value(0));
        QVERIFY(axis);
        QCOMPARE(axis->base(), 10.0);
        // printf's format of a tick: 0.1 %, 1 %, 10 %.
        QCOMPARE(QString::asprintf(axis->labelFormat().toLatin1().constData(), 0.1),
                 QStringLiteral("0.1 %"));
        QCOMPARE(QString::asprintf(axis->labelFormat().toLatin1().constData(), 10.0),
                 QStringLiteral("10 %"));
    }
};

QTEST_MAIN(TestCharts)
#include "tst_ui_charts.moc"
