// Parsing JSON text safely: a nesting limit (deeply nested input would exhaust the stack),
// duplicate keys refused, and a message that names the file and the byte.
#pragma once

#include "kvbe/base/result.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace kvbe {

inline constexpr int kMaxJsonDepth = 256;
inline constexpr std::uintmax_t kMaxJsonFileBytes = 64ull * 1024 * 1024;

Result<nlohmann::json> parseJsonText(std::string_view text, const std::string& source);
Result<std::string> readTextFile(const std::filesystem::path& path, std::uintmax_t maxBytes);

// Writes a file atomically: to a temporary beside it, flushed, then renamed over the target.
Status writeFileAtomically(const std::filesystem::path& path, std::string_view contents);

// Serialises without ever throwing: bytes that are not UTF-8 become U+FFFD.
std::string dumpJson(const nlohmann::json& j, int indent = -1);
// Whether text is well-formed UTF-8 (what JSON strings must be).
bool isValidUtf8(std::string_view text);

// A count (tokens, bytes, blocks, parameters) for a JSON writer: an integer where the value is
// whole and a double holds it exactly (|v| <= 2^53), as readers of the files expect
// ("kv_bytes_per_token": 114688, never 114688.0); any other finite value as the number it is,
// and null where it is not finite. Real quantities (seconds, rates, fractions) stay doubles.
nlohmann::json jsonCount(double v);

// A JSON type name for messages: "a string", "an array", ...
std::string jsonTypeName(const nlohmann::json& j);

} // namespace kvbe
