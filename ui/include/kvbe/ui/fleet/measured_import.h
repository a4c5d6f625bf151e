// Measured cold-prefill times from a probe run, to overlay on the TTFT chart.
#pragma once

#include "kvbe/base/result.h"

#include <QPointF>

#include <filesystem>
#include <vector>

namespace kvbe {

// Reads the JSON Lines stream of `kvbe-cli probe gpu-prefill` (or a cluster job's copy of it): the
// "point" lines of series t_prefill_s, x in tokens and y in seconds. Other lines are skipped.
Result<std::vector<QPointF>> readPrefillPoints(const std::filesystem::path& path);

} // namespace kvbe
