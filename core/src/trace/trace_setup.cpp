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

namespace {

// At the scenario's weight precision (ModelSpec::weightBytes).
double weightBytes(const Evaluation& e) {
    return e.model.weightBytes(e.scenario.weightDtype);
}

} // namespace

std::vector<TensorParallelFit> tensorParallelFits(const Evaluation& e, int maxGpus) {
    std::vector<TensorParallelFit> out;
    if (!e.gpu) return out;
    for (int t : validTensorParallelSizes(e.model, maxGpus)) {
        const double left = 0.9 * e.gpu->memoryBytes * t - weightBytes(e);
        if (left > 0) out.push_back({t, left});
    }
    return out;
}

Result<double> defaultGpuCacheBytes(const Evaluation& e) {
    if (!e.gpu)
        return Error{"the scenario's GPU is not a preset, so its memory is unknown; give the HBM "
                     "left for KV, e.g. --gpu-cache 40GiB"};
    const double weights = weightBytes(e);
    const int tp = e.scenario.tensorParallel;
    const double left = 0.9 * e.gpu->memoryBytes * tp - weights;
    if (left > 0) return left;
    // Which larger tensor-parallel sizes would hold the weights, and the KV room they leave.
    std::string fits;
    int shown = 0;
    for (const auto& f : tensorParallelFits(e)) {
        if (f.gpus <= tp || shown == 3) continue;
        const std::string gpus = std::to_string(f.gpus);
        fits += shown == 0 ? "; with tensor parallel " + gpus + " they leave " +
                                 formatBytes(f.kvBytes) + " for KV"
                           : ", with " + gpus + " " + formatBytes(f.kvBytes);
        ++shown;
    }
    return Error{"the weights of " + e.model.id + " (" + formatBytes(weights) + " in " +
                 std::string(toString(e.model.servedWeights(e.scenario.weightDtype))) +
                 ") do not fit in 90 % of " + std::to_string(tp) + " × " + e.gpu->name + " (" +
                 formatBytes(0.9 * e.gpu->memoryBytes * tp) + ")" +
                 (fits.empty() ? std::string("; no tensor-parallel size up to 8 GPUs holds them")
                               : fits + " (set tensor_parallel in the scenario file)") +
                 "; or give the KV capacity, e.g. --gpu-cache 40GiB"};
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
        st.drive = tc.drive;
        out.push_back(st);
    }
    return out;
}

} // namespace kvbe
