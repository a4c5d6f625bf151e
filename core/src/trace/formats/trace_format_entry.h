// What a trace format's own file gives the registration list (trace_formats.cpp): its entry of
// the table (TraceFormatInfo, kvbe/files/trace_format.h) and how to make its parser. Internal to
// kvbe_core: the reader (trace_reader.cpp) and the formats' files include it.
#pragma once

#include "kvbe/files/trace_format.h"
#include "kvbe/trace/trace.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe::detail {

class LineParser {
  public:
    virtual ~LineParser() = default;
    // Parses one non-empty line; on success fills rec (blockIds point into the parser's buffer,
    // valid until the next line) and returns an empty string, otherwise the message
    // "FILE:LINE: ...". isRecord: the line is a request (a CSV header is not).
    virtual std::string parse(std::string_view line, std::uint64_t lineNo, TraceRecord& rec,
                              bool& isRecord) = 0;
    // At the end of each file: the records of a format that needs the whole file (one JSON
    // document a file keeps its lines in parse() and reads them here), in the order of their
    // arrivals; a message "FILE: ..." where the file is bad. Line formats have nothing left.
    virtual std::string finish(const std::function<void(const TraceRecord&)>& /*sink*/) {
        return {};
    }

  protected:
    explicit LineParser(const std::string& source) : m_source(source) {}
    // The file being read (for a folder, the file of the folder being read now).
    const std::string& source() const { return m_source; }
    std::string where(std::uint64_t lineNo) const {
        return m_source + ":" + std::to_string(lineNo) + ": ";
    }
    std::string fieldError(std::uint64_t lineNo, std::string_view field,
                           std::string_view expected) const {
        return where(lineNo) + "field '" + std::string(field) + "': expected " +
               std::string(expected);
    }

  private:
    const std::string& m_source;
};

// What a parser is made with: the format's defaults, or the user's --block-tokens and
// --time-unit where given.
struct ParserSettings {
    TraceFormat format;
    std::uint32_t blockTokens = 0;
    double secondsPerUnit = 1;
};

// One format: its entry of the table and its parser's maker. The parser lives for the whole read
// (every file of a folder), and source names the file being read at each call.
struct TraceFormatEntry {
    TraceFormatInfo info;
    std::unique_ptr<LineParser> (*makeParser)(const std::string& source,
                                              const ParserSettings& settings) = nullptr;
};

// The registration list, in the order of traceFormats().
const std::vector<TraceFormatEntry>& traceFormatEntries();
// The entry of a format; null for Auto and for a name no entry has.
const TraceFormatEntry* traceFormatEntry(TraceFormat f);

} // namespace kvbe::detail
