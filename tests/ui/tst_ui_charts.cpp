// Charts with several series stay readable. Tier labels never overlap (close
// bandwidths are stacked, with a leader line to their level), legends keep full names, model
// names on the Model size chart do not collide, and the minimum-cached-fraction chart takes its
// range from the data with log ticks written as percentages.
#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/charts/chart_legend.h"
#include "kvbe/ui/scenario/scenario_panel.h"
#include "ui_test_support.h"

#include <QApplication>
#include <QFile>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QLegend>
#include <QLegendMarker>
#include <QLogValueAxis>
#include <QTemporaryDir>
#include <QValueAxis>
#include <QXmlStreamReader>

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

// The names the legend is to show: its entries', one per series in it.
QStringList legendNames(ChartView* c) {
    QStringList out;
    if (auto* l = legendOf(c))
        for (const auto& e : l->entries())
            out << e.name;
    return out;
}

// What the legend shows, entry by entry: its visible text items, lines joined by a space.
std::vector<QGraphicsSimpleTextItem*> legendTexts(ChartLegend* l) {
    std::vector<QGraphicsSimpleTextItem*> out;
    for (QGraphicsItem* i : l->childItems())
        if (auto* t = dynamic_cast<QGraphicsSimpleTextItem*>(i); t && t->isVisible())
            out.push_back(t);
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) {
        const QPointF pa = a->scenePos(), pb = b->scenePos();
        return pa.y() != pb.y() ? pa.y() < pb.y() : pa.x() < pb.x();
    });
    return out;
}
QString oneLine(QString text) {
    return text.replace(QLatin1Char('\n'), QLatin1Char(' '));
}

// Every text an SVG file draws, in order, as one string with a space between texts.
QString svgText(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QXmlStreamReader xml(&f);
    QStringList texts;
    while (!xml.atEnd())
        if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QLatin1String("text"))
            texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).simplified();
    return texts.join(QLatin1Char(' '));
}

// Brings the tab that holds the chart (the frontier map's holds its tier picker too) forward.
void showTabOf(MainWindow* w, ChartView* c) {
    for (int i = 0; i < tabsOf(w)->count(); ++i)
        if (QWidget* page = tabsOf(w)->widget(i); page == c || page->isAncestorOf(c))
            tabsOf(w)->setCurrentIndex(i);
    QApplication::processEvents();
}

// Two pins whose names are longer than any legend row at 1366 px.
void pinTwoLongNames(MainWindow* w) {
    QVERIFY(w->pinCurrent(
        QStringLiteral("Llama 3.2 3B on the H100 SXM5 with the measured NVMe array, November")));
    Scenario s = explorerOf(w)->scenario();
    s.cachedFraction = 0.8;
    explorerOf(w)->edit(s, QStringLiteral("fraction"));
    w->refreshNow();
    QVERIFY(w->pinCurrent(QStringLiteral(
        "the same with 80 % of each prompt cached, as the production traces of October show")));
    w->refreshNow();
}

} // namespace

