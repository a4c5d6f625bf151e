// The scenario flags: their table, and the Scenario they make.
#include "kvbe/scenario/scenario_flags.h"

#include "kvbe/scenario/tier_flags.h"

namespace kvbe {

const std::vector<ScenarioFlagSpec>& scenarioFlagSpecs() {
    using F = ScenarioFlags;
    static const std::vector<ScenarioFlagSpec> specs = {
        {"--scenario",
         "Start from a .kvbe.json scenario, or a built-in one by name: default (fitted to the "
         "py-kvcache study), illustrative (u = 50 %, nominal fixed costs), "
         "llama-3.2-3b-h100-study-fitted; the flags below override it",
         {},
         &F::scenario},
        {"--model",
         "Preset id (meta-llama/Llama-3.2-3B), config.json, folder or HF cache entry",
         {},
         &F::model},
        {"--gpu", "GPU preset key (see `kvbe-cli gpus`)", {}, &F::gpu},
        {"--peak-tflops", "Dense peak in TFLOP/s (overrides the GPU preset)", {}, &F::peak},
        {"--util", "Achieved utilisation, 0 < u <= 1 (0.5 or 50%)", {}, &F::util},
        {"--flops", "FLOP model", {"simple", "detailed"}, &F::flops},
        {"--kv-dtype",
         "KV cache dtype (default: the model's torch_dtype)",
         {"bf16", "fp16", "fp8", "int8", "fp32"},
         &F::kvDtype},
        {"--state-dtype",
         "Hybrid models: the Mamba / linear-attention state dtype (default: the config's "
         "mamba_ssm_cache_dtype, else the model's dtype)",
         {"fp32", "bf16", "fp16"},
         &F::stateDtype},
        {"--weights",
         "The weights' precision as served, which sets the HBM left for KV (default: the "
         "config's quantization_config, else its torch_dtype)",
         {"bf16", "fp16", "fp8", "int8", "int4", "fp32"},
         &F::weights},
        {"--params", "Parameter count P of the simple model (3.21e9, 70B)", {}, &F::params},
        {"--tp",
         "Tensor parallel degree, 1 to 1024: the query heads must divide by it, and the KV heads "
         "too (or it by them, when it exceeds them)",
         {},
         &F::tp},
        {"--shared-path",
         "The TP GPUs share one storage path (each sees B/t)",
         {},
         nullptr,
         nullptr,
         &F::sharedPath},
        {"--tier",
         "A tier, repeatable; the tiers named replace the scenario's. KEY[×AMP]: a scenario tier "
         "(name or preset key) or a tier preset; KEY=CAPACITY: it holding 512GiB, 8TB, "
         "6000blocks, 3e6tokens, 0 or unlimited; NAME=GBPS[@FIXED_MS][×AMP][:CAPACITY]: a custom "
         "tier (x for ×)",
         {},
         nullptr,
         &F::tiers},
        {"--amplification",
         "Bytes moved per useful byte (>= 1): AMP for every tier, or NAME=AMP for one; repeatable",
         {},
         nullptr,
         &F::amplification},
    };
    return specs;
}

Result<FlaggedScenario> scenarioFromFlags(const ScenarioFlags& f) {
    auto presets = Presets::loadBuiltin();
    if (!presets) return presets.error();
    auto base = f.scenario.empty() ? defaultScenario(*presets) : loadScenario(f.scenario, *presets);
    if (!base) return base.error();
    FlaggedScenario out{std::move(*presets), std::move(*base), {}, {}};
    if (!f.scenario.empty()) out.where = f.scenario + ": ";
    Scenario& s = out.scenario;
    if (!f.model.empty()) s.model = f.model;
    if (!f.gpu.empty()) {
        if (!out.presets.findGpu(f.gpu))
            return Error{"--gpu '" + f.gpu + "': not a GPU preset; expected one of " +
                         out.presets.gpuKeys()};
        s.gpu = f.gpu;
    }
    if (!f.peak.empty()) {
        auto v = parseNumber(f.peak);
        if (!v || *v <= 0 || *v > 1e6)
            return Error{"--peak-tflops " + f.peak +
                         ": expected a positive number of dense TFLOP/s, at most 1,000,000, "
                         "e.g. 989"};
        s.peakTflops = *v;
    }
    if (!f.util.empty()) {
        auto u = parseFraction(f.util, false);
        if (!u) return Error{"--util " + u.message()};
        s.utilisation = *u;
    }
    // The choices are checked when the flags are read (a usage error), so these parse.
    if (!f.flops.empty()) s.flopModel = parseFlopModel(f.flops).value_or(s.flopModel);
    if (!f.kvDtype.empty()) s.kvDtype = parseKvDtype(f.kvDtype);
    if (!f.stateDtype.empty()) s.stateDtype = parseKvDtype(f.stateDtype);
    if (!f.weights.empty()) s.weightDtype = parseWeightDtype(f.weights);
    if (!f.params.empty()) {
        auto p = parseParamCount(f.params);
        if (!p) return Error{"--params " + p.message()};
        s.paramsOverride = *p;
    }
    if (!f.tp.empty()) {
        auto tp = parseCount(f.tp, 1, 1024);
        if (!tp) return Error{"--tp " + tp.message()};
        s.tensorParallel = static_cast<int>(*tp);
    }
    if (f.sharedPath) s.sharedPath = true;
    out.capacities.assign(s.tiers.size(), std::nullopt);
    if (!f.tiers.empty()) {
        auto tiers = applyTierFlags(s.tiers, f.tiers, out.presets);
        if (!tiers) return tiers.error();
        s.tiers = std::move(tiers->tiers);
        out.capacities = std::move(tiers->capacities);
    }
    for (const auto& a : f.amplification)
        if (auto st = applyAmplification(a, s.tiers); !st) return st.error();
    // Outputs that print the scenario's name say what the flags changed in it.
    ScenarioFlags overrides = f;
    overrides.scenario.clear();
    if (const auto changed = scenarioFlagsCommandLine(overrides); !changed.empty()) {
        if (!f.model.empty() || !f.gpu.empty()) {
            // The name says the model and GPU the scenario had: with another, it names the
            // ones in use first, and the scenario they came from.
            const auto* gpu = out.presets.findGpu(s.gpu);
            const std::string was = s.name.empty() ? "the scenario" : "'" + s.name + "'";
            s.name = s.model + " on " + (gpu ? gpu->name : s.gpu) + " (" + was + " with " +
                     changed + ")";
        } else {
            s.name += (s.name.empty() ? "" : " ") + ("(" + changed + ")");
        }
    }
    return out;
}

std::string scenarioFlagsCommandLine(const ScenarioFlags& f) {
    std::string line;
    auto add = [&](std::string_view flag, const std::string& value) {
        line += (line.empty() ? "" : " ") + std::string(flag) + (value.empty() ? "" : " " + value);
    };
    for (const auto& spec : scenarioFlagSpecs()) {
        if (spec.text && !(f.*spec.text).empty()) add(spec.flag, f.*spec.text);
        if (spec.list)
            for (const auto& v : f.*spec.list)
                add(spec.flag, v);
        if (spec.on && f.*spec.on) add(spec.flag, "");
    }
    return line;
}

} // namespace kvbe
