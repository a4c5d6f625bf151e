#include "probe_watchdog.h"

#include "commands.h"
#include "kvbe/probes/stop_signal.h"

#include <atomic>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace kvbe::cli {

std::unique_ptr<probes::ProbeSink> makeProbeSink(const std::string& format,
                                                 const std::string& key) {
    if (format == "jsonl") return std::make_unique<probes::JsonlSink>(std::cout, key);
    return std::make_unique<probes::TableSink>(std::cout,
                                               isatty(STDERR_FILENO) ? &std::cerr : nullptr);
}

ExitCode runProbeWithWatchdog(probes::Probe& probe, const probes::ProbeOptions& options,
                              probes::ProbeSink& sink, std::chrono::milliseconds grace) {
    probes::installStopHandlers();
    std::atomic<bool> finished{false};
    std::thread watchdog([&] {
        while (!finished.load()) {
            if (probes::stopRequested()) {
                const auto deadline = std::chrono::steady_clock::now() + grace;
                while (!finished.load() && std::chrono::steady_clock::now() < deadline)
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
                if (!finished.load()) {
                    sink.error(probes::stopMessage());
                    std::cerr << "kvbe-cli: " << probes::stopMessage() << std::endl;
                    _exit(exitCode(ExitCode::Stopped));
                }
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    });
    const probes::ProbeOutcome outcome = probe.run(options, sink);
    finished = true;
    watchdog.join();
    if (!outcome.ok()) std::cerr << "kvbe-cli: " << outcome.message << "\n";
    return outcome.exit;
}

} // namespace kvbe::cli
