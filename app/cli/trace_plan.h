// kvbe-cli trace plan (trace_plan_command.cpp): what to buy for a trace. Internal to the CLI.
#pragma once

#include "trace_options.h"

#include <CLI/CLI.hpp>
#include <memory>

namespace kvbe::cli {

// Adds `trace plan` to the `trace` command; o holds the options every trace command shares.
void addTracePlanCommand(CLI::App* trace, const std::shared_ptr<TraceOptions>& o, Command& run);

// Adds `trace generate` (trace_generate_command.cpp).
void addTraceGenerateCommand(CLI::App* trace, Command& run);

} // namespace kvbe::cli
