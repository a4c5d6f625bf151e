// The people-facing sink: notes, a table (kvbe/base/text_table.h), errors as sentences.
#include "kvbe/probes/stream.h"

#include <iomanip>
#include <ostream>

namespace kvbe::probes {

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
