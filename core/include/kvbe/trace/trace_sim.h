// A trace replayed through a tiered prefix cache (docs/workload-model.md): hits per tier, the
// load-or-recompute admission rules, TTFT, GPU time saved and the writes each tier takes.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/scenario/hardware.h"
#include "kvbe/trace/fleet.h"
#include "kvbe/trace/trace.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvbe {

// LRU: the least recently touched block goes. S3-FIFO (Yang et al., SOSP'23): a small FIFO
// (10 % of the tier) for new blocks, a main FIFO with 2-bit frequency counters and reinsertion,
// and a ghost FIFO of recently evicted ids that sends a returning block straight to main.
// Both evict plain blocks, not leaves first: a parent can go before its child, which leaves the
// child unreachable (a hit needs the whole run of leading blocks).
enum class EvictionPolicy { Lru, S3Fifo };
// WriteThrough: every block a request uses is made resident in every tier (computed blocks
// are stored everywhere, and a block loaded from a slower tier is written to the faster ones
// it is missing from: an inclusive hierarchy). Cascade: a block enters the GPU and moves down
// one tier when evicted from the one above; a hit moves it back up to the GPU (exclusive).
enum class Placement { WriteThrough, Cascade };
enum class Admission { Always, Breakeven, Optimal };

std::string_view toString(EvictionPolicy p);
std::string_view toString(Placement p);
std::string_view toString(Admission a);
std::optional<EvictionPolicy> parseEvictionPolicy(std::string_view s);
std::optional<Placement> parsePlacement(std::string_view s);
std::optional<Admission> parseAdmission(std::string_view s);

inline constexpr double kUnlimited = std::numeric_limits<double>::infinity();
// The bytes of writes a tier may have queued before the oldest pending ones are dropped: a
// pinned staging buffer of a few GiB, as offload connectors keep (LMCache's CPU buffer defaults
// to 5 GB). `kvbe-cli trace replay --write-buffer` sets it.
inline constexpr double kDefaultWriteBufferBytes = 8.0 * 1024 * 1024 * 1024;

struct SimTier {
    std::string name;
    double capacityBytes = kUnlimited;
    TierPath path;       // read bandwidth and t_fixed as the cost model sees them
    double writeBps = 0; // 0: unknown (write needs are reported, not compared, and not queued)
    // The write queue's bound (ReplayConfig::writeQueue).
    double writeBufferBytes = kDefaultWriteBufferBytes;
    // Reads and writes share one link (one connector, one PCIe path): with the write queue on, a
    // load from the tier holds the link for its transfer time (tLoad less t_fixed) and the tier's
    // writes wait meanwhile (reads first: they are on the request's critical path; the writes get
    // the link's time that is left). Off: separate read and write paths, as before.
    bool sharedLink = false;
    // The drives the tier is built of, for its endurance (kvbe/trace/trace_endurance.h); no
    // rating for DRAM.
    DriveRating drive{};
};

