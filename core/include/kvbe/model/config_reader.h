// Reads a Hugging Face config.json into a ModelSpec.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/model/hf_cache.h"
#include "kvbe/model/model_spec.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

// Accepts a config.json file, a folder holding one, or a Hugging Face cache entry
// (…/models--org--name, or …/models--org--name/snapshots/<rev>[/config.json]).
Result<ModelSpec> readModelConfig(const std::filesystem::path& path);

// Parses config text. `source` names the file in messages; `id` becomes ModelSpec::id.
Result<ModelSpec> parseModelConfig(std::string_view json, const std::string& source,
                                   const std::string& id);

} // namespace kvbe
