// The charts' value axes: no "Logarithms of zero" on the console whatever the scenario does under a
// log axis, and the log-axis button says what the chart shows after a restart.
#include "ui_test_support.h"

#include <QAction>
#include <QApplication>
#include <QMenu>
#include <QToolButton>
#include <QValueAxis>

using namespace kvbe;
using namespace kvbe::test;

namespace {

// Warnings on the console while a test drives the window: "Logarithms of zero and negative
// values are undefined." and its kin come from Qt Charts when a log axis meets a value <= 0.
QStringList g_warnings;
QtMessageHandler g_previous = nullptr;

void recordWarnings(QtMsgType type, const QMessageLogContext& ctx, const QString& msg) {
    if (type == QtWarningMsg || type == QtCriticalMsg) g_warnings << msg;
    if (g_previous) g_previous(type, ctx, msg);
}

// A chart of money on a linear x axis, as the Plan chart's capital cost: $0 to $140,000.
class CostChart : public ChartView {
  public:
    using ChartView::ChartView;
    QString csv() const override { return {}; }
    QString hoverText(QPointF) const override { return {}; }

  protected:
    void refill() override {
        setAxes(false, QStringLiteral("Capital cost (USD)"), QStringLiteral("TTFT saved (ms)"),
                false);
        setTitles(QStringLiteral("Cost"), QString());
        beginRefill();
        line(QStringLiteral("cost"), QStringLiteral("cost"), Qt::black)
            ->replace(QList<QPointF>{{0, 0}, {137000, 40}});
        endRefill();
        setHomeRange(0, 137000, 0, 40);
    }
};

// The x axis's labels side by side: each the width of its text, within the plot's width.
bool xLabelsFit(ChartView& c) {
    auto* v = qobject_cast<QValueAxis*>(c.chart()->axes(Qt::Horizontal).value(0));
    if (!v) return false;
    const QFontMetricsF fm(v->labelsFont());
    const QByteArray format = v->labelFormat().toLatin1();
    QList<double> ticks;
    if (v->tickType() == QValueAxis::TicksDynamic)
        for (double x = v->tickAnchor(); x <= v->max() + 1e-9; x += v->tickInterval())
            ticks << x;
    else
        for (int i = 0; i < v->tickCount(); ++i)
            ticks << v->min() + (v->max() - v->min()) * i / std::max(1, v->tickCount() - 1);
    double width = 0;
    for (double x : ticks)
        width += fm.horizontalAdvance(QString::asprintf(format.constData(), x));
    return ticks.size() >= 2 && width <= c.chart()->plotArea().width();
}

} // namespace

