// The text helpers the `kvbe-cli trace` reports share (trace_report.cpp, trace_sweep_report.cpp):
// percentages, milliseconds, printf onto a string, hit ratios and the trace as JSON. Internal to
// core.
#pragma once

#include "kvbe/base/text_table.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"

#include <cstdarg>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace kvbe::detail {

using nlohmann::json;

inline std::string pct(double v) {
    return formatFixed(v * 100, 1) + " %";
}
inline std::string ms(double s) {
    return formatFixed(s * 1e3, 2);
}

// printf onto the end of out: the tables pad their columns in bytes, as printf does.
[[gnu::format(printf, 2, 3)]] inline void appendf(std::string& out, const char* format, ...) {
    va_list args;
    va_start(args, format);
    va_list again;
    va_copy(again, args);
    const int n = std::vsnprintf(nullptr, 0, format, args);
    va_end(args);
    if (n > 0) {
        const std::size_t at = out.size();
        out.resize(at + static_cast<std::size_t>(n) + 1);
        std::vsnprintf(out.data() + at, static_cast<std::size_t>(n) + 1, format, again);
        out.resize(at + static_cast<std::size_t>(n));
    }
    va_end(again);
}

inline json ratiosJson(const HitRatios& h) {
    return {{"token_weighted", h.tokenWeighted},
            {"block_weighted", h.blockWeighted},
            {"per_request", h.perRequest}};
}

inline json traceJson(const Trace& t, const std::string& file) {
    return {{"file", file},
            {"format", std::string(toString(t.summary.format))},
            {"block_tokens", t.summary.blockTokens},
            {"requests", t.size()},
            {"skipped_lines", t.summary.skippedLines},
            {"distinct_blocks", t.distinctBlocks}};
}

} // namespace kvbe::detail
