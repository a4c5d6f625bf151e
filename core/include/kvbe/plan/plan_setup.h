// A plan's setup from a scenario, for the CLI (`kvbe-cli trace plan`) and the window alike: the
// scenario's DRAM tier, the NVMe drive presets to try (each read as the scenario reads its
// tiers), the prices (resources/prices.json or a --prices file, under the scenario's own) and the
// grid.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/plan/plan.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <optional>
#include <string>
#include <vector>

namespace kvbe {

struct PlanRequest {
    // Tier preset keys of the drives to try; empty: every NVMe preset (or NVMe tier of the
    // scenario) whose drive has a full rating and a price.
    std::vector<std::string> drives;
    std::optional<PlanGrid> grid; // empty: defaultPlanGrid()
    PlanLimits limits;
    std::optional<PriceTable> prices; // a --prices file; empty: resources/prices.json
    Admission rule = Admission::Optimal;
    int threads = 0;
};

// base: the replay as `trace replay` would run it for the scenario (GPU capacity, policy,
// placement, write queue, prefill servers, block bytes); its tiers are replaced per point.
// Fails with a sentence for a drive that is not an NVMe preset or lacks a rating or a price.
Result<PlanSetup> planSetup(const Evaluation& e, const Presets& presets, const Trace& trace,
                            const ReplayConfig& base, const PlanRequest& request);

} // namespace kvbe