class TestCharts : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }

    void tierLabelsOfCloseBandwidthsDoNotOverlap() {
        auto w = makeIllustrativeWindow(); // three tiers
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

    // Legends used to shorten names ("hit from NV…" twice, "p* = 4 t…"). Every entry
    // shows its series' whole name, inside the chart and off the plot, which keeps a useful
    // height, in the window at 1366×768 and 1920×1080 with two long-named pins.
    void legendsShowFullNames() {
        auto w = makeIllustrativeWindow(); // three tiers, and the nominal-t_fixed note
        pinTwoLongNames(w.get());
        if (QTest::currentTestFailed()) return;
        for (const QSize size : {QSize(1366, 768), QSize(1920, 1080)}) {
            w->fitToScreen(QRect(QPoint(0, 0), size));
            w->show();
            QVERIFY(QTest::qWaitForWindowExposed(w.get()));
            w->refreshNow();
            QApplication::processEvents();
            QVERIFY(w->frameGeometry().bottom() < size.height());
            for (ChartView* c : chartsOf(w)) {
                showTabOf(w.get(), c);
                w->refreshNow();
                QApplication::processEvents();
                const QString where = QStringLiteral("%1 at %2×%3")
                                          .arg(c->key())
                                          .arg(size.width())
                                          .arg(size.height());
                ChartLegend* legend = legendOf(c);
                QVERIFY2(legend && legend->isVisible(), qPrintable(where));
                const QStringList expected = legendNames(c);
                QVERIFY2(expected.size() >= 3, qPrintable(where));
                int pinned = 0;
                for (const QString& n : expected)
                    pinned += n.contains(QLatin1String("production traces")) ||
                              n.contains(QLatin1String("NVMe array"));
                QVERIFY2(pinned >= 1, qPrintable(where + ": no pin in the legend"));
                QStringList shown;
                const QRectF view = c->mapToScene(c->viewport()->rect()).boundingRect();
                const QRectF plot = c->chart()->plotArea();
                for (auto* t : legendTexts(legend)) {
                    shown << oneLine(t->text());
                    const QRectF r = t->sceneBoundingRect();
                    QVERIFY2(view.contains(r),
                             qPrintable(QStringLiteral("%1: \"%2\" leaves the chart")
                                            .arg(where, oneLine(t->text()))));
                    QVERIFY2(!plot.intersects(r),
                             qPrintable(QStringLiteral("%1: \"%2\" covers the plot")
                                            .arg(where, oneLine(t->text()))));
                }
                QVERIFY2(!shown.join(QString()).contains(QChar(0x2026)),
                         qPrintable(where + ": " + shown.join(QStringLiteral(" | "))));
                QVERIFY2(shown.size() == expected.size(),
                         qPrintable(QStringLiteral("%1: %2 entries shown, %3 in the legend")
                                        .arg(where)
                                        .arg(shown.size())
                                        .arg(expected.size())));
                for (const QString& name : expected)
                    QVERIFY2(shown.contains(name),
                             qPrintable(QStringLiteral("%1: \"%2\" is not shown whole; shown: %3")
                                            .arg(where, name, shown.join(QStringLiteral(" | ")))));
                // The title's lines are whole too: the nominal-t_fixed note of the default
                // scenario's preset tiers was elided at 1366 px ("dominates short prom…").
                bool noteSeen = false;
                for (QGraphicsItem* item : c->scene()->items()) {
                    auto* t = qgraphicsitem_cast<QGraphicsTextItem*>(item);
                    if (!t || !t->isVisible()) continue;
                    const QString text = t->toPlainText();
                    if (!text.contains(QLatin1String("nominal t_fixed"))) continue;
                    noteSeen = true;
                    QVERIFY2(!text.contains(QChar(0x2026)) &&
                                 text.contains(QLatin1String("fitted to the study).")),
                             qPrintable(where + ": the title is cut: " + oneLine(text)));
                }
                if (c->key() == QLatin1String("breakeven"))
                    QVERIFY2(noteSeen, qPrintable(where + ": no nominal-t_fixed note"));
                qInfo("%s: plot %.0f×%.0f px in a view of %.0f×%.0f px, %lld legend entries",
                      qPrintable(where), plot.width(), plot.height(), view.width(), view.height(),
                      qlonglong(shown.size()));
                // The plot keeps most of the chart's height.
                QVERIFY2(plot.height() >= std::max(200.0, 0.4 * view.height()),
                         qPrintable(QStringLiteral("%1: plot %2 px high in a view of %3 px")
                                        .arg(where)
                                        .arg(plot.height())
                                        .arg(view.height())));
            }
        }
    }

    // Many long names: rows under the plot would take over 30 % of the chart's height, so the
    // entries stand in a list at the right, at most 38 % of the width, each name whole (wrapped).
    // A few short ones stay in one row at the bottom.
    void aCrowdedLegendBecomesAListAtTheRight() {
        ChartLegend legend;
        QFont font;
        font.setPointSizeF(9);
        std::vector<ChartLegend::Entry> entries;
        for (int i = 0; i < 12; ++i) {
            ChartLegend::Entry e;
            e.key = QStringLiteral("pin/%1/bstar").arg(i);
            e.name = QStringLiteral("pinned scenario number %1 with a long descriptive name: B* "
                                    "with 1 ms fixed cost (nominal)")
                         .arg(i + 1);
            e.pen = QPen(Qt::black, 2);
            entries.push_back(e);
        }
        QVERIFY(legend.setEntries(entries, font, Qt::black));
        const QSizeF area(900, 560);
        const auto layout = legend.arrange(area);
        QCOMPARE(layout.place, ChartLegend::Place::Right);
        QVERIFY2(layout.extent <= 0.38 * area.width() + 1,
                 qPrintable(QString::number(layout.extent)));
        legend.placeIn(QRectF(QPointF(0, 0), area));
        QStringList shown;
        for (QGraphicsItem* i : legend.childItems())
            if (auto* t = dynamic_cast<QGraphicsSimpleTextItem*>(i)) {
                shown << oneLine(t->text());
                const QRectF r = t->sceneBoundingRect();
                QVERIFY2(r.left() >= area.width() - layout.extent - 1 &&
                             r.right() <= area.width() + 1 && r.top() >= 0 &&
                             r.bottom() <= area.height(),
                         qPrintable(QStringLiteral("\"%1\" at %2,%3 %4×%5")
                                        .arg(t->text())
                                        .arg(r.x())
                                        .arg(r.y())
                                        .arg(r.width())
                                        .arg(r.height())));
            }
        for (const auto& e : entries)
            QVERIFY2(shown.contains(e.name), qPrintable(e.name));

        entries.resize(3);
        for (auto& e : entries)
            e.name = e.name.left(24);
        QVERIFY(legend.setEntries(entries, font, Qt::black));
        const auto few = legend.arrange(area);
        QCOMPARE(few.place, ChartLegend::Place::Bottom);
        QVERIFY(few.extent < 40);
    }

    // The exported slide (SVG, 1600×900 as the window's export, presentation style too) writes
    // every legend name whole.
    void exportedLegendsShowFullNames() {
        auto w = makeWindow();
        pinTwoLongNames(w.get());
        if (QTest::currentTestFailed()) return;
        QTemporaryDir dir;
        for (const bool presentation : {false, true}) {
            for (ChartView* c : chartsOf(w)) {
                c->setChartStyle(ChartStyle{false, presentation});
                const QString path =
                    dir.filePath(c->key() + (presentation ? "-slide.svg" : ".svg"));
                const auto st = exportChart(*c, path, QSize(1600, 900));
                QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
                const QString text = svgText(path);
                QVERIFY2(!text.isEmpty(), qPrintable(path));
                QVERIFY2(!text.contains(QChar(0x2026)), qPrintable(path + ": " + text));
                const QStringList names = legendNames(c);
                QVERIFY(names.size() >= 3);
                for (const QString& name : names)
                    QVERIFY2(
                        text.contains(name),
                        qPrintable(
                            QStringLiteral("%1: \"%2\" is not written whole").arg(path, name)));
                c->setChartStyle(ChartStyle{});
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
