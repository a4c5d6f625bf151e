// A fleet of prefill servers behind a router (docs/workload-model.md, "The fleet"): a GPU prefix
// cache on every server, offload tiers on each node or pooled, and the routers the field ships,
// each with its parameters as its project ships them (docs/routers.md).
#pragma once

#include "kvbe/base/result.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

enum class RouterKind { RoundRobin, Random, LeastLoaded, Session, Sglang, LlmD, Dynamo };

// A router and its parameters. Defaults are the shipped ones, at the versions docs/routers.md
// names; each is settable by its key in `--router NAME:key=value,...`.
struct RouterConfig {
    RouterKind kind = RouterKind::RoundRobin;
    std::uint64_t seed = 0; // random, and the random tie-breaks of llm-d and dynamo
    // session (vLLM production-stack vllm-stack-0.1.12, `session`): a consistent-hash ring of 160
    // points a server; the key is the request's first `key_blocks` blocks (a trace names no
    // session).
    int keyBlocks = 4;
    // sglang (sgl-model-gateway 0.3.2, `cache_aware`, the CLI's defaults).
    double cacheThreshold = 0.3;
    double balanceAbsThreshold = 64;
    double balanceRelThreshold = 1.5;
    double evictionIntervalS = 120;
    double maxTreeSize = 67108864; // characters a tenant
    double charsPerToken = 4;      // a block of B tokens is B × this characters of the tree
    // llm-d (llm-d-inference-scheduler v0.8.0, the precise prefix-cache profile).
    double prefixWeight = 2, queueWeight = 1, kvWeight = 1;
    double gpuTierWeight = 1.0, cpuTierWeight = 0.8, otherTierWeight = 1.0;
    double refreshS = 0.05; // the metrics' scrape period
    // dynamo (the KV router's cost with tier credits, docs/routers.md "Newer upstream main").
    double overlapScoreCredit = 1, prefillLoadScale = 1;
    double hostCacheHitWeight = 0.75, diskCacheHitWeight = 0.25;
    // llm-d and dynamo: the seconds from a block's change at a server to the router's index
    // seeing it (KV events in transit; BLIS uses 50 ms). 0: the index is the caches.
    double eventLagS = 0;

    // The text that names it back: "sglang", "sglang:cache_threshold=0.5".
    std::string text;
    // Set: every request goes to the server recorded for it (by request index; a live replay's
    // requests.jsonl, kvbe/trace/live_compare.h), whatever the router would pick; the router's
    // kind and text name the router that picked them. Each entry is a server of the fleet.
    std::shared_ptr<const std::vector<std::int32_t>> recorded;
};

// Every router name `--router` takes, in the order `--router compare` replays them.
const std::vector<std::string_view>& routerNames();
std::string_view toString(RouterKind k);
// Its --router text as given, else its name ("round-robin" for a default RouterConfig); with
// recorded routing, followed by " as routed live".
std::string routerText(const RouterConfig& r);
// "NAME" or "NAME:key=value,key=value"; an unknown name or key, or a value out of range, is a
// sentence naming what was expected.
Result<RouterConfig> parseRouter(std::string_view text);
// The keys a router takes, with their defaults, as "key=value" (help texts and docs).
std::vector<std::string> routerParameters(RouterKind k);

// The fleet: replayed when enabled and ReplayConfig::instances > 1 (one server is the replay as
// it always was). Each server has its own GPU cache of ReplayConfig::gpuCapacityBytes. Not
// enabled, instances > 1 are servers that share one cache and one queue: the capacity search and
// the plan still count servers so (docs/workload-model.md, "The fleet").
struct FleetConfig {
    bool enabled = false;
    RouterConfig router;
    int nodeServers = 1; // servers per node: a node-local tier is shared by its servers
    // Per offload tier (in ReplayConfig::tiers' order): pooled (one pool for the whole fleet, of
    // the tier's capacity, reached over each node's link: the tier's bandwidth and t_fixed) or
    // local (one per node, the tier's capacity each). Missing entries are local.
    std::vector<bool> pooled;
    // Per offload tier, pooled ones only: the pool's aggregate read bandwidth (bytes/s), shared
    // by every node's reads; 0: only each node's link limits them.
    std::vector<double> poolBps;
    // Per offload tier, pooled ones only: the write bandwidth of each node's link to the pool
    // (bytes/s). The pool takes writes at most at its nodes' links together (the nodes of the
    // replay's servers), and at its own write bandwidth where the tier has one; 0: no link limit.
    std::vector<double> poolLinkWriteBps;
};

inline constexpr int kMaxServers = 4096;

// The nodes `servers` servers take, `nodeServers` a node (a node holds at least one).
inline int fleetNodes(int servers, int nodeServers) {
    const int perNode = nodeServers > 1 ? nodeServers : 1;
    return (servers + perNode - 1) / perNode;
}

// What the router did (ReplayResult::fleet).
struct FleetReport {
    std::string router; // its --router text
    int servers = 0, nodes = 0;
    std::vector<std::uint64_t> requests; // per server
    std::vector<double> busyS; // per server: Σ prefill time under `always`, the load it routed by
    double requestSkew = 0;    // the busiest server's requests over the mean
    double busySkew = 0;       // ... busy time over the mean
    // Requests sent to a server whose GPU held fewer of their leading blocks than the best
    // server's did at their arrival (away from their best cache, for load or by design).
    std::uint64_t routedAway = 0;
    double routedAwayShare = 0;
    std::uint64_t indexBytes = 0; // the router's and the caches' index
};

} // namespace kvbe
