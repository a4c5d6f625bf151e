// kvbe-cli subcommands. Each registers its options on a CLI11 app and, when run, returns the
// process exit code: 0 success, 1 bad input (a sentence on stderr), 2 usage error.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace kvbe::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitCannotRun = 3; // probes: this machine or target cannot run the probe
inline constexpr int kExitProbeFailed = 4; // probes: an I/O or data check failed during the run
inline constexpr int kExitInterrupted = 130; // probes: stopped by SIGINT or SIGTERM

// Adds `calc`, `models`, `gpus` and `tiers`; `run` is set to the chosen command's action.
void addCalcCommands(CLI::App& app, std::function<int()>& run);
// Adds `calibrate`: runs the probes headless and writes one calibration file.
void addCalibrateCommand(CLI::App& app, std::function<int()>& run);
// Adds `calibration inspect|fit|export-pykvcache`.
void addCalibrationCommands(CLI::App& app, std::function<int()>& run);
// Adds `published compare|fit`: the study's published figures and the fit to them.
void addPublishedCommands(CLI::App& app, std::function<int()>& run);
// Adds `probe nvme-read|nvme-write|host-memcpy|list` (exit codes: kvbe/probes/probe.h).
void addProbeCommands(CLI::App& app, std::function<int()>& run);
// Adds `trace inspect|replay|sweep`: a request trace through a tiered prefix cache.
void addTraceCommands(CLI::App& app, std::function<int()>& run);
// Adds `probe gpu-copy|gpu-gemm-peak|gpu-prefill` to the probe command (gpu_probe_command.cpp).
void addGpuProbeCommands(CLI::App& probe, std::function<int()>& run);
// Adds `probe serving` to the probe command (serving_command.cpp).
void addServingProbeCommand(CLI::App& probe, std::function<int()>& run);

} // namespace kvbe::cli
