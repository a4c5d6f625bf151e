// The scenario flags: their options on a subcommand and the Scenario they make.
#include "scenario_flags.h"

#include "kvbe/base/units.h"

namespace kvbe::cli {

void addScenarioFlags(CLI::App* sub, ScenarioFlags& f, bool withModel) {
    sub->add_option("--scenario", f.scenario,
                    "Start from a .kvbe.json scenario (default: the built-in one); the flags "
                    "below override it");
    if (withModel)
        sub->add_option(
            "--model", f.model,
            "Preset id (meta-llama/Llama-3.2-3B), config.json, folder or HF cache entry");
    sub->add_option("--gpu", f.gpu, "GPU preset key (see `kvbe-cli gpus`)");
    sub->add_option("--peak-tflops", f.peak, "Dense peak in TFLOP/s (overrides the GPU preset)");
    sub->add_option("--util", f.util, "Achieved utilisation, 0 < u <= 1 (0.5 or 50%)");
    sub->add_option("--flops", f.flops, "FLOP model")->check(CLI::IsMember({"simple", "detailed"}));
    sub->add_option("--kv-dtype", f.kvDtype, "KV cache dtype (default: the model's torch_dtype)")
        ->check(CLI::IsMember({"bf16", "fp16", "fp8", "int8", "fp32"}));
    sub->add_option("--state-dtype", f.stateDtype,
                    "Hybrid models: the Mamba / linear-attention state dtype (default: the "
                    "config's mamba_ssm_cache_dtype, else the model's dtype)")
        ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
    sub->add_option("--params", f.params, "Parameter count P of the simple model (3.21e9, 70B)");
    sub->add_option("--tp", f.tp,
                    "Tensor parallel degree: the query heads must divide by it, and the KV "
                    "heads too (or it by them, when it exceeds them)")
        ->check(CLI::Range(1, 1024));
    sub->add_flag("--shared-path", f.sharedPath,
                  "The TP GPUs share one storage path (each sees B/t)");
    sub->add_option("--tier", f.tiers, kTierFlagHelp);
    sub->add_option(
        "--amplification", f.amplification,
        "Bytes moved per useful byte (>= 1): AMP for every tier, or NAME=AMP for one; repeatable");
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
    if (!f.params.empty()) {
        auto p = parseParamCount(f.params);
        if (!p) return Error{"--params " + p.message()};
        s.paramsOverride = *p;
    }
    if (f.tp > 0) s.tensorParallel = f.tp;
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
    if (const auto changed = scenarioFlagsCommandLine(overrides); !changed.empty())
        s.name += (s.name.empty() ? "" : " ") + ("(" + changed + ")");
    return out;
}

std::string scenarioFlagsCommandLine(const ScenarioFlags& f) {
    std::string line;
    auto add = [&](const char* flag, const std::string& value) {
        if (value.empty()) return;
        line += std::string(line.empty() ? "" : " ") + flag + " " + value;
    };
    add("--scenario", f.scenario);
    add("--model", f.model);
    add("--gpu", f.gpu);
    add("--peak-tflops", f.peak);
    add("--util", f.util);
    add("--flops", f.flops);
    add("--kv-dtype", f.kvDtype);
    add("--state-dtype", f.stateDtype);
    add("--params", f.params);
    if (f.tp > 0) add("--tp", std::to_string(f.tp));
    if (f.sharedPath) line += std::string(line.empty() ? "" : " ") + "--shared-path";
    for (const auto& t : f.tiers)
        add("--tier", t);
    for (const auto& a : f.amplification)
        add("--amplification", a);
    return line;
}

} // namespace kvbe::cli
