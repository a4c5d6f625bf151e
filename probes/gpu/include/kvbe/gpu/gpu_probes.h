// The GPU probes, as kvbe-cli runs them: gpu-copy, gpu-gemm-peak and gpu-prefill. Each takes
// its settings at construction or from the flags of its subcommand (configure) and is otherwise
// an ordinary probes::Probe. In a build without CUDA they exist too and say so when asked to run.
#pragma once

#include "kvbe/gpu/gpu_options.h"
#include "kvbe/probes/probe.h"

#include <memory>
#include <string>
#include <vector>

namespace kvbe::gpu {

// Whether this build has the CUDA code (KVBE_HAVE_CUDA at configure time).
bool builtWithCuda();

class GpuCopyProbe : public probes::Probe {
  public:
    explicit GpuCopyProbe(CopySettings s = {}) : m_s(std::move(s)) {}
    std::string key() const override { return "gpu-copy"; }
    Result<probes::ProbeOptions> configure(const ProbeArgs& args) override;
    Status available() const override;
    // A CUDA kernel cannot be interrupted: the probe checks for a stop between kernels.
    std::chrono::milliseconds stopGrace() const override { return std::chrono::milliseconds(2000); }
    probes::ProbeOutcome run(const probes::ProbeOptions& options, probes::ProbeSink& sink) override;

  private:
    CopySettings m_s;
};

class GemmPeakProbe : public probes::Probe {
  public:
    explicit GemmPeakProbe(GemmPeakSettings s = {}) : m_s(std::move(s)) {}
    std::string key() const override { return "gpu-gemm-peak"; }
    Result<probes::ProbeOptions> configure(const ProbeArgs& args) override;
    Status available() const override;
    // A CUDA kernel cannot be interrupted: the probe checks for a stop between kernels.
    std::chrono::milliseconds stopGrace() const override { return std::chrono::milliseconds(2000); }
    probes::ProbeOutcome run(const probes::ProbeOptions& options, probes::ProbeSink& sink) override;

  private:
    GemmPeakSettings m_s;
};

class PrefillProbe : public probes::Probe {
  public:
    explicit PrefillProbe(PrefillSettings s = {}) : m_s(std::move(s)) {}
    std::string key() const override { return "gpu-prefill"; }
    Result<probes::ProbeOptions> configure(const ProbeArgs& args) override;
    Status available() const override;
    // A CUDA kernel cannot be interrupted: the probe checks for a stop between kernels.
    std::chrono::milliseconds stopGrace() const override { return std::chrono::milliseconds(2000); }
    probes::ProbeOutcome run(const probes::ProbeOptions& options, probes::ProbeSink& sink) override;

  private:
    PrefillSettings m_s;
};

} // namespace kvbe::gpu