class TestUiChartAxes : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }

    // The console logged "Logarithms of zero" 11 times. Every path that did,
    // through the window: log and linear axes on each chart, with model and GPU changes, a tier
    // removed and added, pins, and the minimum-cached-fraction chart of a 70B model on a log
    // axis. No warning at all from the charts.
    void noLogarithmsOfZeroOnTheConsole() {
        g_warnings.clear();
        g_previous = qInstallMessageHandler(recordWarnings);
        {
            auto w = makeWindow();
            w->show();
            QVERIFY(QTest::qWaitForWindowExposed(w.get()));
            auto* logY = menuAction(w.get(), QStringLiteral("Log value axis"));
            QVERIFY(logY);
            // Each chart in turn on screen, its value axis to the other kind and back.
            const auto toggleEveryChart = [&] {
                for (int i = 0; i < tabsOf(w)->count(); ++i) {
                    tabsOf(w)->setCurrentIndex(i);
                    w->refreshNow();
                    QApplication::processEvents();
                    if (!logY->isEnabled()) continue;
                    for (int k = 0; k < 2; ++k) {
                        logY->trigger();
                        w->refreshNow();
                        QApplication::processEvents();
                    }
                }
            };
            toggleEveryChart();
            // Every chart on a log axis while the scenario changes under it.
            for (int i = 0; i < tabsOf(w)->count(); ++i) {
                tabsOf(w)->setCurrentIndex(i);
                w->refreshNow();
                if (logY->isEnabled() && !logY->isChecked()) logY->trigger();
            }
            QVERIFY(w->pinCurrent(QStringLiteral("the default")));
            for (const QString& model : {QStringLiteral("meta-llama/Llama-3.3-70B-Instruct"),
                                         QStringLiteral("meta-llama/Llama-3.2-3B")}) {
                QVERIFY(panelOf(w).selectModel(model));
                w->refreshNow();
                toggleEveryChart();
            }
            auto* gpu = panelOf(w).gpuBox();
            QVERIFY(gpu->count() > 1);
            gpu->setCurrentIndex((gpu->currentIndex() + 1) % gpu->count());
            w->refreshNow();
            toggleEveryChart();
            // A tier removed and one added from the presets' menu.
            auto* tiers = panelOf(w).tierModel();
            const int before = tiers->rowCount();
            tiers->removeTier(before - 1);
            w->refreshNow();
            toggleEveryChart();
            auto* add = w->findChild<QToolButton*>(QStringLiteral("addTier"));
            QVERIFY(add && add->menu() && !add->menu()->actions().isEmpty());
            add->menu()->actions().front()->trigger();
            w->refreshNow();
            QCOMPARE(tiers->rowCount(), before);
            // The added tier without a fixed cost: p* = 0, which a log length axis cannot place.
            Scenario s = explorerOf(w)->scenario();
            s.tiers.back().tFixedMs = 0;
            explorerOf(w)->edit(s, QStringLiteral("no fixed cost"));
            w->refreshNow();
            const auto& pStar = explorerOf(w)->result()->curves.tiers.back().breakevenPrefix;
            QVERIFY(pStar && *pStar == 0);
            QVERIFY(explorerOf(w)->scenario().lengths.log);
            toggleEveryChart();
            QVERIFY(w->pinCurrent(QStringLiteral("tiers changed")));
            toggleEveryChart();
            // The 70B model's minimum cached fraction on a log axis, with both pins.
            QVERIFY(panelOf(w).selectModel(QStringLiteral("meta-llama/Llama-3.3-70B-Instruct")));
            w->refreshNow();
            auto* fraction = chartOf(w, QStringLiteral("fraction"));
            tabsOf(w)->setCurrentWidget(fraction);
            w->refreshNow();
            if (!fraction->logY()) logY->trigger();
            w->refreshNow();
            QApplication::processEvents();
            QVERIFY(fraction->logY());
            explorerOf(w)->pins()->clear();
            w->refreshNow();
            QApplication::processEvents();
        }
        qInstallMessageHandler(g_previous);
        // Every warning counts, but for the platform plugin's notes on what it cannot do
        // ("This plugin does not support propagateSizeHints()" offscreen).
        QStringList warnings;
        for (const QString& m : std::as_const(g_warnings))
            if (!m.startsWith(QLatin1String("This plugin does not support"))) warnings << m;
        QVERIFY2(warnings.isEmpty(), qPrintable(QStringLiteral("%1 warnings: %2")
                                                    .arg(warnings.size())
                                                    .arg(warnings.join(QStringLiteral(" | ")))));
    }

    // The Plan chart's cost axis read "20…", "40…", "14…" in a narrow window: Qt cuts labels
    // that do not fit side by side. At 360 px the ticks thin out until every label is whole;
    // wide, the nice steps stay.
    void linearLabelsAreWholeAtEveryWidth() {
        auto w = makeWindow();
        const auto result = explorerOf(w.get())->result();
        QVERIFY(result);
        for (int width : {360, 520, 1200}) {
            CostChart c;
            c.resize(width, 320);
            c.show();
            c.setResults(result, {});
            QVERIFY(QTest::qWaitForWindowExposed(&c));
            QCoreApplication::processEvents();
            QVERIFY2(xLabelsFit(c), qPrintable(QString::number(width)));
        }
    }

    // The arrow keys panned past the data into blank space. Zoomed in, they pan up to the data's
    // edges and stop there; at home, they leave the view as it is.
    void arrowsPanWithinTheData() {
        auto w = makeWindow();
        const auto result = explorerOf(w.get())->result();
        CostChart c;
        c.resize(700, 400);
        c.show();
        c.setResults(result, {});
        QVERIFY(QTest::qWaitForWindowExposed(&c));
        const QRectF home = c.visibleRange();
        for (int i = 0; i < 5; ++i)
            QTest::keyClick(&c, Qt::Key_Up);
        QVERIFY2(std::abs(c.visibleRange().top() - home.top()) < 1e-6 * home.height(),
                 "a pan at home moved the view");
        for (int i = 0; i < 3; ++i)
            QTest::keyClick(&c, Qt::Key_Plus);
        QVERIFY(c.visibleRange().width() < home.width() * 0.6);
        for (int i = 0; i < 60; ++i)
            QTest::keyClick(&c, Qt::Key_Right);
        const double tolX = home.width() * 0.01, tolY = home.height() * 0.01;
        QVERIFY2(c.visibleRange().right() <= home.right() + tolX,
                 qPrintable(QString::number(c.visibleRange().right())));
        QVERIFY(c.visibleRange().right() >= home.right() - tolX); // it got there
        for (int i = 0; i < 120; ++i)
            QTest::keyClick(&c, Qt::Key_Left);
        QVERIFY(c.visibleRange().left() >= home.left() - tolX);
        for (int i = 0; i < 60; ++i)
            QTest::keyClick(&c, Qt::Key_Down);
        QVERIFY(c.visibleRange().top() >= home.top() - tolY);
        for (int i = 0; i < 120; ++i)
            QTest::keyClick(&c, Qt::Key_Up);
        QVERIFY(c.visibleRange().bottom() <= home.bottom() + tolY);
    }

    void theLogAxisButtonMatchesTheChartAfterARestart() {
        QSettings().setValue(QStringLiteral("window/tab"), 1); // the fraction chart: linear
        auto w = makeWindow();
        auto* c = currentChartOf(w);
        QVERIFY(c);
        auto* logY = menuAction(w.get(), QStringLiteral("Log value axis"));
        QVERIFY(logY);
        QCOMPARE(logY->isChecked(), c->logY());
    }
};

QTEST_MAIN(TestUiChartAxes)
#include "tst_ui_chart_axes.moc"
