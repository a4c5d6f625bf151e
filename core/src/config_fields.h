// Typed access to the fields of a config.json, shared by the reader's parts (internal).
#pragma once

#include "kvbe/json_text.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvbe::detail {
using nlohmann::json;

struct ConfigError {
    std::string message;
};

// Typed access to config fields, with messages that name the file, the field and what was
// expected. Fields are looked up in text_config first, then at the top level.
class Fields {
public:
    Fields(const json& top, const std::string& source) : m_top(top), m_source(source) {
        if (top.contains("text_config")) {
            const auto& t = top["text_config"];
            if (!t.is_object())
                fail("text_config", "an object", t);
            m_text = &t;
            m_prefix = "text_config.";
        }
    }

    const json* find(const std::string& key) const {
        if (m_text && m_text->contains(key)) return &(*m_text)[key];
        if (m_top.contains(key)) return &m_top[key];
        return nullptr;
    }
    bool has(const std::string& key) const {
        const json* j = find(key);
        return j && !j->is_null();
    }
    std::string path(const std::string& key) const {
        if (m_text && m_text->contains(key)) return m_prefix + key;
        return key;
    }

    [[noreturn]] void fail(const std::string& key, const std::string& expected,
                           const json& got) const {
        std::string shown = dumpJson(got);
        if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
        throw ConfigError{m_source + ": field '" + path(key) + "' is " + jsonTypeName(got) +
                          (got.is_primitive() && !got.is_null() ? " (" + shown + ")" : "") +
                          "; expected " + expected};
    }
    [[noreturn]] void missing(const std::string& key, const std::string& meaning) const {
        throw ConfigError{m_source + ": field '" + m_prefix + key + "' is missing; expected " +
                          meaning};
    }

    std::optional<double> number(const std::string& key, const std::string& meaning,
                                 double min, double max) const {
        const json* j = find(key);
        if (!j || j->is_null()) return std::nullopt;
        if (!j->is_number()) fail(key, meaning, *j);
        const double v = j->get<double>();
        if (!std::isfinite(v) || v < min || v > max) fail(key, meaning, *j);
        return v;
    }
    std::optional<int> integer(const std::string& key, const std::string& meaning, int min,
                               int max) const {
        auto v = number(key, meaning, min, max);
        if (!v) return std::nullopt;
        if (std::floor(*v) != *v) fail(key, meaning, *find(key));
        return static_cast<int>(*v);
    }
    int requiredInt(const std::string& key, const std::string& meaning, int min, int max) const {
        auto v = integer(key, meaning, min, max);
        if (!v) missing(key, meaning);
        return *v;
    }
    int intOr(const std::string& key, const std::string& meaning, int min, int max,
              std::optional<int> fallback) const {
        auto v = integer(key, meaning, min, max);
        if (v) return *v;
        if (fallback) return *fallback;
        missing(key, meaning);
    }
    std::optional<bool> boolean(const std::string& key) const {
        const json* j = find(key);
        if (!j || j->is_null()) return std::nullopt;
        if (!j->is_boolean()) fail(key, "true or false", *j);
        return j->get<bool>();
    }
    std::optional<std::string> string(const std::string& key) const {
        const json* j = find(key);
        if (!j || j->is_null()) return std::nullopt;
        if (!j->is_string()) fail(key, "a string", *j);
        return j->get<std::string>();
    }

    // Every key of the top level and of text_config, with the path a message names it by.
    std::vector<std::pair<std::string, std::string>> keys() const {
        std::vector<std::pair<std::string, std::string>> out;
        if (m_text)
            for (const auto& [k, v] : m_text->items()) out.emplace_back(k, m_prefix + k);
        for (const auto& [k, v] : m_top.items())
            if (!m_text || !m_text->contains(k)) out.emplace_back(k, k);
        return out;
    }
    const std::string& source() const { return m_source; }

private:
    const json& m_top;
    const json* m_text = nullptr;
    std::string m_source;
    std::string m_prefix;
};

constexpr int kMaxDim = 1 << 22;

} // namespace kvbe::detail
