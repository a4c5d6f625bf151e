#include "kvbe/plan/plan_setup.h"

#include "kvbe/trace/trace_setup.h"

#include <algorithm>
#include <cmath>

namespace kvbe {

namespace {

const TierSpec* presetOf(const TierConfig& t, const Presets& presets) {
    return t.preset.empty() ? nullptr : presets.findTier(t.preset);
}

bool isKind(const TierConfig& t, const Presets& presets, TierKind kind) {
    const auto* spec = presetOf(t, presets);
    return spec && spec->kind == kind;
}

// An NVMe preset's tier, or a scenario's own tier (no preset) that names a rated drive.
bool isNvme(const TierConfig& t, const Presets& presets) {
    return isKind(t, presets, TierKind::Nvme) || (t.preset.empty() && t.drive.rated());
}

} // namespace

RequestStatus checkPlanLimits(const PlanLimits& l) {
    if (!(l.lifeYears > 0) || !(l.lifeYears <= 100))
        return RequestError{RequestField::Life,
                            "'" + valueText(l.lifeYears) +
                                "': expected the years the drives must last, more than 0 and at "
                                "most 100"};
    if (l.sloP99S && (!(*l.sloP99S > 0) || !std::isfinite(*l.sloP99S)))
        return RequestError{RequestField::SloP99,
                            "'" + valueText(*l.sloP99S) + "': expected a p99 TTFT above 0 s"};
    if (l.budgetUsd && (!(*l.budgetUsd >= 0) || !std::isfinite(*l.budgetUsd)))
        return RequestError{RequestField::Budget,
                            "'" + valueText(*l.budgetUsd) +
                                "': expected US dollars, 0 or more, e.g. 20000"};
    return Ok{};
}

namespace {

template <class T> std::string listText(const std::vector<T>& v) {
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "" : ",") + valueText(double(x));
    return "'" + s + "'";
}

RequestStatus checkGrid(const PlanGrid& g) {
    if (g.dramBytes.empty())
        return RequestError{RequestField::DramSizes, "expected sizes such as 0,256GiB,1TiB"};
    for (double b : g.dramBytes)
        if (!(b >= 0) || !std::isfinite(b))
            return RequestError{RequestField::DramSizes,
                                listText(g.dramBytes) + ": " + valueText(b) +
                                    " bytes; expected sizes, or 0 for no DRAM tier"};
    if (g.drives.empty())
        return RequestError{RequestField::DriveCounts, "expected drive counts such as 0,1,2,4"};
    for (auto n : g.drives)
        if (n < 0 || n > (1 << 20))
            return RequestError{RequestField::DriveCounts,
                                listText(g.drives) + ": " + std::to_string(n) +
                                    " is out of range; expected 0 (none) to 1048576 drives"};
    if (g.storeAfter.empty())
        return RequestError{RequestField::StoreAfterGrid, "expected K values such as 1,2,3"};
    for (int k : g.storeAfter)
        if (k < 1 || k > kMaxStoreAfter)
            return RequestError{RequestField::StoreAfterGrid,
                                listText(g.storeAfter) + ": " + std::to_string(k) +
                                    " is out of range; expected 1 to " +
                                    std::to_string(kMaxStoreAfter) +
                                    " (sightings; 1 stores every block)"};
    return Ok{};
}

} // namespace

RequestStatus checkPlanRequest(const PlanRequest& req) {
    if (auto ok = checkPlanLimits(req.limits); !ok) return ok;
    return checkGrid(req.grid.value_or(defaultPlanGrid()));
}

