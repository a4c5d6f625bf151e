// What to buy for a trace (docs/workload-model.md, "Planning what to buy"): a grid of DRAM sizes,
// whole drives of NVMe drive presets and store-after K, plus GPU-only caching, each replayed; the
// capital cost, the TTFT, the drives' life and the GPU prefill hours saved of each; with a latency
// limit, the fewest prefill servers each needs to hold it (kvbe/trace/trace_capacity.h) and the
// GPUs that saves against GPU-only caching; the Pareto fronts of cost against mean TTFT and
// against GPU hours saved; and the one configuration that meets the life, latency and budget
// limits with the most value net of its cost over the life.
//
// planTrace runs on the calling thread and as many more as it is given (std::thread over the
// grid points); its progress callback, called on the calling thread only, cancels the plan by
// returning false, as replayTrace's does. Everything the CLI and the window show comes from here.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/scenario/prices.h"
#include "kvbe/trace/replay_request.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_endurance.h"
#include "kvbe/trace/trace_sim.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kvbe {

struct PlanLimits {
    // Every rated drive must last this long: years to rated endurance >= lifeYears. Also the
    // horizon over which a configuration's value is weighed against its cost.
    double lifeYears = 5;
    // p99 TTFT under the plan's admission rule, at most; also the target the servers each
    // configuration needs are counted at.
    std::optional<double> sloP99S;
    std::optional<double> budgetUsd; // capital cost, at most
};

struct PlanGrid {
    std::vector<double> dramBytes;    // DRAM tier sizes; 0: no DRAM tier
    std::vector<std::int64_t> drives; // whole drives of each drive preset; 0: no NVMe tier
    std::vector<int> storeAfter = {1, 2, 3};
    // Add drive counts (doubling, then the count itself) until the grid reaches the drives a
    // preset needs for bandwidth or for endurance (PlanDriveNeeds), up to kMaxPlanDrives.
    bool extendDrives = false;
};
inline constexpr std::int64_t kMaxPlanDrives = 1024;

struct PlanPoint;

// Everything a plan replays with. The GPU's capacity, the eviction policy, the placement, the
// write queue and the prefill servers come from `base` (its tiers are ignored); each point
// replays `base` with the DRAM tier at one size and one drive tier at one drive count: n drives
// striped, n times the capacity and n times one drive's read and write bandwidth. Where `base`
// is a fleet (base.isFleet(): a GPU cache per server behind a router), the tiers are on every
// node: each size and drive count is a node's, and each cost is for every node (planNodes).
struct PlanSetup {
    const Trace* trace = nullptr;
    const CostModel* cost = nullptr;
    ReplayConfig base;
    std::optional<SimTier> dram;     // the DRAM tier (none: the grid has no DRAM sizes)
    std::vector<SimTier> driveTiers; // one per NVMe drive preset, each with its drive rating
    Admission rule = Admission::Optimal;
    PriceTable prices;
    std::string gpuKey;      // the GPU preset, for its price per hour
    int gpusPerInstance = 1; // the tensor-parallel group: every one of its GPUs prefills
    PlanGrid grid;
    PlanLimits limits;
    // A fleet's plan: other routers, each replayed with GPU-only caching (a row each).
    std::vector<RouterConfig> otherRouters;
    // A fleet's plan: where its offload tiers go (docs/workload-model.md, "Pooled tiers in a
    // plan"). Local: every tier on each node. Each link (a network tier preset, read as the
    // scenario reads its tiers: its bandwidth and t_fixed are one node's link) adds the grid
    // again with the configuration's last tier in one pool for the fleet, reached over that link
    // from every node: its drives (any DRAM stays on each node), or its DRAM where it has no
    // drives. The pool holds the nodes' sizes together (a size or count times the nodes).
    bool placeLocal = true;
    std::vector<SimTier> links;
    int threads = 0;       // 0: one per hardware thread
    int maxServers = 1024; // the servers search stops here

