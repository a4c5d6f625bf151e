// One request per command, filled by each front end and checked once here (issue 36): the CLI
// fills a ReplayRequest from its flags, the Workload view from its controls, and core assembles
// the replay's configuration (ReplayConfig) from it and the scenario. A failure names the field
// it is about (RequestField), so the CLI names its flag and the window its control without
// reading the sentence; the sentence says what the value was and what was expected.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/base/units.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace_sim.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

// The fields of the requests of trace replay and trace plan (kvbe/plan/plan_setup.h).
enum class RequestField {
    None, // no one field: the scenario, the trace, the prices' contents
    // the replay's
    GpuCache,
    Tiers,
    TierWrite,
    SharedLink,
    WriteBuffer,
    Instances,
    StoreAfter,
    RateScale,
    Router,
    NodeServers,
    Pooled,
    // the plan's
    Life,
    SloP99,
    Budget,
    DramSizes,
    DriveCounts,
    Drives,
    StoreAfterGrid,
    Placements,
    Links,
};
// "gpu cache", "store after", "life"…: the field in words, for tests and logs.
std::string_view toString(RequestField f);

struct RequestError {
    RequestField field = RequestField::None;
    std::string message;
    RequestError() = default;
    RequestError(RequestField f, std::string m) : field(f), message(std::move(m)) {}
    RequestError(Error e) : message(std::move(e.message)) {} // about no one field
};
template <class T> using RequestResult = Result<T, RequestError>;
using RequestStatus = Result<Ok, RequestError>;

// A tier's write bandwidth, by the tier's name in the replay.
struct TierWrite {
    std::string tier;
    double bytesPerSecond = 0;
};

struct ReplayRequest {
    std::optional<Capacity> gpuCache; // none: vLLM's default (defaultGpuCacheBytes)
    // Per scenario tier, in its order: its capacity; none (or no entry): unlimited.
    std::vector<std::optional<Capacity>> tierCapacities;
    // A tier given a capacity of 0 is left out of the replay (the window's sliders); otherwise
    // it is replayed with no room.
    bool leaveOutEmptyTiers = false;
    // The tiers named as the scenario names them ("Host DRAM (PCIe 5.0)", the window's charts),
    // not by their preset's key (the CLI's reports).
    bool tiersNamedAsScenario = false;
    EvictionPolicy policy = EvictionPolicy::Lru;
    Placement placement = Placement::WriteThrough;
    std::vector<TierWrite> tierWrites;      // over the scenario tier's write bandwidth
    std::vector<std::string> sharedLinks;   // tiers whose reads and writes share one link
    bool everyLinkShared = false;           // every offload tier's
    std::optional<double> writeBufferBytes; // every tier's; none: kDefaultWriteBufferBytes
    bool writeQueue = true;
    int instances = 0; // prefill servers; 0: no queueing; above 1: a fleet, a cache each
    // The fleet (above one server): the router as `--router` takes it (empty: round-robin),
    // servers per node, the tiers pooled for the whole fleet by name (the others are on each
    // node), and a pooled tier's aggregate read bandwidth by name.
    bool fleet = false; // instances > 1 are a fleet (else servers sharing one cache)
    std::string router;
    int nodeServers = 1;
    std::vector<std::string> pooled;
    std::vector<bool> pooledScenarioTiers; // ... or by scenario tier, in its order (the window)
    std::vector<TierWrite> poolBandwidths;
    int storeAfter = 1; // 1 to kMaxStoreAfter
    double rateScale = 1;
};

// The replay's configuration and, per replay tier, the scenario tier it is.
struct ReplaySetup {
    ReplayConfig config;
    std::vector<int> scenarioTierOf;
};

// Checks the request and assembles the replay for a trace of blockTokens-token blocks: the
// block's bytes, the GPU's capacity, the scenario's tiers with the capacities, write bandwidths,
// shared links and write buffers the request gives, the policy, placement, write queue, servers,
// store-after K and load. Fails naming the field.
RequestResult<ReplaySetup> replaySetup(const ReplayRequest& request, const Evaluation& e,
                                       std::uint32_t blockTokens);

// Applies the request's per-tier settings (write bandwidths, shared links, write buffers) to
// tiers built from the scenario elsewhere (the plan's drives); a name in tierWrites or
// sharedLinks that none of `tiers` has fails when `strict`.
RequestStatus applyTierSettings(const ReplayRequest& request, std::vector<SimTier>& tiers,
                                bool strict);

// A number as the sentence shows it: "0", "-1", "2.5", "1e+12".
std::string valueText(double v);

} // namespace kvbe
