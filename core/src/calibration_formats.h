// Readers of other tools' measurement files, behind parseCalibration(). Internal to core.
#pragma once

#include "kvbe/calibration.h"
#include "kvbe/json_fields.h"

#include <string>
#include <string_view>

namespace kvbe::detail {

bool looksLikePyKvcache(const nlohmann::json& j);   // any field py-kvcache's reader knows
Calibration parsePyKvcache(const FieldReader& r);   // v1 and v2 break-even files (pykvcache_import.cpp)
Calibration parseFio(const FieldReader& r);         // fio --output-format=json
Calibration parseNvbandwidth(const FieldReader& r); // nvbandwidth --json
bool looksLikeParetoCsv(std::string_view text);     // kvcache-experiments pareto-measure CSV
Result<Calibration> parseParetoCsv(std::string_view text, const std::string& source);

} // namespace kvbe::detail