    // Fast mode (kvbe/plan/plan_sample.h) sets these; a plain plan leaves them.
    // The trace is a spatial sample (kvbe/trace/trace_sample.h) at this rate, its arrival times
    // multiplied by the rate (it arrives as fast as the whole trace): the offload tiers'
    // capacities are sampleCapacity's, their bandwidths and write buffers are the full ones,
    // the writes and blocks stored are divided by the rate, and the GPU-hours saved and the
    // drive life are reckoned over the whole trace's span (the replay's divided by the rate). No
    // servers are counted.
    double sampleRate = 1;
    std::function<double(double)> sampleCapacity; // full capacity (bytes) -> the sample's
    // Set: only the points it selects are replayed (and the drive-count extension's points);
    // the others are taken from `given` (same grid, same order) and marked sampled.
    // index: the point's place in grid order (shards slice by it).
    std::function<bool(const PlanPoint&, std::size_t index)> select;
    const std::vector<PlanPoint>* given = nullptr;
};

// Per drive preset, from its largest-count configuration without DRAM storing every block (the
// most hits, so the most reads, and the most writes): the whole drives that carry the busiest
// minute's reads and writes, and those that last the life limit at its write rate.
struct PlanDriveNeeds {
    std::string drive;
    std::int64_t atDrives = 0;                  // the configuration they are read from
    double askedReadBps = 0;                    // the reads its hits ask in the busiest minute
    double writeBps = 0;                        // the writes offered in the busiest minute
    double driveReadBps = 0, driveWriteBps = 0; // one drive's
    std::int64_t forBandwidth = 0;
    std::optional<std::int64_t> forEndurance; // none: the drive has no full rating
};

struct PlanTier {
    std::string name;
    double capacityBytes = 0;
    std::uint64_t blocksWritten = 0;
    double bytesStored = 0;
    TierEndurance endurance; // DRAM: no rating
};

