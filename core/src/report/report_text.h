// What the report's parts share in writing numbers. Private to core/src/report.
#pragma once

#include <cstdio>
#include <string>

namespace kvbe::report_detail {

// v to `digits` significant digits: "0.446", "3.213", "1.5e+03".
inline std::string sig(double v, int digits = 3) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

} // namespace kvbe::report_detail
