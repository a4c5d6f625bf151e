#include "kvbe/trace/trace_setup.h"

#include "kvbe/base/units.h"

namespace kvbe {

double traceBlockBytes(const CostModel& cost, std::uint32_t blockTokens) {
    return cost.kvBytesPerToken() * static_cast<double>(blockTokens) + cost.stateBytes();
}

Result<double> defaultGpuCacheBytes(const Evaluation& e) {
    if (!e.gpu)
        return Error{"the scenario's GPU is not a preset, so its memory is unknown; give the HBM "
                     "left for KV, e.g. --gpu-cache 40GiB"};
    const auto& m = e.model;
    const double weights = m.paramsTotal * bytesPerElement(m.weightDtype);
    const double left = 0.9 * e.gpu->memoryBytes * e.scenario.tensorParallel - weights;
    if (left <= 0)
        return Error{"the weights (" + formatBytes(weights) + ") do not fit in 90 % of the GPU's " +
                     formatBytes(e.gpu->memoryBytes) +
                     "; give the KV capacity, e.g. --gpu-cache 40GiB"};
    return left;
}

std::vector<SimTier> scenarioSimTiers(const Evaluation& e, const Presets& presets) {
    std::vector<SimTier> out;
    const auto& configs = e.scenario.tiers;
    for (std::size_t i = 0; i < configs.size() && i < e.tiers.size(); ++i) {
        const auto& tc = configs[i];
        const TierSpec* spec = tc.preset.empty() ? nullptr : presets.findTier(tc.preset);
        SimTier st;
        st.name = tc.preset.empty() ? tc.name : tc.preset;
        st.path = e.tiers[i];
        st.writeBps = spec ? spec->writeBps : 0.0;
        st.drive = tc.drive;
        out.push_back(st);
    }
    return out;
}

} // namespace kvbe