struct PlanPoint {
    // A fleet's plan: the router it is replayed behind (its --router text; "" otherwise), and
    // whether that is another router than the fleet's (--routers): GPU-only caching only, valued
    // by the GPU-hours its router saves against the fleet's router, so that a router with no new
    // hardware competes with every purchase.
    std::string router;
    bool otherRouter = false;
    // The sizes: a node's, but a pooled tier's (pooled()) the pool's.
    double dramBytes = 0;
    std::string drive; // the drive preset; "" without an NVMe tier
    std::int64_t drives = 0;
    int storeAfter = 1;
    // Pooled: the link preset every node reaches the pool by (PlanSetup::links); "": local.
    std::string link;
    std::vector<PlanTier> tiers; // the offload tiers, DRAM first
    double dramUsd = 0, drivesUsd = 0, linksUsd = 0, capexUsd = 0;
    // The nodes its costs are for (a fleet's; 0 otherwise): those of its searched count where its
    // servers were counted, else those of the servers given. A local tier is bought for each, a
    // pool once with a link on each.
    int nodes = 0;
    double ttftMeanS = 0, ttftP99S = 0;
    double hitsTokenWeighted = 0;
    // (GPU prefill seconds saved under the rule − under GPU-only caching) × 86,400 / the trace's
    // duration / 3,600 × the GPUs of the instance.
    double gpuHoursSavedPerDay = 0;
    // The GPU-hours a day GPU-only caching saves in its replay against no caching (the same
    // scaling): another router's value is its figure less the fleet's router's.
    double gpuOnlyHoursPerDay = 0;
    // With a latency limit: the fewest prefill servers (each gpusPerInstance GPUs) that hold p99
    // TTFT within it under the rule at the plan's load, and (GPU-only caching's − these) × the
    // GPUs of a server. None without a limit, or where no count up to maxServers holds it (for
    // this point or for GPU-only caching): serversNote says which.
    std::optional<int> serversAtSlo;
    std::optional<int> gpusSaved;
    std::string serversNote;
    // The GPUs saved × 24 hours × 365 / 12 days × the GPU's price per hour where gpusSaved is
    // known; otherwise the GPU-hours saved a day × 365 / 12 days × the price per hour.
    double valuePerMonthUsd = 0;
    bool valueFromGpusSaved = false;
    // A sampled point where the servers were counted: its servers were not (it was not replayed
    // in full), so neither are its GPUs saved, its value, payback and net (0 and none here, "not
    // computed" in every report), nor whether it meets the latency limit by servers.
    bool valueNotComputed = false;
    // Whether it holds the latency limit is its searched count's, which a sampled point has not
    // (PlanResult::latencyByCount): its limits are not computed, neither met nor failed.
    bool latencyNotComputed = false;
    std::optional<double> paybackMonths;     // capex / value per month; none when it never pays
    double netUsdOverLife = 0;               // value per month × 12 × life − capex
    std::optional<double> shortestLifeYears; // the shortest years to rated endurance of its drives
    // With K > 1: the same sizes storing every block (the grid's K = 1 point, where it has one),
    // as a serving stack without store admission would run them: its shortest drive life.
    std::optional<double> lifeIfEveryBlockStored;
    std::vector<std::string> fails; // the limits it fails, each with by how much
    // Without a latency limit: its p99 TTFT is over the best GPU-only row's (a router alone), the
    // bar a recommendation must meet (one of `fails`).
    bool overP99Bar = false;
    bool onTtftFront = false, onGpuHoursFront = false;
    // An offload tier is saturated under the rule (kvbe/trace/trace_saturation.h): its hits ask
    // more reads than its bandwidth in some minute, or the rule declined hits for the backlog.
    bool bandwidthBound = false;
    std::string saturation; // the replay's saturation sentence, where bandwidth-bound
    // With drives: the whole drives this configuration's busiest minute needs for its reads and
    // writes, and those its write rate needs to last the life limit.
    std::optional<std::int64_t> drivesForBandwidth, drivesForEndurance;
    double askedReadBps = 0, writeRateMaxBps = 0; // the drive tier's busiest minute
    // Its figures are a sample's estimate (fast mode), not a full replay; never recommended.
    bool sampled = false;
    bool offload() const { return !tiers.empty(); }
    bool pooled() const { return !link.empty(); }
    // Pooled, the tier in the pool: its drives, or its DRAM where it has none.
    bool dramPooled() const { return pooled() && drives <= 0; }
};

// How a plan was computed (kvbe/plan/plan_sample.h): every configuration replayed in full, or
// the grid replayed on two independent samples and a shortlist replayed in full.
struct PlanSampling {
    bool sampled = false;
    std::string reason; // why this mode ran ("--exact", "below N requests", ...)
    double rate = 1;
    std::uint64_t sampleRequests[2] = {0, 0}; // the two samples' requests
    std::uint64_t trunkBlocks = 0, trunkMinRequests = 0;
    // The error bound: the largest difference between the two samples' estimates over the grid
    // (hit ratio in points of a share, the others relative).
    double hitsError = 0, ttftMeanError = 0, ttftP99Error = 0, gpuHoursError = 0, lifeError = 0;
    std::size_t shortlisted = 0; // configurations replayed in full (GPU-only caching included)
    double sampleSeconds = 0, fullSeconds = 0;
};

// A point's place in the grid: DRAM size, drive preset (-1: no NVMe tier), drive count and K
// (indices; -1 for GPU-only caching), to find its neighbours.
struct PlanCoord {
    int dram = -1, drive = -1, count = -1, k = -1;
    int link = -1; // the pool's link (PlanSetup::links); -1: local
};

