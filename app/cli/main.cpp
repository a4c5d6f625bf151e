// kvbe-cli: the headless side of kvbe. Other tools script against its output and exit codes.
#include "commands.h"

#include "kvbe/base/allocator.h"

#include <iostream>

int main(int argc, char** argv) {
    kvbe::returnLargeFreesToTheSystem();
    using kvbe::ExitCode;
    CLI::App app{"kvbe-cli: KV offload break-even calculator and probes."};
    app.name("kvbe-cli");
    app.footer("\n" + kvbe::exitCodeHelp());
    app.require_subcommand(1);
    app.set_version_flag("--version", "kvbe-cli " KVBE_VERSION);
    kvbe::cli::setCommandLine(argc, argv);
    kvbe::cli::Command run;
    kvbe::cli::addCalcCommands(app, run);
    kvbe::cli::addCalibrationCommands(app, run);
    kvbe::cli::addCalibrateCommand(app, run);
    kvbe::cli::addPublishedCommands(app, run);
    kvbe::cli::addProbeCommands(app, run);
    kvbe::cli::addTraceCommands(app, run);
    kvbe::cli::addReportCommand(app, run, argc, argv);
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
        return kvbe::exitCode(ExitCode::Usage);
    }
    if (!run) return kvbe::exitCode(ExitCode::Usage);
    // A std::exception escaping a command is a bug in kvbe, told apart from bad input.
    return kvbe::exitCode(kvbe::runGuarded("kvbe-cli", run, std::cerr));
}
