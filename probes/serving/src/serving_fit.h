// The serving sweep's fit: u and the shared overhead from the cold prompts, each offload tier's
// t_fixed and bandwidth from its hits, the GPU tier's t_fixed; the per-request floor kept out of
// the tiers' fixed costs; for llama.cpp each offload hit taken over the slot hit it shares.
#pragma once

#include "kvbe/calibration/calibration.h"
#include "kvbe/calibration/fit.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/probes/probe.h"
#include "serving_outputs.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kvbe::serving::detail {

// What the fit gave; the GPU tier moves no bytes, so only its t_fixed is fitted.
struct SweepFit {
    FitResult fit;
    CostInputs inputs; // the scenario's, with the fitted utilisation
    CostModel model;   // of those inputs
    std::optional<double> gpuTFixed, gpuPStar;
    struct Offload {
        const FittedTier* fitted = nullptr; // in c.fitted
        std::optional<double> pStar;
    };
    std::map<std::string, Offload> offload; // the offload tiers that were fitted
    std::optional<double> floorS;           // the per-request floor measured
};

// Fits `c` (its prefill and offload hits; the GPU tier's hits apart in `gpuHits`, added to c
// after), setting c.fitted and c.breakevenPrefix. Notes go to the sink.
probes::ExitResult<SweepFit> fitSweep(const SweepData& d, Calibration& c,
                                      const std::vector<HitSample>& gpuHits,
                                      probes::ProbeSink& sink);

} // namespace kvbe::serving::detail
