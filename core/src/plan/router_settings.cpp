#include "router_settings.h"

#include "kvbe/trace/fleet.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kvbe::plan_detail {

namespace {

// Where each router's keys were checked (docs/serving-settings.md, "Routers", names the files;
// docs/measurements.md, "Sources read", the commits).
constexpr const char* kSglangChecked =
    "sgl-model-gateway 0.3.2 (PyPI sglang-router 0.3.2): src/main.rs (the CLI's flags and "
    "defaults)";
constexpr const char* kLlmdChecked =
    "llm-d-inference-scheduler v0.8.0: deploy/config/epp-precise-prefix-cache-config.yaml and "
    "the precise-prefix-cache-scorer's parameters; llm-d-kv-cache v0.7.1: pkg/kvcache/indexer.go "
    "and backend.go (kvCacheBackendConfigs); gateway-api-inference-extension v1.5.0: "
    "pkg/epp/server/options.go (--refresh-metrics-interval)";
constexpr const char* kDynamoChecked =
    "Dynamo 1.3.0's development branch, with the tier credits: "
    "components/src/dynamo/common/configuration/groups/kv_router_args.py and router_args.py "
    "(--router-mode)";
constexpr const char* kStackChecked =
    "vLLM production-stack vllm-stack-0.1.12: src/vllm_router/parsers/parser.py "
    "(--routing-logic, --session-key, --static-backends) and routers/routing_logic.py "
    "(SessionRouter)";
// vLLM's default GPU block size in tokens: llm-d's blockSize must equal the engine's.
constexpr int kEngineBlockTokens = 16;
// production-stack's session router reads the session id from this request header (kvbe's
// choice of name: the router takes any).
constexpr const char* kSessionHeader = "x-session-id";

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}

// Each router stack, in --emit's order, with the routers of kvbe it ships as its own policy:
// one table for the settings, the refusals and the --emit a refusal names.
struct StackRouters {
    ServingStack stack;
    const char* name;
    std::vector<RouterKind> kinds;
};
const std::vector<StackRouters>& stackRouters() {
    using K = RouterKind;
    static const std::vector<StackRouters> all = {
        {ServingStack::Sglang, "sglang", {K::Sglang, K::RoundRobin, K::Random}},
        {ServingStack::LlmD, "llm-d", {K::LlmD}},
        {ServingStack::Dynamo, "dynamo", {K::Dynamo, K::RoundRobin, K::Random}},
        {ServingStack::ProductionStack, "production-stack", {K::Session, K::RoundRobin}},
    };
    return all;
}

// "a", "a or b", "a, b or c".
std::string orList(const std::vector<std::string>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i)
        out += (i ? (i + 1 == items.size() ? " or " : ", ") : "") + items[i];
    return out;
}

const StackRouters& stackOf(ServingStack stack) {
    for (const auto& e : stackRouters())
        if (e.stack == stack) return e;
    return stackRouters().front();
}

// The --emit that writes a router of this kind as its own project ships it, if any.
std::string emitFor(RouterKind k) {
    std::vector<std::string> names;
    for (const auto& e : stackRouters())
        if (std::find(e.kinds.begin(), e.kinds.end(), k) != e.kinds.end())
            names.emplace_back(e.name);
    return names.empty() ? "no --emit" : "--emit " + orList(names);
}

Error notShipped(const std::string& project, const RouterConfig& r) {
    if (r.kind == RouterKind::LeastLoaded)
        return Error{"the recommended configuration's router is " + routerText(r) +
                     " (the fewest outstanding requests), which no router read for "
                     "docs/routers.md is known to ship as its own policy (Dynamo's --router-mode "
                     "least-loaded exists, but what it counts as load was not read), so there "
                     "are no settings to write for it"};
    return Error{"the recommended configuration's router is " + routerText(r) + ", which " +
                 project + " does not ship: give " + emitFor(r.kind)};
}

// "# ..." lines that every router's settings open with.
std::string header(const std::string& what, const PlanPoint& p, const PlanSetup& s,
                   const char* checked) {
    const int servers = p.serversAtSlo.value_or(s.base.instances);
    const int nodes = fleetNodes(servers, s.base.fleet.nodeServers);
    std::string out = "# " + what + " for: " + describePlanPoint(p) + " (kvbe-cli trace plan)\n" +
                      "# Keys checked against " + checked + ".\n" +
                      "# The fleet: " + std::to_string(servers) + " prefill server" +
                      (servers == 1 ? "" : "s") + " on " + std::to_string(nodes) + " node" +
                      (nodes == 1 ? "" : "s") +
                      (p.serversAtSlo ? " (the servers that hold the plan's p99 limit)" : "") +
                      ", behind " + p.router + ".\n";
    if (s.base.fleet.router.eventLagS > 0)
        out += "# The plan assumed the router sees the servers' KV events " +
               number(s.base.fleet.router.eventLagS * 1000) +
               " ms late: that is the network's and the engines', not a setting.\n";
    return out;
}

