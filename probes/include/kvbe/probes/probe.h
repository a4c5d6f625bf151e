// A probe measures one thing on this machine and reports it through a ProbeSink. Each probe is a
// small class: a key ("nvme-read") whose entry in the catalog (kvbe/probe/probe_catalog.h) says
// what it is and what it can be asked, configure(args), available() and run(options, sink).
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/probe/probe_catalog.h"
#include "kvbe/probe/probe_protocol.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kvbe::probes {

class ProbeSink;

// Exit codes and their sentences: kvbe/base/exit_code.h; the stream: kvbe/probe/probe_protocol.h.
using kvbe::ExitCode;
using kvbe::exitCodeHelp;
using kvbe::exitCodeMeaning;

struct ProbeOutcome {
    ExitCode exit = ExitCode::Ok;
    std::string message; // empty on success
    bool ok() const { return exit == ExitCode::Ok; }
};

// A value, or the failure with the exit code it maps to: a probe's steps return one, so the code
// travels with its sentence. It is core's Result (kvbe/base/result.h) failing with a ProbeOutcome.
template <class T> using ExitResult = Result<T, ProbeOutcome>;
using ExitStatus = ExitResult<Ok>;

inline constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;

// What a user asked for, parsed; each probe reads the fields it needs and rejects the ones that
// make no sense for it.
struct ProbeOptions {
    // nvme-read, nvme-write
    std::string dir;                       // --dir: make a scratch file there
    std::string file;                      // --file: read an existing file (read-only)
    std::string device;                    // --device: read a block device (read-only)
    std::optional<std::uint64_t> fileSize; // --file-size, scratch files only (default 4 GiB)
    std::vector<std::uint64_t> blockSizes; // empty: 128 KiB, 1 MiB, 4 MiB and the model's KV block
    std::vector<int> queueDepths;          // empty: 1, 4, 16, 32, 64
    double durationS = 5;                  // measured time per setting (warm-up comes on top)
    std::string engine = "auto";           // auto, io_uring, psync
    bool buffered = false;                 // page cache instead of O_DIRECT
    bool sequential = false;               // sequential offsets instead of random block offsets
    std::string model;                     // KV block: empty = the default scenario's model
    // host-memcpy
    std::uint64_t bufferBytes = kGiB; // each of the two buffers
    std::vector<int> threads;         // empty: 1 and every core
};

class Probe {
  public:
    virtual ~Probe() = default;
    virtual std::string key() const = 0;
    // The probe's entry in the catalog (kvbe/probe/probe_catalog.h), and its one-line description.
    const ProbeDescription& catalogEntry() const;
    std::string description() const;
    // Takes the probe's settings from the options a user gave (a `kvbe-cli probe` subcommand's
    // flags, read by the catalog's description): a probe that holds its settings keeps them,
    // the drive and host probes return them as the options for run(). The error names the flag
    // and what was expected (bad input).
    virtual Result<ProbeOptions> configure(const ProbeArgs& args) = 0;
    // Whether the probe can run on this machine at all; the error says why not.
    virtual Status available() const = 0;
    // How long a stopped probe may take to wind down before kvbe-cli ends the process anyway:
    // its longest step that cannot be interrupted.
    virtual std::chrono::milliseconds stopGrace() const = 0;
    // Runs to completion or to the first failure; every failure is also sent to the sink.
    virtual ProbeOutcome run(const ProbeOptions& options, ProbeSink& sink) = 0;
};

// Sends the failure to the sink (the stream's error line) and returns it as the outcome.
ProbeOutcome reportFailure(ProbeSink& sink, ExitCode exit, const std::string& message);
// v with `decimals` digits after the point, for tables.
std::string fixedDecimals(double v, int decimals);

// "128 KiB", "1 MiB", "28 MiB", "1.5 GiB", "1000 B": block sizes the way storage people say them.
std::string formatBlock(std::uint64_t bytes);

} // namespace kvbe::probes
