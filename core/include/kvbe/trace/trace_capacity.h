// Capacity at a latency target (docs/workload-model.md, "Capacity at a latency target"): how far
// the load on a trace's prefill servers can grow under each caching rule before a TTFT statistic
// crosses its target, and how many servers each rule needs at a given load. Built on the replay
// with prefill servers (ReplayConfig::instances): scaling the load by S divides every arrival time
// by S, the requests, their order and the tiers' contents staying the same.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"

#include <array>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

// What a TTFT counts here, in one sentence for reports and the window.
extern const char* const kCapacityTtftNote;

// ------------------------------------------------------------------------ the latency target

struct LatencyTarget {
    bool mean = false;      // the mean TTFT, else a percentile
    double percentile = 99; // 0 < p < 100
    double seconds = 2;

    std::string statistic() const; // "p99", "p99.9", "mean"
    std::string text() const;      // "p99 ≤ 2 s", "mean ≤ 500 ms"
};

// "p99=2s", "p90=500ms", "p50=1.5s", "p99.9=3s", "mean=300ms": the statistic, '=' and a duration
// with its unit (s, ms, us or min). A value without a unit or a percentile outside 0–100 fails
// with a sentence.
Result<LatencyTarget> parseLatencyTarget(std::string_view text);

// The target's statistic of the TTFTs (which it reorders): their mean, or their percentile by
// kvbe/base/statistics.h's rule. 0 for none.
double latencyStatistic(const LatencyTarget& target, std::span<double> ttfts);

// -------------------------------------------------------------------------------- the load

// The requests arriving within the first `seconds` of the trace (arrival < seconds), in trace
// order, their block ids renumbered densely again.
Trace tracePrefix(const Trace& trace, double seconds);
// ... and of them the first `count` at most (trace replay and probe replay's --limit).
Trace traceHead(const Trace& trace, double seconds, std::size_t count);
// The same requests with blocks of `blockTokens` tokens (a trace scaled down for a small engine:
// probe replay's and trace replay's --block-tokens): each request keeps its blocks, its prompt
// scales with them (rounded, and at least one token in its last block).
Trace traceWithBlockTokens(const Trace& trace, std::uint32_t blockTokens);

// The trace's mean request rate: requests over the span of their arrivals (0 when they all
// arrive at once).
double traceRequestRate(const Trace& trace);

// Fails with a sentence naming `source` where the trace has no arrival times to scale: no
// requests, or every request arriving at the same instant.
Status checkArrivals(const Trace& trace, const std::string& source);

// ---------------------------------------------------------------------------- the searches

// The rules searched, in this order in every result.
inline constexpr std::array<std::string_view, 4> kCapacityRules = {"gpu-only", "always",
                                                                   "breakeven", "optimal"};

struct CapacityRequest {
    LatencyTarget target;
    // > 0: the largest load each rule holds on this many servers, and the curve.
    int instances = 0;
    // The fewest servers each rule needs at rateScale.
    bool serversNeeded = true;
    double rateScale = 1;
    int maxInstances = 1024; // the servers search stops here
    // The load search's range and precision (it stops once the load that fails is within this
    // share above the load that holds).
    double minRateScale = 1.0 / 1024, maxRateScale = 1024;
    double precision = 1e-3;
    int curvePoints = 25;
    int threads = 0; // 0: one per core
    // The rules whose servers are searched (kCapacityRules names); empty: every rule. The others'
    // RuleServers carry only their name.
    std::vector<std::string> serversRules;
    // Per rule (kCapacityRules order), a count the servers search starts from (a sample's
    // answer, kvbe/trace/trace_sampled.h); 0 or none: from 1. It checks that count and the one
    // below, and gallops away from them only where they do not bracket the answer, so the answer
    // is the same as from 1 (the statistic never rises with more servers), in fewer evaluations.
    std::vector<int> serversFrom;
    // Per rule, a load the load search starts from (a sample's answer); 0 or none: from S = 1.
    // The bracket then grows from it in steps of loadStep (squared at each step, up to 2)
    // instead of doubling, and is bisected to the same precision: the same guarantee as from 1.
    std::vector<double> loadFrom;
    double loadStep = 1.05;
};

struct LoadPoint {
    double rateScale = 0;
    double statistic = 0; // seconds
};

