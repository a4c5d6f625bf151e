// What the CUDA probes share: reporting a failure and fixed decimals (probe.h), the median
// (kvbe/base/statistics.h), and how a measured rate is set beside the GPU preset's data-sheet peak.
#pragma once

#include "kvbe/base/statistics.h"
#include "kvbe/probes/probe.h"
#include "kvbe/probes/stream.h"
#include "kvbe/scenario/hardware.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace kvbe::gpu {

using probes::fixedDecimals;
using probes::reportFailure;

using kvbe::median; // kvbe/base/statistics.h

// A table cell: the measured rate as a per cent of the preset's dense BF16 peak; "-" without one.
inline std::string percentOfDataSheet(const GpuSpec* preset, double tflops) {
    return preset ? fixedDecimals(100 * tflops * 1e12 / preset->bf16Flops, 1) + " %" : "-";
}

// The footnote naming the peak that percentOfDataSheet compares with.
inline std::string dataSheetFootnote(const GpuSpec& preset) {
    return "data sheet: " + preset.name + ", " + fixedDecimals(preset.bf16Flops / 1e12, 1) +
           " TFLOP/s dense BF16";
}

} // namespace kvbe::gpu