struct PlanResult {
    std::vector<PlanPoint> points;  // in grid order; points[0] is GPU-only caching
    std::vector<PlanCoord> coords;  // each point's place in the grid
    std::vector<std::size_t> front; // indices of the points on either front, by capital cost
    std::optional<std::size_t> recommended;
    std::string why;   // why the recommended point beat its neighbours
    std::string unmet; // when no point meets the limits: which limit fails and by how much
    // p99 TTFT with every prefix hit free on the GPU, of the servers given, or with a latency
    // limit of any count (one cache, no wait): no plan beats it.
    double floorP99S = 0;
    // A fleet plan (PlanSetup::base a fleet): its servers, the nodes its tiers are bought for,
    // and its router's --router text; 0 and "" otherwise.
    int fleetServers = 0, fleetNodes = 0;
    std::string fleetRouter;
    // With a latency limit: the servers were counted, and the fewest GPU-only caching needs.
    bool serversSearched = false;
    // The latency limit is held by a point's searched count, not its p99 at the servers given
    // (those queue: a fleet, or prefill servers), so a sampled point's verdict is not computed.
    bool latencyByCount = false;
    std::optional<int> gpuOnlyServers;
    double durationS = 0;             // the trace's
    std::vector<std::int64_t> drives; // the drive counts replayed (the grid's, extended)
    std::vector<PlanDriveNeeds> driveNeeds;
    std::size_t replays = 0;
    double seconds = 0; // wall time
    int threads = 0;
    bool cancelled = false;
    PlanSampling sampling;
};

// The nodes a plan buys its tiers for: a fleet's (its servers over the servers a node holds,
// rounded up), else 1.
int planNodes(const PlanSetup& s);

// Fails with a sentence for limits no configuration could meet (life not above 0, a p99 limit
// below floorP99S, a negative budget), naming the field (RequestField::Life, SloP99, Budget),
// and for a missing price (the GPU's, DRAM's where the grid has DRAM, a drive preset's).
RequestResult<PlanResult> planTrace(const PlanSetup& setup,
                                    const std::function<bool(double)>& progress = {});

// The last step of a plan, from its points (grid order, res.coords their places; res's
// durationS, serversSearched, gpuOnlyServers set): the value, the limits, the fronts, the
// recommendation and its sentence. grid: the grid with the drive counts replayed. Merging shards
// (kvbe/plan/plan_shard.h) calls it with the shards' points.
void finishPlan(const PlanSetup& s, const PlanGrid& grid, std::vector<PlanPoint> points,
                PlanResult& res);

// One step apart in one coordinate of the grid (DRAM size, drive count or K), or the same sizes
// with the other drive; GPU-only caching neighbours the single smallest tiers at the first K.
bool planNeighbours(const PlanGrid& grid, const PlanCoord& a, const PlanCoord& b);

// The defaults: DRAM 0, 128, 256, 512, 1024 and 2048 GiB; 0, 1, 2, 4 and 8 drives, extended to
// what bandwidth and endurance need.
PlanGrid defaultPlanGrid();

// "512 GiB DRAM + 2 x nvme-gen5-mu, store at the 2nd sighting", "4 x nvme-gen5, store every
// block", "GPU-only caching": an offload tier's store-after is always named, so that the same
// sizes storing every block and storing at a later sighting never read alike.
std::string describePlanPoint(const PlanPoint& p);

// The servers a plan's configurations are replayed on, as trace plan's `fleet` line and the
// report say it: a fleet's ("8 servers on 4 nodes (2 a node) behind sglang, a GPU cache each:
// every DRAM size and drive count is a node's, every cost is for the 4 nodes"), servers sharing
// one cache, or one server; "" without queueing.
std::string planFleetText(const PlanSetup& s, const PlanResult& r);
// Point p as a purchase: describePlanPoint's words, for a fleet's offload tiers bought on each of
// its nodes (PlanPoint::nodes) "on each of the 4 nodes, 1 x nvme-gen5, store every block".
std::string planPurchaseText(const PlanPoint& p);

} // namespace kvbe
