// Typed access to the fields of a config.json, shared by the reader's parts (internal): the
// text_config-then-top-level lookup of Hugging Face configs over the one field reader of core
// (kvbe/base/json_fields.h), whose messages name the file, the field and what was expected.
#pragma once

#include "kvbe/base/json_fields.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvbe::detail {
using nlohmann::json;

// The error of every field reader; the config reader's parts throw it as ConfigError.
using ConfigError = FieldError;

// Fields are looked up in text_config first, then at the top level.
class Fields {
  public:
    Fields(const json& top, const std::string& source) : m_top(top), m_reader(top, source) {
        if (top.contains("text_config")) {
            const auto& t = top["text_config"];
            if (!t.is_object()) fail("text_config", "an object", t);
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
        m_reader.fail(path(key), expected, &got);
    }
    [[noreturn]] void missing(const std::string& key, const std::string& meaning) const {
        m_reader.fail(m_prefix + key, meaning, nullptr);
    }

    std::optional<double> number(const std::string& key, const std::string& meaning, double min,
                                 double max) const {
        return m_reader.number(holder(key), key, path(key), min, max, meaning);
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
        return m_reader.boolean(holder(key), key, path(key));
    }
    std::optional<std::string> string(const std::string& key) const {
        return m_reader.string(holder(key), key, path(key));
    }

    // Every key of the top level and of text_config, with the path a message names it by.
    std::vector<std::pair<std::string, std::string>> keys() const {
        std::vector<std::pair<std::string, std::string>> out;
        if (m_text)
            for (const auto& [k, v] : m_text->items())
                out.emplace_back(k, m_prefix + k);
        for (const auto& [k, v] : m_top.items())
            if (!m_text || !m_text->contains(k)) out.emplace_back(k, k);
        return out;
    }
    const std::string& source() const { return m_reader.source(); }

  private:
    // The object that holds the key: text_config where it has it, else the top level.
    const json& holder(const std::string& key) const {
        return m_text && m_text->contains(key) ? *m_text : m_top;
    }

    const json& m_top;
    FieldReader m_reader;
    const json* m_text = nullptr;
    std::string m_prefix;
};

constexpr int kMaxDim = 1 << 22;

} // namespace kvbe::detail
