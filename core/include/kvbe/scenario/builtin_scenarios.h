// The scenarios shipped in resources/scenarios/, by key: the file's name without .kvbe.json.
// "default" (the study's model and GPU with the values fitted to its published figures),
// "illustrative" (the seed's: u = 50 %, the tier presets' nominal fixed costs),
// "llama-3.2-3b-h100-study-fitted" (kvbe-cli published fit's output). loadScenario takes a key
// where no file has that name, so --scenario illustrative works for every command.
#pragma once

#include "kvbe/scenario/scenario.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kvbe {

// Whether loadScenario reads `path` as a built-in scenario's key: a bare name that is no file
// here. Such a name is part of kvbe, not an input file (kvbe-cli report does not hash it).
bool namesBuiltinScenario(const std::filesystem::path& path);
Result<Scenario> builtinScenario(const std::string& key, const Presets& presets);
std::optional<std::string_view> builtinScenarioText(const std::string& key, const Presets& presets);
std::string builtinScenarioKeys(const Presets& presets); // "default, illustrative, …"

} // namespace kvbe
