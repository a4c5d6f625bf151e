// nvme-read and nvme-write: bandwidth, IOPS and latency of a drive over block sizes × queue
// depths, O_DIRECT unless --buffered, with io_uring or psync.
#pragma once

#include "kvbe/probes/probe.h"

namespace kvbe::probes {

inline constexpr int kKvBlockTokens = 256;
inline constexpr int kMaxQueueDepth = 1024;
inline constexpr std::uint64_t kMaxBlockBytes = kGiB; // io_uring registers at most 1 GiB per buffer
inline constexpr std::uint64_t kDefaultScratchBytes = 4 * kGiB;

// The KV block of a model: 256 tokens × KV bytes per token (28 MiB for Llama 3.2 3B in bf16),
// rounded up to whole 4 KiB pages so O_DIRECT accepts it. An empty ref means the default
// scenario's model and KV dtype.
Result<std::uint64_t> kvBlockBytes(const std::string& modelRef);

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
