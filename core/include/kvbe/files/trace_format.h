// The request-trace formats kvbe reads: one table, traceFormats(), with each format's name,
// extensions, how a file's first line tells it, its defaults (tokens per block id, the unit of its
// timestamps) and the words the help texts and messages use for it. classifyFile (file_kind.h),
// the CLI's --format and its help, the window's --trace help, file dialogs and tooltips all read
// it; the trace reader (kvbe/trace/trace.h) reads each format with the parser registered beside
// its entry.
//
// The table's type and accessor are this layer's; its one definition is the trace reader's
// registration list (core/src/trace/formats/trace_formats.cpp), where each format's own file
// gives its entry and its parser. So files/ knows every format by name without including how one
// is read, and a new format is its own file and its line in that list (docs/architecture.md,
// "Where a change goes").
#pragma once

#include "kvbe/base/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

// A trace format, by its name in traceFormats(); the default, Auto, detects it from the content.
struct TraceFormat {
    std::string_view name; // empty: Auto

    // The formats kvbe's own code names (trace generate writes Mooncake; tests compare with
    // them). A new format needs no constant here: its entry's name is its TraceFormat.
    static const TraceFormat Auto, Mooncake, Bailian, Azure, Csv;

    friend constexpr bool operator==(TraceFormat a, TraceFormat b) { return a.name == b.name; }
};
inline constexpr TraceFormat TraceFormat::Auto{};
inline constexpr TraceFormat TraceFormat::Mooncake{"mooncake"};
inline constexpr TraceFormat TraceFormat::Bailian{"bailian"};
inline constexpr TraceFormat TraceFormat::Azure{"azure"};
inline constexpr TraceFormat TraceFormat::Csv{"csv"};

// How a format's text is laid out, which groups the formats in help texts and messages.
enum class TraceLayout {
    JsonLines,    // one JSON object a line, a request each
    Csv,          // a header naming the columns, then a request a row
    JsonDocument, // one JSON document a file, read whole
};

struct TraceFormatInfo {
    std::string_view name;  // what --format takes and TraceFormat::name: "mooncake"
    std::string_view title; // in sentences: "Mooncake"
    TraceLayout layout = TraceLayout::JsonLines;
    // What tells the format in its first line, for the message over a line no format takes:
    // the telling JSON field ("'hash_ids'"), or the CSV header ("TIMESTAMP,ContextTokens,...").
    std::string_view telling;
    // What one request (or the document) holds, in the same message:
    // "(timestamp, input_length, output_length, hash_ids)".
    std::string_view shape;
    std::vector<std::string_view> extensions; // lower case, with the dot: ".jsonl"
    std::uint32_t blockTokens = 0;            // tokens per block id by default; 0: no blocks
    double secondsPerUnit = 1;                // the timestamps' unit by default
    bool folder = false;                      // a folder of its files is one trace
    // Whether the file's first non-empty line (cut short where the file is one long line) is
    // this format's; detection tries the formats in the table's order and takes the first.
    bool (*detect)(std::string_view firstLine) = nullptr;
};

// Every format, in the order detection tries them. Defined by the trace reader's registration
// list (core/src/trace/formats/trace_formats.cpp).
const std::vector<TraceFormatInfo>& traceFormats();
// The format's entry; null for Auto and for a name no entry has.
const TraceFormatInfo* traceFormatInfo(TraceFormat f);

std::string_view toString(TraceFormat f); // "auto" for Auto
std::optional<TraceFormat> parseTraceFormat(std::string_view text);

// Detects the format from the first non-empty line; source names the file in the message.
Result<TraceFormat> detectTraceFormat(std::string_view firstLine, const std::string& source);

// The words of the help texts, from the table:
// "auto, mooncake, bailian, azure or csv": what --format takes;
std::string traceFormatChoices();
// "Mooncake or Bailian JSON Lines, Azure or kvbe CSV": the formats, grouped by layout;
std::string traceFormatsSentence();
// "512 Mooncake, 16 Bailian": the formats' tokens per block id by default;
std::string traceBlockDefaults();
// "ms Mooncake, s otherwise": the formats' timestamp units by default;
std::string traceTimeUnitDefaults();
// ".jsonl, .csv, .json": every format's extensions, each once, in the table's order.
std::vector<std::string_view> traceExtensions();
// What a command's trace argument takes: "Trace file (.jsonl, .json, .csv; .gz and .zst read
// directly)", and the formats a folder of files is one trace of.
std::string traceFileHelp();

} // namespace kvbe
