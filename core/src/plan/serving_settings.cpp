#include "kvbe/plan/serving_settings.h"

#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"
#include "kvbe/calibration/pykvcache.h"

#include "plan_text.h"
#include "router_settings.h"

#include <cmath>

namespace kvbe {

namespace {

constexpr double kGiB = double(1ull << 30);

// Where the keys were checked (docs/serving-settings.md says how and which versions).
constexpr const char* kVllmChecked =
    "vLLM 0.18 to 0.21: vllm/config/vllm.py (--kv-offloading-size in GiB, summed over the "
    "tensor- and pipeline-parallel ranks, becomes cpu_bytes_to_use), "
    "vllm/v1/kv_offload/cpu/spec.py and reuse_manager.py (cpu_bytes_to_use, block_size, "
    "store_threshold, max_tracker_size)";
constexpr const char* kLmcacheChecked =
    "LMCache 0.3: lmcache/v1/config.py (chunk_size, local_cpu, max_local_cpu_size, local_disk, "
    "max_local_disk_size; the sizes are GiB, times 1024^3 in the backends, per vLLM worker)";
// vLLM's default GPU block size in tokens: an offload block must be a whole number of them.
constexpr std::uint32_t kVllmGpuBlockTokens = 16;
// LMCache's default max_local_cpu_size (GiB): the pinned buffer its disk backend stages through.
constexpr double kLmcacheStagingGiB = 5.0;

std::string gibText(double bytes) {
    const double g = bytes / kGiB;
    return formatFixed(g, g == std::floor(g) ? 0 : 1);
}

// GiB to one decimal, rounded down: a size never above the plan's.
std::string gibFloor(double bytes) {
    return formatFixed(std::floor(bytes / kGiB * 10) / 10, 1);
}

std::string ranksText(int n) {
    return std::to_string(n) + " tensor-parallel rank" + (n == 1 ? "" : "s");
}

// LMCache stores every chunk: what that does to a configuration planned with K > 1.
std::string storeAllWarning(const PlanPoint& p, const PlanSetup& s) {
    std::string w = "The plan stores a block at its " + sightingText(p.storeAfter) +
                    "; LMCache has no such setting and stores every chunk, so expect the writes "
                    "of the 1st sighting";
    if (p.drives > 0 && p.lifeIfEveryBlockStored) {
        w += ": the " + std::to_string(p.drives) + " x " + p.drive +
             " drives would then reach their rated endurance in " +
             formatLife(*p.lifeIfEveryBlockStored);
        if (*p.lifeIfEveryBlockStored < s.limits.lifeYears)
            w += ", short of the " + formatFixed(s.limits.lifeYears, 1) +
                 " years the plan asks; plan with --store-after 1 to size drives for LMCache";
    }
    return w + ".";
}

// A fleet plan's tiers are one per node, shared by the node's servers; vLLM's offload and
// LMCache's local backends are one per server. The servers a node's tier is split among (1 but
// for a fleet of several servers a node), and the comment that says so.
int nodeShare(const PlanSetup& s) {
    return s.base.isFleet() ? std::max(1, s.base.fleet.nodeServers) : 1;
}
std::string shareNote(const PlanSetup& s) {
    const int k = nodeShare(s);
    if (k == 1) return {};
    return "# The plan's tiers are one per node, shared by its " + std::to_string(k) +
           " servers; this stack keeps one per server, so each server gets 1/" + std::to_string(k) +
           " of the node's (the sizes below). A block one server stored is not found by the "
           "others: expect fewer offload hits than the plan's.\n";
}

std::string vllm(const PlanPoint& p, const PlanSetup& s, std::uint32_t blockTokens,
                 std::uint64_t distinctBlocks) {
    std::string out = "# vLLM settings for: " + describePlanPoint(p) + " (kvbe-cli trace plan)\n" +
                      "# Keys checked against " + kVllmChecked + ".\n";
    const double dram = p.dramBytes / nodeShare(s); // one server's
    if (!p.offload())
        return out + "# GPU-only caching: vLLM's own prefix cache (--enable-prefix-caching), no "
                     "offload flags.\n";
    if (p.drives > 0) {
        out += "# vLLM's native offload keeps host memory only, so the plan's " +
               std::to_string(p.drives) + " x " + p.drive +
               " tier goes through LMCache: run vLLM with LMCACHE_CONFIG_FILE set to the file "
               "of kvbe-cli trace plan --emit lmcache, which holds the DRAM and disk sizes.\n";
        if (p.storeAfter > 1) out += "# " + storeAllWarning(p, s) + "\n";
        return out + "--kv-transfer-config "
                     "'{\"kv_connector\":\"LMCacheConnectorV1\",\"kv_role\":\"kv_both\"}'\n";
    }
    out += shareNote(s);
    if (p.storeAfter <= 1)
        return out + "# --kv-offloading-size is GiB of host memory, summed over the " +
               ranksText(s.gpusPerInstance) + ".\n" +
               "--kv-offloading-backend native --kv-offloading-size " + gibText(dram) + "\n";
    // Store admission needs the OffloadingConnector's own settings, which the two flags above
    // cannot carry. An offload block of the trace's block size makes vLLM count what the plan
    // counts; the tracker then needs one entry per distinct block of the trace.
    const bool sameBlocks = blockTokens % kVllmGpuBlockTokens == 0;
    const std::uint64_t perBlock =
        sameBlocks ? 1 : (blockTokens + kVllmGpuBlockTokens - 1) / kVllmGpuBlockTokens;
    const std::uint64_t tracker = std::max<std::uint64_t>(64000, distinctBlocks * perBlock);
    out += "# Store a block at its " + sightingText(p.storeAfter) +
           ": the OffloadingConnector's store_threshold, in place of --kv-offloading-backend "
           "native --kv-offloading-size " +
           gibText(dram) + " (cpu_bytes_to_use is the same size in bytes, summed over the " +
           ranksText(s.gpusPerInstance) + ").\n";
    out += "# vLLM counts a block each time its scheduler looks it up in host memory, which it "
           "does for the blocks past the GPU's own prefix hit; the plan counts every request "
           "that contains it, so vLLM reaches the threshold later where the GPU still holds a "
           "block. max_tracker_size keeps the counts of the trace's " +
           std::to_string(distinctBlocks) + " distinct blocks (vLLM's default is 64,000).\n";
    out += "--kv-transfer-config "
           "'{\"kv_connector\":\"OffloadingConnector\",\"kv_role\":\"kv_both\","
           "\"kv_connector_extra_config\":{\"cpu_bytes_to_use\":" +
           std::to_string(static_cast<std::uint64_t>(dram)) +
           (sameBlocks ? ",\"block_size\":" + std::to_string(blockTokens) : std::string()) +
           ",\"store_threshold\":" + std::to_string(p.storeAfter) +
           ",\"max_tracker_size\":" + std::to_string(tracker) + "}}'\n";
    return out;
}

std::string lmcache(const PlanPoint& p, const PlanSetup& s, std::uint32_t blockTokens) {
    const double ranks = double(std::max(1, s.gpusPerInstance));
    const double split = ranks * nodeShare(s); // a node's size over its servers' workers
    double disk = 0;
    for (const auto& t : p.tiers)
        if (!p.drive.empty() && t.name == p.drive) disk = t.capacityBytes;
    std::string out =
        "# LMCache configuration for: " + describePlanPoint(p) + " (kvbe-cli trace plan)\n" +
        "# Keys checked against " + kLmcacheChecked + ".\n" +
        "# Sizes are GiB per vLLM worker: the plan's totals over " + ranksText(s.gpusPerInstance) +
        ".\n" + "# chunk_size is the trace's block (" + std::to_string(blockTokens) +
        " tokens; LMCache's default is 256), so LMCache's chunks are the plan's blocks.\n";
    out += shareNote(s);
    if (p.storeAfter > 1) out += "# " + storeAllWarning(p, s) + "\n";
    out += "chunk_size: " + std::to_string(blockTokens) + "\n";
    out += std::string("local_cpu: ") + (p.dramBytes > 0 ? "true" : "false") + "\n";
    if (p.dramBytes > 0) {
        out += "max_local_cpu_size: " + gibFloor(p.dramBytes / split) + "\n";
    } else {
        out += "# No DRAM tier; the disk backend still stages through a pinned buffer of "
               "max_local_cpu_size (LMCache's default).\n";
        out += "max_local_cpu_size: " + formatFixed(kLmcacheStagingGiB, 1) + "\n";
    }
    if (disk > 0) {
        out += "# Point local_disk at the file system on the " + std::to_string(p.drives) + " x " +
               p.drive + " drives.\n";
        out += "local_disk: \"file:///mnt/kvbe-nvme/lmcache/\"\n";
        out += "max_local_disk_size: " + gibFloor(disk / split) + "\n";
    } else {
        out += "max_local_disk_size: 0.0\n";
    }
    return out;
}

Result<std::string> pykvcache(const PlanPoint& p, const PlanSetup& s, const Evaluation& e,
                              const Presets& presets, const std::string& servedModel) {
    if (!p.offload())
        return Error{"the recommended configuration is GPU-only caching: py-kvcache has no tier "
                     "to gate"};
    // The plan's tiers read as the scenario reads its tiers.
    auto configOf = [&](const std::string& name) -> std::optional<TierConfig> {
        for (const auto& t : e.scenario.tiers)
            if (t.preset == name || (t.preset.empty() && t.name == name)) return t;
        if (const auto* spec = presets.findTier(name)) return tierFromPreset(*spec);
        return std::nullopt;
    };
    Scenario plan = e.scenario;
    plan.tiers.clear();
    if (p.dramBytes > 0 && s.dram)
        if (auto t = configOf(s.dram->name)) plan.tiers.push_back(*t);
    if (p.drives > 0)
        if (auto t = configOf(p.drive)) plan.tiers.push_back(*t);
    auto ev = evaluate(plan, presets, e.model);
    if (!ev) return ev.error();
    auto x = pyKvcacheFromScenario(*ev, presets);
    if (!x) return x.error();
    if (!servedModel.empty()) x->thresholds.modelName = servedModel;
    return pyKvcacheV1Json(x->thresholds);
}

} // namespace

std::optional<ServingStack> parseServingStack(std::string_view s) {
    if (s == "vllm") return ServingStack::Vllm;
    if (s == "lmcache") return ServingStack::LMCache;
    if (s == "pykvcache" || s == "py-kvcache") return ServingStack::PyKvcache;
    if (s == "sglang") return ServingStack::Sglang;
    if (s == "llm-d") return ServingStack::LlmD;
    if (s == "dynamo") return ServingStack::Dynamo;
    if (s == "production-stack") return ServingStack::ProductionStack;
    return std::nullopt;
}

const std::vector<std::string>& servingStackNames() {
    static const std::vector<std::string> names = {"vllm",  "lmcache", "pykvcache",       "sglang",
                                                   "llm-d", "dynamo",  "production-stack"};
    return names;
}

Result<std::string> servingSettings(ServingStack stack, const PlanPoint& p, const PlanSetup& s,
                                    const Evaluation& e, const Presets& presets,
                                    std::uint32_t blockTokens, std::uint64_t distinctBlocks,
                                    const std::string& servedModel) {
    const bool router = stack == ServingStack::Sglang || stack == ServingStack::LlmD ||
                        stack == ServingStack::Dynamo || stack == ServingStack::ProductionStack;
    if (p.pooled() && !router)
        return Error{describePlanPoint(p) +
                     ": a pool's server and its clients' settings are not written (each pool's "
                     "project takes its own); --emit the router's, or plan with --placements "
                     "local"};
    switch (stack) {
    case ServingStack::Vllm:
        return vllm(p, s, blockTokens, distinctBlocks);
    case ServingStack::LMCache:
        return lmcache(p, s, blockTokens);
    case ServingStack::PyKvcache:
        return pykvcache(p, s, e, presets, servedModel);
    case ServingStack::Sglang:
    case ServingStack::LlmD:
    case ServingStack::Dynamo:
    case ServingStack::ProductionStack:
        break;
    }
    return plan_detail::routerSettings(stack, p, s, servedModel.empty() ? e.model.id : servedModel);
}

} // namespace kvbe
