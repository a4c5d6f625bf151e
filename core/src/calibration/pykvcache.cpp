#include "kvbe/calibration/pykvcache.h"

#include "kvbe/base/text.h"
#include "kvbe/scenario/hardware.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace kvbe {
namespace {

struct Candidate {
    std::string name;
    std::optional<TierKind> kind; // the preset's kind; none when unknown
    std::optional<double> pStar;
};

std::optional<size_t> pick(const std::vector<Candidate>& tiers, const std::string& wanted,
                           TierKind kind) {
    if (!wanted.empty()) {
        for (size_t i = 0; i < tiers.size(); ++i)
            if (lower(tiers[i].name) == lower(wanted)) return i;
        return std::nullopt;
    }
    // The first tier of the kind: by its preset's kind, or by its name (the synonym rule).
    for (size_t i = 0; i < tiers.size(); ++i)
        if (tiers[i].kind == kind || nameSuggestsKind(tiers[i].name, kind)) return i;
    return std::nullopt;
}

Result<PyKvcacheExport> choose(PyKvcacheThresholds t, const std::vector<Candidate>& tiers,
                               const std::string& ssdTier, const std::string& memTier) {
    const auto ssd = pick(tiers, ssdTier, TierKind::Nvme);
    const auto mem = pick(tiers, memTier, TierKind::Dram);
    if (!ssdTier.empty() && !ssd)
        return Error{"no tier is named '" + ssdTier + "' (the SSD tier asked for)"};
    if (!memTier.empty() && !mem)
        return Error{"no tier is named '" + memTier + "' (the memory tier asked for)"};
    if (!ssd && !mem)
        return Error{
            "no tier stands for the SSD or host memory; name them (--ssd-tier, --mem-tier)"};
    PyKvcacheExport out;
    t.writeSsd = ssd.has_value(); // no tier for it: left out, py-kvcache's "gate off"
    t.writeMem = mem.has_value();
    if (ssd) {
        t.ssdTokens = tiers[*ssd].pStar;
        out.ssdTier = tiers[*ssd].name;
    }
    if (mem) {
        t.memTokens = tiers[*mem].pStar;
        out.memTier = tiers[*mem].name;
    }
    out.thresholds = std::move(t);
    return out;
}

} // namespace

Result<PyKvcacheExport> pyKvcacheFromScenario(const Evaluation& e, const Presets& presets,
                                              const std::string& ssdTier,
                                              const std::string& memTier) {
    PyKvcacheThresholds t;
    t.modelName = e.model.id;
    const auto dtype = vllmKvCacheDtype(e.cost.inputs().kvDtype, e.model.weightDtype);
    if (!dtype)
        return Error{"the scenario's KV dtype " + std::string(toString(e.cost.inputs().kvDtype)) +
                     " has no vLLM kv_cache_dtype; py-kvcache files carry auto, fp8, fp8_e4m3, "
                     "fp8_e5m2, bfloat16 or float16"};
    t.kvDtype = *dtype;
    t.contextTokens = e.model.contextLimit;
    std::vector<Candidate> tiers;
    for (size_t i = 0; i < e.tiers.size() && i < e.scenario.tiers.size(); ++i) {
        const auto& tc = e.scenario.tiers[i];
        const auto* preset = tc.preset.empty() ? nullptr : presets.findTier(tc.preset);
        tiers.push_back(
            {tc.name, preset ? preset->kind : std::nullopt, e.cost.breakevenPrefix(e.tiers[i])});
    }
    return choose(std::move(t), tiers, ssdTier, memTier);
}

Result<PyKvcacheExport> pyKvcacheFromCalibration(const Calibration& c, const std::string& ssdTier,
                                                 const std::string& memTier) {
    if (c.breakevenPrefix.empty())
        return Error{
            c.source +
            ": holds no break-even prefix lengths; fit it first (kvbe-cli calibration fit)"};
    PyKvcacheThresholds t;
    t.modelName = c.model;
    if (!c.kvDtypeText.empty()) {
        t.kvDtype = c.kvDtypeText; // as the file had it, "auto" included
    } else if (c.kvDtype) {
        const auto d = vllmKvCacheDtype(*c.kvDtype, std::nullopt);
        if (!d)
            return Error{c.source + ": its KV dtype " + std::string(toString(*c.kvDtype)) +
                         " has no vLLM kv_cache_dtype"};
        t.kvDtype = *d;
    }
    t.safetyMarginTokens = c.safetyMarginTokens.value_or(0);
    std::vector<Candidate> tiers;
    for (const auto& [name, p] : c.breakevenPrefix)
        tiers.push_back({name, std::nullopt, p});
    return choose(std::move(t), tiers, ssdTier, memTier);
}

