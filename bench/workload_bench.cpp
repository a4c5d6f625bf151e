// What one control change costs in the explorer's Workload view, on a trace (default: the
// conversation trace): core's replay + sweep on the worker (computeWorkload), and the whole step
// in the window, from a slider's new value to the summary and charts shown (offscreen). Printed
// against the view's live budget (WorkloadView::kLiveSeconds): under it, sliders re-run as they
// move; over it, on release.
#include "bench_qt.h"
#include "kvbe/base/allocator.h"
#include "kvbe/base/statistics.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/ui/window/main_window.h"
#include "kvbe/ui/workload/workload_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSlider>
#include <QTabWidget>
#include <QTest>

#include <algorithm>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    kvbe::returnLargeFreesToTheSystem(); // as kvbe-cli and kvbe do
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    kvbe::bench::isolateBenchSettings();
    const QString trace =
        argc > 1
            ? QString::fromLocal8Bit(argv[1])
            : QStringLiteral(KVBE_SOURCE_DIR "/tests/fixtures/traces/mooncake-conversation.jsonl");
    auto presets = kvbe::Presets::loadBuiltin();
    if (!presets) return 1;
    kvbe::MainWindow w(*presets);
    w.resize(1600, 1000);
    w.show();
    auto* v = w.findChild<kvbe::WorkloadView*>(QStringLiteral("workloadView"));
    w.findChild<QTabWidget*>(QStringLiteral("chartTabs"))->setCurrentWidget(v);
    auto idle = [&] {
        return QTest::qWaitFor([&] { return !v->loading() && !v->replaying(); }, 600000);
    };
    QElapsedTimer t;
    t.start();
    if (!v->openTrace(trace) || !idle() || !v->result()) {
        std::fprintf(stderr, "kvbe-bench-workload: cannot open %s\n", qPrintable(trace));
        return 1;
    }
    const double openS = double(t.elapsed()) / 1e3;
    auto* slider = v->findChild<QSlider*>(QStringLiteral("workloadTier1"));
    std::vector<double> replay, sweep, step;
    for (int i = 0; i < 12; ++i) {
        // One slider step, alternating, as a drag does.
        t.restart();
        slider->setValue(slider->value() + (i % 2 ? 1 : -1));
        if (!idle()) return 1;
        QApplication::processEvents();
        step.push_back(double(t.nsecsElapsed()) / 1e9);
        replay.push_back(v->result()->replaySeconds);
        sweep.push_back(v->result()->sweepSeconds);
    }
    const double lookups = double(v->result()->replay ? v->result()->replay->lookups : 0);
    std::printf("trace %s: %zu requests, opened and first replay in %.0f ms\n", qPrintable(trace),
                v->trace()->size(), openS * 1e3);
    std::printf("per slider step (median of %zu): replay %.1f ms (%.1f M lookups/s with "
                "per-request times), "
                "sweep %.1f ms, window step %.1f ms\n",
                step.size(), kvbe::median(replay) * 1e3, lookups / kvbe::median(replay) / 1e6,
                kvbe::median(sweep) * 1e3, kvbe::median(step) * 1e3);
    std::printf("replay + sweep = %.2f of the live budget (%.0f ms): sliders re-run %s\n",
                (kvbe::median(replay) + kvbe::median(sweep)) / kvbe::WorkloadView::kLiveSeconds,
                kvbe::WorkloadView::kLiveSeconds * 1e3, v->live() ? "live" : "on release");
    return 0;
}
