// Small text helpers every domain shares.
#pragma once

#include <string>
#include <string_view>

namespace kvbe {

// ASCII lower case ("NVMe" -> "nvme"): names, keys and units are compared this way.
std::string lower(std::string_view text);

} // namespace kvbe
