// The trace formats' line parsers: JSON Lines (Mooncake, Bailian) through simdjson, CSV (Azure,
// kvbe's own) by hand. Internal to kvbe_core.
#pragma once

#include "kvbe/trace/trace.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kvbe::detail {

class LineParser {
  public:
    virtual ~LineParser() = default;
    // Parses one non-empty line; on success fills rec (blockIds point into the parser's buffer,
    // valid until the next line) and returns an empty string, otherwise the message
    // "FILE:LINE: ...". isRecord: the line is a request (a CSV header is not).
    virtual std::string parse(std::string_view line, std::uint64_t lineNo, TraceRecord& rec,
                              bool& isRecord) = 0;

  protected:
    explicit LineParser(const std::string& source) : m_source(source) {}
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

// Mooncake and Bailian lines: one JSON object a line. Bailian's content ids are chained into
// prefix ids (chainPrefixId); every line's block count is checked against input_length.
std::unique_ptr<LineParser> makeJsonLineParser(const std::string& source, TraceFormat format,
                                               std::uint32_t blockTokens, double secondsPerUnit);
// Azure and kvbe CSV: a header naming the columns, then one request a row.
std::unique_ptr<LineParser> makeCsvLineParser(const std::string& source, TraceFormat format,
                                              double secondsPerUnit);

} // namespace kvbe::detail
