#include "kvbe/plan/serving_settings.h"

#include "kvbe/base/units.h"
#include "kvbe/calibration/pykvcache.h"

#include "plan_text.h"

#include <cmath>

namespace kvbe {

using plan_detail::fixed;

namespace {

constexpr double kGiB = double(1ull << 30);

// Where the keys were checked (docs/serving-settings.md).
constexpr const char* kVllmChecked =
    "vllm-project/vllm: vllm/config/cache.py (kv_offloading_size, kv_offloading_backend) and "
    "vllm/v1/kv_offload/cpu/spec.py (cpu_bytes_to_use, store_threshold, max_tracker_size), read "
    "2026-12-01";
constexpr const char* kLmcacheChecked =
    "LMCache/LMCache: lmcache/v1/config.py (chunk_size, local_cpu, max_local_cpu_size, "
    "local_disk, max_local_disk_size; sizes in GiB, times 1024^3 in the backends), read "
    "2026-12-01";

std::string gibText(double bytes) {
    const double g = bytes / kGiB;
    return fixed(g, g == std::floor(g) ? 0 : 1);
}

std::string vllm(const PlanPoint& p, const PlanSetup& s, std::uint64_t distinctBlocks) {
    std::string out = "# vLLM offload for: " + describePlanPoint(p) + " (kvbe-cli trace plan)\n";
    out += "# Keys checked against " + std::string(kVllmChecked) + ".\n";
    if (p.dramBytes <= 0) {
        out += p.offload() ? "# The plan keeps no DRAM tier: vLLM's native offload (host memory) "
                             "is not used.\n"
                           : "# GPU-only caching: no offload flags.\n";
    } else if (p.storeAfter <= 1) {
        out += "# --kv-offloading-size is in GiB, summed over the " +
               std::to_string(s.gpusPerInstance) + " tensor-parallel rank" +
               (s.gpusPerInstance == 1 ? "" : "s") + ".\n";
        out += "--kv-offloading-backend native --kv-offloading-size " + gibText(p.dramBytes) +
               "\n";
    } else {
        // The tracker must remember every block the trace sights, or it forgets counts.
        const std::uint64_t tracker = std::max<std::uint64_t>(64000, distinctBlocks);
        out += "# Store a block at its " + std::to_string(p.storeAfter) +
               plan_detail::ordinal(p.storeAfter) +
               " sighting: the OffloadingConnector's store_threshold, which "
               "--kv-offloading-size cannot carry; this connector config replaces "
               "--kv-offloading-backend native --kv-offloading-size " +
               gibText(p.dramBytes) +
               ". vLLM counts the lookups that visit a block (in its own block size), "
               "where the plan counts the requests containing it; max_tracker_size is set to "
               "the trace's " +
               std::to_string(distinctBlocks) +
               " distinct blocks (vLLM's default, 64,000, forgets the counts of older ones).\n";
        out += "--kv-transfer-config "
               "'{\"kv_connector\":\"OffloadingConnector\",\"kv_role\":\"kv_both\","
               "\"kv_connector_extra_config\":{\"cpu_bytes_to_use\":" +
               std::to_string(static_cast<std::uint64_t>(p.dramBytes)) +
               ",\"store_threshold\":" + std::to_string(p.storeAfter) +
               ",\"max_tracker_size\":" + std::to_string(tracker) + "}}'\n";
    }
    if (p.drives > 0)
        out += "# vLLM's native offload keeps host memory only: the plan's " +
               std::to_string(p.drives) + " x " + p.drive +
               " tier needs --kv-offloading-backend lmcache with the LMCache file "
               "(kvbe-cli trace plan --emit lmcache).\n";
    return out;
}

std::string lmcache(const PlanPoint& p, const PlanSetup& s, std::uint32_t blockTokens) {
    const double ranks = double(std::max(1, s.gpusPerInstance));
    double disk = 0;
    for (const auto& t : p.tiers)
        if (!p.drive.empty() && t.name == p.drive) disk = t.capacityBytes;
    std::string out = "# LMCache configuration for: " + describePlanPoint(p) +
                      " (kvbe-cli trace plan)\n";
    out += "# Keys checked against " + std::string(kLmcacheChecked) + ".\n";
    out += "# Sizes are GiB per vLLM worker: the plan's totals over " +
           std::to_string(s.gpusPerInstance) + " tensor-parallel rank" +
           (s.gpusPerInstance == 1 ? "" : "s") + ".\n";
    out += "# chunk_size is the trace's block (" + std::to_string(blockTokens) +
           " tokens; LMCache's default is 256), so LMCache's chunks are the plan's blocks.\n";
    if (p.storeAfter > 1)
        out += "# The plan stores a block at its " + std::to_string(p.storeAfter) +
               plan_detail::ordinal(p.storeAfter) +
               " sighting; no key of this LMCache does that: it stores every chunk, so expect "
               "the writes of store-after 1.\n";
    out += "chunk_size: " + std::to_string(blockTokens) + "\n";
    out += std::string("local_cpu: ") + (p.dramBytes > 0 ? "true" : "false") + "\n";
    out += "max_local_cpu_size: " + fixed(p.dramBytes / kGiB / ranks, 1) + "\n";
    if (disk > 0) {
        out += "# Point local_disk at the mount of the " + std::to_string(p.drives) + " x " +
               p.drive + " drives.\n";
        out += "local_disk: \"file:///mnt/kvbe-nvme/lmcache/\"\n";
        out += "max_local_disk_size: " + fixed(disk / kGiB / ranks, 1) + "\n";
    } else {
        out += "max_local_disk_size: 0.0\n";
    }
    return out;
}

Result<std::string> pykvcache(const PlanPoint& p, const PlanSetup& s, const Evaluation& e,
                              const Presets& presets) {
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
    return pyKvcacheV1Json(x->thresholds);
}

} // namespace

std::optional<ServingStack> parseServingStack(std::string_view s) {
    if (s == "vllm") return ServingStack::Vllm;
    if (s == "lmcache") return ServingStack::LMCache;
    if (s == "pykvcache" || s == "py-kvcache") return ServingStack::PyKvcache;
    return std::nullopt;
}

Result<std::string> servingSettings(ServingStack stack, const PlanPoint& p, const PlanSetup& s,
                                    const Evaluation& e, const Presets& presets,
                                    std::uint32_t blockTokens, std::uint64_t distinctBlocks) {
    switch (stack) {
    case ServingStack::Vllm:
        return vllm(p, s, distinctBlocks);
    case ServingStack::LMCache:
        return lmcache(p, s, blockTokens);
    case ServingStack::PyKvcache:
        break;
    }
    return pykvcache(p, s, e, presets);
}

} // namespace kvbe
