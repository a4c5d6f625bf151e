// A deterministic generator of request traces in Mooncake JSONL (docs/trace.md, "Generated
// traces"): shared system prompts, multi-turn conversations and one-off requests, arriving as a
// Poisson process whose rate swings in a slow wave. The same spec and seed give the same bytes on
// every platform: the random numbers are the generator's own (splitmix64, inverse transforms),
// not the standard library's distributions, whose output differs between implementations.
#pragma once

#include "kvbe/base/result.h"

#include <cstdint>
#include <functional>
#include <string>

namespace kvbe {

struct TraceGeneratorSpec {
    std::uint64_t requests = 0;
    std::uint64_t seed = 1;
    double ratePerS = 20; // mean arrivals a second
    // The rate follows ratePerS · (1 + waveShare · sin(2π t / waveS)): busy and quiet stretches.
    double waveShare = 0.3;
    double waveS = 3600;
    int systemPrompts = 64;    // shared system prompts, picked by Zipf's law (s = 1)
    double oneOffShare = 0.15; // requests that are one-off: a system prompt and a document
    double meanTurns = 7;      // turns of a conversation (geometric)
    double thinkS = 45;        // mean seconds from one turn to the next (exponential)
    std::uint32_t blockTokens = 512;
    std::uint32_t maxTokens = 65536; // a conversation ends before its prompt would pass this
};

// What was written.
struct TraceGeneratorStats {
    std::uint64_t requests = 0;
    std::uint64_t bytes = 0;
    double durationS = 0; // the last arrival
    double meanInputTokens = 0;
};

// Checks the spec: a sentence naming the field for a value out of its range.
Status checkTraceGeneratorSpec(const TraceGeneratorSpec& spec);

// Writes spec.requests lines to `out` in chunks (each chunk ends with a newline); progress (share
// done) returning false stops it (the result is then an error saying so).
Result<TraceGeneratorStats> generateTrace(const TraceGeneratorSpec& spec,
                                          const std::function<Status(std::string_view chunk)>& out,
                                          const std::function<bool(double)>& progress = {});

// The same into a file (written whole to FILE.tmp, then renamed), with a sentence naming the
// file where it cannot be written.
Result<TraceGeneratorStats> generateTraceFile(const TraceGeneratorSpec& spec,
                                              const std::string& path,
                                              const std::function<bool(double)>& progress = {});

} // namespace kvbe
