// The charts' legend (ChartLegend): it does not jump between the bottom and the right as names
// change, and the dotted per-tier curves have entries of their own.
#include "ui_test_support.h"

using namespace kvbe;
using namespace kvbe::test;

class TestUiLegend : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }

    // Names that grow and shrink by a few characters, as a running probe's do, around where the
    // rows stop fitting (a budget between the rows the short and the long names take): once the
    // legend went to the right, it stays there.
    void theLegendDoesNotJump() {
        ChartLegend legend;
        QFont font;
        font.setPointSizeF(9);
        const QSizeF area(700, 400);
        const auto entries = [](bool running) {
            std::vector<ChartLegend::Entry> out;
            for (int i = 0; i < 6; ++i) {
                ChartLegend::Entry e;
                e.key = QStringLiteral("s/%1").arg(i);
                e.name = running ? QStringLiteral("nvme-read #%1: running, 100 % · 12.25 GB/s so "
                                                  "far (provisional)")
                                       .arg(i + 1)
                                 : QStringLiteral("nvme-read #%1: running, 5 % · 1.2 GB/s so far")
                                       .arg(i + 1);
                e.pen = QPen(Qt::black, 2);
                out.push_back(e);
            }
            return out;
        };
        legend.setEntries(entries(false), font, Qt::black);
        const double shortRows = legend.arrange(area, 1e9).extent;
        legend.setEntries(entries(true), font, Qt::black);
        const double longRows = legend.arrange(area, 1e9).extent;
        QVERIFY(longRows > shortRows + 1);
        const double budget = (shortRows + longRows) / 2;
        legend.setEntries(entries(false), font, Qt::black);
        legend.arrange(area, budget);
        int moves = 0;
        ChartLegend::Place last = ChartLegend::Place::Bottom;
        for (int step = 0; step < 12; ++step) {
            legend.setEntries(entries(step % 2 == 1), font, Qt::black);
            const auto layout = legend.arrange(area, budget);
            if (step > 0 && layout.place != last) ++moves;
            last = layout.place;
        }
        QVERIFY2(moves <= 1, qPrintable(QString::number(moves)));
    }

    // The dotted curves, B* with each tier's fixed cost and each tier's speedup, are in the
    // legends.
    void dottedCurvesHaveLegendEntries() {
        auto w = makeWindow();
        w->refreshNow();
        const auto names = [](ChartView* c) {
            QStringList out;
            for (const auto& e : legendOf(c)->entries())
                out << e.name;
            return out.join(QLatin1Char('\n'));
        };
        const QString breakeven = names(chartOf(w, QStringLiteral("breakeven")));
        QVERIFY2(breakeven.contains(QLatin1String("Host DRAM (PCIe 5.0): B* with")),
                 qPrintable(breakeven));
        const QString ttft = names(chartOf(w, QStringLiteral("ttft")));
        QVERIFY2(ttft.contains(QLatin1String("Host DRAM (PCIe 5.0) speedup")), qPrintable(ttft));
    }
};

QTEST_MAIN(TestUiLegend)
#include "tst_ui_legend.moc"
