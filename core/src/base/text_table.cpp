// Columns of text: display width, padding and the table renderer.
#include "kvbe/base/text_table.h"

#include <algorithm>
#include <cstdio>

namespace kvbe {

std::size_t displayWidth(std::string_view text) {
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

std::string padLeft(std::string text, std::size_t width) {
    const std::size_t w = displayWidth(text);
    return w >= width ? text : std::string(width - w, ' ') + text;
}

std::string formatFixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string padRight(std::string text, std::size_t width) {
    const std::size_t w = displayWidth(text);
    if (w < width) text.append(width - w, ' ');
    return text;
}

std::string renderTable(const TextTable& t) {
    std::vector<std::size_t> width(t.columns.size(), 0);
    for (std::size_t c = 0; c < t.columns.size(); ++c)
        width[c] = displayWidth(t.columns[c]);
    for (const auto& row : t.rows)
        for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
            width[c] = std::max(width[c], displayWidth(row[c]));
    std::string out;
    if (!t.title.empty()) out += t.title + "\n";
    auto line = [&](const std::vector<std::string>& cells) {
        std::string text;
        for (std::size_t c = 0; c < cells.size() && c < width.size(); ++c) {
            text += c == 0 ? padRight(cells[c], width[c]) : padLeft(cells[c], width[c]);
            if (c + 1 < cells.size()) text += "  ";
        }
        while (!text.empty() && text.back() == ' ')
            text.pop_back();
        out += text + "\n";
    };
    line(t.columns);
    std::vector<std::string> rule;
    for (std::size_t w : width)
        rule.emplace_back(w, '-');
    line(rule);
    for (const auto& row : t.rows)
        line(row);
    for (const auto& f : t.footnotes)
        out += f + "\n";
    return out;
}

} // namespace kvbe