struct ReplayConfig {
    double gpuCapacityBytes = kUnlimited; // HBM left for KV
    std::vector<SimTier> tiers;           // offload tiers, fastest first
    EvictionPolicy policy = EvictionPolicy::Lru;
    Placement placement = Placement::WriteThrough;
    // Bytes one block takes in every tier: B · kv_bytes_per_token (plus any state snapshot).
    double blockBytes = 0;
    // Model each offload tier's write queue (tiers with writeBps > 0): writes are queued at the
    // request's arrival and drained at writeBps in trace time; a block is readable from the tier
    // only once its write has completed, and a queue longer than writeBufferBytes drops its
    // oldest pending write (that copy is never stored: it is not readable until written again).
    bool writeQueue = false;
    // Prefill servers fed first-come-first-served in arrival order (0: no queueing, of servers
    // or of links). A request's load starts at its arrival, so the part of it shorter than the
    // wait is hidden, and each tier's link serves the loads one after the other in arrival order
    // (FIFO): a load starts when the loads ahead of it have finished. `optimal` then decides each
    // request at its arrival from the wait for a server and the loads already queued on each
    // link (docs/workload-model.md, "Admission under load").
    // With more than one and fleet.enabled, a fleet (docs/workload-model.md, "The fleet"): each
    // server has its own GPU cache of gpuCapacityBytes and its own queue, the router
    // (fleet.router) sends each request to one, and each offload tier is on every node or pooled.
    int instances = 0;
    FleetConfig fleet;
    // Each server is llama.cpp's llama-server with one slot (docs/trace.md, "Replaying against
    // live servers"): the slot holds its last prompt (the GPU tier), and a host-RAM prompt cache
    // of cacheRamBytes (0: none) holds whole prompts, first in first out, read as the first
    // offload tier. Replaces the GPU's LRU and that tier's; the servers are a fleet (of one, or
    // more) with fleet.enabled.
    struct LlamaCpp {
        double cacheRamBytes = 0;
        double slotSimilarity = 0.1; // --slot-prompt-similarity, llama.cpp's default
    };
    std::optional<LlamaCpp> llamaCpp;
    // The servers are a fleet: more than one, fleet enabled (or llama.cpp's servers).
    bool isFleet() const {
        return fleet.enabled && (instances > 1 || (llamaCpp && instances >= 1));
    }
    // Store admission: a block is written to the offload tiers only from its storeAfter-th
    // sighting on (every request that contains it is a sighting, hits included), and is
    // readable there from the next request on. 1 stores every block (write-all). The GPU is not
    // gated: it holds what it computed. Under cascade placement a block evicted from the GPU is
    // demoted only once it has been seen storeAfter times. 1 to kMaxStoreAfter.
    int storeAfter = 1;
    // The load: every arrival time divided by this (2: twice the request rate, the same requests
    // in the same order). The tiers' contents do not change with it; what depends on time does
    // (the write queues drain in the scaled time, the servers queue in it, write rates count it).
    double rateScale = 1;
    // The rules whose TTFTs the result reports (none, gpu-only, always, breakeven, optimal, by
    // name; ReplayResult::rules lists only these); empty: every rule. Each keeps 8 bytes a request
    // while the trace replays, 80 MB at 10^7 requests: a plan asks for the two it reads. With
    // instances > 0, or per-request times asked for, every rule is kept.
    std::vector<std::string> reportRules;
};
inline constexpr int kMaxStoreAfter = 255;
inline constexpr std::size_t kMaxLinkBins = 1440;
// "1st sighting", "2nd sighting", "11th sighting": store admission at K, for reports.
std::string sightingText(int k);

struct HitRatios {
    double tokenWeighted = 0; // Σ tokens from the tier / Σ N
    double blockWeighted = 0; // Σ blocks from the tier / Σ m
    double perRequest = 0;    // mean over requests of tokens from the tier / N
};

struct TtftStats {
    double mean = 0, p50 = 0, p90 = 0, p99 = 0;
    double totalS = 0;
};

// One link's time over the trace (docs/workload-model.md, "Saturation"): busy seconds in bins of
// ReplayResult::binS from the first arrival, and their shares.
struct LinkUse {
    double busyS = 0;     // Σ busy time (for offered demand: the transfer time asked)
    double meanShare = 0; // busyS over the trace's span (the last arrival, or the last transfer)
    double peakShare = 0; // the busiest bin's busy time over its length
    std::uint64_t binsOver = 0; // bins whose share is above 1 (offered demand only)
    std::vector<float> share;   // per bin
};

