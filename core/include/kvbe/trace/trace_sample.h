// A spatial sample of a trace for fast planning (docs/workload-model.md, "Planning a large trace
// from a sample"): whole prefix subtrees kept or dropped together by a hash of their root, in the
// manner of SHARDS (Waldspurger et al., FAST '15), with the hot trunk above them (the blocks
// many requests share: system prompts) kept in every request that reaches it.
#pragma once

#include "kvbe/trace/trace.h"

#include <cstdint>

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

} // namespace kvbe
