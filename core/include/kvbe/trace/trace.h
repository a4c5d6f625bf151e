// Request traces (docs/workload-model.md, "Requests and blocks"): streaming readers for Mooncake
// JSONL, Alibaba Bailian JSONL, Azure LLM inference CSV and kvbe's own CSV, and a compact in-memory
// trace for replay.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/files/trace_format.h" // TraceFormat, detectTraceFormat

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

// One request as a reader delivers it. blockIds are *prefix* ids: Bailian's content hashes are
// already chained (prefix id j = mix(prefix id j-1, content id j)); empty for Azure and CSV.
struct TraceRecord {
    double arrivalS = 0; // seconds, as the file gives them (scaled by the unit)
    std::uint32_t inputTokens = 0;
    std::uint32_t outputTokens = 0;
    std::optional<std::uint32_t> cachedTokens; // our CSV's optional column
    std::span<const std::uint64_t> blockIds;
    std::uint64_t line = 0; // 1-based line in the file
};

struct TraceReadOptions {
    TraceFormat format = TraceFormat::Auto;
    std::optional<std::uint32_t> blockTokens; // default: 512 Mooncake, 16 Bailian
    std::optional<double> secondsPerUnit;     // default: 1e-3 Mooncake, 1 Bailian and CSV
    bool skipBad = false;                     // count and report bad lines instead of failing
    // Called every few MiB with the fraction of the file read; return false to cancel.
    std::function<bool(double fraction)> progress;
};

struct TraceReadSummary {
    TraceFormat format = TraceFormat::Auto;
    std::uint32_t blockTokens = 0; // 0 where the format has no blocks
    double secondsPerUnit = 1;
    std::uint64_t requests = 0;
    std::uint64_t skippedLines = 0;
    std::vector<std::string> skippedExamples; // the first few skipped lines' messages
    std::uint64_t bytes = 0;
    bool cancelled = false;
    bool hasBlocks() const { return blockTokens > 0; }
};

// Streams the file once; memory does not grow with its size. A bad line fails the read with
// "FILE:LINE: field 'F': expected ..." unless skipBad is set. Cancelling returns a summary with
// cancelled = true.
Result<TraceReadSummary> readTrace(const std::filesystem::path& path,
                                   const TraceReadOptions& options,
                                   const std::function<void(const TraceRecord&)>& sink);
// The same over text in memory (tests and fuzzing); source names it in messages.
Result<TraceReadSummary> readTraceText(std::string_view text, const std::string& source,
                                       const TraceReadOptions& options,
                                       const std::function<void(const TraceRecord&)>& sink);

// A trace held for replay: block ids renumbered densely (0 … distinctBlocks-1) in order of
// first appearance, so the cache simulator indexes arrays instead of hashing.
struct Trace {
    TraceReadSummary summary;
    std::vector<double> arrivalS; // relative to the first request
    std::vector<std::uint32_t> inputTokens;
    std::vector<std::uint32_t> outputTokens;
    std::vector<std::uint64_t> blockOffset; // request i's blocks: blocks[blockOffset[i] … [i+1])
    std::vector<std::uint32_t> blocks;
    std::uint32_t distinctBlocks = 0;

    std::size_t size() const { return inputTokens.size(); }
    std::span<const std::uint32_t> blocksOf(std::size_t i) const {
        return {blocks.data() + blockOffset[i], blocks.data() + blockOffset[i + 1]};
    }
};

Result<Trace> loadTrace(const std::filesystem::path& path, const TraceReadOptions& options);
Result<Trace> loadTraceText(std::string_view text, const std::string& source,
                            const TraceReadOptions& options);

// The Bailian chaining step, exposed for tests: the prefix id of a block from its parent's
// prefix id and its own content id (the first block's parent is 0).
std::uint64_t chainPrefixId(std::uint64_t parentPrefix, std::uint64_t contentId);

} // namespace kvbe
