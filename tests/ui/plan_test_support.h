// The Plan section's tests: the window shown on it, waiting for its plan, and a trace of
// requests that share a prefix, whose hits and writes the tests count by hand.
#pragma once

#include "ui_test_support.h"

#include "kvbe/ui/workload/plan_section.h"

#include <QFile>
#include <QStringList>
#include <QTemporaryDir>

namespace kvbe::test {

inline WorkloadView* viewOf(MainWindow& w) {
    return child<WorkloadView>(&w, QStringLiteral("workloadView"));
}
inline PlanSection* sectionOf(MainWindow& w) {
    return child<PlanSection>(&w, QStringLiteral("planSection"));
}

// The window shown on the Workload tab's Plan section: the plan runs while it is shown.
inline std::unique_ptr<MainWindow> shownOnPlan() {
    auto w = makeWindow();
    w->show();
    if (!QTest::qWaitForWindowExposed(w.get())) qFatal("the window was not exposed");
    auto* v = viewOf(*w);
    tabsOf(w)->setCurrentWidget(v);
    child<QTabWidget>(v, QStringLiteral("workloadCharts"))->setCurrentWidget(sectionOf(*w));
    return w;
}

inline bool settle(MainWindow& w) {
    auto* v = viewOf(w);
    auto* s = sectionOf(w);
    return QTest::qWaitFor(
        [&] {
            return !v->loading() && !v->replaying() && !s->computing() && !s->scheduled() &&
                   !explorerOf(&w)->recomputePending();
        },
        180000);
}

// `requests` requests one second apart, each with the shared blocks 0-3 and four blocks of its own.
constexpr int kRequests = 20;
constexpr int kShared = 4, kOwn = 4;
inline QString writeSharedPrefix(const QTemporaryDir& dir, int requests = kRequests) {
    const QString path = dir.filePath(QStringLiteral("shared-prefix.jsonl"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    int own = 1000;
    for (int i = 0; i < requests; ++i) {
        QStringList ids = {"0", "1", "2", "3"};
        for (int b = 0; b < kOwn; ++b)
            ids << QString::number(own++);
        f.write(QStringLiteral("{\"timestamp\": %1, \"input_length\": 4096, \"output_length\": 1, "
                               "\"hash_ids\": [%2]}\n")
                    .arg(i * 1000)
                    .arg(ids.join(QStringLiteral(", ")))
                    .toUtf8());
    }
    return path;
}

} // namespace kvbe::test
