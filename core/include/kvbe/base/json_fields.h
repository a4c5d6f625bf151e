// Reading typed fields out of parsed JSON with messages that name the file, the field and what
// was expected. Readers throw FieldError inside their parse function and turn it into an Error.
#pragma once

#include "kvbe/base/json_text.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvbe {

struct FieldError {
    std::string message;
};

// How a message names a field: "field 'tiers[0].name'" (the default), or bare after the file's
// name, as the preset files' messages do ("resources/tiers.json: tiers.nvme.read_GBps is …").
enum class FieldNaming { Quoted, Bare };

class FieldReader {
  public:
    FieldReader(const nlohmann::json& j, std::string source,
                FieldNaming naming = FieldNaming::Quoted)
        : m_j(j), m_source(std::move(source)), m_naming(naming) {}

    const nlohmann::json& root() const { return m_j; }
    const std::string& source() const { return m_source; }

    [[noreturn]] void fail(const std::string& field, const std::string& expected,
                           const nlohmann::json* got) const;
    [[noreturn]] void failWith(const std::string& sentence) const {
        throw FieldError{m_source + ": " + sentence};
    }

    std::optional<double> number(const nlohmann::json& obj, const std::string& key,
                                 const std::string& path, double min, double max,
                                 const std::string& expected) const;
    std::optional<std::string> string(const nlohmann::json& obj, const std::string& key,
                                      const std::string& path) const;
    std::optional<bool> boolean(const nlohmann::json& obj, const std::string& key,
                                const std::string& path) const;
    // [[x, y], ...] with positive finite numbers.
    std::vector<std::pair<double, double>> pairs(const nlohmann::json& obj, const std::string& key,
                                                 const std::string& path,
                                                 const std::string& what) const;
    const nlohmann::json& object(const nlohmann::json& obj, const std::string& key,
                                 const std::string& path) const;
    const nlohmann::json& array(const nlohmann::json& obj, const std::string& key,
                                const std::string& path) const;

  private:
    const nlohmann::json& m_j;
    std::string m_source;
    FieldNaming m_naming;
};

} // namespace kvbe
