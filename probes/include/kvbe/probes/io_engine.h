// I/O engines for the drive probes: io_uring (liburing, registered buffers and file) and psync
// (a thread per queue slot doing pread/pwrite), behind one interface. An engine keeps
// `queueDepth` block-sized requests in flight for a warm-up and then `repeats` equal windows;
// completions count in the window they finish in.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/base/statistics.h"
#include "kvbe/probe/probe_protocol.h"
#include "kvbe/probes/io_target.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kvbe::probes {

enum class VerifyMode {
    None,   // --file and --device: the content is not ours
    Sample, // the first completed read of every window is checked against the pattern
    All,    // every read is checked (tests)
};

struct IoSetting {
    std::uint64_t blockBytes = kMiB;
    int queueDepth = 1;
    bool write = false;
    bool sequential = false; // offsets in order (wrapping) instead of random block offsets
    double warmupS = 0.5;
    double repeatS = 1;
    int repeats = 5;
    // Size-based instead of time-based when non-zero: exactly this many bytes, in order from
    // offset 0, counted in window 0 (no warm-up). Tests use it to read a file exactly once.
    std::uint64_t totalBytes = 0;
    VerifyMode verify = VerifyMode::None;
};

struct IoMeasurement {
    std::vector<std::uint64_t> windowBytes; // per measured window
    std::vector<std::uint64_t> windowOps;
    double windowSeconds = 0;     // length of each window (size-based: the elapsed time)
    std::vector<float> latencyUs; // submit to completion, every measured I/O
    std::uint64_t verifiedBlocks = 0;
    std::uint64_t requeued = 0;     // -EAGAIN, -EINTR and short transfers sent again
    bool stopped = false;           // a stop signal ended it early
    std::vector<std::string> notes; // e.g. buffers could not be registered, and why
};

class IoEngine {
  public:
    virtual ~IoEngine() = default;
    virtual std::string name() const = 0;
    // Fails on an I/O error or a pattern mismatch, with a sentence naming the offset.
    virtual Result<IoMeasurement> run(const IoTarget& target, const IoSetting& setting) = 0;
};

std::unique_ptr<IoEngine> makePsyncEngine();
// nullptr when liburing was not built in or io_uring cannot run here; `why` then says why
// ("io_uring_setup failed: Operation not permitted (EPERM)").
std::unique_ptr<IoEngine> makeUringEngine(std::string& why);

struct EngineChoice {
    std::unique_ptr<IoEngine> engine;
    std::string
        reason; // "io_uring: available" / "psync: io_uring unavailable (…)" / "psync: asked for"
};
// requested: "auto", "io_uring" or "psync". Fails only when io_uring is asked for by name and
// cannot run here.
Result<EngineChoice> chooseEngine(const std::string& requested);

// Summary statistics of one setting.
struct IoStats {
    double medianGBps = 0, minGBps = 0, maxGBps = 0; // over windows, 1e9 bytes per second
    double medianIops = 0;
    double p50Us = 0, p99Us = 0;
    std::uint64_t bytes = 0, ops = 0;
    // A window in which no I/O completed is shorter than one I/O: windows then hold 0 or 1
    // completions, and their median is noise (often 0). The rate is then taken over all windows
    // together (medianGBps / medianIops hold bytes and ops over the whole measured time).
    bool pooled = false;
};
IoStats summarize(const IoMeasurement& m);
// The rate of a windowed measurement on a GB/s point: y is the median over the windows, and the
// meta gains their spread and count (min_GBps, max_GBps, windows, window_s), after the probe's
// own keys so far. The drive and host-memory probes build their points with it.
void setWindowedRate(ProbePoint& point, const IoStats& stats, int windows, double windowSeconds);
using kvbe::median;   // kvbe/base/statistics.h
using kvbe::quantile; // kvbe/base/statistics.h

} // namespace kvbe::probes
