// The JSON Lines writer of the probe protocol.
#include "kvbe/probes/stream.h"

#include <chrono>
#include <ctime>
#include <ostream>
#include <unistd.h>

namespace kvbe::probes {
namespace {

std::string hostName() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

std::string utcNow() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

} // namespace

JsonlSink::JsonlSink(std::ostream& out, std::string probe)
    : m_out(out), m_probe(std::move(probe)) {}

void JsonlSink::writeLine(const nlohmann::ordered_json& line) {
    // Nothing follows the result or error line, not even a second error: a watchdog reporting a
    // stop may race the probe reporting the same stop.
    if (m_ended) return;
    // Invalid UTF-8 (a path with odd bytes) must not throw halfway through a run.
    m_out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    m_out.flush();
    if (line.contains("type") && (line["type"] == "result" || line["type"] == "error"))
        m_ended = true;
}

void JsonlSink::ensureHeader() {
    if (!m_headerWritten) begin(m_probe, nlohmann::ordered_json::object());
}

void JsonlSink::begin(const std::string& probe, const nlohmann::ordered_json& params) {
    std::lock_guard lock(m_mutex);
    if (m_headerWritten) return;
    m_headerWritten = true;
    nlohmann::ordered_json header;
    header["kvbe_probe"] = kProtocolVersion;
    header["probe"] = probe;
    header["host"] = hostName();
    header["started"] = utcNow();
    header["params"] = params;
    writeLine(header);
}

void JsonlSink::progress(double fraction, const std::string& message) {
    std::lock_guard lock(m_mutex);
    ensureHeader();
    writeLine({{"type", "progress"}, {"fraction", fraction}, {"message", message}});
}

void JsonlSink::point(const ProbePoint& p) {
    std::lock_guard lock(m_mutex);
    ensureHeader();
    writeLine({{"type", "point"},
               {"series", p.series},
               {"x", p.x},
               {"y", p.y},
               {"unit", p.unit},
               {"meta", p.meta}});
}

void JsonlSink::note(const std::string&) {}
void JsonlSink::table(const TextTable&) {}

void JsonlSink::result(const nlohmann::ordered_json& summary) {
    std::lock_guard lock(m_mutex);
    ensureHeader();
    writeLine({{"type", "result"}, {"summary", summary}});
}

void JsonlSink::error(const std::string& message) {
    std::lock_guard lock(m_mutex);
    ensureHeader();
    writeLine({{"type", "error"}, {"message", message}});
}

} // namespace kvbe::probes
