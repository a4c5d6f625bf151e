// The window's smaller defects, one test each: a measured tier's t_fixed is the probe's read at
// queue depth 1; block sizes read as asked ("4 MiB"); fitted values show three digits; tier
// names wrap rather than lose their middle; the pin-label dialog fits its label; the legend does
// not jump between the bottom and the right as names change; labels keep their contrast on the
// dark theme; titles are whole in presentation mode; the dotted per-tier curves have legend
// entries; and trace requests past the model's context are named.
#include "ui_test_support.h"

#include "kvbe/ui/charts/chart_catalog.h"

#include <QApplication>
#include <QFile>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QHeaderView>
#include <QInputDialog>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTableWidget>
#include <QTimer>

#include <algorithm>
#include <cmath>

using namespace kvbe;
using namespace kvbe::test;

namespace {

int tierIndex(const Scenario& s, const QString& name) {
    for (size_t i = 0; i < s.tiers.size(); ++i)
        if (QString::fromStdString(s.tiers[i].name) == name) return int(i);
    return -1;
}

// WCAG 2's contrast ratio, worked out here from its definition.
double contrastRatio(const QColor& a, const QColor& b) {
    const auto channel = [](double v) {
        return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    const auto lum = [&](const QColor& c) {
        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) +
               0.0722 * channel(c.blueF());
    };
    const double x = lum(a), y = lum(b);
    return (std::max(x, y) + 0.05) / (std::min(x, y) + 0.05);
}

bool settle(MainWindow& w) {
    auto* v = child<WorkloadView>(&w, QStringLiteral("workloadView"));
    return QTest::qWaitFor(
        [&] { return !v->loading() && !v->replaying() && !explorerOf(&w)->recomputePending(); },
        120000);
}

} // namespace

