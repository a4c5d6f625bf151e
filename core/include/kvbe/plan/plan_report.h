// `kvbe-cli trace plan` reports: the plan as JSON (the scripting contract: `front`,
// `recommended`), CSV (every configuration replayed) and a table for people. They only lay out
// what planTrace found.
#pragma once

#include "kvbe/plan/plan.h"
#include "kvbe/trace/trace.h"

#include <nlohmann/json.hpp>
#include <string>

namespace kvbe {

struct PlanReport {
    const Trace* trace = nullptr;
    std::string file;
    std::string scenario;
    const PlanSetup* setup = nullptr;
    const PlanResult* result = nullptr;
};

nlohmann::json planJson(const PlanReport& r);
std::string planCsv(const PlanReport& r);
std::string planTable(const PlanReport& r);
// One configuration as the JSON has it (for the window's export too).
nlohmann::json planPointJson(const PlanPoint& p);

} // namespace kvbe
