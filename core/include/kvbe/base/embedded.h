// The files of resources/, compiled into kvbe_core at build time (cmake/EmbedResources.cmake
// generates their table), so the binaries need no install step.
#pragma once

#include <optional>
#include <string_view>

namespace kvbe {

struct EmbeddedFile {
    const char* path; // relative to resources/: "tiers.json", "models/…"
    const unsigned char* data;
    unsigned long size;
};
const EmbeddedFile* embeddedFiles(unsigned long* count);

// One embedded file's text by its path relative to resources/; none where it is not embedded.
std::optional<std::string_view> embeddedText(std::string_view path);

} // namespace kvbe
