// The py-kvcache v1 thresholds of a scenario or a calibration: p* of the tier that stands for
// the SSD and of the one that stands for host memory. One rule for the CLI and the window.
#pragma once

#include "kvbe/calibration/calibration.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <string>
#include <vector>

namespace kvbe {

struct PyKvcacheExport {
    PyKvcacheThresholds thresholds;
    std::string ssdTier; // the tiers that were picked, "" where none
    std::string memTier;
};

// The SSD tier is the one named `ssdTier`, else the first whose preset kind or name says NVMe,
// SSD or disk; the memory tier likewise with DRAM, mem or CPU.
Result<PyKvcacheExport> pyKvcacheFromScenario(const Evaluation& e, const Presets& presets,
                                              const std::string& ssdTier = "",
                                              const std::string& memTier = "");
Result<PyKvcacheExport> pyKvcacheFromCalibration(const Calibration& c,
                                                 const std::string& ssdTier = "",
                                                 const std::string& memTier = "");

// The v2 curves of a scenario (with a fit adopted, for a fitted calibration): f = cold prefill of
// m tokens, g_ssd and g_mem = m tokens served from the SSD and the memory tier, at block-aligned
// lengths (16·2^k and 48·2^k up to the context, and both sides of each crossing of f and g), so
// that py-kvcache's rule gives the cost model's p* rounded up to a block. Thresholds by that rule;
// golden points are the model's own values at 1000, 10000 and 100000 tokens within the context.
struct PyKvcacheV2Export {
    PyKvcacheV2 file;
    std::string ssdTier, memTier;
};
Result<PyKvcacheV2Export> pyKvcacheV2FromScenario(const Evaluation& e, const Presets& presets,
                                                  const std::string& ssdTier = "",
                                                  const std::string& memTier = "");

} // namespace kvbe
