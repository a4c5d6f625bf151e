#include "kvbe/trace/trace_setup.h"

#include "kvbe/base/units.h"

namespace kvbe {

double traceBlockBytes(const CostModel& cost, std::uint32_t blockTokens) {
    return cost.kvBytesPerToken() * static_cast<double>(blockTokens) + cost.stateBytes();
}

double capacityBytes(const Capacity& capacity, double blockBytes, double blockTokens) {
    switch (capacity.unit) {
    case Capacity::Unit::Bytes:
        return capacity.value;
    case Capacity::Unit::Blocks:
        return capacity.value * blockBytes;
    case Capacity::Unit::Tokens:
        return capacity.value / blockTokens * blockBytes;
    case Capacity::Unit::Unlimited:
        break;
    }
    return kUnlimited;
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

std::vector<SimTier> scenarioSimTiers(const Evaluation& e) {
    std::vector<SimTier> out;
    const auto& configs = e.scenario.tiers;
    for (std::size_t i = 0; i < configs.size() && i < e.tiers.size(); ++i) {
        const auto& tc = configs[i];
        SimTier st;
        st.name = tc.preset.empty() ? tc.name : tc.preset;
        st.path = e.cost.resolved(e.tiers[i]); // the fixed cost on this model
        st.writeBps = tc.writeGBps ? *tc.writeGBps * 1e9 : 0.0;
        out.push_back(st);
    }
    return out;
}

} // namespace kvbe
