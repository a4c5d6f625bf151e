// Where a trace's bytes come from: a plain file, a .gz file through zlib, a .zst file through
// libzstd, or text already in memory. Internal to kvbe_core.
#pragma once

#include "kvbe/base/result.h"

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace kvbe::detail {

// The reader's chunk: files are read 4 MiB at a time, or their size when smaller.
inline constexpr std::size_t kTraceChunk = 4u << 20;

class TraceSource {
  public:
    virtual ~TraceSource() = default;
    // Reads up to n bytes; returns 0 at the end, -1 on error.
    virtual long read(char* buf, std::size_t n) = 0;
    virtual double fraction() const = 0;
    // Text already in memory: read in place, without a chunk buffer.
    virtual std::optional<std::string_view> whole() const { return std::nullopt; }
    // The read size: a small file needs no 4 MiB buffer.
    virtual std::size_t chunkBytes() const { return kTraceChunk; }
    // What went wrong in a failed read, where the source knows more than "read failed" (a zstd
    // stream cut inside a frame); empty otherwise.
    virtual std::string error() const { return {}; }
};

// The file by its extension: .gz through zlib, .zst through libzstd (each where the build has
// it; a sentence saying what to do where not), anything else as it is.
Result<std::unique_ptr<TraceSource>> openTraceFile(const std::filesystem::path& path);
std::unique_ptr<TraceSource> memoryTraceSource(std::string_view text);

} // namespace kvbe::detail