Result<std::string> sglang(const PlanPoint& p, const PlanSetup& s, const RouterConfig& r) {
    const std::string head = header("SGLang router (smg launch)", p, s, kSglangChecked) +
                             "# Add the servers: --worker-urls URL ... (or --service-discovery "
                             "with --selector).\n";
    if (r.kind == RouterKind::RoundRobin) return head + "smg launch --policy round_robin\n";
    if (r.kind == RouterKind::Random) return head + "smg launch --policy random\n";
    if (r.kind != RouterKind::Sglang)
        return notShipped("SGLang's router (sgl-model-gateway 0.3.2)", r);
    for (const auto& [key, v] : {std::pair{"balance_abs_threshold", r.balanceAbsThreshold},
                                 std::pair{"eviction_interval", r.evictionIntervalS},
                                 std::pair{"max_tree_size", r.maxTreeSize}})
        if (v != std::floor(v))
            return Error{std::string("sglang:") + key + "=" + number(v) +
                         ": SGLang's router takes a whole number there"};
    return head +
           "# Every threshold is written out: the gateway's library defaults (0.5, 32, 1.1, 30, "
           "10000) differ from its CLI's (0.3, 64, 1.5, 120, 67108864).\n" +
           "# max_tree_size counts characters of the router's tree; the plan took a token as " +
           number(r.charsPerToken) + " characters.\n" +
           "smg launch --policy cache_aware --cache-threshold " + number(r.cacheThreshold) +
           " --balance-abs-threshold " + number(r.balanceAbsThreshold) +
           " --balance-rel-threshold " + number(r.balanceRelThreshold) + " --eviction-interval " +
           number(r.evictionIntervalS) + " --max-tree-size " + number(r.maxTreeSize) + "\n";
}

Result<std::string> llmd(const PlanPoint& p, const PlanSetup& s, const RouterConfig& r,
                         const std::string& model) {
    if (r.kind != RouterKind::LlmD) return notShipped("llm-d's precise prefix-cache profile", r);
    std::string out =
        header("llm-d EPP configuration (EndpointPickerConfig)", p, s, kLlmdChecked) +
        "# The shipped precise prefix-cache profile, with the plan's weights. blockSize must "
        "equal the engines' --block-size (vLLM's default " +
        std::to_string(kEngineBlockTokens) + "), hashSeed their PYTHONHASHSEED.\n" +
        "# Start the EPP with --refresh-metrics-interval " + number(r.refreshS * 1000) +
        "ms (the queue and KV-utilisation scrape the plan assumed).\n";
    if (r.otherTierWeight != 1.0)
        out += "# The plan weighed tiers other than gpu and cpu " + number(r.otherTierWeight) +
               "; llm-d weighs a tier by the medium name the engine's KV events carry: the "
               "'disk' entry below must use that name.\n";
    out += "apiVersion: inference.networking.x-k8s.io/v1alpha1\n"
           "kind: EndpointPickerConfig\n"
           "plugins:\n"
           "  - type: tokenizer\n"
           "    parameters:\n"
           "      modelName: " +
           model +
           "\n"
           "  - type: endpoint-notification-source\n"
           "  - type: metrics-data-source\n"
           "  - type: core-metrics-extractor\n"
           "  - type: single-profile-handler\n"
           "  - type: decode-filter\n"
           "  - type: precise-prefix-cache-scorer\n"
           "    parameters:\n"
           "      tokenProcessorConfig:\n"
           "        blockSize: " +
           std::to_string(kEngineBlockTokens) +
           "\n"
           "        hashSeed: \"42\"\n"
           "      indexerConfig:\n"
           "        tokenizersPoolConfig:\n"
           "          modelName: " +
           model +
           "\n"
           "        kvBlockIndexConfig:\n"
           "          enableMetrics: true\n"
           "        kvCacheBackendConfigs:\n"
           "          - name: gpu\n"
           "            weight: " +
           number(r.gpuTierWeight) +
           "\n"
           "          - name: cpu\n"
           "            weight: " +
           number(r.cpuTierWeight) + "\n";
    if (r.otherTierWeight != 1.0)
        out += "          - name: disk\n"
               "            weight: " +
               number(r.otherTierWeight) + "\n";
    out += "  - type: kv-cache-utilization-scorer\n"
           "  - type: queue-scorer\n"
           "  - type: max-score-picker\n"
           "dataLayer:\n"
           "  sources:\n"
           "    - pluginRef: metrics-data-source\n"
           "      extractors:\n"
           "        - pluginRef: core-metrics-extractor\n"
           "    - pluginRef: endpoint-notification-source\n"
           "      extractors:\n"
           "        - pluginRef: precise-prefix-cache-scorer\n"
           "schedulingProfiles:\n"
           "  - name: default\n"
           "    plugins:\n"
           "      - pluginRef: decode-filter\n"
           "      - pluginRef: tokenizer\n"
           "      - pluginRef: precise-prefix-cache-scorer\n"
           "        weight: " +
           number(r.prefixWeight) +
           "\n"
           "      - pluginRef: kv-cache-utilization-scorer\n"
           "        weight: " +
           number(r.kvWeight) +
           "\n"
           "      - pluginRef: queue-scorer\n"
           "        weight: " +
           number(r.queueWeight) +
           "\n"
           "      - pluginRef: max-score-picker\n";
    return out;
}

