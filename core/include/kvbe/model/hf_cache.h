// The local Hugging Face hub cache: where it is, which models it holds, and the config.json of
// one of them.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvbe {

// "org/name" for a path inside a Hugging Face cache entry, if it is one.
std::optional<std::string> hfIdFromCachePath(const std::filesystem::path& path);

// The hub cache folders to search, in order: $HF_HUB_CACHE, $HUGGINGFACE_HUB_CACHE,
// $HF_HOME/hub, ~/.cache/huggingface/hub (only those that exist).
std::vector<std::filesystem::path> hfCacheRoots();

// A model's config.json in the local Hugging Face cache, by id ("meta-llama/Llama-3.2-3B").
std::optional<std::filesystem::path> findInHfCache(const std::string& id);

// Every model in the local cache that has a config.json: (id, path).
std::vector<std::pair<std::string, std::filesystem::path>> listHfCache();

// The config.json of a models--org--name cache folder: the snapshot refs/main points at, else
// the newest snapshot that has one.
std::optional<std::filesystem::path> snapshotConfig(const std::filesystem::path& entry);

} // namespace kvbe