// What one rule took from one offload tier.
struct RuleTierUse {
    double tokensOffered = 0; // the hit runs' tokens read from the tier (TierReport::hits)
    double tokensServed = 0;  // ... of them this rule loaded
    // The tier's read link under this rule: with prefill servers (ReplayConfig::instances > 0)
    // the busy share of its FIFO; without them loads are not queued and this is empty.
    LinkUse read;
    // The load-aware rule (`optimal` with prefill servers): blocks (and requests) it left
    // unloaded that it would have loaded with the link idle and no wait (the static cut).
    std::uint64_t blocksDeclinedForBacklog = 0;
    std::uint64_t requestsDeclinedForBacklog = 0;
};

struct RuleResult {
    std::string name; // none, gpu-only, always, breakeven, optimal
    TtftStats ttft;
    double gainShare = 0; // share of requests faster than under GPU-only caching
    double lossShare = 0; // share slower than GPU-only caching
    // Σ recompute time avoided against no caching, over the requests whose loads beat
    // recomputing everything (their TTFT, at the state they met, below recomputing's).
    double gpuSecondsSaved = 0;
    std::uint64_t declinedRequests = 0; // requests that loaded less than their hit run
    std::uint64_t declinedBlocks = 0;
    double declinedLoadS = 0; // what the declined loads would have taken
    double declinedNetS = 0; // Σ (t_always − t_rule) over those requests: the time declining saved
    // With instances > 0 (ttft above is then wait + service):
    double meanWaitS = 0;   // mean time from arrival to a free server
    double hiddenLoadS = 0; // Σ load time hidden by the wait (the preload gain)
    // Σ load time added by the loads ahead of it on the tiers' links (FIFO)
    double sharedLoadS = 0;
    std::vector<RuleTierUse> tiers; // GPU first (its entry empty)
};

struct TierReport {
    std::string name;
    double capacityBytes = kUnlimited;
    std::uint64_t capacityBlocks = 0;  // UINT64_MAX when unlimited
    std::optional<double> pStarTokens; // break-even prefix of the tier (none for the GPU)
    HitRatios hits;                    // blocks found in this tier (the fastest holding them)
    std::uint64_t blocksWritten = 0;   // writes offered to the tier (each block that entered it)
    double bytesWritten = 0;
    // Writes that reached the tier: those offered, less the ones a full write queue dropped and
    // the ones that joined a write of the same block still queued (without a write queue, all).
    std::uint64_t blocksStored = 0;
    double bytesStored = 0;
    double writeBps = 0; // the tier's write bandwidth (0: unknown)
    double writeRateP50 = 0, writeRateP99 = 0, writeRateMax = 0; // over 1-minute windows, bytes/s
    std::uint64_t windowsOverWriteBw = 0;
    // The write queue (ReplayConfig::writeQueue, tiers with a write bandwidth):
    std::uint64_t writesDropped = 0; // queued writes dropped from a full queue: never stored
    // Lookups that found this tier the fastest holder with its write still queued:
    std::uint64_t lookupsLate = 0;
    std::uint64_t lookupsDropped = 0; // ... and its copy dropped (never written)
    double maxBacklogS = 0;           // the longest the queue got, in seconds of writing
    // Offload tiers: the read bandwidth (the cost model's path), and the reads the hit runs ask
    // of it, each request's whole run from the tier counted in the bin of its arrival (the
    // share of the bin's time the transfers take at the whole bandwidth: above 1 the tier
    // cannot carry them). Rule-independent: what `always` would load.
    double readBps = 0;
    LinkUse readOffered;
    // The write path's busy share: with a write queue the time it spent writing, otherwise the
    // writes offered at writeBps (which may exceed 1). Empty without a write bandwidth.
    LinkUse write;
    // In a fleet: the copies of the tier (a GPU cache per server, a local tier per node, one
    // pool); capacityBytes and capacityBlocks are each copy's, the hits and writes all of them.
    std::uint32_t copies = 1;
    bool pooled = false;
};

