// Reads a Hugging Face config.json into a ModelSpec.
#pragma once

#include "kvbe/base/result.h"
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

// "org/name" for a path inside a Hugging Face cache entry, if it is one.
std::optional<std::string> hfIdFromCachePath(const std::filesystem::path& path);

// The hub cache folders to search, in order: $HF_HUB_CACHE, $HUGGINGFACE_HUB_CACHE,
// $HF_HOME/hub, ~/.cache/huggingface/hub (only those that exist).
std::vector<std::filesystem::path> hfCacheRoots();

// A model's config.json in the local Hugging Face cache, by id ("meta-llama/Llama-3.2-3B").
std::optional<std::filesystem::path> findInHfCache(const std::string& id);

// Every model in the local cache that has a config.json: (id, path).
std::vector<std::pair<std::string, std::filesystem::path>> listHfCache();

} // namespace kvbe
