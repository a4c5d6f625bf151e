// The trace formats' names and how a file's first line tells its format (trace_format.h).
#include "kvbe/files/trace_format.h"

#include "kvbe/base/csv.h"

namespace kvbe {

std::string_view toString(TraceFormat f) {
    switch (f) {
    case TraceFormat::Auto:
        return "auto";
    case TraceFormat::Mooncake:
        return "mooncake";
    case TraceFormat::Bailian:
        return "bailian";
    case TraceFormat::Azure:
        return "azure";
    case TraceFormat::Csv:
        return "csv";
    }
    return "auto";
}

std::optional<TraceFormat> parseTraceFormat(std::string_view t) {
    for (auto f : {TraceFormat::Auto, TraceFormat::Mooncake, TraceFormat::Bailian,
                   TraceFormat::Azure, TraceFormat::Csv})
        if (t == toString(f)) return f;
    return std::nullopt;
}

namespace {

bool contains(std::string_view s, std::string_view needle) {
    return s.find(needle) != std::string_view::npos;
}

} // namespace

Result<TraceFormat> detectTraceFormat(std::string_view line, const std::string& source) {
    line = trimCell(line);
    if (!line.empty() && line.front() == '{') {
        if (contains(line, "\"chat_id\"") || contains(line, "\"parent_chat_id\""))
            return TraceFormat::Bailian;
        if (contains(line, "\"hash_ids\"")) return TraceFormat::Mooncake;
        return Error{source +
                     ":1: a JSON line without 'hash_ids' or 'chat_id'; expected a Mooncake "
                     "(timestamp, input_length, output_length, hash_ids) or Bailian (chat_id, "
                     "parent_chat_id, timestamp, ..., hash_ids) request"};
    }
    if (contains(line, "ContextTokens") && contains(line, "TIMESTAMP")) return TraceFormat::Azure;
    if (contains(line, "input_tokens") && contains(line, "timestamp_s")) return TraceFormat::Csv;
    return Error{source +
                 ":1: not a known trace format; expected JSON lines (Mooncake, Bailian) or a CSV "
                 "header (Azure: TIMESTAMP,ContextTokens,GeneratedTokens; kvbe: "
                 "timestamp_s,input_tokens,output_tokens[,cached_tokens])"};
}

} // namespace kvbe
