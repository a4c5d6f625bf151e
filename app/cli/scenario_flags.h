// The scenario flags (kvbe/scenario/scenario_flags.h) on a kvbe-cli subcommand.
#pragma once

#include "kvbe/scenario/scenario_flags.h"

#include <CLI/CLI.hpp>

namespace kvbe::cli {

// Adds every scenario flag to a subcommand, with its help and its choices checked as it is read.
// Without withModel there is no --model (probe serving's --model is the served model's name,
// and sets the model itself).
void addScenarioFlags(CLI::App* sub, ScenarioFlags& flags, bool withModel = true);

} // namespace kvbe::cli
