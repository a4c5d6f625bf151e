#include "kvbe/probes/errno_text.h"

#include <cstring>

namespace kvbe::probes {

std::string errnoText(int err) {
    const char* name = strerrorname_np(err);
    return std::string(std::strerror(err)) + (name ? std::string(" (") + name + ")" : "");
}

} // namespace kvbe::probes