Result<PyKvcacheV2Export> pyKvcacheV2FromScenario(const Evaluation& e, const Presets& presets,
                                                  const std::string& ssdTier,
                                                  const std::string& memTier) {
    auto v1 = pyKvcacheFromScenario(e, presets, ssdTier, memTier);
    if (!v1) return v1.error();
    if (v1->ssdTier.empty() || v1->memTier.empty())
        return Error{std::string("a schema 2 file needs both curves; no tier stands for ") +
                     (v1->ssdTier.empty() ? "the SSD (--ssd-tier)" : "host memory (--mem-tier)")};
    auto indexOf = [&](const std::string& name) {
        for (size_t i = 0; i < e.scenario.tiers.size() && i < e.tiers.size(); ++i)
            if (e.scenario.tiers[i].name == name) return i;
        return size_t(0);
    };
    const size_t ssdIndex = indexOf(v1->ssdTier), memIndex = indexOf(v1->memTier);
    const TierPath& ssd = e.tiers[ssdIndex];
    const TierPath& mem = e.tiers[memIndex];
    const auto& cost = e.cost;
    const double block = kPyKvcacheBlockTokens;
    const double context = std::max(block, std::floor(e.model.contextLimit / block) * block);
    auto f = [&](double m) { return cost.tMiss(m); };
    auto g = [&](const TierPath& t, double m) {
        return m > 0 ? cost.tHit(t, m, m) : cost.tFixed(t);
    };

    std::set<double> lengths{0, context};
    for (double m = block; m < context; m *= 2) {
        lengths.insert(m);
        if (m * 1.5 < context && std::fmod(m * 1.5, block) == 0)
            lengths.insert(m * 1.5); // 48, 96, ...: whole blocks
    }
    // Both sides of each crossing, to the block, so the rule sees where f overtakes g.
    for (const TierPath* t : {&ssd, &mem}) {
        const std::vector<double> grid(lengths.begin(), lengths.end());
        auto loses = [&](double m) { return f(m) <= g(*t, m); };
        for (size_t i = 1; i < grid.size(); ++i) {
            double lo = grid[i - 1] / block, hi = grid[i] / block;
            if (loses(lo * block) == loses(hi * block)) continue;
            const bool loLoses = loses(lo * block);
            while (hi - lo > 1) {
                const double mid = std::floor((lo + hi) / 2);
                (loses(mid * block) == loLoses ? lo : hi) = mid;
            }
            lengths.insert(lo * block);
            lengths.insert(hi * block);
        }
    }

    PyKvcacheV2Export out;
    out.ssdTier = v1->ssdTier;
    out.memTier = v1->memTier;
    auto& file = out.file;
    file.thresholds = v1->thresholds;
    file.kvBytesPerToken = cost.kvBytesPerToken();
    file.gpuModel = e.gpu ? e.gpu->name : std::string();
    const auto& ssdConfig = e.scenario.tiers[ssdIndex];
    const auto* ssdPreset = ssdConfig.preset.empty() ? nullptr : presets.findTier(ssdConfig.preset);
    file.ssdModel = ssdPreset ? ssdPreset->name : ssdConfig.name;
    file.f.floorS = 0;
    file.gSsd.floorS = cost.tFixed(ssd);
    file.gMem.floorS = cost.tFixed(mem);
    for (double m : lengths) {
        file.f.knots.emplace_back(m, f(m));
        file.gSsd.knots.emplace_back(m, g(ssd, m));
        file.gMem.knots.emplace_back(m, g(mem, m));
    }
    file.thresholds.ssdTokens = pyKvcacheRuleThreshold(file.f, file.gSsd);
    file.thresholds.memTokens = pyKvcacheRuleThreshold(file.f, file.gMem);
    for (double n : {1000.0, 10000.0, 100000.0})
        if (n <= context) file.golden.push_back({n, f(n), g(ssd, n), g(mem, n)});
    return out;
}

} // namespace kvbe
