// CSV as RFC 4180 has it, both ways: a field written (quoted where it must be) and text read
// into rows (quoted fields may hold separators, doubled quotes and line breaks). Every reader and
// writer of CSV in kvbe goes through these; the trace reader's streaming line splitter is the one
// exception, for files too large to hold.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

// One CSV field: quoted, with quotes doubled, where it holds a comma, quote or newline.
std::string csvField(const std::string& s);
// A row of fields, each as csvField writes it, joined by commas and ended by a newline.
std::string csvLine(const std::vector<std::string>& cells);

struct CsvRow {
    std::vector<std::string> cells;
    size_t line = 0; // 1-based line of the file the row starts on
};

// The rows of `text`, split at any of `separators`. Empty lines are no rows; '\r' outside quotes
// is dropped, so CRLF files read as LF files.
std::vector<CsvRow> readCsv(std::string_view text, std::string_view separators = ",");

// A CSV cell or a line without the blanks (and a cell's quotes) around it: the trace reader's
// streaming splitter, and the detection of a trace's format from its first line. Inline: the
// splitter calls it for every cell of a trace.
inline std::string_view trimCell(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
    return s;
}

} // namespace kvbe
