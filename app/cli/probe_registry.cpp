// The registry of probes: a new probe is one line here (and its entry in the probe catalog).
#include "probe_registry.h"

#include "kvbe/gpu/gpu_probes.h"
#include "kvbe/probes/memcpy_probe.h"
#include "kvbe/probes/nvme_probe.h"
#include "kvbe/serving/replay_probe.h"
#include "kvbe/serving/serving_probe.h"

namespace kvbe::cli {

std::vector<std::unique_ptr<probes::Probe>> registeredProbes() {
    std::vector<std::unique_ptr<probes::Probe>> p;
    p.push_back(std::make_unique<probes::NvmeProbe>(false));
    p.push_back(std::make_unique<probes::NvmeProbe>(true));
    p.push_back(std::make_unique<probes::MemcpyProbe>());
    p.push_back(std::make_unique<gpu::GpuCopyProbe>());
    p.push_back(std::make_unique<gpu::GemmPeakProbe>());
    p.push_back(std::make_unique<gpu::PrefillProbe>());
    p.push_back(std::make_unique<serving::ServingProbe>());
    p.push_back(std::make_unique<serving::ReplayProbe>());
    return p;
}

} // namespace kvbe::cli
