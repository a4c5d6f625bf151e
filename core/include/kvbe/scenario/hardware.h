// GPUs and storage tiers: the hardware side of the break-even.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace kvbe {

// What a tier preset is built of (resources/tiers.json's "kind").
enum class TierKind { Dram, Nvme, Network };
// "dram", "nvme", "network" (any case); none for anything else.
std::optional<TierKind> parseTierKind(std::string_view text);
std::string_view toString(TierKind kind);
// "dram, nvme or network": what parseTierKind takes, for error messages.
std::string tierKindChoices();

// The tier-name synonym rule, the one every reader of another tool's or a paper's tier names
// uses (calibration fits, published figures, py-kvcache's export): "ssd", "nvme" and "disk" name
// the NVMe kind, "mem", "dram" and "cpu" the DRAM kind, in any case. tierKindOfWord reads a
// word that names a kind ("SSD" -> Nvme); nameSuggestsKind says whether a tier's own name
// contains one of the kind's words ("Local NVMe (Gen5)" suggests Nvme).
std::optional<TierKind> tierKindOfWord(std::string_view word);
bool nameSuggestsKind(std::string_view name, TierKind kind);

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
    std::string key;              // "nvme-gen5"
    std::string name;             // "NVMe (PCIe 5.0)"
    std::optional<TierKind> kind; // none where the preset does not say
    double readBps = 0;           // bytes/s
    double writeBps = 0;
    double tFixedS = 0;       // t0 of the fixed cost per hit
    double tLayerS = 0;       // its per-layer part: t_fixed = t0 + layers · t_layer
    double amplification = 1; // bytes moved per useful byte of KV, ≥ 1
    DriveRating drive;        // NVMe presets: the drive the tier is built of
    std::map<std::string, std::string> sources;
};

} // namespace kvbe
