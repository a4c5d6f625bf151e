// nvme-read and nvme-write: bandwidth, IOPS and latency of a drive over block sizes × queue
// depths, O_DIRECT unless --buffered, with io_uring or psync.
#pragma once

#include "kvbe/probes/probe.h"

namespace kvbe::probes {

inline constexpr int kMaxQueueDepth = 1024;
inline constexpr std::uint64_t kMaxBlockBytes = kGiB; // io_uring registers at most 1 GiB per buffer
inline constexpr std::uint64_t kDefaultScratchBytes = 4 * kGiB;

std::vector<int> defaultQueueDepths(); // 1, 4, 16, 32, 64

class NvmeProbe : public Probe {
  public:
    explicit NvmeProbe(bool write) : m_write(write) {}
    std::string key() const override { return m_write ? "nvme-write" : "nvme-read"; }
    Result<ProbeOptions> configure(const ProbeArgs& args) override;
    Status available() const override;
    // An I/O can hang on a failing drive: half a second after a stop the process ends anyway.
    std::chrono::milliseconds stopGrace() const override { return std::chrono::milliseconds(400); }
    ProbeOutcome run(const ProbeOptions& options, ProbeSink& sink) override;

  private:
    bool m_write;
};

} // namespace kvbe::probes
