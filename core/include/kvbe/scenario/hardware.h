// GPUs and storage tiers: the hardware side of the break-even.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace kvbe {

struct GpuSpec {
    std::string key;      // "h100-sxm"
    std::string name;     // "NVIDIA H100 SXM5 80GB"
    double bf16Flops = 0; // dense peak, FLOP/s
    std::optional<double> fp8Flops;
    double memoryBytes = 0;
    std::string hostLink;   // "PCIe 5.0 x16"
    double hostLinkBps = 0; // practical one-direction copy bandwidth, bytes/s
    std::map<std::string, std::string> sources;
};

struct TierSpec {
    std::string key;    // "nvme-gen5"
    std::string name;   // "NVMe (PCIe 5.0)"
    std::string kind;   // dram, nvme, network
    double readBps = 0; // bytes/s
    double writeBps = 0;
    double tFixedS = 0;       // t0 of the fixed cost per hit
    double tLayerS = 0;       // its per-layer part: t_fixed = t0 + layers · t_layer
    double amplification = 1; // bytes moved per useful byte of KV, ≥ 1
    std::map<std::string, std::string> sources;
};

} // namespace kvbe
