// How long one slider step takes in the explorer: the scenario recomputed by core, every chart
// refilled, and the charts painted, with 100,000 measured prefill points overlaid on the TTFT
// chart. Also the time from start to the first painted frame. Offscreen, so it runs anywhere.
#include "bench_qt.h"
#include "kvbe/base/statistics.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/ui/charts/ttft_chart.h"
#include "kvbe/ui/window/main_window.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSlider>
#include <QTabWidget>
#include <QXYSeries>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

QElapsedTimer g_sinceStart;

// Notes when the first chart's viewport has been painted.
class FirstPaint : public QObject {
  public:
    qint64 at = -1;
    bool eventFilter(QObject* o, QEvent* e) override {
        if (e->type() == QEvent::Paint && at < 0) at = g_sinceStart.elapsed();
        return QObject::eventFilter(o, e);
    }
};

// The window's parts, by object name (as the UI tests find them).
QTabWidget* tabsOf(const kvbe::MainWindow& w) {
    return w.findChild<QTabWidget*>(QStringLiteral("chartTabs"));
}
kvbe::ChartView* chartOf(const kvbe::MainWindow& w, const QString& key) {
    return w.findChild<kvbe::ChartView*>(key + QStringLiteral("Chart"));
}
// The chart shown now: the current tab's page, or the chart inside it. Null on a tab without a
// chart (the Workload view, the pin table), so callers show a chart by name first.
kvbe::ChartView* currentChartOf(const kvbe::MainWindow& w) {
    QWidget* page = tabsOf(w)->currentWidget();
    if (!page) return nullptr;
    auto* chart = qobject_cast<kvbe::ChartView*>(page);
    return chart ? chart : page->findChild<kvbe::ChartView*>();
}
// Brings the tab that holds the chart to the front, found by the chart's name, never by the tab's
// position (tabs come and go as the window grows).
kvbe::ChartView* showChart(const kvbe::MainWindow& w, kvbe::ChartView* chart) {
    QTabWidget* tabs = tabsOf(w);
    for (int k = 0; k < tabs->count(); ++k) {
        QWidget* page = tabs->widget(k);
        if (page == chart || page->isAncestorOf(chart)) {
            tabs->setCurrentIndex(k);
            return chart;
        }
    }
    std::fprintf(stderr, "kvbe-bench-ui: chart %s is on no tab\n", qPrintable(chart->objectName()));
    std::exit(1);
}
kvbe::Explorer* explorerOf(const kvbe::MainWindow& w) {
    return w.findChild<kvbe::Explorer*>(QStringLiteral("explorer"));
}
QList<kvbe::ChartView*> chartsOf(const kvbe::MainWindow& w) {
    return w.findChildren<kvbe::ChartView*>();
}

} // namespace

int main(int argc, char** argv) {
    g_sinceStart.start();
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    kvbe::bench::isolateBenchSettings();

    auto presets = kvbe::Presets::loadBuiltin();
    if (!presets) return 1;
    kvbe::MainWindow w(*presets);
    kvbe::ChartView* ttft = chartOf(w, QStringLiteral("ttft"));
    if (!ttft) {
        std::fprintf(stderr, "kvbe-bench-ui: the window has no chart named ttftChart\n");
        return 1;
    }
    FirstPaint first;
    kvbe::ChartView* shownFirst = currentChartOf(w);
    (shownFirst ? shownFirst : showChart(w, ttft))->viewport()->installEventFilter(&first);
    w.resize(1600, 1000);
    w.show();
    while (first.at < 0 && g_sinceStart.elapsed() < 10000)
        QApplication::processEvents(QEventLoop::AllEvents, 5);
    std::printf("first frame painted %lld ms after start (offscreen)\n",
                static_cast<long long>(first.at));

    // 100,000 measured cold prefills around the analytic curve, 1k to 128k tokens, as a probe
    // run would import them.
    std::vector<QPointF> measured;
    measured.reserve(100000);
    for (int i = 0; i < 100000; ++i) {
        const double n = 1024 * std::pow(128.0, i / 99999.0);
        measured.emplace_back(n, 2 * 3.2e9 * n / 495e12 * (1 + 0.05 * std::sin(i * 0.37)));
    }
    static_cast<kvbe::TtftChart*>(ttft)->setMeasured(std::move(measured), "bench");
    w.refreshNow();

    auto* slider = w.findChild<QSlider*>(QStringLiteral("utilisation"));
    auto step = [&](int value, bool paintAll) {
        QElapsedTimer t;
        t.start();
        slider->setValue(value);
        explorerOf(w)->recomputeNow(); // as the frame timer would: core, then the visible chart
        if (paintAll) w.refreshNow();
        if (paintAll) {
            // Each chart in its own tab, at the size it has on screen.
            for (auto* c : chartsOf(w))
                showChart(w, c)->viewport()->repaint();
        } else {
            ttft->viewport()->repaint();
        }
        return t.nsecsElapsed() / 1e6;
    };
    for (int i = 0; i < 5; ++i) { // warm up caches, fonts and each tab's first layout
        step(30 + i, true);
        QApplication::processEvents();
    }
    showChart(w, ttft); // the TTFT chart, which carries the measured points
    std::vector<double> visible, all;
    for (int i = 0; i < 40; ++i)
        visible.push_back(step(40 + i, false));
    for (int i = 0; i < 20; ++i)
        all.push_back(step(40 + i, true));
    // Where the time goes, per part of one step.
    std::vector<double> core, refill, paint;
    for (int i = 0; i < 20; ++i) {
        QElapsedTimer t;
        t.start();
        slider->setValue(60 + i);
        explorerOf(w)->recomputeNow();
        core.push_back(t.nsecsElapsed() / 1e6);
        t.restart();
        for (auto* c : chartsOf(w))
            c->setResults(explorerOf(w)->result(), {});
        refill.push_back(t.nsecsElapsed() / 1e6);
        t.restart();
        ttft->viewport()->repaint();
        paint.push_back(t.nsecsElapsed() / 1e6);
    }
    const auto charts = static_cast<int>(chartsOf(w).size());
    std::printf("  of which: core %.2f ms, refilling %d charts %.2f ms, painting the visible one "
                "%.2f ms\n",
                kvbe::median(core), charts, kvbe::median(refill), kvbe::median(paint));
    for (auto* c : chartsOf(w)) {
        std::vector<double> one;
        for (int i = 0; i < 10; ++i) {
            QElapsedTimer t;
            t.start();
            c->setResults(explorerOf(w)->result(), {});
            one.push_back(t.nsecsElapsed() / 1e6);
        }
        std::printf("  refill %-9s %.2f ms\n", qPrintable(c->key()), kvbe::median(one));
    }
    const double v = kvbe::median(visible), a = kvbe::median(all);
    const auto* drawn = ttft->seriesByKey(QStringLiteral("imported"));
    std::printf("measured points: 100000, drawn after decimation: %lld\n",
                static_cast<long long>(drawn ? drawn->count() : 0));
    std::printf("slider step, visible chart repainted: median %.2f ms = %.2f of a 16 ms frame\n", v,
                v / 16.0);
    std::printf("slider step, all %d charts repainted: median %.2f ms = %.2f of a 16 ms frame\n",
                charts, a, a / 16.0);
    w.close();
    return 0;
}
