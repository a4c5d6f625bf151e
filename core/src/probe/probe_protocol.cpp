// The probe protocol: series names and what each measures, the lines written and read, and the
// measurements made from points.
#include "kvbe/probe/probe_protocol.h"

#include <algorithm>

namespace kvbe {

// ---- series names -----------------------------------------------------------------------------

std::string driveSeries(bool write, bool buffered) {
    std::string s(write ? series::kDriveWrite : series::kDriveRead);
    if (buffered) s += series::kBufferedSuffix;
    return s;
}

std::string copySeries(CopyDirection direction, bool pinned) {
    const char* dir = direction == CopyDirection::HostToGpu   ? "h2d"
                      : direction == CopyDirection::GpuToHost ? "d2h"
                                                              : "both";
    return std::string(dir) + (pinned ? "_pinned" : "_pageable") + "_GBps";
}

SeriesRole seriesRole(std::string_view s) {
    if (s == series::kDriveRead || s == driveSeries(false, true)) return SeriesRole::DriveRead;
    if (s == series::kHostToGpuPinned) return SeriesRole::HostLink;
    if (s == series::kHostMemcpy) return SeriesRole::HostMemory;
    if (s == series::kPrefill) return SeriesRole::Prefill;
    if (s == series::kColdTtft) return SeriesRole::ColdTtft;
    return SeriesRole::Other;
}

bool isTierLoad(SeriesRole role) {
    return role == SeriesRole::DriveRead || role == SeriesRole::HostLink ||
           role == SeriesRole::HostMemory;
}

// ---- writing ----------------------------------------------------------------------------------

namespace {

std::string dumpLine(const nlohmann::ordered_json& line) {
    return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace

std::string probeLine(const ProbeHeader& h) {
    nlohmann::ordered_json line;
    line["kvbe_probe"] = h.version;
    line["probe"] = h.probe;
    line["host"] = h.host;
    line["started"] = h.started;
    line["params"] = h.params;
    return dumpLine(line);
}

std::string probeLine(const ProbeProgress& p) {
    return dumpLine({{"type", "progress"}, {"fraction", p.fraction}, {"message", p.message}});
}

std::string probeLine(const ProbeNote& n) {
    return dumpLine({{"type", "note"}, {"message", n.message}});
}

std::string probeLine(const ProbePoint& p) {
    return dumpLine({{"type", "point"},
                     {"series", p.series},
                     {"x", p.x},
                     {"y", p.y},
                     {"unit", p.unit},
                     {"meta", p.meta}});
}

std::string probeLine(const ProbeResult& r) {
    return dumpLine({{"type", "result"}, {"summary", r.summary}});
}

std::string probeLine(const ProbeError& e) {
    return dumpLine({{"type", "error"}, {"message", e.message}});
}

// ---- reading ----------------------------------------------------------------------------------

namespace {

using OJson = nlohmann::ordered_json;

std::string stringOr(const OJson& j, const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

OJson objectOr(const OJson& j, const char* key) {
    return j.contains(key) && j[key].is_object() ? j[key] : OJson::object();
}

// The typed payload of a line whose shape parseProbeLine has checked.
ProbeEvent::Payload payloadOf(ProbeEvent::Kind kind, const OJson& j) {
    switch (kind) {
    case ProbeEvent::Kind::Header:
        return ProbeHeader{j["kvbe_probe"].get<int>(), j["probe"].get<std::string>(),
                           stringOr(j, "host"), stringOr(j, "started"), objectOr(j, "params")};
    case ProbeEvent::Kind::Progress:
        return ProbeProgress{j["fraction"].get<double>(), stringOr(j, "message")};
    case ProbeEvent::Kind::Note:
        return ProbeNote{j["message"].get<std::string>()};
    case ProbeEvent::Kind::Point:
        return ProbePoint{j["series"].get<std::string>(), j["x"].get<double>(),
                          j["y"].get<double>(), stringOr(j, "unit"), objectOr(j, "meta")};
    case ProbeEvent::Kind::Result:
        return ProbeResult{j["summary"]};
    case ProbeEvent::Kind::Error:
        return ProbeError{j["message"].get<std::string>()};
    }
    return ProbeError{};
}

} // namespace

Result<ProbeEvent> parseProbeLine(std::string_view line) {
    OJson j = OJson::parse(line.begin(), line.end(), nullptr, false);
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
        } else if (type == "note") {
            e.kind = ProbeEvent::Kind::Note;
            s = need("message", j.contains("message") && j["message"].is_string());
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
    e.payload = payloadOf(e.kind, j);
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
            return Error{where + "expected the header {\"kvbe_probe\":" +
                         std::to_string(kProbeProtocolVersion) + ",…} first"};
        const int version = e->header()->version;
        if (version > kProbeProtocolVersion || version < 1)
            return Error{where + "protocol version " + std::to_string(version) +
                         "; this reader knows versions 1 to " +
                         std::to_string(kProbeProtocolVersion) +
                         (version > kProbeProtocolVersion ? " (a newer kvbe-cli wrote it)" : "")};
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

// ---- measurements -----------------------------------------------------------------------------

namespace {

bool isSingleLoad(const ProbePoint& p) {
    if (!p.meta.contains("queue_depth")) return true;
    const auto& qd = p.meta["queue_depth"];
    return qd.is_number() && qd.get<double>() == 1;
}

void addLoad(std::optional<TierMeasurement>& tier, const char* name, const ProbePoint& p) {
    if (!tier) tier = TierMeasurement{name, {}, std::nullopt, std::nullopt};
    if (isSingleLoad(p)) tier->reads.push_back({p.x, p.x / (p.y * 1e9)});
    tier->readBps = std::max(tier->readBps.value_or(0), p.y * 1e9);
}

} // namespace

ProbeMeasurements measurementsFromPoints(const std::vector<ProbePoint>& points) {
    ProbeMeasurements m;
    for (const auto& p : points) {
        if (p.y <= 0) continue;
        switch (seriesRole(p.series)) {
        case SeriesRole::DriveRead:
            addLoad(m.drive, "nvme", p);
            break;
        case SeriesRole::HostLink:
            addLoad(m.hostLink, "dram", p);
            break;
        case SeriesRole::Prefill:
            if (p.x > 0) m.prefill.push_back({p.x, p.y});
            break;
        case SeriesRole::ColdTtft:
            if (p.x > 0) m.coldTtft.push_back({p.x, p.y});
            break;
        case SeriesRole::HostMemory:
        case SeriesRole::Other:
            break;
        }
    }
    return m;
}

} // namespace kvbe
