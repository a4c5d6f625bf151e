// kvbe-cli calibration fit: the scenario a fit starts from, and the fit of one node's
// calibrations (one file, or one per model) with what it writes and prints.
#pragma once

#include "kvbe/base/exit_code.h"
#include "kvbe/base/result.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kvbe::cli {

// The presets, the scenario (the default one where `scenarioPath` is empty) and its evaluation.
struct CalibrationContext {
    Presets presets;
    Scenario scenario;
    Evaluation eval;
};
Result<CalibrationContext> loadCalibrationContext(const std::string& scenarioPath);

nlohmann::json optionalJson(const std::optional<double>& v);

struct CalibrationFitOptions {
    std::vector<std::string> files;
    std::string scenario, out, adopt, format = "table";
    bool ramp = false, noOverhead = false;
};
ExitCode runCalibrationFit(const CalibrationFitOptions& o);

} // namespace kvbe::cli
