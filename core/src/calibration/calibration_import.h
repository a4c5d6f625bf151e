// Readers of other tools' measurement files (calibration_import.cpp), behind parseCalibration().
// Internal to core; py-kvcache's files have their own reader, pykvcache_import.h.
#pragma once

#include "kvbe/base/json_fields.h"
#include "kvbe/calibration/calibration.h"

#include <string>
#include <string_view>

namespace kvbe::detail {

Calibration parseFio(const FieldReader& r);         // fio --output-format=json
Calibration parseNvbandwidth(const FieldReader& r); // nvbandwidth --json
Result<Calibration> parseParetoCsv(std::string_view text, const std::string& source);

} // namespace kvbe::detail
