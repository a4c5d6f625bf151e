// The reader of the probe protocol: one line at a time, and whole streams in chunks.
#include "kvbe/probe_stream.h"

namespace kvbe {

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
        if (version > kProbeProtocolVersion || version < 1)
            return Error{where + "protocol version " + std::to_string(version) +
                         "; this reader knows version " + std::to_string(kProbeProtocolVersion)};
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

} // namespace kvbe
