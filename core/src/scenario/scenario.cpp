#include "kvbe/scenario/scenario.h"

#include "kvbe/base/json_fields.h"
#include "kvbe/base/json_text.h"
#include "kvbe/files/file_kind.h"
#include "kvbe/scenario/builtin_scenarios.h"

#include <cmath>
#include <regex>

namespace kvbe {
using nlohmann::json;

namespace {

Scenario parse(const FieldReader& r, const Presets& presets) {
    const json& j = r.root();
    if (!j.is_object()) r.fail("(top level)", "a scenario object", &j);
    if (!j.contains("kvbe_scenario")) {
        if (classifyJson(j, r.source()).kind == FileKind::ModelConfig)
            throw FieldError{r.source() + ": this is a model config.json, not a scenario; "
                                          "pass it with --model"};
        r.fail("kvbe_scenario", "the format version, 1", nullptr);
    }
    if (!j["kvbe_scenario"].is_number_integer())
        r.fail("kvbe_scenario", "the format version, 1", &j["kvbe_scenario"]);
    const auto version = j["kvbe_scenario"].get<long long>();
    if (version > kScenarioVersion || version < 1)
        throw FieldError{r.source() + ": scenario format version " + std::to_string(version) +
                         "; this kvbe reads version " + std::to_string(kScenarioVersion) +
                         (version > kScenarioVersion ? " (the file is from a newer kvbe)" : "")};

    Scenario s;
    s.name = r.string(j, "name", "name").value_or("");
    if (auto m = r.string(j, "model", "model")) s.model = *m;
    s.paramsOverride = r.number(j, "params", "params", 1, 1e16, "a positive parameter count");
    if (auto g = r.string(j, "gpu", "gpu")) {
        if (!g->empty() && !presets.findGpu(*g))
            throw FieldError{r.source() + ": field 'gpu' is \"" + *g + "\"; expected one of " +
                             presets.gpuKeys() + ", or \"\" with peak_tflops"};
        s.gpu = *g;
    }
    s.peakTflops =
        r.number(j, "peak_tflops", "peak_tflops", 1e-3, 1e6, "a positive number of TFLOP/s");
    if (s.gpu.empty() && !s.peakTflops)
        r.fail("peak_tflops", "a peak when no gpu preset is named", nullptr);
    if (auto cd = r.string(j, "compute_dtype", "compute_dtype")) {
        if (*cd != "bf16" && *cd != "fp8")
            r.fail("compute_dtype", "\"bf16\" or \"fp8\"", &j["compute_dtype"]);
        s.computeDtype = *cd;
    }
    if (auto u = r.number(j, "utilisation", "utilisation", -1e300, 1e300, "a fraction in (0, 1]")) {
        if (*u <= 0 || *u > 1)
            r.fail("utilisation", "a fraction in (0, 1], e.g. 0.5", &j["utilisation"]);
        s.utilisation = *u;
    }
    s.rampHalfTokens =
        r.number(j, "ramp_half_tokens", "ramp_half_tokens", 0, 1e9, "tokens, 0 or more");
    if (auto fm = r.string(j, "flop_model", "flop_model")) {
        auto m = parseFlopModel(*fm);
        if (!m) r.fail("flop_model", "\"simple\" or \"detailed\"", &j["flop_model"]);
        s.flopModel = *m;
    }
    if (auto kd = r.string(j, "kv_dtype", "kv_dtype")) {
        auto d = parseKvDtype(*kd);
        if (!d) r.fail("kv_dtype", "bf16, fp16, fp8, int8 or fp32", &j["kv_dtype"]);
        s.kvDtype = *d;
    }
    if (auto sd = r.string(j, "state_dtype", "state_dtype")) {
        auto d = parseKvDtype(*sd);
        if (!d) r.fail("state_dtype", "bf16, fp16, fp32 (or fp8, int8)", &j["state_dtype"]);
        s.stateDtype = *d;
    }
    if (auto wd = r.string(j, "weight_dtype", "weight_dtype")) {
        auto d = parseWeightDtype(*wd);
        if (!d) r.fail("weight_dtype", "bf16, fp16, fp8, int8, int4 or fp32", &j["weight_dtype"]);
        s.weightDtype = *d;
    }
    if (auto tp = r.number(j, "tensor_parallel", "tensor_parallel", 1, 1024,
                           "a whole number from 1 to 1024")) {
        if (std::floor(*tp) != *tp)
            r.fail("tensor_parallel", "a whole number from 1 to 1024", &j["tensor_parallel"]);
        s.tensorParallel = static_cast<int>(*tp);
    }
    s.sharedPath = r.boolean(j, "shared_path", "shared_path").value_or(false);
    s.hostLinkGBps =
        r.number(j, "host_link_GBps", "host_link_GBps", 1e-6, 1e6, "a positive bandwidth in GB/s");
    s.measuredPrefill = r.pairs(j, "measured_prefill", "measured_prefill", "tokens, seconds");

    if (j.contains("tiers")) {
        const auto& tiers = j["tiers"];
        if (!tiers.is_array()) r.fail("tiers", "an array of tiers", &tiers);
        for (size_t i = 0; i < tiers.size(); ++i) {
            const auto& t = tiers[i];
            const std::string at = "tiers[" + std::to_string(i) + "]";
            if (!t.is_object()) r.fail(at, "a tier object", &t);
            TierConfig tc;
            if (auto key = r.string(t, "preset", at + ".preset")) {
                const auto* spec = presets.findTier(*key);
                if (!spec)
                    throw FieldError{r.source() + ": field '" + at + ".preset' is \"" + *key +
                                     "\"; expected one of " + presets.tierKeys()};
                tc = tierFromPreset(*spec);
            }
            if (auto n = r.string(t, "name", at + ".name")) tc.name = *n;
            if (tc.name.empty()) r.fail(at + ".name", "a name (or a preset)", nullptr);
            if (auto b = r.number(t, "bandwidth_GBps", at + ".bandwidth_GBps", -1e300, 1e300,
                                  "a positive bandwidth in GB/s")) {
                if (*b <= 0 || *b > 1e6)
                    r.fail(at + ".bandwidth_GBps", "a positive bandwidth in GB/s",
                           &t["bandwidth_GBps"]);
                tc.bandwidthGBps = *b;
            }
            if (tc.bandwidthGBps <= 0)
                r.fail(at + ".bandwidth_GBps", "a positive bandwidth in GB/s", nullptr);
            if (auto w = r.number(t, "write_GBps", at + ".write_GBps", 1e-6, 1e6,
                                  "a positive write bandwidth in GB/s"))
                tc.writeGBps = *w;
            if (auto f = r.number(t, "t_fixed_ms", at + ".t_fixed_ms", 0, 1e7,
                                  "milliseconds, 0 or more"))
                tc.tFixedMs = *f;
            if (auto l = r.number(t, "t_layer_us", at + ".t_layer_us", 0, 1e10,
                                  "microseconds per layer, 0 or more"))
                tc.tLayerUs = *l;
            if (auto st = r.string(t, "staging", at + ".staging")) {
                auto sv = parseStaging(*st);
                if (!sv)
                    r.fail(at + ".staging", "\"none\", \"serial\" or \"pipelined\"", &t["staging"]);
                tc.staging = *sv;
            }
            if (auto a =
                    r.number(t, "amplification", at + ".amplification", 1, kMaxAmplification,
                             "bytes moved per useful byte, from 1 to 1000 (1: no amplification)"))
                tc.amplification = *a;
            if (auto c = r.string(t, "color", at + ".color")) {
                static const std::regex hex("^#[0-9a-fA-F]{6}$");
                if (!std::regex_match(*c, hex))
                    r.fail(at + ".color", "a colour like \"#2a9d8f\"", &t["color"]);
                tc.color = *c;
            }
            tc.measured = r.pairs(t, "measured", at + ".measured", "bytes, seconds");
            const DriveRating d = readDriveRating(r, t, at);
            if (!d.model.empty()) tc.drive.model = d.model;
            if (d.writesPerDay) tc.drive.writesPerDay = d.writesPerDay;
            if (d.warrantyYears) tc.drive.warrantyYears = d.warrantyYears;
            if (d.capacityBytes) tc.drive.capacityBytes = d.capacityBytes;
            s.tiers.push_back(std::move(tc));
        }
    }
    if (auto f = r.number(j, "cached_fraction", "cached_fraction", 0, 1, "a fraction from 0 to 1"))
        s.cachedFraction = *f;
    if (j.contains("lengths")) {
        const auto& l = j["lengths"];
        if (!l.is_object()) r.fail("lengths", "an object with min, max, points, log", &l);
        if (auto v = r.number(l, "min", "lengths.min", 1, 1e9, "tokens, at least 1"))
            s.lengths.minTokens = *v;
        if (auto v = r.number(l, "max", "lengths.max", 1, 1e9, "tokens, at least 1"))
            s.lengths.maxTokens = *v;
        if (auto v = r.number(l, "points", "lengths.points", 2, 100000,
                              "a whole number from 2 to 100,000")) {
            if (std::floor(*v) != *v)
                r.fail("lengths.points", "a whole number from 2 to 100,000", &l["points"]);
            s.lengths.points = static_cast<int>(*v);
        }
        s.lengths.log = r.boolean(l, "log", "lengths.log").value_or(s.lengths.log);
        if (s.lengths.maxTokens <= s.lengths.minTokens)
            throw FieldError{r.source() + ": lengths.max must be more than lengths.min"};
    }
    if (auto v = r.number(j, "sweep_tokens", "sweep_tokens", 1, 1e9, "tokens, at least 1"))
        s.sweepTokens = *v;
    if (j.contains("prices")) {
        s.prices = readPriceTable(r, j["prices"], "prices");
        s.prices.origin = "the scenario";
    }
    s.fittedOn = readFittedOn(r, j, "fitted_on", "fitted_on");
    return s;
}

json pairsJson(const std::vector<std::pair<double, double>>& v) {
    json a = json::array();
    for (const auto& [x, y] : v)
        a.push_back({jsonCount(x), y}); // (tokens or bytes, seconds)
    return a;
}

} // namespace

TierConfig tierFromPreset(const TierSpec& spec) {
    TierConfig t;
    t.name = spec.name;
    t.preset = spec.key;
    t.bandwidthGBps = spec.readBps / 1e9;
    if (spec.writeBps > 0) t.writeGBps = spec.writeBps / 1e9;
    t.tFixedMs = spec.tFixedS * 1e3;
    t.tLayerUs = spec.tLayerS * 1e6;
    t.staging = spec.kind == TierKind::Nvme ? Staging::Pipelined : Staging::None;
    t.amplification = spec.amplification;
    t.drive = spec.drive;
    return t;
}

Result<Scenario> scenarioFromJson(std::string_view text, const std::string& source,
                                  const Presets& presets) {
    auto j = parseJsonText(text, source);
    if (!j) return j.error();
    try {
        return parse(FieldReader(*j, source), presets);
    } catch (const FieldError& e) {
        return Error{e.message};
    } catch (const json::exception& e) {
        return Error{source + ": unexpected content (" + std::string(e.what()) + ")"};
    }
}

namespace {
// A built-in scenario's key: its path under resources/ without the folder and .kvbe.json.
constexpr std::string_view kScenarioDir = "scenarios/", kScenarioExt = ".kvbe.json";

std::string keyOf(const std::string& path) {
    std::string key = path;
    if (key.rfind(kScenarioDir, 0) == 0) key.erase(0, kScenarioDir.size());
    if (key.size() > kScenarioExt.size() &&
        key.compare(key.size() - kScenarioExt.size(), kScenarioExt.size(), kScenarioExt) == 0)
        key.erase(key.size() - kScenarioExt.size());
    return key;
}
} // namespace

Result<Scenario> loadScenario(const std::filesystem::path& path, const Presets& presets) {
    // A bare name that is no file here: a built-in scenario by its key ("illustrative").
    if (namesBuiltinScenario(path)) {
        const std::string key = keyOf(path.string());
        if (builtinScenarioText(key, presets)) return builtinScenario(key, presets);
        return Error{path.string() + ": no such file, nor a built-in scenario (" +
                     builtinScenarioKeys(presets) + ")"};
    }
    auto text = readTextFile(path, kMaxJsonFileBytes);
    if (!text) return text.error();
    return scenarioFromJson(*text, path.string(), presets);
}

std::string scenarioToJson(const Scenario& s) {
    json j = json::object();
    j["kvbe_scenario"] = kScenarioVersion;
    j["name"] = s.name;
    j["model"] = s.model;
    if (s.paramsOverride) j["params"] = jsonCount(*s.paramsOverride);
    j["gpu"] = s.gpu;
    if (s.peakTflops) j["peak_tflops"] = *s.peakTflops;
    j["compute_dtype"] = s.computeDtype;
    j["utilisation"] = s.utilisation;
    if (s.rampHalfTokens) j["ramp_half_tokens"] = *s.rampHalfTokens;
    j["flop_model"] = std::string(toString(s.flopModel));
    if (s.kvDtype) j["kv_dtype"] = std::string(toString(*s.kvDtype));
    if (s.stateDtype) j["state_dtype"] = std::string(toString(*s.stateDtype));
    if (s.weightDtype) j["weight_dtype"] = std::string(toString(*s.weightDtype));
    j["tensor_parallel"] = s.tensorParallel;
    j["shared_path"] = s.sharedPath;
    if (s.hostLinkGBps) j["host_link_GBps"] = *s.hostLinkGBps;
    if (!s.measuredPrefill.empty()) j["measured_prefill"] = pairsJson(s.measuredPrefill);
    j["tiers"] = json::array();
    for (const auto& t : s.tiers) {
        json tj = json::object();
        tj["name"] = t.name;
        if (!t.preset.empty()) tj["preset"] = t.preset;
        tj["bandwidth_GBps"] = t.bandwidthGBps;
        if (t.writeGBps) tj["write_GBps"] = *t.writeGBps;
        tj["t_fixed_ms"] = t.tFixedMs;
        if (t.tLayerUs != 0) tj["t_layer_us"] = t.tLayerUs;
        tj["staging"] = std::string(toString(t.staging));
        if (t.amplification != 1) tj["amplification"] = t.amplification;
        if (!t.color.empty()) tj["color"] = t.color;
        if (!t.measured.empty()) tj["measured"] = pairsJson(t.measured);
        if (!t.drive.model.empty()) tj["drive_model"] = t.drive.model;
        if (t.drive.writesPerDay) tj["drive_writes_per_day"] = *t.drive.writesPerDay;
        if (t.drive.warrantyYears) tj["warranty_years"] = *t.drive.warrantyYears;
        if (t.drive.capacityBytes) tj["drive_capacity_TB"] = *t.drive.capacityBytes / 1e12;
        j["tiers"].push_back(std::move(tj));
    }
    j["cached_fraction"] = s.cachedFraction;
    j["lengths"] = {{"min", jsonCount(s.lengths.minTokens)},
                    {"max", jsonCount(s.lengths.maxTokens)},
                    {"points", s.lengths.points},
                    {"log", s.lengths.log}};
    j["sweep_tokens"] = jsonCount(s.sweepTokens);
    if (!s.prices.empty()) {
        json p = json::object();
        auto price = [](const Price& v) {
            return v.source.empty() ? json(v.usd) : json{{"usd", v.usd}, {"source", v.source}};
        };
        if (s.prices.dramPerGiB) p["dram_usd_per_GiB"] = price(*s.prices.dramPerGiB);
        for (const auto& [k, v] : s.prices.gpuPerHour)
            p["gpu_usd_per_hour"][k] = price(v);
        for (const auto& [k, v] : s.prices.drive)
            p["drive_usd"][k] = price(v);
        for (const auto& [k, v] : s.prices.link)
            p["link_usd"][k] = price(v);
        j["prices"] = p;
    }
    if (!s.fittedOn.empty()) j["fitted_on"] = fittedOnJson(s.fittedOn);
    return dumpJson(j, 2) + "\n";
}

Status saveScenario(const std::filesystem::path& path, const Scenario& s) {
    return writeFileAtomically(path, scenarioToJson(s));
}

Result<Scenario> defaultScenario(const Presets& presets) {
    return scenarioFromJson(presets.defaultScenarioText(), "resources/scenarios/default.kvbe.json",
                            presets);
}

std::optional<std::string_view> builtinScenarioText(const std::string& key,
                                                    const Presets& presets) {
    if (key == "default") return presets.defaultScenarioText();
    for (const auto& [path, text] : presets.scenarioTexts())
        if (keyOf(path) == key) return std::string_view(text);
    return std::nullopt;
}

std::string builtinScenarioKeys(const Presets& presets) {
    std::string out = "default";
    for (const auto& [path, text] : presets.scenarioTexts())
        out += ", " + keyOf(path);
    return out;
}

bool namesBuiltinScenario(const std::filesystem::path& path) {
    std::error_code ec;
    return !path.has_parent_path() && !std::filesystem::exists(path, ec);
}

Result<Scenario> builtinScenario(const std::string& key, const Presets& presets) {
    const auto text = builtinScenarioText(key, presets);
    if (!text)
        return Error{"'" + key + "': not a built-in scenario; expected one of " +
                     builtinScenarioKeys(presets)};
    return scenarioFromJson(*text, "resources/scenarios/" + key + ".kvbe.json", presets);
}

Result<std::uint64_t> kvBlockBytes(const std::string& modelRef) {
    auto presets = Presets::loadBuiltin();
    if (!presets) return presets.error();
    std::string ref = modelRef;
    std::optional<KvDtype> dtype;
    if (ref.empty()) {
        auto scenario = defaultScenario(*presets);
        if (!scenario) return scenario.error();
        ref = scenario->model;
        dtype = scenario->kvDtype;
    }
    auto model = resolveModel(ref, *presets);
    if (!model) return Error{"--model " + ref + ": " + model.message()};
    const std::uint64_t bytes = model->kvBlockBytes(dtype.value_or(model->weightDtype));
    if (bytes == 0) return Error{"--model " + ref + ": the model has no KV cache bytes per token"};
    return bytes;
}

Result<Evaluation> evaluate(const Scenario& s, const Presets& presets) {
    auto model = resolveModel(s.model, presets);
    if (!model) return model.error();
    return evaluate(s, presets, *model);
}

Result<double> scenarioPeakFlops(const Scenario& s, const GpuSpec* gpu) {
    double peak = 0;
    if (s.peakTflops)
        peak = *s.peakTflops * 1e12;
    else if (gpu && s.computeDtype == "fp8") {
        if (!gpu->fp8Flops)
            return Error{gpu->name + " has no FP8 tensor cores; use compute dtype bf16"};
        peak = *gpu->fp8Flops;
    } else if (gpu)
        peak = gpu->bf16Flops;
    if (!(peak > 0)) return Error{"no GPU peak: name a GPU preset or give peak_tflops"};
    return peak;
}

Result<Evaluation> evaluate(const Scenario& s, const Presets& presets, const ModelSpec& model) {
    std::optional<GpuSpec> gpu;
    if (!s.gpu.empty()) {
        const auto* g = presets.findGpu(s.gpu);
        if (!g) return Error{"unknown GPU '" + s.gpu + "'; expected one of " + presets.gpuKeys()};
        gpu = *g;
    }
    auto peakOr = scenarioPeakFlops(s, gpu ? &*gpu : nullptr);
    if (!peakOr) return peakOr.error();
    const double peak = *peakOr;

    const double link = s.hostLinkGBps ? *s.hostLinkGBps * 1e9 : (gpu ? gpu->hostLinkBps : 55e9);

    CostInputs in;
    in.model = model;
    in.flopModel = s.flopModel;
    in.paramsOverride = s.paramsOverride;
    in.kvDtype = s.kvDtype.value_or(model.weightDtype);
    in.stateDtype = s.stateDtype;
    in.peakFlops = peak;
    in.utilisation = s.utilisation;
    in.rampHalfTokens = s.rampHalfTokens;
    in.tensorParallel = s.tensorParallel;
    in.sharedPath = s.sharedPath;
    if (!s.measuredPrefill.empty()) {
        auto table = PrefillTable::create(s.measuredPrefill, "measured_prefill");
        if (!table) return table.error();
        in.measuredPrefill = std::move(*table);
    }
    auto cost = CostModel::create(std::move(in));
    if (!cost) return cost.error();

    std::vector<TierPath> tiers;
    for (const auto& t : s.tiers) {
        TierPath p{t.name, t.bandwidthGBps * 1e9, t.tFixedMs * 1e-3, t.amplification,
                   t.tLayerUs * 1e-6};
        if (!t.measured.empty()) {
            auto fit = fitTransfer(t.measured, "tier '" + t.name + "' measured transfers");
            if (!fit) return fit.error();
            p.bandwidthBps = fit->bandwidthBps;
            p.tFixedS = fit->tFixedS;
            p.tLayerS = 0; // the transfers' fixed cost is the whole of it
        }
        if (!(p.bandwidthBps > 0) || !std::isfinite(p.bandwidthBps))
            return Error{"tier '" + t.name + "': bandwidth must be a positive number of GB/s"};
        p.bandwidthBps = stagedBandwidth(p.bandwidthBps, link, t.staging);
        if (!(t.amplification >= 1) || t.amplification > kMaxAmplification)
            return Error{"tier '" + t.name + "': amplification " + std::to_string(t.amplification) +
                         "; expected bytes moved per useful byte, from 1 to 1000"};
        tiers.push_back(p);
    }
    return Evaluation{s, model, gpu, peak, link, std::move(*cost), std::move(tiers)};
}

} // namespace kvbe
