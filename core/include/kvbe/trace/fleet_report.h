// A fleet's replay as reports say it (docs/workload-model.md, "The fleet"): where the router sent
// the requests, and `--router compare`, every router replayed on the same fleet in one table.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kvbe {

// "8 servers on 8 nodes behind sglang; dram on each node, nvme pooled: requests per server, the
// busiest against the mean 1.31, busy time 1.42; 3.2 % routed away from their best GPU cache."
std::string fleetSentence(const ReplayConfig& config, const ReplayResult& r);
nlohmann::json fleetJson(const ReplayResult& r);

// One router of a comparison: the replay of the same trace on the same fleet.
struct RouterRun {
    std::string router;
    ReplayResult result;
};
// Every router (routerNames(), each at its shipped defaults) replayed on the fleet of `config`
// (which must be one: instances above 1, fleet enabled), keeping the rule `rule` and GPU-only
// caching. progress gets the share done over all of them; false cancels (the runs so far).
Result<std::vector<RouterRun>> compareRouters(const Trace& trace, const CostModel& cost,
                                              const ReplayConfig& config, std::string_view rule,
                                              const std::function<bool(double)>& progress = {});

// The table: per router the hit ratio per tier and in all, the TTFT of `rule` (mean and p99),
// the load skew and the share routed away from their best cache; the best hit ratio first named.
std::string routerCompareTable(const ReplayConfig& config, const std::vector<RouterRun>& runs,
                               std::string_view rule);
nlohmann::json routerCompareJson(const ReplayConfig& config, const std::vector<RouterRun>& runs,
                                 std::string_view rule);

} // namespace kvbe
