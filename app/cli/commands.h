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

// Adds `calc`, `models`, `gpus` and `tiers`; `run` is set to the chosen command's action.
void addCalcCommands(CLI::App& app, Command& run);
// Adds `calibrate`: runs the probes headless and writes one calibration file.
void addCalibrateCommand(CLI::App& app, Command& run);
// Adds `calibration inspect|fit|export-pykvcache`.
void addCalibrationCommands(CLI::App& app, Command& run);
// Adds `published compare|fit`: the study's published figures and the fit to them.
void addPublishedCommands(CLI::App& app, Command& run);
// Adds `probe <key>` for every registered probe, built from the probe catalog, and `probe list`.
void addProbeCommands(CLI::App& app, Command& run);
// Adds `trace inspect|replay|sweep|capacity|plan`: a request trace through a tiered prefix cache.
void addTraceCommands(CLI::App& app, Command& run);

// Adds `report`: the sign-off report (PDF or HTML); where kvbe-cli is built without the GUI,
// a command that says it needs the Qt build. argv: the process's, for the command line the
// report names.
void addReportCommand(CLI::App& app, Command& run, int argc, char** argv);

// The process's arguments after the program name, kept by main for `trace plan --shard`, whose
// part file records the command so that `trace plan merge` can set the same plan up again.
void setCommandLine(int argc, char** argv);

} // namespace kvbe::cli
