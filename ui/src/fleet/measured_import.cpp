#include "kvbe/ui/fleet/measured_import.h"

#include "kvbe/base/json_text.h"
#include "kvbe/probe/probe_protocol.h"

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
        if (const auto* err = e.error())
            return Error{path.string() + ": the probe run failed: " + err->message};
        const auto* p = e.point();
        if (!p || seriesRole(p->series) != SeriesRole::Prefill) continue;
        if (std::isfinite(p->x) && std::isfinite(p->y) && p->x > 0 && p->y > 0)
            out.emplace_back(p->x, p->y);
    }
    // A run cut short (a job killed at its time limit) has no result line, but the points it
    // did measure are still measurements; only a file with none is refused.
    if (out.empty())
        return Error{path.string() + " holds no " + std::string(series::kPrefill) +
                     " points; expected the output of kvbe-cli probe gpu-prefill"};
    return out;
}

} // namespace kvbe
