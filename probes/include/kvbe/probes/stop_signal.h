// SIGINT and SIGTERM stop a probe: the first sets a flag that the measuring loops poll, a second
// one exits at once. Scratch files are unlinked right after they are created, so a stop (or a
// crash, or SIGKILL) leaves nothing behind; the handler also removes a name still registered in
// the instant between create and unlink.
#pragma once

#include <string>

namespace kvbe::probes {

void installStopHandlers();
bool stopRequested();
int stopSignal();             // the signal that asked, 0 if none
std::string stopMessage();    // "stopped by SIGTERM; no scratch file is left behind"
void requestStop(int signal); // what the handler does (tests call it directly)
void clearStop();             // for tests running several probes in one process

// A path the handler unlinks before exiting; nullptr or "" clears it. Not thread-safe against
// itself: one scratch file at a time.
void registerScratchPath(const char* path);

} // namespace kvbe::probes
