// The scenarios shipped in resources/scenarios/, by key: the file's name without .kvbe.json.
// "default" (the study's model and GPU with the values fitted to its published figures),
// "illustrative" (the seed's: u = 50 %, the tier presets' nominal fixed costs),
// "llama-3.2-3b-h100-study-fitted" (kvbe-cli published fit's output). loadScenario takes a key
// where no file has that name, so --scenario illustrative works for every command.
#pragma once

#include "kvbe/scenario/scenario.h"

#include <optional>
#include <string>
#include <string_view>

namespace kvbe {

Result<Scenario> builtinScenario(const std::string& key, const Presets& presets);
std::optional<std::string_view> builtinScenarioText(const std::string& key, const Presets& presets);
std::string builtinScenarioKeys(const Presets& presets); // "default, illustrative, …"

} // namespace kvbe