struct ReplayResult {
    std::uint64_t requests = 0;
    std::uint64_t tokens = 0;
    std::uint64_t blocks = 0;
    std::uint64_t distinctBlocks = 0;
    std::uint64_t lookups = 0; // block lookups performed
    std::uint64_t windows = 0; // 1-minute windows of trace time
    // The bins of LinkUse: 1 minute, or a whole number of minutes that keeps them at most
    // kMaxLinkBins over the trace.
    double binS = 60;
    double durationS = 0;
    HitRatios anyTier;                // the whole hit run, wherever it is
    std::vector<TierReport> tiers;    // GPU first
    std::vector<RuleResult> rules;    // none, gpu-only, always, breakeven, optimal
    std::uint64_t stateBytes = 0;     // the simulator's cache state
    std::optional<FleetReport> fleet; // with instances > 1
    bool cancelled = false;

    const RuleResult* rule(std::string_view name) const;
};

// Per-request times, for tests and charts (filled when asked for): the prefill time under each
// rule without queueing, and with ReplayConfig::instances > 0 the TTFT with queueing.
struct RequestTimes {
    std::vector<double> none, gpuOnly, always, breakeven, optimal;
    std::vector<double> queuedNone, queuedGpuOnly, queuedAlways, queuedBreakeven, queuedOptimal;
    std::vector<std::uint32_t> hitBlocks; // the hit run, any tier
    // Each hit run's blocks in turn (Σ hitBlocks of them): the tier each was read from (0: GPU).
    std::vector<std::uint8_t> hitTiers;
    // The cut `optimal` made: how many of the run's blocks it loaded (with prefill servers the
    // load-aware rule's, decided at arrival; without them the static one's).
    std::vector<std::uint32_t> optimalCut;
};

// `c` with every prefix hit free on the GPU: an unlimited GPU cache, no offload tier, no write
// queue, GPU-only caching's figures alone. No configuration of `c`'s caches beats it (a plan's
// floor, and a fleet's in the capacity search).
inline ReplayConfig everyHitFree(ReplayConfig c) {
    c.tiers.clear();
    c.gpuCapacityBytes = kUnlimited;
    c.writeQueue = false;
    c.reportRules = {"gpu-only"};
    return c;
}
// everyHitFree with no wait either: one cache for all, no prefill servers, no fleet. No count of
// servers, router or caches beats it (the floor of a search over server counts: trace capacity's,
// and a plan's with a latency limit).
inline ReplayConfig everyHitFreeNoWait(ReplayConfig c) {
    c = everyHitFree(std::move(c));
    c.instances = 0;
    c.fleet.enabled = false;
    return c;
}

Result<ReplayResult> replayTrace(const Trace& trace, const CostModel& cost,
                                 const ReplayConfig& config, RequestTimes* perRequest = nullptr,
                                 const std::function<bool(double)>& progress = {});

// One pass for every capacity of one tier (LRU, write-through: inclusion holds, so stack
// distances give every capacity's hit run at once). varyTier 0 is the GPU, 1… the offload tiers;
// the other tiers keep their capacities. With no offload tiers this is the single-cache curve.
struct CapacityPoint {
    double capacityTokens = 0;
    double capacityBytes = 0;
    HitRatios anyTier;
    std::vector<HitRatios> tiers; // GPU first
    double meanTtftNone = 0, meanTtftGpuOnly = 0, meanTtftAlways = 0;
    double ttftSavedVsNone = 0; // 1 − mean(always) / mean(none)
    double ttftSavedVsGpuOnly = 0;
};

struct SweepResult {
    std::string tierName;
    std::vector<CapacityPoint> points;
    std::uint64_t accesses = 0;
};

// capacitiesTokens ascending. Fails for cascade placement or S3-FIFO (replay per point there).
Result<SweepResult> sweepCapacity(const Trace& trace, const CostModel& cost,
                                  const ReplayConfig& config, std::size_t varyTier,
                                  const std::vector<double>& capacitiesTokens,
                                  const std::function<bool(double)>& progress = {});

// n points from lo to hi, equally spaced in log.
std::vector<double> logGrid(double lo, double hi, int n);

} // namespace kvbe