RequestResult<PlanSetup> planSetup(const Evaluation& e, const Presets& presets, const Trace& trace,
                                   const PlanRequest& req) {
    if (auto ok = checkPlanRequest(req); !ok) return ok.error();
    PlanSetup s;
    s.grid = req.grid.value_or(defaultPlanGrid());
    // The replay each point runs, with no tiers: the plan puts its own in.
    ReplayRequest replay = req.replay;
    replay.tierCapacities.clear();
    replay.storeAfter = 1;
    auto base = replaySetup(replay, e, trace.summary.blockTokens);
    if (!base) return base.error();
    s.trace = &trace;
    s.cost = &e.cost;
    s.base = std::move(base->config);
    s.base.tiers.clear();
    s.rule = req.rule;
    s.limits = req.limits;
    s.threads = req.threads;
    // Other routers: each once, the fleet's own left out ("all": every router, defaults).
    std::vector<std::string> others;
    for (const auto& r : req.otherRouters)
        if (r == "all")
            for (const auto n : routerNames())
                others.emplace_back(n);
        else
            others.push_back(r);
    for (const auto& text : others) {
        auto r = parseRouter(text);
        if (!r) return RequestError{RequestField::Router, "--routers: " + r.message()};
        const bool same = r->text == routerText(s.base.fleet.router) ||
                          std::any_of(s.otherRouters.begin(), s.otherRouters.end(),
                                      [&](const RouterConfig& o) { return o.text == r->text; });
        if (!same) s.otherRouters.push_back(std::move(*r));
    }
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
                    if (spec.kind == TierKind::Nvme) keys += (keys.empty() ? "" : ", ") + k;
                return RequestError{RequestField::Drives,
                                    "'" + key + "': not an NVMe tier preset or NVMe tier of the " +
                                        "scenario; expected one of " + keys};
            }
            if (!t->drive.rated())
                return RequestError{RequestField::Drives,
                                    "'" + key + "': its drive writes per day, warranty years and " +
                                        "drive capacity are not all known; give them in a " +
                                        "scenario tier (drive_writes_per_day, warranty_years, " +
                                        "drive_capacity_TB)"};
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
            if (spec.kind == TierKind::Nvme) keys.push_back(key);
        for (const auto& key : keys) {
            auto t = configFor(key);
            const bool seen = std::any_of(drives.begin(), drives.end(), [&](const TierConfig& d) {
                return (d.preset.empty() ? d.name : d.preset) == key;
            });
            if (t && !seen && t->drive.rated() && s.prices.drive.count(key)) drives.push_back(*t);
        }
    }

    // The links to a pool: network tier presets, each its own preset's figures.
    if (!req.placeLocal && !req.placePooled)
        return RequestError{RequestField::Placements, "expected local, pooled or both"};
    if (!req.links.empty() && !req.placePooled)
        return RequestError{RequestField::Links,
                            "a link reaches a pool: give --placements pooled (or local,pooled)"};
    std::vector<TierConfig> links;
    std::vector<std::string> linkKeys = req.links;
    if (req.placePooled && linkKeys.empty()) linkKeys = {kDefaultPoolLink};
    for (const auto& key : linkKeys) {
        const auto* spec = presets.findTier(key);
        if (!spec || spec->kind != TierKind::Network) {
            std::string keys;
            for (const auto& [k, sp] : presets.tiers())
                if (sp.kind == TierKind::Network) keys += (keys.empty() ? "" : ", ") + k;
            return RequestError{RequestField::Links,
                                "'" + key + "': not a network tier preset; expected one of " +
                                    keys};
        }
        TierConfig t = tierFromPreset(*spec);
        t.name = key; // the link is named by its key, as the drives are
        if (std::none_of(links.begin(), links.end(),
                         [&](const TierConfig& l) { return l.name == key; }))
            links.push_back(t);
    }
    s.placeLocal = req.placeLocal;

    // The DRAM tier, the drives and the links read as the scenario reads its tiers.
    Scenario withDrives = e.scenario;
    withDrives.tiers.clear();
    const TierConfig* dram = nullptr;
    for (const auto& t : e.scenario.tiers)
        if (!dram && isKind(t, presets, TierKind::Dram)) dram = &t;
    if (dram) withDrives.tiers.push_back(*dram);
    for (const auto& d : drives)
        withDrives.tiers.push_back(d);
    for (const auto& l : links)
        withDrives.tiers.push_back(l);
    auto ev = evaluate(withDrives, presets, e.model);
    if (!ev) return ev.error();
    // The request's per-tier settings (write buffer, shared links, write bandwidths) hold for
    // these tiers as for the replay's; a name the plan's tiers lack was checked above.
    auto tiers = scenarioSimTiers(*ev);
    if (auto ok = applyTierSettings(req.replay, tiers, false); !ok) return ok.error();
    std::size_t next = 0;
    if (dram) {
        s.dram = tiers[next++];
    } else {
        s.grid.dramBytes = {0};
    }
    for (; next < tiers.size() - links.size(); ++next)
        s.driveTiers.push_back(tiers[next]);
    for (; next < tiers.size(); ++next)
        s.links.push_back(tiers[next]);
    if (s.driveTiers.empty()) s.grid.drives = {0};
    return s;
}

} // namespace kvbe
