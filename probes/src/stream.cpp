// The JSON Lines writer and reader of the probe protocol.
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

Result<ProbeEvent> parseProbeLine(std::string_view line) {
    nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) return Error{"not a JSON object"};
    ProbeEvent e;
    if (j.contains("kvbe_probe")) {
        if (!j["kvbe_probe"].is_number_integer())
            return Error{"\"kvbe_probe\" is not a version number"};
        if (!j.contains("probe") || !j["probe"].is_string())
            return Error{"the header has no \"probe\" name"};
        e.kind = ProbeEvent::Kind::Header;
    } else {
        if (!j.contains("type") || !j["type"].is_string()) return Error{"the line has no \"type\""};
        const std::string type = j["type"];
        auto need = [&](const char* field, bool ok) -> Status {
            if (!ok) return Error{"a " + type + " line needs \"" + field + "\""};
            return Ok{};
        };
        Status s = Ok{};
        if (type == "progress") {
            e.kind = ProbeEvent::Kind::Progress;
            s = need("fraction", j.contains("fraction") && j["fraction"].is_number());
        } else if (type == "point") {
            e.kind = ProbeEvent::Kind::Point;
            s = need("series", j.contains("series") && j["series"].is_string());
            if (s) s = need("x", j.contains("x") && j["x"].is_number());
            if (s) s = need("y", j.contains("y") && j["y"].is_number());
        } else if (type == "result") {
            e.kind = ProbeEvent::Kind::Result;
            s = need("summary", j.contains("summary") && j["summary"].is_object());
        } else if (type == "error") {
            e.kind = ProbeEvent::Kind::Error;
            s = need("message", j.contains("message") && j["message"].is_string());
        } else {
            return Error{"unknown line type \"" + type + "\""};
        }
        if (!s) return s.error();
    }
    e.json = std::move(j);
    return e;
}

Result<ProbeEvent> ProbeStreamReader::accept(std::string_view line) {
    ++m_line;
    const std::string where = "probe stream line " + std::to_string(m_line) + ": ";
    auto e = parseProbeLine(line);
    if (!e) return Error{where + e.message()};
    if (m_sawEnd) return Error{where + "a line after the result or error line"};
    if (!m_sawHeader) {
        if (e->kind != ProbeEvent::Kind::Header)
            return Error{where + "expected the header {\"kvbe_probe\":1,…} first"};
        const int version = e->json["kvbe_probe"];
        if (version > kProtocolVersion || version < 1)
            return Error{where + "protocol version " + std::to_string(version) +
                         "; this reader knows version " + std::to_string(kProtocolVersion)};
        m_sawHeader = true;
    } else if (e->kind == ProbeEvent::Kind::Header) {
        return Error{where + "a second header"};
    }
    if (e->kind == ProbeEvent::Kind::Result || e->kind == ProbeEvent::Kind::Error) m_sawEnd = true;
    return e;
}

Result<std::vector<ProbeEvent>> ProbeStreamReader::feed(std::string_view bytes) {
    m_pending.append(bytes);
    std::vector<ProbeEvent> events;
    size_t start = 0;
    for (size_t nl; (nl = m_pending.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string_view line(m_pending.data() + start, nl - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) continue;
        auto e = accept(line);
        if (!e) {
            m_pending.erase(0, nl + 1);
            return e.error();
        }
        events.push_back(std::move(*e));
    }
    m_pending.erase(0, start);
    return events;
}

Status ProbeStreamReader::finish() {
    if (!m_pending.empty())
        return Error{"probe stream: the last line was cut off (" +
                     std::to_string(m_pending.size()) + " bytes without a newline)"};
    if (!m_sawHeader) return Error{"probe stream: empty, the probe wrote no header"};
    if (!m_sawEnd)
        return Error{"probe stream: ended without a result or error line (was the probe killed?)"};
    return Ok{};
}

} // namespace kvbe::probes
