// kvbe-cli: the headless side of kvbe. Other tools script against its output and exit codes.
#include "commands.h"

#include <iostream>

int main(int argc, char** argv) {
    CLI::App app{
        "kvbe-cli: KV offload break-even calculator and probes.\n"
        "Exit codes: 0 success, 1 bad input (the message names the file, the field and what "
        "was expected), 2 usage error."};
    app.name("kvbe-cli");
    app.require_subcommand(1);
    app.set_version_flag("--version", "kvbe-cli " KVBE_VERSION);
    std::function<int()> run;
    kvbe::cli::addCalcCommands(app, run);
    kvbe::cli::addCalibrationCommands(app, run);
    kvbe::cli::addCalibrateCommand(app, run);
    kvbe::cli::addPublishedCommands(app, run);
    kvbe::cli::addProbeCommands(app, run);
    kvbe::cli::addTraceCommands(app, run);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e); // prints the reason and a hint
        return kvbe::cli::kExitUsage;
    }
    try {
        return run ? run() : kvbe::cli::kExitUsage;
    } catch (const std::exception& e) {
        std::cerr << "kvbe-cli: internal error: " << e.what() << "\n";
        return kvbe::cli::kExitBadInput;
    }
}
