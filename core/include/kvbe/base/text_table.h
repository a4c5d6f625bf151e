// Text in columns for people: the display width of UTF-8 text, padding to a width, and a table
// with a title, a rule under the header and footnotes. One home for the CLI's reports and the
// probes' tables.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

// Columns a UTF-8 string takes: its code points ("µs" is two columns, three bytes). Enough for
// the few non-ASCII characters kvbe prints (µ, ×, –, ·, ↔); no wide CJK characters.
std::size_t displayWidth(std::string_view text);
// `text` with spaces before it (right-aligned) or after it, to `width` columns; never cut.
std::string padLeft(std::string text, std::size_t width);
std::string padRight(std::string text, std::size_t width);
// v with `decimals` digits after the point, as printf's "%.*f": "12.35", "-0.5", "3".
std::string formatFixed(double v, int decimals);

struct TextTable {
    std::string title;
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> footnotes;
};
// The first column reads left to right; the others, numbers, line up on the right.
std::string renderTable(const TextTable& table);

} // namespace kvbe
