// host-memcpy: copy bandwidth between two large host buffers with one thread and with many,
// the host side of a DRAM tier.
#pragma once

#include "kvbe/probes/probe.h"

namespace kvbe::probes {

class MemcpyProbe : public Probe {
  public:
    std::string key() const override { return "host-memcpy"; }
    Result<ProbeOptions> configure(const ProbeArgs& args) override;
    Status available() const override { return Ok{}; }
    std::chrono::milliseconds stopGrace() const override { return std::chrono::milliseconds(400); }
    ProbeOutcome run(const ProbeOptions& options, ProbeSink& sink) override;
};

std::vector<int> defaultMemcpyThreads(); // 1 and every core

} // namespace kvbe::probes
