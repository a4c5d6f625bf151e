// The numbers behind the explorer's Workload view: a trace replayed through the scenario's tiers
// (core's replayTrace and sweepCapacity, docs/workload-model.md), the settings the view's controls
// give, and the one-sentence answer. Qt types only for text; everything is computed by core.
#pragma once

#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/fleet_report.h"
#include "kvbe/trace/live_compare.h"
#include "kvbe/trace/replay_request.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_setup.h"
#include "kvbe/trace/trace_sim.h"

#include <QString>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

namespace kvbe {

// What the view's controls set. Capacities are per scenario tier, in bytes; 0 leaves the tier out
// of the replay. A missing entry takes defaultTierCapacity().
struct WorkloadSettings {
    std::optional<double> gpuCacheBytes; // default: 90 % of HBM less the weights (trace_setup.h)
    std::vector<double> tierCapacityBytes;
    EvictionPolicy policy = EvictionPolicy::Lru;
    Placement placement = Placement::WriteThrough;
    Admission admission = Admission::Optimal;
    // As kvbe-cli trace replay: blocks are readable once written (--no-write-queue).
    bool writeQueue = true;
    // Every offload tier's reads and writes share one link (needs writeQueue).
    bool sharedLinks = false;
    int instances = 0;
    // Above one server, a fleet (docs/workload-model.md, "The fleet"): the router as `--router`
    // takes it, servers per node, and per scenario tier whether it is pooled (else on each node).
    std::string router = "round-robin";
    int nodeServers = 1;
    std::vector<bool> pooled;
    // Store admission: the offload tiers take a block at its storeAfter-th sighting (1: every
    // block). The capacity sweep is exact only for 1, so there is none for more.
    int storeAfter = 1;
    // The tier whose capacity the capacity chart varies: 0 the GPU, k the scenario's tier k-1.
    int sweepTier = 1;
    // A live replay to compare with (the folder kvbe-cli probe replay --out wrote; empty: none)
    // and the engine's own cache to model on it, as trace replay --engine takes it.
    std::string liveDir;
    std::string engine;
    // Each request replayed on the server the live run sent it to (trace replay --as-routed).
    bool liveAsRouted = false;
    bool operator==(const WorkloadSettings&) const = default;
};

// 512 GiB for the scenario's first tier, 8 TiB for the second, the others left out: a DRAM tier
// and an NVMe tier, the question the view opens with.
double defaultTierCapacity(std::size_t scenarioTier);

// The scenario's tiers as the replay takes them (core's scenarioSimTiers), named as the charts
// and the scenario panel name them ("Host DRAM (PCIe 5.0)"), not by their preset's key.
std::vector<SimTier> workloadSimTiers(const Evaluation& e);

// The request the view's settings make (kvbe/trace/replay_request.h), for a scenario of
// `scenarioTiers` tiers: core assembles the replay from it (computeWorkload, the plan).
ReplayRequest workloadRequest(const WorkloadSettings& settings, std::size_t scenarioTiers);

// The capacity chart's grid: 40 points from 10^4 to 10^9 tokens (from a few blocks to more than any
// trace needs).
std::vector<double> workloadSweepTokens();

struct WorkloadTier {
    QString name;                // the preset's name, as the replay reports it
    std::optional<double> pStar; // break-even prefix, tokens (none: never pays)
    double shareAtOrAbove = 0;   // share of requests whose prompt is at least p*
};

struct WorkloadResult {
    std::shared_ptr<const Trace> trace;
    QString file;
    WorkloadSettings settings;
    std::shared_ptr<const Evaluation> eval;
    std::vector<WorkloadTier> scenarioTiers; // every tier of the scenario, for the histogram
    ReplayConfig config;
    std::vector<int> configTierOf;      // replay tier k (1…) → scenario tier index
    std::optional<ReplayResult> replay; // none for traces without block ids
    // Where the write queue dropped or delayed hits: the same replay with writes that keep up and
    // no prefill queue, as the one-pass capacity curve assumes (kvbe-cli trace replay's "hits
    // lost to the write backlog").
    std::optional<ReplayResult> writesKeptUp;
    RequestTimes times;
    // Every request's TTFT per rule (none, gpu-only, always, breakeven, optimal), ascending: with
    // prefill servers the queued times (wait + prefill). Sorted on the worker, for the chart.
    std::vector<std::pair<std::string, std::vector<double>>> ttftSorted;
    std::optional<SweepResult> sweep;
    std::size_t sweepVary = 0; // the sweep's varied tier: 0 GPU, k its k-th offload tier
    QString sweepNote;         // why there is no sweep, if there is none
    // A fleet (more than one server): every router on it (core's compareRouters, as kvbe-cli
    // trace replay --router compare), or why not.
    std::vector<RouterRun> routers;
    QString routersNote;
    // The live replay of settings.liveDir beside its prediction (core's compareLiveReplay, as
    // kvbe-cli trace replay --compare), or why not.
    std::optional<LiveComparison> live;
    QString liveNote;
    double replaySeconds = 0, sweepSeconds = 0;
    // Requests whose prompt is longer than the model's context: replayed as they are, but a
    // server would refuse them.
    std::size_t pastContext = 0;
    QString summary; // the one-sentence answer
    // Whether a tier is the bottleneck and what its bandwidth carries (core's saturationSentence).
    QString saturation;
    QString error; // the replay could not run: why
    // No HBM is left for KV by default (the weights fill the GPU, or its memory is unknown) and
    // none is set: the summary says what to do, and these tensor-parallel sizes would hold the
    // weights.
    bool gpuCacheMissing = false;
    std::vector<TensorParallelFit> tensorParallelFits;
};
using WorkloadPtr = std::shared_ptr<const WorkloadResult>;

// The largest trace whose routers the view compares with every replay (7 replays of it).
inline constexpr std::size_t kRouterCompareRequests = 200000;

// Share of requests whose prompt is at least `tokens` long, counted over the trace.
double shareAtOrAbove(const Trace& trace, double tokens);

// Replays the trace under the settings, sweeps the chosen tier's capacity and writes the summary.
// `cancel`, when set, stops the work early (the result then has cancelled replay and no sweep).
WorkloadResult computeWorkload(std::shared_ptr<const Trace> trace, const QString& file,
                               std::shared_ptr<const Evaluation> eval,
                               const WorkloadSettings& settings,
                               const std::atomic<bool>* cancel = nullptr);

// The answer in one sentence, from a replay: "With 512 GiB dram-pcie5 and 8 TiB nvme-gen5,
// 38.1 % of requests are faster than GPU-only caching, mean TTFT −25.5 % (285.8 → 212.9 ms,
// optimal admission); nvme-gen5 needs 4.20 GB/s of writes (p99 minute)."
QString workloadSummary(const WorkloadResult& w);

// What to do where the GPU leaves no HBM for KV, in the window's words: the tensor-parallel sizes
// that hold the weights, with the KV room each leaves, or the GPU slider.
QString gpuCacheAdvice(const Evaluation& e, const std::vector<TensorParallelFit>& fits);

// Capacity text for people, in binary units to three digits: "512 GiB", "61.1 GiB", "8 TiB".
QString capacityText(double bytes);

} // namespace kvbe