class TestUiSmallDefects : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        isolateSettings();
        useFakeProbe();
    }
    void init() {
        QSettings().clear();
        resetFakeProbe();
    }
    void cleanup() { qunsetenv("KVBE_FAKE_PROBE_QD1_US"); }

    // The fake drive probe reads 4 KiB at queue depth 1 in 224 µs: the measured tier's t_fixed is
    // 0.224 ms, not a preset's nominal 1 ms shown without "(nominal)". And its 4 MiB blocks read
    // "4 MiB", not "4.19 MB".
    void aMeasuredTierTakesItsLatencyAndSizesReadAsAsked() {
        qputenv("KVBE_FAKE_PROBE_QD1_US", "224");
        auto w = makeWindow();
        auto* panel = probePanelOf(w);
        panel->setProbe(QStringLiteral("nvme-read"));
        QVERIFY(panel->setOption(QStringLiteral("--dir"), QStringLiteral("/tmp/scratch")));
        QVERIFY(panel->run());
        QVERIFY(QTest::qWaitFor([&] { return !panel->anyRunning(); }, 30000));
        const Scenario& s = explorerOf(w)->scenario();
        const int t = tierIndex(s, w->measuredTierName(0));
        QVERIFY(t >= 0);
        QCOMPARE(s.tiers[size_t(t)].tFixedMs, 0.224);
        auto* table = child<QTableWidget>(panel, QStringLiteral("runResults0"));
        QStringList sizes;
        for (int r = 0; r < table->rowCount(); ++r)
            sizes << table->item(r, 1)->text();
        QVERIFY2(sizes.contains(QStringLiteral("4 MiB")) && sizes.contains(QStringLiteral("4 KiB")),
                 qPrintable(sizes.join(QStringLiteral(", "))));
    }

    // An adopted fit's t_fixed of 5.74332 ms shows as 5.74 (the editor keeps every digit); the
    // tier names wrap onto a second line of their row instead of losing their middle.
    void tierTableShowsFewDigitsAndWholeNames() {
        auto w = makeWindow();
        w->show();
        Scenario s = explorerOf(w)->scenario();
        s.tiers[0].tFixedMs = 5.74332;
        explorerOf(w)->edit(s, QStringLiteral("fitted"));
        QApplication::processEvents();
        auto* view = child<QTableView>(w.get(), QStringLiteral("tierView"));
        auto* m = view->model();
        QCOMPARE(m->index(0, TierTableModel::FixedCost).data().toString(), QStringLiteral("5.74"));
        QCOMPARE(m->index(0, TierTableModel::FixedCost).data(Qt::EditRole).toString(),
                 QStringLiteral("5.74332"));
        const QString name = m->index(0, TierTableModel::Name).data().toString();
        QCOMPARE(name, QStringLiteral("Host DRAM (PCIe 5.0)"));
        QVERIFY(view->wordWrap());
        const int column = view->columnWidth(TierTableModel::Name);
        const QFontMetrics fm(view->font());
        if (fm.horizontalAdvance(name) + 8 > column)
            QVERIFY2(view->rowHeight(0) >= 2 * fm.height(),
                     qPrintable(QStringLiteral("a row of %1 px for a name of %2 px in %3 px")
                                    .arg(view->rowHeight(0))
                                    .arg(fm.horizontalAdvance(name))
                                    .arg(column)));
    }

    // Compare ▸ Pin current scenario… asks with a dialog as wide as the label it proposes.
    void thePinDialogFitsItsLabel() {
        auto w = makeWindow();
        w->show();
        QAction* pin = menuAction(w.get(), QStringLiteral("Pin current scenario"));
        QVERIFY(pin);
        int textWidth = 0, editWidth = 0;
        QTimer::singleShot(0, [&] {
            auto* d = qobject_cast<QInputDialog*>(QApplication::activeModalWidget());
            if (!d) return;
            auto* edit = d->findChild<QLineEdit*>();
            textWidth = edit->fontMetrics().horizontalAdvance(edit->text());
            editWidth = edit->width();
            d->reject();
        });
        pin->trigger();
        QVERIFY(textWidth > 0);
        QVERIFY2(
            editWidth >= textWidth,
            qPrintable(QStringLiteral("%1 px for a label of %2 px").arg(editWidth).arg(textWidth)));
    }

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

    // The dark theme: every label pinned to a point reads at 4.5 : 1 or better on the chart.
    void labelsKeepTheirContrastOnTheDarkTheme() {
        auto w = makeWindow();
        w->setDark(true);
        w->refreshNow();
        for (const char* key : {"breakeven", "fraction", "models"}) {
            auto* c = chartOf(w, QString::fromLatin1(key));
            tabsOf(w)->setCurrentWidget(c);
            w->refreshNow();
            // The background as painted: the median of the chart's pixels.
            const QImage img = c->grab().toImage();
            std::vector<QRgb> px;
            for (int y = 0; y < img.height(); y += 7)
                for (int x = 0; x < img.width(); x += 7)
                    px.push_back(img.pixel(x, y));
            std::sort(px.begin(), px.end(), [](QRgb a, QRgb b) { return qGray(a) < qGray(b); });
            const QColor background = QColor(px[px.size() / 2]);
            int labels = 0;
            for (QGraphicsItem* i : c->scene()->items())
                if (auto* t = dynamic_cast<QGraphicsSimpleTextItem*>(i); t && t->zValue() == 20) {
                    ++labels;
                    const double r = contrastRatio(t->brush().color(), background);
                    QVERIFY2(r >= 4.5, qPrintable(QStringLiteral("%1: \"%2\" at %3 : 1")
                                                      .arg(QLatin1String(key), t->text())
                                                      .arg(r, 0, 'f', 2)));
                }
            QVERIFY2(labels > 0, key);
        }
    }

    // F5 on a 1366×768 screen: the chart alone at that size in presentation style; its title
    // (the frontier map's long one too), axis titles and labels are whole.
    void titlesAreWholeInPresentationMode() {
        auto w = makeWindow();
        w->refreshNow();
        for (const char* key : {"breakeven", "frontier", "ttft"}) {
            auto* source = chartOf(w, QString::fromLatin1(key));
            source->setChartStyle(ChartStyle{false, true});
            auto c = createChart(QString::fromLatin1(key));
            c->setAttribute(Qt::WA_DontShowOnScreen);
            c->resize(1366, 768);
            c->show();
            QApplication::processEvents();
            c->copyStateFrom(*source);
            QTest::qWait(50);
            for (QGraphicsItem* i : c->scene()->items())
                if (auto* t = dynamic_cast<QGraphicsTextItem*>(i); t && t->isVisible()) {
                    const QString text = t->toPlainText();
                    QVERIFY2(!text.contains(QChar(0x2026)) && !text.contains(QLatin1String("...")),
                             qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(key), text)));
                }
            source->setChartStyle(ChartStyle{});
        }
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

    // Mistral 7B (a context of 32,768 tokens) on the conversation trace: the requests longer than
    // that, counted here from the file, are named after the answer.
    void requestsPastTheContextAreNamed() {
        QFile f(QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        int past = 0, all = 0;
        while (!f.atEnd()) {
            const QByteArray line = f.readLine().trimmed();
            if (line.isEmpty()) continue;
            ++all;
            past += QJsonDocument::fromJson(line).object().value("input_length").toInt() > 32768;
        }
        QVERIFY(past > 0);
        auto w = makeWindow();
        Scenario s = explorerOf(w)->scenario();
        s.model = "mistralai/Mistral-7B-Instruct-v0.3";
        explorerOf(w)->edit(s, QStringLiteral("Mistral"));
        QVERIFY(w->openTrace(QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl")));
        QVERIFY(settle(*w));
        const QString summary = child<QLabel>(w.get(), QStringLiteral("workloadSummary"))->text();
        const QString want =
            QStringLiteral("%1 of the trace's %2 requests (%3 %) are longer than "
                           "mistralai/Mistral-7B-Instruct-v0.3's context of 32,768 tokens")
                .arg(past)
                .arg(all)
                .arg(100.0 * past / all, 0, 'f', 1);
        QVERIFY2(summary.contains(want), qPrintable(summary + QStringLiteral("\nwanted: ") + want));
    }
};

QTEST_MAIN(TestUiSmallDefects)
#include "tst_ui_small_defects.moc"
