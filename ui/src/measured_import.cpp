#include "kvbe/ui/measured_import.h"

#include "kvbe/json_text.h"

#include <cmath>
#include <sstream>

namespace kvbe {

Result<std::vector<QPointF>> readPrefillPoints(const std::filesystem::path& path) {
    auto text = readTextFile(path, kMaxJsonFileBytes);
    if (!text) return text.error();
    std::vector<QPointF> out;
    std::istringstream in(*text);
    std::string line;
    int lineNo = 0;
    while (std::getline(in, line)) {
        ++lineNo;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object())
            return Error{
                path.string() + " line " + std::to_string(lineNo) +
                " is not a JSON object; expected the JSON Lines of kvbe-cli probe prefill"};
        if (j.value("type", "") != "point" || j.value("series", "") != "t_prefill_s") continue;
        const auto x = j.find("x"), y = j.find("y");
        if (x == j.end() || y == j.end() || !x->is_number() || !y->is_number()) continue;
        const double n = x->get<double>(), t = y->get<double>();
        if (std::isfinite(n) && std::isfinite(t) && n > 0 && t > 0) out.emplace_back(n, t);
    }
    if (out.empty())
        return Error{path.string() +
                     " holds no t_prefill_s points; expected the output of kvbe-cli probe prefill"};
    return out;
}

} // namespace kvbe
