// Whether the window stays responsive while it reads a large trace and plans for it (issue 41:
// no frame over 100 ms): the main window shown on the Workload tab's Plan section, a trace opened,
// and every gap between two turns of the UI thread's event loop timed until the plan is shown.
// Two clocks: the wall-clock gap between ticks of a 5 ms timer (what a user sees, inflated by
// other processes on a busy machine), and the CPU time of the longest single event the UI thread
// handled (its own work in one piece, which another process cannot inflate).
//
//   kvbe-bench-plan-window FILE [--exact]          open FILE
//   kvbe-bench-plan-window --generate N [--exact]  write N generated requests to a temporary
//                                                  folder (kvbe/trace/trace_generate.h), open them
//   --exact-below N --sample-requests M            the fast mode's threshold and sample size
//                                                  (default 200,000 and 62,500, as the CLI's), to
//                                                  sample a small trace
#include "bench_qt.h"
#include "kvbe/base/allocator.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/trace/trace_generate.h"
#include "kvbe/ui/window/main_window.h"
#include "kvbe/ui/workload/plan_section.h"
#include "kvbe/ui/workload/workload_view.h"

#include <QApplication>
#include <QCheckBox>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QLabel>
#include <QMetaEnum>
#include <QRegularExpression>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>
#include <sys/resource.h>

namespace {

double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// The UI thread's longest single event, by its thread CPU time (outermost notify() only).
class TimedApp : public QApplication {
  public:
    using QApplication::QApplication;
    double longestMs = 0, longestWallMs = 0, longestWallCpuMs = 0;
    QString longestWhat, longestWallWhat;
    QStringList slow; // the events over 50 ms by the wall clock, the first 20
    // Window repaints, those that waited for another thread (Qt's paint helpers), layout passes.
    int paints = 0, paintsWaiting = 0, layouts = 0;
    bool notify(QObject* receiver, QEvent* event) override {
        if (m_depth > 0 || QThread::currentThread() != thread())
            return QApplication::notify(receiver, event);
        ++m_depth;
        QElapsedTimer wall;
        wall.start();
        const double start = threadCpuMs();
        rusage before{};
        getrusage(RUSAGE_THREAD, &before);
        const int type = int(event->type());
        // The receiver's class, and its parent's where it has no name of its own (a QTimer).
        const QObject* up = receiver ? receiver->parent() : nullptr;
        const QString cls =
            QLatin1String(receiver ? receiver->metaObject()->className() : "nothing") +
            (up && receiver->objectName().isEmpty()
                 ? QLatin1String(" of ") + QLatin1String(up->metaObject()->className())
                 : QString());
        const bool r = QApplication::notify(receiver, event);
        const double spent = threadCpuMs() - start;
        const double wallMs = double(wall.nsecsElapsed()) / 1e6;
        --m_depth;
        auto what = [&] {
            const char* name = QEvent::staticMetaObject
                                   .enumerator(QEvent::staticMetaObject.indexOfEnumerator("Type"))
                                   .valueToKey(type);
            return QStringLiteral("%1 to %2").arg(QLatin1String(name ? name : "event"), cls);
        };
        if (spent > longestMs) {
            longestMs = spent;
            longestWhat = what();
        }
        rusage after{};
        getrusage(RUSAGE_THREAD, &after);
        if (type == QEvent::UpdateRequest) {
            ++paints;
            paintsWaiting += after.ru_nvcsw > before.ru_nvcsw;
        }
        layouts += type == QEvent::LayoutRequest;
        if (wallMs > 50 && slow.size() < 20) {
            slow << QStringLiteral("%1 ms wall, %2 ms CPU, %3 waits, %4 preemptions, %5 page "
                                   "faults: %6")
                        .arg(wallMs, 0, 'f', 0)
                        .arg(spent, 0, 'f', 0)
                        .arg(after.ru_nvcsw - before.ru_nvcsw)
                        .arg(after.ru_nivcsw - before.ru_nivcsw)
                        .arg(after.ru_minflt - before.ru_minflt + after.ru_majflt -
                             before.ru_majflt)
                        .arg(what());
        }
        if (wallMs > longestWallMs) {
            longestWallMs = wallMs;
            longestWallCpuMs = spent;
            longestWallWhat = what();
        }
        return r;
    }

  private:
    int m_depth = 0;
};

enum Phase { Reading, Replaying, Planning, Phases };
const char* const kPhaseNames[Phases] = {"reading", "replaying", "planning"};

} // namespace

