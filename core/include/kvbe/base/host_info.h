// The two facts every file kvbe writes about where and when it was made: the UTC time as
// ISO 8601 and the host's name. One home for the calibration files, the serving probe and the
// py-kvcache exports.
#pragma once

#include <ctime>
#include <string>
#include <unistd.h>

namespace kvbe {

inline std::string utcNow() {
    const auto t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

inline std::string hostName() {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) return "";
    return buf;
}

} // namespace kvbe
