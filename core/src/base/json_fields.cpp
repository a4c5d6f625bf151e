#include "kvbe/base/json_fields.h"

namespace kvbe {
using nlohmann::json;

void FieldReader::fail(const std::string& field, const std::string& expected,
                       const json* got) const {
    std::string msg =
        m_source + ": " + (m_naming == FieldNaming::Quoted ? "field '" + field + "'" : field);
    if (got) {
        std::string shown = got->dump(-1, ' ', false, json::error_handler_t::replace);
        if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
        msg += " is " + jsonTypeName(*got) +
               (got->is_primitive() && !got->is_null() ? " (" + shown + ")" : "");
    } else {
        msg += " is missing";
    }
    throw FieldError{msg + "; expected " + expected};
}

std::optional<double> FieldReader::number(const json& obj, const std::string& key,
                                          const std::string& path, double min, double max,
                                          const std::string& expected) const {
    if (!obj.contains(key) || obj[key].is_null()) return std::nullopt;
    const auto& v = obj[key];
    if (!v.is_number()) fail(path, expected, &v);
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < min || d > max) fail(path, expected, &v);
    return d;
}

std::optional<std::string> FieldReader::string(const json& obj, const std::string& key,
                                               const std::string& path) const {
    if (!obj.contains(key) || obj[key].is_null()) return std::nullopt;
    if (!obj[key].is_string()) fail(path, "a string", &obj[key]);
    return obj[key].get<std::string>();
}

std::optional<bool> FieldReader::boolean(const json& obj, const std::string& key,
                                         const std::string& path) const {
    if (!obj.contains(key) || obj[key].is_null()) return std::nullopt;
    if (!obj[key].is_boolean()) fail(path, "true or false", &obj[key]);
    return obj[key].get<bool>();
}

std::vector<std::pair<double, double>> FieldReader::pairs(const json& obj, const std::string& key,
                                                          const std::string& path,
                                                          const std::string& what) const {
    std::vector<std::pair<double, double>> out;
    if (!obj.contains(key) || obj[key].is_null()) return out;
    const auto& a = obj[key];
    if (!a.is_array()) fail(path, "an array of [" + what + "] pairs", &a);
    for (size_t i = 0; i < a.size(); ++i) {
        const auto& p = a[i];
        const std::string at = path + "[" + std::to_string(i) + "]";
        if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number())
            fail(at, "a pair [" + what + "] of numbers", &p);
        const double x = p[0].get<double>(), y = p[1].get<double>();
        if (!std::isfinite(x) || !std::isfinite(y) || x <= 0 || y <= 0)
            fail(at, "a pair [" + what + "] of positive numbers", &p);
        out.emplace_back(x, y);
    }
    return out;
}

const json& FieldReader::object(const json& obj, const std::string& key,
                                const std::string& path) const {
    if (!obj.contains(key)) fail(path, "an object", nullptr);
    if (!obj[key].is_object()) fail(path, "an object", &obj[key]);
    return obj[key];
}

const json& FieldReader::array(const json& obj, const std::string& key,
                               const std::string& path) const {
    if (!obj.contains(key)) fail(path, "an array", nullptr);
    if (!obj[key].is_array()) fail(path, "an array", &obj[key]);
    return obj[key];
}

} // namespace kvbe
