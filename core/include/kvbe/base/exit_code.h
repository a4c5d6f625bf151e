// The exit codes of kvbe-cli and kvbe, one list for every command of both binaries, with the
// sentences that go with them: one for a status line (the window's probe runs), one for --help.
// The probe codes (3, 4, 130) are values of it like the others; the probe protocol
// (kvbe/probe/probe_protocol.h) is the stream a probe writes beside its exit code.
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace kvbe {

enum class ExitCode : int {
    Ok = 0,
    BadInput = 1,  // a value, file or field was wrong: the message names it and what was expected
    Usage = 2,     // unknown or conflicting options, a missing command, a value outside the choices
    CannotRun = 3, // this machine or target cannot run the probe (tmpfs, no space, no GPU)
    Failed = 4,    // the probe started and an I/O or verification failed
    Internal = 70, // an exception escaped a command: a bug in kvbe (sysexits' EX_SOFTWARE)
    Stopped = 130, // stopped by SIGINT or SIGTERM; nothing is left behind
};

constexpr int exitCode(ExitCode e) {
    return static_cast<int>(e);
}
// The ExitCode of a process's exit code; none for a code kvbe does not use.
std::optional<ExitCode> exitCodeFromInt(int code);
// What the code means, for --help: "bad input: a value, file or field was wrong; …".
std::string_view exitCodeMeaning(ExitCode code);
// What happened, for a status line: "The probe refused its settings".
std::string_view exitCodeSentence(ExitCode code);
// The list for --help texts, one code per line.
std::string exitCodeHelp();

// Runs a command. A std::exception that escapes it is a bug, not bad input: it is reported on
// `err` as "PROGRAM: internal error (a bug in kvbe; please report it with the command line): WHAT"
// and the command exits with ExitCode::Internal.
ExitCode runGuarded(std::string_view program, const std::function<ExitCode()>& command,
                    std::ostream& err);

} // namespace kvbe
