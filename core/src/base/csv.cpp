#include "kvbe/base/csv.h"

namespace kvbe {

std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string csvLine(const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i)
        out += (i ? "," : "") + csvField(cells[i]);
    return out + "\n";
}

std::vector<CsvRow> readCsv(std::string_view text, std::string_view separators) {
    std::vector<CsvRow> rows;
    CsvRow row;
    std::string field;
    bool quoted = false;
    size_t line = 1;
    row.line = 1;
    auto endRow = [&] {
        row.cells.push_back(field);
        field.clear();
        if (!(row.cells.size() == 1 && row.cells[0].empty())) rows.push_back(row);
        row.cells.clear();
    };
    for (size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (quoted) {
            if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (ch == '"')
                quoted = false;
            else {
                if (ch == '\n') ++line;
                field += ch;
            }
        } else if (ch == '"' && field.empty())
            quoted = true;
        else if (separators.find(ch) != std::string_view::npos) {
            row.cells.push_back(field);
            field.clear();
        } else if (ch == '\n') {
            endRow();
            ++line;
            row.line = line;
        } else if (ch != '\r')
            field += ch;
    }
    if (!field.empty() || !row.cells.empty()) endRow();
    return rows;
}

} // namespace kvbe
