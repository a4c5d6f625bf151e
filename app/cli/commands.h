// kvbe-cli subcommands. Each registers its options on a CLI11 app and, when run, returns the
// process's ExitCode (kvbe/base/exit_code.h, one list for every command): Ok, BadInput with a
// sentence on stderr, the probes' CannotRun, Failed and Stopped; CLI11's usage errors are Usage
// and an exception that escapes a command is Internal (main.cpp).
#pragma once

#include "kvbe/base/exit_code.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <string>

namespace kvbe::cli {

// The chosen command's action, set by its subcommand's callback and run by main.
using Command = std::function<ExitCode()>;

// Bad input: says why on stderr ("kvbe-cli: " and the sentence, which names the file or flag,
// the field and what was expected) and returns ExitCode::BadInput.
inline ExitCode fail(const std::string& message) {
    std::cerr << "kvbe-cli: " << message << "\n";
    return ExitCode::BadInput;
}

// A probe's --format: "table" for people, "jsonl" for the probe protocol's stream (the window
// and scripts read it). Every probe subcommand has it.
CLI::Option* addProbeFormatOption(CLI::App* probe, std::string& format);

// Adds `calc`, `models`, `gpus` and `tiers`; `run` is set to the chosen command's action.
void addCalcCommands(CLI::App& app, Command& run);
// Adds `calibrate`: runs the probes headless and writes one calibration file.
void addCalibrateCommand(CLI::App& app, Command& run);
// Adds `calibration inspect|fit|export-pykvcache`.
void addCalibrationCommands(CLI::App& app, Command& run);
// Adds `published compare|fit`: the study's published figures and the fit to them.
void addPublishedCommands(CLI::App& app, Command& run);
// Adds `probe nvme-read|nvme-write|host-memcpy|list`.
void addProbeCommands(CLI::App& app, Command& run);
// Adds `trace inspect|replay|sweep`: a request trace through a tiered prefix cache.
void addTraceCommands(CLI::App& app, Command& run);
// Adds `probe gpu-copy|gpu-gemm-peak|gpu-prefill` to the probe command (gpu_probe_command.cpp).
void addGpuProbeCommands(CLI::App& probe, Command& run);
// Adds `probe serving` to the probe command (serving_command.cpp).
void addServingProbeCommand(CLI::App& probe, Command& run);

} // namespace kvbe::cli
