// The kvbe-cli trace replay command line that replays a ReplayRequest: what a report gives to
// reproduce the window's replay (the Workload view's settings as flags), so that the figures it
// shows can be made again from the scenario file and the trace alone.
#pragma once

#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/replay_request.h"
#include "kvbe/trace/trace_sim.h"

#include <string>
#include <vector>

namespace kvbe {

// `kvbe-cli trace replay TRACE --scenario SCENARIO` and the flags that give the request on the
// scenario of `e` under `rule`: --gpu-cache, a --tier NAME=CAPACITY for each tier replayed (the
// tiers the request leaves out are not named, and so not replayed), --policy, --placement,
// --admission, --servers with --router, --node-servers and --pooled for a fleet, --store-after,
// --shared-link, --tier-write, --write-buffer, --no-write-queue and --rate-scale where they
// differ from the defaults. Capacities in bytes are written to the byte.
std::vector<std::string> replayCommandLine(const ReplayRequest& request, const Evaluation& e,
                                           Admission rule, const std::string& traceFile,
                                           const std::string& scenarioFile);

// The replay's settings in one sentence, for a report that must say what it assumed: "Replayed
// with 3.00 GiB of HBM for KV on each of 4 servers behind sglang; dram-pcie5 24.0 GiB; lru,
// write-through, always admission; blocks stored at their 2nd sighting; writes keep up."
std::string replaySettingsSentence(const ReplayConfig& c, Admission rule);

} // namespace kvbe
