// kvbe-cli subcommands. Each registers its options on a CLI11 app and, when run, returns the
// process exit code: 0 success, 1 bad input (a sentence on stderr), 2 usage error; the list
// with its sentences is exitCodeHelp() in kvbe/probe/probe_protocol.h.
#pragma once

#include "kvbe/probe/probe_protocol.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <string>

namespace kvbe::cli {

// The exit codes are the probe protocol's (kvbe/probe/probe_protocol.h), one list for every
// command.
inline constexpr int kExitOk = exitCode(ProbeExit::Ok);
inline constexpr int kExitBadInput = exitCode(ProbeExit::BadInput);
inline constexpr int kExitUsage = exitCode(ProbeExit::Usage);
inline constexpr int kExitCannotRun = exitCode(ProbeExit::CannotRun);
inline constexpr int kExitProbeFailed = exitCode(ProbeExit::Failed);
inline constexpr int kExitInterrupted = exitCode(ProbeExit::Stopped);

// Bad input: says why on stderr ("kvbe-cli: " and the sentence, which names the file or flag,
// the field and what was expected) and returns kExitBadInput.
inline int fail(const std::string& message) {
    std::cerr << "kvbe-cli: " << message << "\n";
    return kExitBadInput;
}

// Adds `calc`, `models`, `gpus` and `tiers`; `run` is set to the chosen command's action.
void addCalcCommands(CLI::App& app, std::function<int()>& run);
// Adds `calibrate`: runs the probes headless and writes one calibration file.
void addCalibrateCommand(CLI::App& app, std::function<int()>& run);
// Adds `calibration inspect|fit|export-pykvcache`.
void addCalibrationCommands(CLI::App& app, std::function<int()>& run);
// Adds `published compare|fit`: the study's published figures and the fit to them.
void addPublishedCommands(CLI::App& app, std::function<int()>& run);
// Adds `probe <key>` for every registered probe, built from the probe catalog, and `probe list`
// (exit codes: kvbe/probe/probe_protocol.h).
void addProbeCommands(CLI::App& app, std::function<int()>& run);
// Adds `trace inspect|replay|sweep|plan`: a request trace through a tiered prefix cache.
void addTraceCommands(CLI::App& app, std::function<int()>& run);

} // namespace kvbe::cli
