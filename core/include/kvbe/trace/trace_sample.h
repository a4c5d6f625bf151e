// A spatial sample of a trace for fast planning (docs/workload-model.md, "Planning a large trace
// from a sample"): whole prefix subtrees kept or dropped together by a hash of their root, in the
// manner of SHARDS (Waldspurger et al., FAST '15), with the hot trunk above them (the blocks
// many requests share: system prompts) kept in every request that reaches it.
#pragma once

#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace kvbe {

struct TraceSample {
    Trace trace;     // the kept requests in order, arrivals unchanged, block ids renumbered
    double rate = 1; // the share of subtrees kept (a subtree is kept when its hash is below it)
    std::uint64_t salt = 0;
    // A block that at least this many requests contain is trunk: its subtree is too large a
    // share of the trace to keep or drop whole.
    std::uint64_t trunkMinRequests = 0;
    std::uint64_t trunkBlocks = 0; // distinct trunk blocks in the whole trace
    std::uint64_t subtrees = 0, subtreesKept = 0;

    // The capacity (bytes) the sample's replay gets for `bytes` of the full one: the trunk's
    // blocks are whole in the sample, the rest is a `rate` share: rate · c + (1 − rate) ·
    // min(c, trunk bytes).
    double capacity(double bytes, double blockBytes) const;
};

// rate in (0, 1]; 1 keeps every request. A request's subtree is its first block that fewer than
// trunkMinRequests requests contain (a request with no block, or only trunk blocks, is a subtree
// of its own, hashed by its index). Requests that share a block outside the trunk share that
// subtree, so a prefix and its extensions are kept or dropped together.
TraceSample sampleTrace(const Trace& trace, double rate, std::uint64_t salt,
                        std::uint64_t trunkMinRequests = 0);

// The default trunk threshold for n requests: a thousandth of them, at least 64.
std::uint64_t defaultTrunkMinRequests(std::size_t requests);

// ------------------------------------------- fast by default, exact on request (every command)

// How a command (trace plan, sweep, capacity) answers a trace: in full, or from two samples.
// The same defaults everywhere: traces of exactBelow requests or more are sampled, at the rate
// that keeps about sampleRequests of them.
struct SampleMode {
    bool exact = false;                 // --exact: in full whatever the size
    std::size_t exactBelow = 200000;    // traces with fewer requests are answered in full
    double rate = 0;                    // the sampling rate; 0: sampleRequests / requests
    std::size_t sampleRequests = 62500; // with rate 0
};

// What a SampleMode decides for a trace of `requests` requests: the rate (1 in full) and, in
// full, why: "--exact", "below 200000 requests", "a sample would hold more than half".
struct SampleChoice {
    double rate = 1;
    std::string whyFull; // empty: sampled
    bool sampled() const { return whyFull.empty(); }
    // In full: "--exact: WHAT" or "WHAT (below 200000 requests)"; sampled: "".
    std::string fullText(const std::string& what) const;
};
SampleChoice chooseSampling(const SampleMode& mode, std::size_t requests);

// Sample `salt` of the trace as the replays see it (plan, capacity): its arrivals `rate` times
// closer together, so that the sample arrives as fast as the whole trace and each server, link
// and write queue sees the full trace's load per second at its own speed.
TraceSample sampleAtFullLoad(const Trace& trace, double rate, std::uint64_t salt);

// The configuration a sample is replayed with: the GPU's and every tier's capacity scaled by
// TraceSample::capacity (the trunk whole, the rest at the rate); the rest unchanged.
ReplayConfig sampledConfig(const ReplayConfig& config, const TraceSample& sample);

} // namespace kvbe
