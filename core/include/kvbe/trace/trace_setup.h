// What a scenario gives a trace replay (docs/workload-model.md, "Tiers and capacity"): the bytes
// one cached block takes, the HBM left for KV on the GPU, and the scenario's offload tiers as the
// simulator sees them. The CLI (`kvbe-cli trace`) and the explorer's Workload view share these.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/base/units.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace_sim.h"

#include <cstdint>
#include <vector>

namespace kvbe {

// Bytes one B-token block takes in a tier: B · kv_bytes_per_token plus, for hybrid models, one
// state snapshot (the serving stack keeps the recurrent state at block boundaries, so every
// stored block carries one): C_T / blockBytes blocks fit in a tier of C_T bytes, and every block
// written costs blockBytes of write bandwidth.
double traceBlockBytes(const CostModel& cost, std::uint32_t blockTokens);

// A capacity as typed (kvbe/base/units.h) in bytes, where a block holds blockTokens tokens in
// blockBytes bytes; unlimited is kUnlimited.
double capacityBytes(const Capacity& capacity, double blockBytes, double blockTokens);

// The GPU's HBM left for KV as vLLM's default leaves it: 90 % of the memory on each of the
// tensor-parallel GPUs, less the weights in their dtype. Fails with a sentence where the GPU is
// not a preset (its memory is unknown) or the weights do not fit; the latter names the
// tensor-parallel sizes that would hold them and the KV room each leaves.
Result<double> defaultGpuCacheBytes(const Evaluation& e);

// A tensor-parallel size at which the model's weights fit in 90 % of its GPUs' memory, and the
// HBM that leaves for KV across them (what defaultGpuCacheBytes would give).
struct TensorParallelFit {
    int gpus = 1;
    double kvBytes = 0;
};
// The sizes up to `maxGpus` the model can be split into (validTensorParallelSizes) that hold the
// weights, smallest first; none where the GPU is not a preset.
std::vector<TensorParallelFit> tensorParallelFits(const Evaluation& e, int maxGpus = 8);

// The simulator's tiers for a scenario, the one place they are built from it (the CLI's trace
// commands and the Workload view): the scenario's tiers, fastest first as it lists them, with
// unlimited capacity; each named by its preset key where it has one (its own name otherwise), read
// as the cost model sees it, and written at the tier's own write bandwidth, which a scenario
// tier may set and otherwise takes from its preset, as calc reports it (0 where unknown).
std::vector<SimTier> scenarioSimTiers(const Evaluation& e);

} // namespace kvbe