Result<std::string> dynamo(const PlanPoint& p, const PlanSetup& s, const RouterConfig& r) {
    const std::string head =
        header("Dynamo frontend (python -m dynamo.frontend)", p, s, kDynamoChecked);
    if (r.kind == RouterKind::RoundRobin)
        return head + "python -m dynamo.frontend --router-mode round-robin\n";
    if (r.kind == RouterKind::Random)
        return head + "python -m dynamo.frontend --router-mode random\n";
    if (r.kind != RouterKind::Dynamo) return notShipped("Dynamo's frontend", r);
    return head +
           "# The KV router's cost with tier credits; temperature 0 picks the cheapest server "
           "(ties at random), as the plan replayed.\n" +
           "python -m dynamo.frontend --router-mode kv --router-kv-overlap-score-credit " +
           number(r.overlapScoreCredit) + " --router-prefill-load-scale " +
           number(r.prefillLoadScale) + " --router-host-cache-hit-weight " +
           number(r.hostCacheHitWeight) + " --router-disk-cache-hit-weight " +
           number(r.diskCacheHitWeight) + " --router-temperature 0\n";
}

Result<std::string> productionStack(const PlanPoint& p, const PlanSetup& s, const RouterConfig& r) {
    const std::string head =
        header("vLLM production-stack router (vllm-router)", p, s, kStackChecked) +
        "# Add the servers: --service-discovery static --static-backends URL,... "
        "--static-models MODEL,... (or --service-discovery k8s).\n";
    if (r.kind == RouterKind::RoundRobin) return head + "vllm-router --routing-logic roundrobin\n";
    if (r.kind != RouterKind::Session) return notShipped("vLLM production-stack", r);
    return head + "# The session router hashes the id in the request header " + kSessionHeader +
           " onto a ring of 160 points a server. The trace names no session, so the plan keyed "
           "each request by its first " +
           std::to_string(r.keyBlocks) +
           " blocks: have the clients send one id per conversation (or per shared prefix) in "
           "that header. A request without it goes to the server with the fewest requests in "
           "the last 60 s.\n" +
           "vllm-router --routing-logic session --session-key " + kSessionHeader + "\n";
}

} // namespace

Result<std::string> routerSettings(ServingStack stack, const PlanPoint& p, const PlanSetup& s,
                                   const std::string& modelName) {
    if (!s.base.isFleet() || p.router.empty()) {
        const StackRouters& e = stackOf(stack);
        std::vector<std::string> kinds;
        for (RouterKind k : e.kinds)
            kinds.emplace_back(toString(k));
        return Error{"a router's settings are for a fleet; the plan is of servers that share one "
                     "cache: give --servers N and --router NAME (" +
                     std::string(e.name) + " ships " + orList(kinds) + ")"};
    }
    auto r = parseRouter(p.router);
    if (!r) return r.error();
    switch (stack) {
    case ServingStack::Sglang:
        return sglang(p, s, *r);
    case ServingStack::LlmD:
        return llmd(p, s, *r, modelName);
    case ServingStack::Dynamo:
        return dynamo(p, s, *r);
    case ServingStack::ProductionStack:
        return productionStack(p, s, *r);
    default:
        return Error{"not a router's stack"};
    }
}

} // namespace kvbe::plan_detail