int main(int argc, char** argv) {
    kvbe::returnLargeFreesToTheSystem(); // as kvbe-cli and kvbe do
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    TimedApp app(argc, argv);
    kvbe::bench::isolateBenchSettings();
    QString trace;
    quint64 generate = 0;
    bool exact = false;
    kvbe::PlanSampleOptions sampling;
    for (int i = 1; i < argc; ++i) {
        const QString a = QString::fromLocal8Bit(argv[i]);
        if (a == QLatin1String("--exact"))
            exact = true;
        else if (a == QLatin1String("--generate") && i + 1 < argc)
            generate = QString::fromLocal8Bit(argv[++i]).toULongLong();
        else if (a == QLatin1String("--exact-below") && i + 1 < argc)
            sampling.exactBelow = QString::fromLocal8Bit(argv[++i]).toULongLong();
        else if (a == QLatin1String("--sample-requests") && i + 1 < argc)
            sampling.sampleRequests = QString::fromLocal8Bit(argv[++i]).toULongLong();
        else
            trace = a;
    }
    QTemporaryDir dir;
    if (generate > 0) {
        trace = dir.filePath(QStringLiteral("generated.jsonl"));
        kvbe::TraceGeneratorSpec spec;
        spec.requests = generate;
        spec.seed = 42;
        auto g = kvbe::generateTraceFile(spec, trace.toStdString());
        if (!g) {
            std::fprintf(stderr, "kvbe-bench-plan-window: %s\n", g.message().c_str());
            return 1;
        }
    }
    if (trace.isEmpty()) {
        std::fprintf(stderr, "usage: kvbe-bench-plan-window FILE|--generate N [--exact]\n");
        return 2;
    }
    auto presets = kvbe::Presets::loadBuiltin();
    if (!presets) return 1;
    kvbe::MainWindow w(*presets);
    w.resize(1600, 1000);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w)) return 1;
    auto* v = w.findChild<kvbe::WorkloadView*>(QStringLiteral("workloadView"));
    auto* plan = w.findChild<kvbe::PlanSection*>(QStringLiteral("planSection"));
    w.findChild<QTabWidget*>(QStringLiteral("chartTabs"))->setCurrentWidget(v);
    v->findChild<QTabWidget*>(QStringLiteral("workloadCharts"))->setCurrentWidget(plan);
    plan->findChild<QCheckBox*>(QStringLiteral("planExact"))->setChecked(exact);
    plan->setSampleOptions(sampling);
    QTest::qWait(200); // the window settled before the clocks start

    // The frame clock: a 5 ms timer; each gap between its ticks is one frame's wait at least.
    double longest[Phases] = {0, 0, 0};
    int over100 = 0;
    QStringList stages; // the plan's progress lines, each stage once, in order
    QString lastShape;
    QElapsedTimer frame;
    Phase phase = Reading;
    auto phaseNow = [&] {
        if (v->loading()) return Reading;
        if (v->replaying()) return Replaying;
        return Planning;
    };
    QElapsedTimer all;
    double readS = 0, replayS = 0;
    // Found once: a search of the window's widgets on each tick was 7 % of the UI thread's time.
    const QLabel* status = plan->findChild<QLabel*>(QStringLiteral("planStatus"));
    QTimer tick;
    tick.setInterval(5);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const double gap = double(frame.nsecsElapsed()) / 1e6;
        frame.restart();
        longest[phase] = std::max(longest[phase], gap);
        over100 += gap > 100;
        phase = phaseNow();
        // The time each phase ended: the first tick after it.
        if (phase != Reading && readS == 0) readS = double(all.elapsed()) / 1e3;
        if (phase == Planning && replayS == 0) replayS = double(all.elapsed()) / 1e3;
        const QString s = status->text();
        // Each stage once: its first line (the figures in it change as it goes).
        static const QRegularExpression figures(QStringLiteral("[0-9][0-9,.]*"));
        const QString shape = QString(s).replace(figures, QStringLiteral("#"));
        if (plan->computing() && !s.isEmpty() && shape != lastShape) {
            stages << s;
            lastShape = shape;
        }
    });
    app.longestMs = app.longestWallMs = 0;
    app.slow.clear();
    app.paints = app.paintsWaiting = app.layouts = 0;
    all.start();
    frame.start();
    tick.start();
    // The window's own event loop, as QApplication::exec runs it (QTest::qWaitFor would sleep
    // 10 ms between its passes, a gap of the bench's own), left when the plan is shown.
    QEventLoop loop;
    bool done = false;
    QTimer check;
    check.setInterval(20);
    QObject::connect(&check, &QTimer::timeout, [&] {
        done = !v->loading() && !v->replaying() && v->result() && !plan->computing() &&
               !plan->scheduled() && plan->plan() && plan->plan()->workload == v->result();
        if (done || all.elapsed() > 3600 * 1000) loop.quit();
    });
    if (!v->openTrace(trace)) return 1;
    check.start();
    loop.exec();
    check.stop();
    tick.stop();
    const double totalS = double(all.elapsed()) / 1e3;
    if (!done || !plan->plan()->result) {
        std::fprintf(stderr, "kvbe-bench-plan-window: no plan for %s: %s\n", qPrintable(trace),
                     plan->plan() ? qPrintable(plan->plan()->error) : "timed out");
        return 1;
    }
    const auto& r = *plan->plan()->result;
    std::printf("trace %s: %zu requests; read by %.2f s, replayed by %.2f s, planned by %.2f s "
                "(%zu configurations, %s)\n",
                qPrintable(trace), v->trace()->size(), readS, replayS, totalS, r.points.size(),
                r.sampling.sampled ? "sampled" : "exact");
    for (const QString& s : stages)
        std::printf("  progress: %s\n", qPrintable(s));
    std::printf("  mode: %s\n",
                qPrintable(plan->findChild<QLabel*>(QStringLiteral("planMode"))->text()));
    std::printf("longest frame (gap between ticks of a 5 ms timer, wall clock): reading %.0f ms, "
                "replaying %.0f ms, planning %.0f ms; %d over 100 ms\n",
                longest[Reading], longest[Replaying], longest[Planning], over100);
    std::printf("longest event on the UI thread: by its CPU time %.0f ms (%s); by the wall clock "
                "%.0f ms, %.0f ms of it CPU (%s)\n",
                app.longestMs, qPrintable(app.longestWhat), app.longestWallMs, app.longestWallCpuMs,
                qPrintable(app.longestWallWhat));
    std::printf("repaints: %d, %d of them waited for another thread; layout passes: %d\n",
                app.paints, app.paintsWaiting, app.layouts);
    for (const QString& e : app.slow)
        std::printf("  event over 50 ms: %s\n", qPrintable(e));
    return 0;
}
