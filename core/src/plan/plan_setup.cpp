#include "kvbe/plan/plan_setup.h"

#include "kvbe/trace/trace_setup.h"

#include <algorithm>

namespace kvbe {

namespace {

const TierSpec* presetOf(const TierConfig& t, const Presets& presets) {
    return t.preset.empty() ? nullptr : presets.findTier(t.preset);
}

bool isKind(const TierConfig& t, const Presets& presets, const char* kind) {
    const auto* spec = presetOf(t, presets);
    return spec && spec->kind == kind;
}

// An NVMe preset's tier, or a scenario's own tier (no preset) that names a rated drive.
bool isNvme(const TierConfig& t, const Presets& presets) {
    return isKind(t, presets, "nvme") || (t.preset.empty() && t.drive.rated());
}

} // namespace

Result<PlanSetup> planSetup(const Evaluation& e, const Presets& presets, const Trace& trace,
                            const ReplayConfig& base, const PlanRequest& req) {
    PlanSetup s;
    s.trace = &trace;
    s.cost = &e.cost;
    s.base = base;
    s.base.tiers.clear();
    s.rule = req.rule;
    s.limits = req.limits;
    s.threads = req.threads;
    s.grid = req.grid.value_or(defaultPlanGrid());
    s.gpuKey = e.scenario.gpu.empty() ? "custom" : e.scenario.gpu;
    s.gpusPerInstance = e.scenario.tensorParallel;
    if (req.prices) {
        s.prices = *req.prices;
    } else {
        auto builtin = builtinPriceTable();
        if (!builtin) return builtin.error();
        s.prices = *builtin;
    }
    s.prices = overridePrices(s.prices, e.scenario.prices);

    // The drives, as TierConfigs: the scenario's own tier where it has one of the preset (its
    // overrides apply), the preset otherwise.
    std::vector<TierConfig> drives;
    auto configFor = [&](const std::string& key) -> std::optional<TierConfig> {
        for (const auto& t : e.scenario.tiers)
            if (t.preset == key || (t.preset.empty() && t.name == key)) return t;
        if (const auto* spec = presets.findTier(key)) return tierFromPreset(*spec);
        return std::nullopt;
    };
    if (!req.drives.empty()) {
        for (const auto& key : req.drives) {
            auto t = configFor(key);
            if (!t || !isNvme(*t, presets)) {
                std::string keys;
                for (const auto& [k, spec] : presets.tiers())
                    if (spec.kind == "nvme") keys += (keys.empty() ? "" : ", ") + k;
                return Error{"drive '" + key + "': not an NVMe tier preset or NVMe tier of the " +
                             "scenario; expected one of " + keys};
            }
            if (!t->drive.rated())
                return Error{"drive '" + key + "': its drive writes per day, warranty years and " +
                             "drive capacity are not all known; give them in a scenario tier " +
                             "(drive_writes_per_day, warranty_years, drive_capacity_TB)"};
            if (!s.prices.drive.count(key))
                return Error{"prices: no price for the drive '" + key + "' (" + s.prices.origin +
                             "); give drive_usd." + key + " in a --prices file or the " +
                             "scenario's prices"};
            drives.push_back(*t);
        }
    } else {
        std::vector<std::string> keys;
        for (const auto& t : e.scenario.tiers)
            if (isNvme(t, presets)) keys.push_back(t.preset.empty() ? t.name : t.preset);
        for (const auto& [key, spec] : presets.tiers())
            if (spec.kind == "nvme") keys.push_back(key);
        for (const auto& key : keys) {
            auto t = configFor(key);
            const bool seen = std::any_of(drives.begin(), drives.end(), [&](const TierConfig& d) {
                return (d.preset.empty() ? d.name : d.preset) == key;
            });
            if (t && !seen && t->drive.rated() && s.prices.drive.count(key)) drives.push_back(*t);
        }
    }

    // The DRAM tier and the drives read as the scenario reads its tiers.
    Scenario withDrives = e.scenario;
    withDrives.tiers.clear();
    const TierConfig* dram = nullptr;
    for (const auto& t : e.scenario.tiers)
        if (!dram && isKind(t, presets, "dram")) dram = &t;
    if (dram) withDrives.tiers.push_back(*dram);
    for (const auto& d : drives)
        withDrives.tiers.push_back(d);
    auto ev = evaluate(withDrives, presets, e.model);
    if (!ev) return ev.error();
    auto tiers = scenarioSimTiers(*ev);
    std::size_t next = 0;
    if (dram) {
        s.dram = tiers[next++];
    } else {
        s.grid.dramBytes = {0};
    }
    for (; next < tiers.size(); ++next)
        s.driveTiers.push_back(tiers[next]);
    if (s.driveTiers.empty()) s.grid.drives = {0};
    return s;
}

} // namespace kvbe
