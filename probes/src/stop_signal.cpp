#include "kvbe/probes/stop_signal.h"

#include "kvbe/probe/probe_protocol.h"

#include <atomic>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace kvbe::probes {
namespace {

std::atomic<int> g_signal{0};
// Only async-signal-safe state: a fixed buffer the handler reads with unlink().
char g_scratchPath[4096];
std::atomic<bool> g_haveScratchPath{false};

void onSignal(int sig) {
    if (g_signal.exchange(sig) != 0) {
        // Second signal: the user means it.
        if (g_haveScratchPath.load()) unlink(g_scratchPath);
        _exit(exitCode(ExitCode::Stopped));
    }
    if (g_haveScratchPath.load()) unlink(g_scratchPath);
}

} // namespace

void installStopHandlers() {
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; // no SA_RESTART: a blocking wait returns EINTR and sees the flag sooner
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

bool stopRequested() {
    return g_signal.load(std::memory_order_relaxed) != 0;
}
int stopSignal() {
    return g_signal.load();
}
void requestStop(int signal) {
    g_signal.store(signal);
}
void clearStop() {
    g_signal.store(0);
}

std::string stopMessage() {
    const int sig = stopSignal();
    const std::string name = sig == SIGINT    ? "SIGINT"
                             : sig == SIGTERM ? "SIGTERM"
                                              : "signal " + std::to_string(sig);
    return "stopped by " + name + " before the probe finished; no scratch file is left behind";
}

void registerScratchPath(const char* path) {
    g_haveScratchPath.store(false);
    if (!path || !*path) return;
    std::strncpy(g_scratchPath, path, sizeof g_scratchPath - 1);
    g_scratchPath[sizeof g_scratchPath - 1] = '\0';
    g_haveScratchPath.store(true);
}

} // namespace kvbe::probes
