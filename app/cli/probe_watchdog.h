// Running one probe from kvbe-cli: the sink for the chosen format, the stop handlers, and a
// watchdog that ends the process when a stopped probe does not wind down by itself.
#pragma once

#include "kvbe/probes/probe.h"
#include "kvbe/probes/stream.h"

#include <chrono>
#include <memory>
#include <string>

namespace kvbe::cli {

// JSON Lines on stdout for "jsonl"; otherwise a table on stdout with progress on a terminal stderr.
std::unique_ptr<probes::ProbeSink> makeProbeSink(const std::string& format, const std::string& key);

// Runs the probe and returns its exit code. After SIGINT/SIGTERM the probe has `grace` to stop
// at its next check; past that the watchdog writes the stop to the sink and exits with 130 (an
// I/O that never returns, or a CUDA kernel, cannot be interrupted).
ExitCode runProbeWithWatchdog(probes::Probe& probe, const probes::ProbeOptions& options,
                              probes::ProbeSink& sink, std::chrono::milliseconds grace);

} // namespace kvbe::cli
