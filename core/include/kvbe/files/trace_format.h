// Which request-trace format a file is in, told from its first line: what the trace reader
// (kvbe/trace/trace.h) reads each format with, and what classifyFile (file_kind.h) says a trace
// file is. It sits with what a file is, below the readers of every kind, so that classifyFile
// knows a trace without knowing how one is read.
#pragma once

#include "kvbe/base/result.h"

#include <optional>
#include <string>
#include <string_view>

namespace kvbe {

enum class TraceFormat { Auto, Mooncake, Bailian, Azure, Csv };

std::string_view toString(TraceFormat f);
std::optional<TraceFormat> parseTraceFormat(std::string_view text);

// Detects the format from the first non-empty line; source names the file in the message.
Result<TraceFormat> detectTraceFormat(std::string_view firstLine, const std::string& source);

} // namespace kvbe
