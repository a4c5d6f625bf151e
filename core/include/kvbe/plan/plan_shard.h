// A plan in shards for a scheduler (docs/workload-model.md, "Plans in shards"): shard I of N
// replays the grid's configurations whose index in grid order is I modulo N (GPU-only caching in
// shard 0), every shard growing the drive counts the same way (the points their needs come from
// are replayed in each); its part holds its points as replayed, before the plan's last step. The
// merge puts the parts' points back in grid order and takes that last step (finishPlan): the
// same points, fronts and recommendation as one run, exactly.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/plan/plan.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kvbe {

struct PlanPart {
    int shard = 0, shards = 1;
    nlohmann::json command; // what the caller needs to set the plan up again (the CLI's args)
    std::size_t configurations = 0;   // the whole grid's
    std::vector<std::size_t> indices; // each point's index in grid order
    std::vector<PlanCoord> coords;
    std::vector<PlanPoint> points;
    std::vector<std::int64_t> drives;
    std::vector<PlanDriveNeeds> driveNeeds;
    double floorP99S = 0, durationS = 0;
    bool serversSearched = false;
    std::optional<int> gpuOnlyServers; // shard 0's
    std::size_t replays = 0;
    double seconds = 0;
};

// Shard `shard` of `shards` (0 <= shard < shards) of an exact plan.
Result<PlanPart> planShard(const PlanSetup& setup, int shard, int shards,
                           const std::function<bool(double)>& progress = {});

nlohmann::json planPartJson(const PlanPart& part);
// source names the file in messages.
Result<PlanPart> parsePlanPart(const nlohmann::json& j, const std::string& source);

// Every shard of one plan exactly once (the same command, grid and shard count): the plan.
RequestResult<PlanResult> mergePlanParts(const PlanSetup& setup,
                                         const std::vector<PlanPart>& parts);

} // namespace kvbe
