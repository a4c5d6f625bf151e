// Which GPU preset a device is, by its name as CUDA, NVML or nvidia-smi report it ("NVIDIA H100
// 80GB HBM3"): the one rule, read from each preset's "device_names" in resources/gpus.json. The
// GPU probes name the preset they measure against with it, and the Fleet panel asks it whether a
// file was measured on the scenario's GPU. A new GPU preset is its entry in gpus.json, nothing
// else.
#pragma once

#include "kvbe/base/result.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

// One pattern of a preset's "device_names": words that must all occur in the device's name,
// case aside ("h100 nvl" matches "NVIDIA H100 NVL").
struct GpuDeviceName {
    std::string preset;             // "h100-nvl"
    std::vector<std::string> words; // {"h100", "nvl"}, in lower case
};

// The patterns of a GPU preset file (the format of resources/gpus.json), in preset-key order. A
// preset without "device_names" has none (no device is taken for it); a malformed one fails,
// naming the file and the field.
Result<std::vector<GpuDeviceName>> parseGpuDeviceNames(std::string_view json,
                                                       const std::string& source);

// The patterns of the shipped resources/gpus.json, read once.
const std::vector<GpuDeviceName>& builtinGpuDeviceNames();

// The preset a device name is: of the patterns whose words all occur in the name, the one with
// the most words ("h100 nvl" before "h100"), then the most letters, then the first preset key.
// None for a device no pattern matches ("Tesla T4").
std::optional<std::string>
matchGpuPreset(std::string_view deviceName,
               const std::vector<GpuDeviceName>& names = builtinGpuDeviceNames());

} // namespace kvbe
