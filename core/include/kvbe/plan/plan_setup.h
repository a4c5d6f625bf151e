// A plan's setup from a scenario, for the CLI (`kvbe-cli trace plan`) and the window alike: the
// scenario's DRAM tier, the NVMe drive presets to try (each read as the scenario reads its
// tiers), the prices (resources/prices.json or a --prices file, under the scenario's own) and the
// grid.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/plan/plan.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/replay_request.h"

#include <optional>
#include <string>
#include <vector>

namespace kvbe {

// The link a pooled placement's nodes reach the pool by where none is named (trace plan --links).
inline constexpr const char* kDefaultPoolLink = "net-400g";

struct PlanRequest {
    // The replay each point runs: the GPU's cache, policy, placement, write queue and buffer,
    // shared links, prefill servers and load (kvbe/trace/replay_request.h). Its tier capacities
    // and store-after K are the plan's to choose, so they are not read.
    ReplayRequest replay;
    // Tier preset keys of the drives to try; empty: every NVMe preset (or NVMe tier of the
    // scenario) whose drive has a full rating and a price.
    std::vector<std::string> drives;
    std::optional<PlanGrid> grid; // empty: defaultPlanGrid()
    PlanLimits limits;
    std::optional<PriceTable> prices; // a --prices file; empty: resources/prices.json
    Admission rule = Admission::Optimal;
    // A fleet's plan: other routers (as --router takes them, or "all"), each replayed with
    // GPU-only caching; the fleet's own router is left out of them.
    std::vector<std::string> otherRouters;
    // A fleet's plan: its tiers on each node (local), in a pool over each link (pooled), or both;
    // the links are network tier presets (default net-400g where pooled).
    bool placeLocal = true, placePooled = false;
    std::vector<std::string> links;
    int threads = 0;
};

// The limits, each checked: life more than 0 and at most 100 years, a p99 above 0, a budget of 0
// or more. Fails naming the field.
RequestStatus checkPlanLimits(const PlanLimits& limits);
// The limits and the grid (DRAM sizes 0 or more, drive counts 0 to 2^20, K 1 to kMaxStoreAfter),
// which need no scenario or trace: a front end asks before it reads the trace.
RequestStatus checkPlanRequest(const PlanRequest& request);

// Checks the request (the limits, the grid, the drives, the replay) and sets the plan up: the
// replay core assembles from request.replay, the scenario's DRAM tier and the drives to try, each
// read as the scenario reads its tiers and given the request's per-tier settings. Fails naming
// the field: a drive that is not an NVMe preset or lacks a rating or a price is
// RequestField::Drives.
RequestResult<PlanSetup> planSetup(const Evaluation& e, const Presets& presets, const Trace& trace,
                                   const PlanRequest& request);

} // namespace kvbe
