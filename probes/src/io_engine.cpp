// Engine choice, statistics, and what the engines share.
#include "kvbe/probes/io_engine.h"

#include "io_common.h"

#include <algorithm>
#include <cmath>

namespace kvbe::probes {

namespace detail {

void mergeTally(IoMeasurement& m, Tally&& t) {
    if (m.windowBytes.size() < t.bytes.size()) {
        m.windowBytes.resize(t.bytes.size(), 0);
        m.windowOps.resize(t.ops.size(), 0);
    }
    for (size_t i = 0; i < t.bytes.size(); ++i) {
        m.windowBytes[i] += t.bytes[i];
        m.windowOps[i] += t.ops[i];
    }
    m.latencyUs.insert(m.latencyUs.end(), t.latencyUs.begin(), t.latencyUs.end());
    m.verifiedBlocks += t.verified;
    m.requeued += t.requeued;
}

std::string mismatchMessage(const IoTarget& target, std::uint64_t fileOffset, std::size_t index) {
    return "the data read back at byte " + std::to_string(fileOffset + index) +
           " of the scratch file in " + target.path() +
           " is not what was written there: the drive or filesystem returned wrong data";
}

std::string ioErrorMessage(const IoTarget& target, const IoSetting& s, std::uint64_t offset,
                           int err) {
    return std::string(s.write ? "writing " : "reading ") + formatBlock(s.blockBytes) +
           " at offset " + std::to_string(offset) + " of " + target.path() +
           " failed: " + errnoText(err);
}

} // namespace detail

void setWindowedRate(ProbePoint& p, const IoStats& st, int windows, double windowSeconds) {
    p.y = st.medianGBps;
    p.unit = "GB/s";
    p.meta["min_GBps"] = st.minGBps;
    p.meta["max_GBps"] = st.maxGBps;
    p.meta["windows"] = windows;
    p.meta["window_s"] = windowSeconds;
}

IoStats summarize(const IoMeasurement& m) {
    IoStats s;
    std::vector<double> gbps, iops;
    for (size_t i = 0; i < m.windowBytes.size(); ++i) {
        s.bytes += m.windowBytes[i];
        s.ops += m.windowOps[i];
        if (m.windowSeconds > 0) {
            gbps.push_back(static_cast<double>(m.windowBytes[i]) / m.windowSeconds / 1e9);
            iops.push_back(static_cast<double>(m.windowOps[i]) / m.windowSeconds);
        }
    }
    if (!gbps.empty()) {
        s.medianGBps = median(gbps);
        s.minGBps = *std::min_element(gbps.begin(), gbps.end());
        s.maxGBps = *std::max_element(gbps.begin(), gbps.end());
        s.medianIops = median(iops);
        const bool emptyWindow = std::any_of(m.windowOps.begin(), m.windowOps.end(),
                                             [](std::uint64_t n) { return n == 0; });
        if (emptyWindow && s.ops > 0) {
            const double seconds = m.windowSeconds * static_cast<double>(m.windowBytes.size());
            s.medianGBps = static_cast<double>(s.bytes) / seconds / 1e9;
            s.medianIops = static_cast<double>(s.ops) / seconds;
            s.pooled = true;
        }
    }
    std::vector<double> latency(m.latencyUs.begin(), m.latencyUs.end());
    std::sort(latency.begin(), latency.end());
    s.p50Us = quantileOfSorted(latency, 0.5);
    s.p99Us = quantileOfSorted(latency, 0.99);
    return s;
}

#ifndef KVBE_HAVE_URING
std::unique_ptr<IoEngine> makeUringEngine(std::string& why) {
    why = "this kvbe-cli was built without liburing (install liburing-dev and rebuild)";
    return nullptr;
}
#endif

Result<EngineChoice> chooseEngine(const std::string& requested) {
    EngineChoice c;
    if (requested == "psync") {
        c.engine = makePsyncEngine();
        c.reason = "psync: asked for with --engine psync";
        return c;
    }
    std::string why;
    c.engine = makeUringEngine(why);
    if (c.engine) {
        c.reason = "io_uring: available here; file and buffers registered with the ring unless a "
                   "note says otherwise";
        return c;
    }
    if (requested == "io_uring")
        return Error{"--engine io_uring: io_uring cannot run here: " + why +
                     "; use --engine psync"};
    c.engine = makePsyncEngine();
    c.reason = "psync: io_uring unavailable (" + why + ")";
    return c;
}

} // namespace kvbe::probes
