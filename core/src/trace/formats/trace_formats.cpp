// The registration list of the trace formats: each format's own file in this folder gives its
// entry (trace_format_entry.h); the list says which formats kvbe reads and in which order
// detection tries them (whole-document formats first, then these in order), and is the one
// definition of the table that files/ reads (traceFormats(), kvbe/files/trace_format.h).
#include "trace_format_entry.h"

namespace kvbe {
namespace detail {

// Each defined in its format's file (json_lines.cpp: Mooncake and Bailian; csv_lines.cpp: Azure
// and kvbe CSV).
TraceFormatEntry mooncakeFormat();
TraceFormatEntry bailianFormat();
TraceFormatEntry azureFormat();
TraceFormatEntry kvbeCsvFormat();
TraceFormatEntry kvCacheTesterFormat(); // kv_cache_tester.cpp

const std::vector<TraceFormatEntry>& traceFormatEntries() {
    // One line a format.
    // clang-format off
    static const std::vector<TraceFormatEntry> list = {
        mooncakeFormat(),
        bailianFormat(),
        azureFormat(),
        kvbeCsvFormat(),
        kvCacheTesterFormat(),
    };
    // clang-format on
    return list;
}

const TraceFormatEntry* traceFormatEntry(TraceFormat f) {
    if (f.name.empty()) return nullptr;
    for (const auto& e : traceFormatEntries())
        if (e.info.name == f.name) return &e;
    return nullptr;
}

} // namespace detail

const std::vector<TraceFormatInfo>& traceFormats() {
    static const std::vector<TraceFormatInfo> infos = [] {
        std::vector<TraceFormatInfo> out;
        for (const auto& e : detail::traceFormatEntries())
            out.push_back(e.info);
        return out;
    }();
    return infos;
}

} // namespace kvbe
