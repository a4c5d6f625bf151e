#include "kvbe/pykvcache.h"

#include <cctype>

namespace kvbe {
namespace {

std::string lower(std::string s) {
    for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
}

struct Candidate {
    std::string name;
    std::string kind; // preset kind: nvme, dram, network; "" when unknown
    std::optional<double> pStar;
};

std::optional<size_t> pick(const std::vector<Candidate>& tiers, const std::string& wanted,
                           std::initializer_list<const char*> hints) {
    if (!wanted.empty()) {
        for (size_t i = 0; i < tiers.size(); ++i)
            if (lower(tiers[i].name) == lower(wanted)) return i;
        return std::nullopt;
    }
    for (size_t i = 0; i < tiers.size(); ++i)
        for (const char* h : hints)
            if (tiers[i].kind == h || lower(tiers[i].name).find(h) != std::string::npos) return i;
    return std::nullopt;
}

Result<PyKvcacheExport> choose(PyKvcacheThresholds t, const std::vector<Candidate>& tiers, const std::string& ssdTier,
                               const std::string& memTier) {
    const auto ssd = pick(tiers, ssdTier, {"nvme", "ssd", "disk"});
    const auto mem = pick(tiers, memTier, {"dram", "mem", "cpu"});
    if (!ssdTier.empty() && !ssd) return Error{"no tier is named '" + ssdTier + "' (the SSD tier asked for)"};
    if (!memTier.empty() && !mem) return Error{"no tier is named '" + memTier + "' (the memory tier asked for)"};
    if (!ssd && !mem) return Error{"no tier stands for the SSD or host memory; name them (--ssd-tier, --mem-tier)"};
    PyKvcacheExport out;
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

Result<PyKvcacheExport> pyKvcacheFromScenario(const Evaluation& e, const Presets& presets, const std::string& ssdTier,
                                              const std::string& memTier) {
    PyKvcacheThresholds t;
    t.modelName = e.model.id;
    t.kvDtype = e.cost.inputs().kvDtype;
    std::vector<Candidate> tiers;
    for (size_t i = 0; i < e.tiers.size() && i < e.scenario.tiers.size(); ++i) {
        const auto& tc = e.scenario.tiers[i];
        const auto* preset = tc.preset.empty() ? nullptr : presets.findTier(tc.preset);
        tiers.push_back({tc.name, preset ? preset->kind : std::string(), e.cost.breakevenPrefix(e.tiers[i])});
    }
    return choose(std::move(t), tiers, ssdTier, memTier);
}

Result<PyKvcacheExport> pyKvcacheFromCalibration(const Calibration& c, const std::string& ssdTier,
                                                 const std::string& memTier) {
    if (c.breakevenPrefix.empty())
        return Error{c.source + ": holds no break-even prefix lengths; fit it first (kvbe-cli calibration fit)"};
    PyKvcacheThresholds t;
    t.modelName = c.model;
    t.kvDtype = c.kvDtype.value_or(KvDtype::BF16);
    t.safetyMarginTokens = c.safetyMarginTokens.value_or(0);
    std::vector<Candidate> tiers;
    for (const auto& [name, p] : c.breakevenPrefix) tiers.push_back({name, "", p});
    return choose(std::move(t), tiers, ssdTier, memTier);
}

} // namespace kvbe
