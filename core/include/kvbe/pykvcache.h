// The py-kvcache v1 thresholds of a scenario or a calibration: p* of the tier that stands for
// the SSD and of the one that stands for host memory. One rule for the CLI and the window.
#pragma once

#include "kvbe/calibration.h"
#include "kvbe/presets.h"
#include "kvbe/scenario.h"

#include <string>

namespace kvbe {

struct PyKvcacheExport {
    PyKvcacheThresholds thresholds;
    std::string ssdTier; // the tiers that were picked, "" where none
    std::string memTier;
};

// The SSD tier is the one named `ssdTier`, else the first whose preset kind or name says NVMe,
// SSD or disk; the memory tier likewise with DRAM, mem or CPU.
Result<PyKvcacheExport> pyKvcacheFromScenario(const Evaluation& e, const Presets& presets,
                                              const std::string& ssdTier = "", const std::string& memTier = "");
Result<PyKvcacheExport> pyKvcacheFromCalibration(const Calibration& c, const std::string& ssdTier = "",
                                                 const std::string& memTier = "");

} // namespace kvbe
