// A Scenario holds every input of one what-if: model, GPU, FLOP model, tiers, ranges.
// Saved and loaded as versioned JSON (.kvbe.json).
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/cost/fixed_cost.h"
#include "kvbe/scenario/hardware.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/prices.h"

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvbe {

inline constexpr int kScenarioVersion = 1;

struct TierConfig {
    std::string name;
    std::string preset;       // tier preset key it came from, if any
    double bandwidthGBps = 0; // read bandwidth of the tier itself (GB/s, 1e9)
    double tFixedMs = 0;      // t0: the fixed cost per hit whatever the model
    Staging staging = Staging::None;
    std::string color; // "#rrggbb", for the charts
    // Measured transfers (bytes, seconds); when present they replace bandwidth and t_fixed (and
    // the per-layer part).
    std::vector<std::pair<double, double>> measured;
    // Bytes moved per useful byte of KV (≥ 1; 1: none). The load sees bandwidth / amplification.
    double amplification = 1;
    std::optional<double> writeGBps; // write (offload) bandwidth, shown for sizing; not in the load
    // The per-layer part: a hit costs t0 + layers · t_layer with the model's KV/state layers
    // (docs/cost-model.md, "Fixed cost per layer"). 0: t_fixed_ms on every model.
    double tLayerUs = 0;
    DriveRating drive; // the drives the tier is built of (from its preset; each field overridable)

    bool operator==(const TierConfig&) const = default;
};

struct LengthRange {
    double minTokens = 256;
    double maxTokens = 131072;
    int points = 512;
    bool log = true;
    bool operator==(const LengthRange&) const = default;
};

struct Scenario {
    std::string name;
    std::string model = "meta-llama/Llama-3.2-3B"; // preset id, file or folder
    std::optional<double> paramsOverride;
    std::string gpu = "h100-sxm";      // preset key; empty for a custom GPU
    std::optional<double> peakTflops;  // overrides the preset's dense peak
    std::string computeDtype = "bf16"; // bf16 or fp8: which preset peak applies
    double utilisation = 0.5;
    std::optional<double> rampHalfTokens;
    FlopModel flopModel = FlopModel::Simple;
    std::optional<KvDtype> kvDtype; // default: the model's torch_dtype
    // Hybrid models' recurrent state dtype; default: the config's mamba_ssm_cache_dtype, else
    // the model's dtype (docs/cost-model.md, "Hybrid and sparse models").
    std::optional<KvDtype> stateDtype;
    // The precision the weights are served in (fp8, int4, ...): what they take of the HBM, so
    // the HBM left for KV. Default: the config's quantization_config, else its torch_dtype.
    std::optional<WeightDtype> weightDtype;
    int tensorParallel = 1;
    bool sharedPath = false;
    std::optional<double> hostLinkGBps; // staging link; default: the GPU preset's
    std::vector<std::pair<double, double>> measuredPrefill; // (tokens, seconds); empty: analytic
    std::vector<TierConfig> tiers;
    double cachedFraction = 0.5;
    LengthRange lengths;
    double sweepTokens = 32768;
    // Prices that override resources/prices.json (or a --prices file) one by one, for plans.
    PriceTable prices;
    // The models the tiers' fixed costs were fitted on (empty: not fitted, or not said). With one
    // model and another in `model`, the fit is carried over under its form; `kvbe-cli published
    // compare` then puts both forms beside the published figures.
    std::vector<FittedModel> fittedOn;

    bool operator==(const Scenario&) const = default;
};

// A tier filled in from its preset.
TierConfig tierFromPreset(const TierSpec& spec);

// Parses a scenario; tiers that name only a preset are filled in from it.
Result<Scenario> scenarioFromJson(std::string_view text, const std::string& source,
                                  const Presets& presets);
Result<Scenario> loadScenario(const std::filesystem::path& path, const Presets& presets);
std::string scenarioToJson(const Scenario& s);
Status saveScenario(const std::filesystem::path& path, const Scenario& s);
Result<Scenario> defaultScenario(const Presets& presets);
// The KV block (ModelSpec::kvBlockBytes) of the model a probe's --model names, among the
// built-in presets, in the model's own dtype; an empty ref means the default scenario's model
// and KV dtype. Fails with a sentence that starts with "--model REF".
Result<std::uint64_t> kvBlockBytes(const std::string& modelRef);

// Everything resolved: the model read, the GPU looked up, the tiers staged.
struct Evaluation {
    Scenario scenario;
    ModelSpec model;
    std::optional<GpuSpec> gpu;
    double peakFlops = 0;
    double hostLinkBps = 0;
    CostModel cost;
    std::vector<TierPath> tiers;
};
Result<Evaluation> evaluate(const Scenario& s, const Presets& presets);
// The dense peak (FLOP/s) the scenario computes at: its peak_tflops, else the GPU preset's peak
// of the compute dtype. Fails, with the sentence evaluate() gives, for fp8 on a GPU without an
// FP8 peak (never falls back to bf16) and where there is no peak at all.
Result<double> scenarioPeakFlops(const Scenario& s, const GpuSpec* gpu);
// As evaluate(), with the model already read (the explorer caches it while sliders move).
Result<Evaluation> evaluate(const Scenario& s, const Presets& presets, const ModelSpec& model);

} // namespace kvbe
