// The reader of py-kvcache's break-even files, v1 and v2 (pykvcache_import.cpp), behind
// parseCalibration(). Internal to core.
#pragma once

#include "kvbe/base/json_fields.h"
#include "kvbe/calibration/calibration.h"

namespace kvbe::detail {

Calibration parsePyKvcache(const FieldReader& r); // v1 and v2 break-even files

} // namespace kvbe::detail
