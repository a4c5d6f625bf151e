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

// A drive's rated write endurance (docs/workload-model.md, "Drive endurance"): drive writes per
// day (DWPD) sustained over its warranty, and the capacity of one drive, from which a tier of a
// given capacity is built of whole drives. A value the data sheet does not give is left empty;
// a tier whose drives lack any of the three has no years to rated endurance (DRAM has none).
struct DriveRating {
    std::string model;                   // "Micron 9550 MAX 6.4 TB", for the reports
    std::optional<double> writesPerDay;  // DWPD
    std::optional<double> warrantyYears; // the DWPD holds over this term
    std::optional<double> capacityBytes; // one drive
    bool rated() const { return writesPerDay && warrantyYears && capacityBytes; }
    bool operator==(const DriveRating&) const = default;
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
    DriveRating drive;        // NVMe presets: the drive the tier is built of
    std::map<std::string, std::string> sources;
};

} // namespace kvbe
