#include "kvbe/base/exit_code.h"

#include <cstdio>
#include <exception>
#include <ostream>

namespace kvbe {
namespace {

struct ExitCodeText {
    ExitCode code;
    std::string_view sentence; // a status line: what happened
    std::string_view meaning;  // --help: what it means and what to do
};

constexpr ExitCodeText kExitCodes[] = {
    {ExitCode::Ok, "The probe finished", "success"},
    {ExitCode::BadInput, "The probe refused its settings",
     "bad input: a value, file or field was wrong; the message names it and what was expected"},
    {ExitCode::Usage, "kvbe-cli did not understand the probe's options",
     "usage error: an unknown or conflicting option, a missing command, a value outside a "
     "flag's choices"},
    {ExitCode::CannotRun, "This machine or target cannot run the probe",
     "the probe cannot run here (tmpfs without --buffered, too little space, folder not "
     "writable, io_uring forbidden, no GPU)"},
    {ExitCode::Failed, "The probe failed while measuring",
     "an I/O or a data check failed while the probe ran"},
    {ExitCode::Internal, "kvbe-cli stopped on an internal error, a bug in kvbe",
     "internal error: a bug in kvbe, not in the input; please report it with the command line"},
    {ExitCode::Stopped, "Stopped", "stopped by SIGINT or SIGTERM; no scratch file is left behind"},
};

const ExitCodeText* textOf(ExitCode code) {
    for (const auto& t : kExitCodes)
        if (t.code == code) return &t;
    return nullptr;
}

} // namespace

std::optional<ExitCode> exitCodeFromInt(int code) {
    for (const auto& t : kExitCodes)
        if (exitCode(t.code) == code) return t.code;
    return std::nullopt;
}

std::string_view exitCodeMeaning(ExitCode code) {
    const auto* t = textOf(code);
    return t ? t->meaning : "unknown exit code";
}

std::string_view exitCodeSentence(ExitCode code) {
    const auto* t = textOf(code);
    return t ? t->sentence : "kvbe-cli exited with an unexpected code";
}

std::string exitCodeHelp() {
    std::string text = "Exit codes:\n";
    for (const auto& t : kExitCodes) {
        char code[16];
        std::snprintf(code, sizeof code, "  %3d  ", exitCode(t.code));
        text += code + std::string(t.meaning) + "\n";
    }
    return text;
}

ExitCode runGuarded(std::string_view program, const std::function<ExitCode()>& command,
                    std::ostream& err) {
    try {
        return command();
    } catch (const std::exception& e) {
        err << program << ": internal error (a bug in kvbe; please report it with the command "
            << "line): " << e.what() << "\n";
        return ExitCode::Internal;
    }
}

} // namespace kvbe
