// The people-facing sink: notes, a table, errors as sentences.
#include "kvbe/probes/stream.h"

#include <algorithm>
#include <iomanip>
#include <ostream>

namespace kvbe::probes {
namespace {

// Display width of UTF-8 text ("µs" is two columns, three bytes).
size_t columnsOf(const std::string& s) {
    return static_cast<size_t>(std::count_if(
        s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

} // namespace

std::string renderTable(const TextTable& t) {
    std::vector<size_t> width(t.columns.size(), 0);
    for (size_t c = 0; c < t.columns.size(); ++c)
        width[c] = columnsOf(t.columns[c]);
    for (const auto& row : t.rows)
        for (size_t c = 0; c < row.size() && c < width.size(); ++c)
            width[c] = std::max(width[c], columnsOf(row[c]));
    std::string out;
    if (!t.title.empty()) out += t.title + "\n";
    auto line = [&](const std::vector<std::string>& cells) {
        std::string text;
        for (size_t c = 0; c < cells.size() && c < width.size(); ++c) {
            const std::string pad(width[c] - columnsOf(cells[c]), ' ');
            // The first column reads left to right; numbers line up on the right.
            text += c == 0 ? cells[c] + pad : pad + cells[c];
            if (c + 1 < cells.size()) text += "  ";
        }
        while (!text.empty() && text.back() == ' ')
            text.pop_back();
        out += text + "\n";
    };
    line(t.columns);
    std::vector<std::string> rule;
    for (size_t w : width)
        rule.emplace_back(w, '-');
    line(rule);
    for (const auto& row : t.rows)
        line(row);
    for (const auto& f : t.footnotes)
        out += f + "\n";
    return out;
}

TableSink::TableSink(std::ostream& out, std::ostream* progress)
    : m_out(out), m_progress(progress) {}

void TableSink::begin(const std::string&, const nlohmann::ordered_json&) {}

void TableSink::progress(double fraction, const std::string& message) {
    std::lock_guard lock(m_mutex);
    if (!m_progress) return;
    *m_progress << "[" << std::setw(3) << static_cast<int>(fraction * 100 + 0.5) << "%] " << message
                << "\n";
    m_progress->flush();
}

void TableSink::point(const ProbePoint&) {}

void TableSink::note(const std::string& line) {
    std::lock_guard lock(m_mutex);
    m_out << line << "\n";
    m_out.flush();
}

void TableSink::table(const TextTable& t) {
    std::lock_guard lock(m_mutex);
    m_out << renderTable(t);
    m_out.flush();
}

void TableSink::result(const nlohmann::ordered_json&) {}

void TableSink::error(const std::string&) {
    // The CLI prints every failure on stderr itself, in both formats.
}

} // namespace kvbe::probes
