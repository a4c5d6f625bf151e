// The JSON Lines writer of the probe protocol; the lines themselves are core's
// (kvbe/probe/probe_protocol.h).
#include "kvbe/probes/stream.h"

#include "kvbe/base/host_info.h"

#include <ostream>

namespace kvbe::probes {

JsonlSink::JsonlSink(std::ostream& out, std::string probe)
    : m_out(out), m_probe(std::move(probe)) {}

void JsonlSink::writeLine(const std::string& line, bool last) {
    // Nothing follows the result or error line, not even a second error: a watchdog reporting a
    // stop may race the probe reporting the same stop.
    if (m_ended) return;
    m_out << line << '\n';
    m_out.flush();
    if (last) m_ended = true;
}

void JsonlSink::ensureHeader() {
    if (!m_headerWritten) begin(m_probe, nlohmann::ordered_json::object());
}

void JsonlSink::begin(const std::string& probe, const nlohmann::ordered_json& params) {
    std::lock_guard lock(m_mutex);
    if (m_headerWritten) return;
    m_headerWritten = true;
    ProbeHeader header;
    header.probe = probe;
    header.host = hostName();
    if (header.host.empty()) header.host = "unknown";
    header.started = utcNow();
    header.params = params;
    writeLine(probeLine(header));
}

void JsonlSink::progress(double fraction, const std::string& message) {
    std::lock_guard lock(m_mutex);
    ensureHeader();
    writeLine(probeLine(ProbeProgress{fraction, message}));
}

void JsonlSink::point(const ProbePoint& p) {
    std::lock_guard lock(m_mutex);
    ensureHeader();
    writeLine(probeLine(p));
}

void JsonlSink::note(const std::string& line) {
    std::lock_guard lock(m_mutex);
    ensureHeader();
    writeLine(probeLine(ProbeNote{line}));
}

void JsonlSink::table(const TextTable&) {}

void JsonlSink::result(const nlohmann::ordered_json& summary) {
    std::lock_guard lock(m_mutex);
    ensureHeader();
    writeLine(probeLine(ProbeResult{summary}), true);
}

void JsonlSink::error(const std::string& message) {
    std::lock_guard lock(m_mutex);
    ensureHeader();
    writeLine(probeLine(ProbeError{message}), true);
}

} // namespace kvbe::probes
