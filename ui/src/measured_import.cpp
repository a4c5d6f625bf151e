#include "kvbe/ui/measured_import.h"

#include "kvbe/json_text.h"
#include "kvbe/probe_stream.h"

#include <cmath>

namespace kvbe {

Result<std::vector<QPointF>> readPrefillPoints(const std::filesystem::path& path) {
    auto text = readTextFile(path, kMaxJsonFileBytes);
    if (!text) return text.error();
    ProbeStreamReader reader;
    auto events = reader.feed(*text + (text->empty() || text->back() == '\n' ? "" : "\n"));
    if (!events) return Error{path.string() + ": " + events.message()};
    std::vector<QPointF> out;
    for (const auto& e : *events) {
        if (e.kind == ProbeEvent::Kind::Error)
            return Error{path.string() +
                         ": the probe run failed: " + e.json.value("message", std::string())};
        if (e.kind != ProbeEvent::Kind::Point || e.json.value("series", "") != "t_prefill_s")
            continue;
        const auto x = e.json.find("x"), y = e.json.find("y");
        if (x == e.json.end() || y == e.json.end() || !x->is_number() || !y->is_number()) continue;
        const double n = x->get<double>(), t = y->get<double>();
        if (std::isfinite(n) && std::isfinite(t) && n > 0 && t > 0) out.emplace_back(n, t);
    }
    // A run cut short (a job killed at its time limit) has no result line, but the points it
    // did measure are still measurements; only a file with none is refused.
    if (out.empty())
        return Error{path.string() +
                     " holds no t_prefill_s points; expected the output of kvbe-cli probe prefill"};
    return out;
}

} // namespace kvbe
