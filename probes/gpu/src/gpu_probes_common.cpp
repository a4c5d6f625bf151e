// What the GPU probes share with or without CUDA: descriptions, the preset match, the registry.
#include "kvbe/gpu/gpu_probes.h"

#include <algorithm>
#include <cctype>

namespace kvbe::gpu {

std::string GpuCopyProbe::description() const {
    return "Host↔GPU copy bandwidth, pinned and pageable, 64 KiB to 1 GiB and the model's KV block";
}
std::string GemmPeakProbe::description() const {
    return "The best BF16 GEMM rate this GPU reaches with cuBLASLt (large square shapes)";
}
std::string PrefillProbe::description() const {
    return "Prefill time of a model at its real shapes: one synthetic layer of each kind, timed, "
           "summed over the layers";
}

std::optional<std::string> matchGpuPreset(const std::string& deviceName) {
    std::string n = deviceName;
    for (auto& c : n)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
    if (has("h200")) return "h200";
    if (has("h100")) {
        if (has("nvl")) return "h100-nvl";
        if (has("pcie")) return "h100-pcie";
        return "h100-sxm"; // "NVIDIA H100 80GB HBM3" is the SXM part
    }
    if (has("b200")) return "b200";
    if (has("a100") && has("80")) return "a100-80gb-sxm";
    if (has("l40s")) return "l40s";
    if (has("rtx 4000 ada")) return "rtx-4000-ada";
    if (has("4090")) return "rtx-4090";
    return std::nullopt;
}

std::vector<std::unique_ptr<probes::Probe>> makeGpuProbes() {
    std::vector<std::unique_ptr<probes::Probe>> p;
    p.push_back(std::make_unique<GpuCopyProbe>());
    p.push_back(std::make_unique<GemmPeakProbe>());
    p.push_back(std::make_unique<PrefillProbe>());
    return p;
}

} // namespace kvbe::gpu
