// What the Workload tab's tests share: the view, waiting until it and the Plan section are idle,
// and the conversation trace's path.
#pragma once

#include "ui_test_support.h"

#include "kvbe/ui/workload/plan_section.h"
#include "kvbe/ui/workload/workload_view.h"

namespace kvbe::test {

inline QString conversationTracePath() {
    return QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl");
}

inline WorkloadView* workloadViewOf(MainWindow& w) {
    return child<WorkloadView>(&w, QStringLiteral("workloadView"));
}

// Until the trace is read, replayed and planned, and the scenario computed (3 minutes at most).
inline bool settleWorkload(MainWindow& w) {
    auto* v = workloadViewOf(w);
    auto* s = child<PlanSection>(&w, QStringLiteral("planSection"));
    return QTest::qWaitFor(
        [&] {
            return !v->loading() && !v->replaying() && !s->computing() && !s->scheduled() &&
                   !explorerOf(&w)->recomputePending();
        },
        180000);
}

} // namespace kvbe::test
