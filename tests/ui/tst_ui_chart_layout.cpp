// How a chart lays out its plot, titles and labels. Crowded: with a trace open, the Fleet files
// imported and their dock unfolded, and a pin, every chart of every tab keeps at least half of its
// height for the plot, cuts no title, axis title or tick label short, and places its labels where
// they cover neither one another nor the legend, on a laptop's 1366×768, on 1600×1000 and on
// 2560×1600 at ×2 (1280×800 in Qt's pixels). In presentation mode the titles are whole; on the dark
// theme the labels keep their contrast.
#include "ui_test_support.h"

#include "kvbe/ui/workload/capacity_panel.h"

#include <QApplication>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>

#include <algorithm>
#include <cmath>

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

// Labels on a diagonal curve. Crowd: more at one point than the plot has room for, the last
// (rightmost) naming what a sentence under the chart names, at priority 1, and one too wide for
// the plot whole, with a brief form. Curve: one label too long to sit near its point clear of
// the curve whole; its brief form fits clear of it.
class LabelChart : public ChartView {
  public:
    enum class Kind { Crowd, Curve };
    explicit LabelChart(Kind kind) : m_kind(kind) {}
    QString csv() const override { return {}; }
    QString hoverText(QPointF) const override { return {}; }

  protected:
    void refill() override {
        setAxes(false, QStringLiteral("Load S"), QStringLiteral("TTFT (s)"), false);
        setTitles(QStringLiteral("Labels"), QString());
        beginRefill();
        line(QStringLiteral("curve"), QStringLiteral("curve"), Qt::black)
            ->replace(QList<QPointF>{{0, 0}, {2, 2}});
        if (m_kind == Kind::Curve) {
            label(QStringLiteral("long"), QStringLiteral("breakeven: S = 1.000, 1.30× GPU-only"),
                  QPointF(1, 1), Qt::darkMagenta, Qt::Alignment(), QStringLiteral("S = 1"));
        } else {
            for (int i = 0; i < 12; ++i)
                label(QStringLiteral("crowd/%1").arg(i),
                      QStringLiteral("always, breakeven, rule %1: S = 1.%2").arg(i).arg(i),
                      QPointF(1 + 0.001 * i, 1), Qt::darkGreen, Qt::Alignment());
            label(QStringLiteral("named"),
                  QStringLiteral("gpu-only, optimal: S = 1.013, 1.00× GPU-only"), QPointF(1.013, 1),
                  Qt::darkBlue, Qt::Alignment(), QStringLiteral("optimal: S = 1.013"), 1);
            label(QStringLiteral("wide"),
                  QString(QStringLiteral("too wide for the plot ")).repeated(12), QPointF(0.3, 1.7),
                  Qt::darkRed, Qt::Alignment(), QStringLiteral("brief"), 2);
        }
        endRefill();
        setHomeRange(0, 2, 0, 2);
    }

  private:
    Kind m_kind;
};

// A label chart of this kind, shown at 420 × 300 with the window's result, laid out.
std::unique_ptr<LabelChart> shownLabelChart(LabelChart::Kind kind, MainWindow& w) {
    auto c = std::make_unique<LabelChart>(kind);
    c->resize(420, 300);
    c->show();
    c->setResults(explorerOf(&w)->result(), {});
    if (!QTest::qWaitForWindowExposed(c.get())) return nullptr;
    QCoreApplication::processEvents();
    return c;
}

} // namespace

class TestUiChartLayout : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }
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
                    const QString where =
                        tabs->tabText(i) + QStringLiteral(" ▸ ") + inner->tabText(k);
                    problems << crowding(v->visibleChart(), where);
                    // The Capacity chart names the optimal rule's largest load, as the
                    // sentence under it does.
                    auto* panel = v->findChild<CapacityPanel*>();
                    if (panel && panel->isVisible()) {
                        QTRY_VERIFY_WITH_TIMEOUT(!panel->computing(), 120000);
                        QTest::qWait(50);
                        bool named = false;
                        for (int m = 0; m < 4; ++m) {
                            const QString key = QStringLiteral("held/%1").arg(m);
                            if (!panel->chart()->labelText(key).contains(QStringLiteral("optimal")))
                                continue;
                            named = true;
                            if (!panel->chart()->labelShown(key))
                                problems << QStringLiteral("%1: \"%2\" is hidden")
                                                .arg(where, panel->chart()->labelText(key));
                        }
                        if (!named) problems << where + QStringLiteral(": no optimal label");
                    }
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

    // Where room runs out, the label of the higher priority is placed and the others yield;
    // one too wide whole shows its brief form.
    void crowdedLabelsShowTheNamedOnesFirst() {
        auto w = makeWindow();
        auto chart = shownLabelChart(LabelChart::Kind::Crowd, *w);
        QVERIFY(chart);
        LabelChart& c = *chart;
        QVERIFY2(c.labelShown(QStringLiteral("named")), "the named label yielded to the crowd");
        int hidden = 0;
        for (int i = 0; i < 12; ++i)
            hidden += !c.labelShown(QStringLiteral("crowd/%1").arg(i));
        QVERIFY2(hidden > 0, "the chart has room for every label: no crowd to test");
        QCOMPARE(c.labelShownText(QStringLiteral("wide")), QStringLiteral("brief"));
        const QString named = c.labelShownText(QStringLiteral("named"));
        QVERIFY2(named == QStringLiteral("gpu-only, optimal: S = 1.013, 1.00× GPU-only") ||
                     named == QStringLiteral("optimal: S = 1.013"),
                 qPrintable(named));
    }

    // A label that would lie across a curve whole shows its brief form clear of it (the
    // GPU-only curve ran through "breakeven: S = 2.351, 1.30× GPU-only").
    void aLabelTakesItsBriefFormRatherThanCoverACurve() {
        auto w = makeWindow();
        auto c = shownLabelChart(LabelChart::Kind::Curve, *w);
        QVERIFY(c);
        QCOMPARE(c->labelShownText(QStringLiteral("long")), QStringLiteral("S = 1"));
    }
};

QTEST_MAIN(TestUiChartLayout)
#include "tst_ui_chart_layout.moc"