// The largest load one rule holds on the request's servers.
struct RuleLoadHeld {
    std::string rule;
    // Found: holds at rateScale, fails at failsAt (within the precision above it).
    // HoldsAtMaximum: holds at every load up to maxRateScale.
    // NeverHolds: fails even at minRateScale (arrivals at the same instant still queue).
    enum class Outcome { Found, HoldsAtMaximum, NeverHolds };
    Outcome outcome = Outcome::Found;
    double rateScale = 0;            // the largest load found to hold (0: none)
    double statistic = 0;            // the statistic there
    double failsAt = 0;              // the smallest load found to fail (0: none)
    double statisticFails = 0;       // the statistic there
    std::optional<double> vsGpuOnly; // rateScale / GPU-only's, where both were found
    // Every load evaluated for this rule (the search's and the curve's), ascending, and the
    // neighbouring pairs among them where the statistic falls as the load rises: bisection
    // assumes it rises, and a fall says where that does not hold.
    std::vector<LoadPoint> evaluated;
    std::vector<std::pair<LoadPoint, LoadPoint>> falls;
    // The highest load evaluated above failsAt where the target holds again: then the answer is
    // the first load found where it stops holding, not the only one.
    std::optional<LoadPoint> holdsAgain;
};

// The fewest servers one rule needs at the request's load.
struct RuleServers {
    std::string rule;
    std::optional<int> servers;              // none: no number up to maxInstances holds
    double statistic = 0;                    // with `servers`, or with maxInstances
    std::optional<double> statisticOneFewer; // with servers − 1
    // With a server for every request (nobody waits): no number of servers does better.
    double statisticUnlimited = 0;
};

struct CapacityResult {
    LatencyTarget target;
    std::size_t requests = 0;
    double durationS = 0;               // the span of the arrivals at S = 1
    double requestsPerS = 0;            // at S = 1
    int instances = 0;                  // of the load search (0: not run)
    std::vector<RuleLoadHeld> loadHeld; // kCapacityRules order
    // The statistic against the load on instances servers, every rule on one grid (log-spaced,
    // from below the lowest load held to above the highest).
    std::vector<double> curveRateScale;
    std::vector<std::vector<double>> curveStatistic; // [rule][point]
    bool serversSearched = false;
    double rateScale = 1; // of the servers search
    int maxInstances = 0;
    std::vector<RuleServers> servers; // kCapacityRules order
    // A fleet's servers search (a GPU cache each): the GPU's token-weighted hit ratio at each
    // count of servers it replayed at rateScale, by count.
    std::vector<std::pair<int, double>> fleetGpuHits;
    int passes = 0;      // replays of the cache run
    int evaluations = 0; // queueings on servers
    bool cancelled = false;

    const RuleLoadHeld* loadHeldOf(std::string_view rule) const;
    const RuleServers* serversOf(std::string_view rule) const;
};

// Both searches as the request asks. The trace must have arrival times (checkArrivals) and the
// config's instances and rateScale are ignored (the request's rule). Runs on request.threads
// threads; progress is called on the calling thread with the share done, and returning false
// cancels (the result then has cancelled = true).
Result<CapacityResult> traceCapacity(const Trace& trace, const CostModel& cost,
                                     const ReplayConfig& config, const CapacityRequest& request,
                                     const std::function<bool(double)>& progress = {});

// A result that says what the request asked of the trace (its target, requests, rate, span and
// searches), its searches' findings still empty: what both searches start from.
CapacityResult capacityResultFor(const Trace& trace, const CapacityRequest& request);

// Both searches on a fleet (config.fleet.enabled): every evaluation a whole replay of the
// fleet, as a server added adds a cache (trace_capacity_fleet.cpp). traceCapacity calls it.
Result<CapacityResult> fleetCapacity(const Trace& trace, const CostModel& cost,
                                     const ReplayConfig& config, const CapacityRequest& request,
                                     const std::function<bool(double)>& progress = {});

// The fewest servers each rule needs to hold the target at rateScale, for one configuration
// (kCapacityRules order): the servers search alone. Empty when progress cancelled it.
Result<std::vector<RuleServers>> serversNeeded(const Trace& trace, const CostModel& cost,
                                               const ReplayConfig& config,
                                               const LatencyTarget& target, double rateScale = 1,
                                               int maxInstances = 1024,
                                               const std::function<bool(double)>& progress = {});

} // namespace kvbe
