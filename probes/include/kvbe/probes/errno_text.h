// errno as a sentence part.
#pragma once

#include <string>

namespace kvbe::probes {

// "Permission denied (EACCES)"
std::string errnoText(int err);

} // namespace kvbe::probes
