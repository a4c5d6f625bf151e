// A replay as `kvbe-cli trace replay` and the Workload view report it: the replay and the
// replays it is compared with, run side by side on threads.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"

#include <functional>
#include <optional>

namespace kvbe {

struct ReplayRun {
    ReplayResult result;
    // With store admission (storeAfter > 1): the same replay storing every block (K = 1), for
    // the hits and writes the admission trades.
    std::optional<ReplayResult> storeAll;
    // Where some tier's writes fell behind: the same replay with writes that always keep up and
    // no prefill servers, for the hits the backlog cost.
    std::optional<ReplayResult> writesKeptUp;
};

// The K = 1 replay runs on a second thread beside the replay itself. progress (the replay's
// fraction done, called on the calling thread) returning false cancels both; the result then
// has cancelled set.
Result<ReplayRun> runReplay(const Trace& trace, const CostModel& cost, const ReplayConfig& config,
                            const std::function<bool(double)>& progress = {});

} // namespace kvbe
