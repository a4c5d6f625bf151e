// Our calibration format (docs/calibration-format.md), format detection, folders of node files,
// mismatch warnings and the py-kvcache v1 export. Other tools' formats: calibration_import.cpp.
#include "kvbe/calibration/calibration.h"

#include "calibration_import.h"
#include "kvbe/base/json_fields.h"
#include "kvbe/base/json_text.h"
#include "kvbe/base/units.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/files/file_kind.h"
#include "pykvcache_import.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace kvbe {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr double kMaxTokens = 1e9, kMaxSeconds = 1e6, kMaxBps = 1e14;

// The file's sections, one reader each; every one is optional.
void readGpu(const FieldReader& r, const json& j, Calibration& c) {
    if (j.contains("gpu") && !j["gpu"].is_null()) {
        const auto& g = r.object(j, "gpu", "gpu");
        c.gpuName = r.string(g, "name", "gpu.name").value_or("");
        if (g.contains("clocks_MHz") && !g["clocks_MHz"].is_null()) {
            const auto& clocks = r.object(g, "clocks_MHz", "gpu.clocks_MHz");
            for (const auto& [k, v] : clocks.items())
                c.gpuClocksMHz[k] = *r.number(clocks, k, "gpu.clocks_MHz." + k, 0, 1e5, "MHz");
        }
    }
}

void readHits(const FieldReader& r, const json& j, Calibration& c) {
    if (j.contains("hits") && !j["hits"].is_null()) {
        const auto& hits = r.array(j, "hits", "hits");
        for (size_t i = 0; i < hits.size(); ++i) {
            const std::string at = "hits[" + std::to_string(i) + "]";
            if (!hits[i].is_object())
                r.fail(at, "an object with tokens, prefix, tier, seconds", &hits[i]);
            HitSample h;
            auto need = [&](const char* key, double max, const char* what) {
                auto v = r.number(hits[i], key, at + "." + key, 0, max, what);
                if (!v) r.fail(at + "." + key, what, nullptr);
                return *v;
            };
            h.tokens = need("tokens", kMaxTokens, "a positive token count");
            h.prefix = need("prefix", kMaxTokens, "a cached prefix length, 0 or more tokens");
            h.seconds = need("seconds", kMaxSeconds, "a positive time in seconds");
            auto tier = r.string(hits[i], "tier", at + ".tier");
            if (!tier) r.fail(at + ".tier", "the tier's name", nullptr);
            h.tier = *tier;
            if (h.prefix > h.tokens)
                r.failWith("field '" + at + ".prefix' is longer than its prompt");
            if (h.tokens <= 0 || h.seconds <= 0)
                r.failWith("field '" + at + "' needs positive tokens and seconds");
            c.hits.push_back(h);
        }
    }
}

void readTiers(const FieldReader& r, const json& j, Calibration& c) {
    if (j.contains("tiers") && !j["tiers"].is_null()) {
        const auto& tiers = r.array(j, "tiers", "tiers");
        for (size_t i = 0; i < tiers.size(); ++i) {
            const std::string at = "tiers[" + std::to_string(i) + "]";
            if (!tiers[i].is_object()) r.fail(at, "a tier object", &tiers[i]);
            TierMeasurement t;
            auto name = r.string(tiers[i], "name", at + ".name");
            if (!name || name->empty()) r.fail(at + ".name", "the tier's name", nullptr);
            t.name = *name;
            for (const auto& [b, s] : r.pairs(tiers[i], "reads", at + ".reads", "bytes, seconds"))
                t.reads.push_back({b, s});
            t.readBps = r.number(tiers[i], "read_Bps", at + ".read_Bps", 1, kMaxBps,
                                 "a positive bandwidth in bytes/s");
            t.writeBps = r.number(tiers[i], "write_Bps", at + ".write_Bps", 1, kMaxBps,
                                  "a positive bandwidth in bytes/s");
            c.tiers.push_back(std::move(t));
        }
    }
}

void readFitted(const FieldReader& r, const json& j, Calibration& c) {
    if (j.contains("fitted") && !j["fitted"].is_null()) {
        const auto& f = r.object(j, "fitted", "fitted");
        FittedParameters p;
        p.utilisation =
            r.number(f, "utilisation", "fitted.utilisation", 1e-6, 1, "a fraction in (0, 1]");
        p.rampHalfTokens = r.number(f, "ramp_half_tokens", "fitted.ramp_half_tokens", 0, kMaxTokens,
                                    "tokens, 0 or more");
        p.overheadS =
            r.number(f, "overhead_s", "fitted.overhead_s", 0, kMaxSeconds, "seconds, 0 or more")
                .value_or(0);
        p.rmsRelativeResidual = r.number(f, "rms_relative_residual", "fitted.rms_relative_residual",
                                         0, 1e6, "a number, 0 or more")
                                    .value_or(0);
        if (f.contains("tiers") && !f["tiers"].is_null()) {
            const auto& ft = r.object(f, "tiers", "fitted.tiers");
            for (const auto& [name, v] : ft.items()) {
                const std::string at = "fitted.tiers." + name;
                if (!v.is_object()) r.fail(at, "an object with bandwidth_Bps and t_fixed_s", &v);
                auto b = r.number(v, "bandwidth_Bps", at + ".bandwidth_Bps", 1, kMaxBps,
                                  "a positive bandwidth in bytes/s");
                auto t = r.number(v, "t_fixed_s", at + ".t_fixed_s", 0, kMaxSeconds,
                                  "seconds, 0 or more");
                if (!b) r.fail(at + ".bandwidth_Bps", "a positive bandwidth in bytes/s", nullptr);
                auto a = r.number(v, "amplification", at + ".amplification", 1, kMaxAmplification,
                                  "bytes moved per useful byte, from 1 to 1000");
                FittedTier tier{*b, t.value_or(0), a.value_or(1)};
                tier.tLayerS = r.number(v, "t_layer_s", at + ".t_layer_s", 0, kMaxSeconds,
                                        "seconds per layer, 0 or more")
                                   .value_or(0);
                if (tier.tLayerS > 0) {
                    const auto layers = r.number(v, "layers", at + ".layers", 1, 1e6,
                                                 "the KV/state layers t_fixed_s was fitted at");
                    if (!layers || std::floor(*layers) != *layers)
                        r.fail(at + ".layers",
                               "the whole number of KV/state layers t_fixed_s was fitted at",
                               v.contains("layers") ? &v["layers"] : nullptr);
                    tier.layers = static_cast<int>(*layers);
                    if (tier.tFixedS - tier.layers * tier.tLayerS < -1e-12)
                        r.failWith("field '" + at +
                                   "' has t_layer_s × layers above t_fixed_s; expected t_fixed_s "
                                   "= t0 + layers × t_layer_s with t0 ≥ 0");
                }
                p.tiers[name] = tier;
            }
        }
        p.fittedOn = readFittedOn(r, f, "fitted_on", "fitted.fitted_on");
        c.fitted = p;
    }
}

// py-kvcache v2's curves and golden points, as a v2 import keeps them.
void readCurves(const FieldReader& r, const json& j, Calibration& c) {
    if (j.contains("curves") && !j["curves"].is_null()) {
        const auto& curves = r.object(j, "curves", "curves");
        for (const auto& [name, v] : curves.items()) {
            const std::string at = "curves." + name;
            if (!v.is_object()) r.fail(at, "an object with floor_s and knots", &v);
            CurveKnots k;
            k.floorS = r.number(v, "floor_s", at + ".floor_s", 0, kMaxSeconds, "seconds, 0 or more")
                           .value_or(0);
            const auto& knots = r.array(v, "knots", at + ".knots");
            for (size_t i = 0; i < knots.size(); ++i) {
                const auto& p = knots[i];
                const std::string kat = at + ".knots[" + std::to_string(i) + "]";
                if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number())
                    r.fail(kat, "a pair [tokens, seconds] of numbers, 0 or more", &p);
                const double x = p[0].get<double>(), y = p[1].get<double>();
                if (!std::isfinite(x) || !std::isfinite(y) || x < 0 || y < 0 || x > kMaxTokens ||
                    y > kMaxSeconds)
                    r.fail(kat, "a pair [tokens, seconds] of numbers, 0 or more", &p);
                if (!k.knots.empty() && x <= k.knots.back().first)
                    r.fail(kat, "tokens above the previous knot's", &p);
                k.knots.emplace_back(x, y);
            }
            c.curves[name] = std::move(k);
        }
    }
}

void readGolden(const FieldReader& r, const json& j, Calibration& c) {
    if (j.contains("golden") && !j["golden"].is_null()) {
        const auto& golden = r.array(j, "golden", "golden");
        for (size_t i = 0; i < golden.size(); ++i) {
            const std::string at = "golden[" + std::to_string(i) + "]";
            if (!golden[i].is_object())
                r.fail(at, "an object with tokens, f, g_ssd and g_mem", &golden[i]);
            auto need = [&](const char* key, double max) {
                auto v = r.number(golden[i], key, at + "." + key, 0, max, "a number, 0 or more");
                if (!v) r.fail(at + "." + key, "a number, 0 or more", nullptr);
                return *v;
            };
            c.golden.push_back({need("tokens", kMaxTokens), need("f", kMaxSeconds),
                                need("g_ssd", kMaxSeconds), need("g_mem", kMaxSeconds)});
        }
    }
}

Calibration parseOurs(const FieldReader& r) {
    const json& j = r.root();
    const auto& version = j["kvbe_calibration"];
    if (!version.is_number_integer()) r.fail("kvbe_calibration", "the format version, 1", &version);
    if (version.get<long long>() != kCalibrationVersion)
        r.failWith("calibration format version " + std::to_string(version.get<long long>()) +
                   "; this kvbe reads version " + std::to_string(kCalibrationVersion));
    Calibration c;
    c.format = toString(CalibrationFormat::Kvbe);
    c.host = r.string(j, "host", "host").value_or("");
    c.date = r.string(j, "date", "date").value_or("");
    readGpu(r, j, c);
    c.model = r.string(j, "model", "model").value_or("");
    if (auto kd = r.string(j, "kv_dtype", "kv_dtype")) {
        c.kvDtype = parseKvDtype(*kd);
        if (!c.kvDtype) r.fail("kv_dtype", "bf16, fp16, fp8, int8 or fp32", &j["kv_dtype"]);
    }
    c.kvBytesPerToken = r.number(j, "kv_bytes_per_token", "kv_bytes_per_token", 1e-3, 1e12,
                                 "a positive number of bytes");
    for (const auto& [n, t] : r.pairs(j, "prefill", "prefill", "tokens, seconds"))
        c.prefill.push_back({n, t});
    readHits(r, j, c);
    readTiers(r, j, c);
    readFitted(r, j, c);
    if (j.contains("breakeven_prefix_tokens") && !j["breakeven_prefix_tokens"].is_null()) {
        const auto& b = r.object(j, "breakeven_prefix_tokens", "breakeven_prefix_tokens");
        for (const auto& [name, v] : b.items()) {
            if (v.is_null()) continue; // never pays within the context
            c.breakevenPrefix[name] = *r.number(b, name, "breakeven_prefix_tokens." + name, 0,
                                                kMaxTokens, "tokens, or null for never");
        }
    }
    c.safetyMarginTokens = r.number(j, "safety_margin_tokens", "safety_margin_tokens", 0,
                                    kMaxTokens, "tokens, 0 or more");
    readCurves(r, j, c);
    readGolden(r, j, c);
    return c;
}

// A file of another kind, given where a calibration file was expected: what it is.
Error notACalibration(const FileClass& kind, const std::string& source) {
    switch (kind.kind) {
    case FileKind::Calibration:
        break;
    case FileKind::Scenario:
        return Error{source +
                     ": this is a kvbe scenario, not a calibration file; open it as a scenario"};
    case FileKind::Unknown:
        if (kind.format == kNvbandwidthText) return Error{kind.reason};
        return Error{source + ": not a calibration file kvbe knows; expected kvbe calibration "
                              "JSON, a py-kvcache break-even file, a pareto-measure CSV, fio JSON "
                              "or nvbandwidth JSON"};
    default:
        return Error{source + ": this is a " + std::string(fileKindInfo(kind.kind).name) +
                     ", not a calibration file"};
    }
    return Error{source + ": not a calibration file"};
}

} // namespace

Result<Calibration> parseCalibration(std::string_view text, const std::string& source) {
    const auto first = text.find_first_not_of(" \t\r\n\xef\xbb\xbf");
    if (first == std::string_view::npos)
        return Error{source + ": the file is empty; expected a calibration file"};
    // Text that does not start with JSON: a pareto-measure CSV, or JSON after lines of something
    // else (fio prints warnings before its JSON).
    if (text[first] != '{' && text[first] != '[') {
        const FileClass kind = classifyText(text, source);
        if (kind.kind != FileKind::Calibration) return notACalibration(kind, source);
        if (calibrationFormatOf(kind.format) == CalibrationFormat::ParetoCsv)
            return detail::parseParetoCsv(text, source);
    }
    auto j = parseJsonText(jsonAfterPreamble(text), source);
    if (!j) return j.error();
    try {
        const FieldReader r(*j, source);
        if (!j->is_object()) r.fail("(top level)", "a calibration object", &*j);
        const FileClass kind = classifyJson(*j, source);
        if (kind.kind != FileKind::Calibration) return notACalibration(kind, source);
        Calibration c;
        const auto format = calibrationFormatOf(kind.format);
        if (format == CalibrationFormat::Kvbe)
            c = parseOurs(r);
        else if (format == CalibrationFormat::Fio)
            c = detail::parseFio(r);
        else if (format == CalibrationFormat::Nvbandwidth)
            c = detail::parseNvbandwidth(r);
        else
            c = detail::parsePyKvcache(r);
        c.source = source;
        return c;
    } catch (const FieldError& e) {
        return Error{e.message};
    } catch (const json::exception& e) {
        return Error{source + ": unexpected content (" + std::string(e.what()) + ")"};
    }
}

Result<Calibration> readCalibration(const fs::path& path) {
    auto text = readTextFile(path, kMaxJsonFileBytes);
    if (!text) return text.error();
    return parseCalibration(*text, path.string());
}

CalibrationSet readCalibrations(const std::vector<fs::path>& paths) {
    CalibrationSet set;
    auto list = filesToRead(paths, FileKind::Calibration);
    set.errors = std::move(list.errors);
    for (const auto& p : list.files) {
        auto c = readCalibration(p);
        if (c)
            set.calibrations.push_back(std::move(*c));
        else
            set.errors.push_back(c.message());
    }
    return set;
}

std::string calibrationToJson(const Calibration& c) {
    json j = json::object();
    j["kvbe_calibration"] = kCalibrationVersion;
    j["host"] = c.host;
    j["date"] = c.date;
    j["gpu"] = {{"name", c.gpuName}, {"clocks_MHz", c.gpuClocksMHz}};
    j["model"] = c.model;
    if (c.kvDtype) j["kv_dtype"] = std::string(toString(*c.kvDtype));
    if (c.kvBytesPerToken) j["kv_bytes_per_token"] = jsonCount(*c.kvBytesPerToken);
    j["prefill"] = json::array();
    for (const auto& s : c.prefill)
        j["prefill"].push_back({jsonCount(s.tokens), s.seconds});
    j["hits"] = json::array();
    for (const auto& h : c.hits)
        j["hits"].push_back({{"tokens", jsonCount(h.tokens)},
                             {"prefix", jsonCount(h.prefix)},
                             {"tier", h.tier},
                             {"seconds", h.seconds}});
    j["tiers"] = json::array();
    for (const auto& t : c.tiers) {
        json tj = {{"name", t.name}, {"reads", json::array()}};
        for (const auto& s : t.reads)
            tj["reads"].push_back({jsonCount(s.bytes), s.seconds});
        if (t.readBps) tj["read_Bps"] = *t.readBps;
        if (t.writeBps) tj["write_Bps"] = *t.writeBps;
        j["tiers"].push_back(std::move(tj));
    }
    if (c.fitted) {
        const auto& f = *c.fitted;
        json fj = json::object();
        if (f.utilisation) fj["utilisation"] = *f.utilisation;
        if (f.rampHalfTokens) fj["ramp_half_tokens"] = *f.rampHalfTokens;
        fj["overhead_s"] = f.overheadS;
        fj["rms_relative_residual"] = f.rmsRelativeResidual;
        if (!f.fittedOn.empty()) fj["fitted_on"] = fittedOnJson(f.fittedOn);
        fj["tiers"] = json::object();
        for (const auto& [name, t] : f.tiers) {
            fj["tiers"][name] = {{"bandwidth_Bps", t.bandwidthBps}, {"t_fixed_s", t.tFixedS}};
            if (t.amplification != 1) fj["tiers"][name]["amplification"] = t.amplification;
            if (t.tLayerS > 0) {
                fj["tiers"][name]["t_layer_s"] = t.tLayerS;
                fj["tiers"][name]["layers"] = t.layers;
            }
        }
        j["fitted"] = std::move(fj);
    }
    j["breakeven_prefix_tokens"] = json::object();
    for (const auto& [tier, tokens] : c.breakevenPrefix)
        j["breakeven_prefix_tokens"][tier] = jsonCount(tokens);
    if (c.safetyMarginTokens) j["safety_margin_tokens"] = jsonCount(*c.safetyMarginTokens);
    if (!c.curves.empty()) {
        json cj = json::object();
        for (const auto& [name, k] : c.curves) {
            json knots = json::array();
            for (const auto& [x, y] : k.knots)
                knots.push_back({jsonCount(x), y});
            cj[name] = {{"floor_s", k.floorS}, {"knots", std::move(knots)}};
        }
        j["curves"] = std::move(cj);
    }
    if (!c.golden.empty()) {
        j["golden"] = json::array();
        for (const auto& g : c.golden)
            j["golden"].push_back({{"tokens", jsonCount(g.tokens)},
                                   {"f", g.f},
                                   {"g_ssd", g.gSsd},
                                   {"g_mem", g.gMem}});
    }
    return dumpJson(j, 2) + "\n";
}

Status saveCalibration(const fs::path& path, const Calibration& c) {
    return writeFileAtomically(path, calibrationToJson(c));
}

std::vector<std::string> mismatchWarnings(const Calibration& c, const ModelSpec& model,
                                          KvDtype kvDtype) {
    std::vector<std::string> out;
    if (!c.model.empty() && !sameModelName(c.model, model.id))
        out.push_back(c.source + ": measured with model '" + c.model + "', the scenario uses '" +
                      model.id + "'");
    // "auto" is the model's own dtype: the scenario's model's, where the file names no other model.
    std::optional<KvDtype> fileDtype = c.kvDtype;
    if (!fileDtype && c.kvDtypeText == "auto" &&
        (c.model.empty() || sameModelName(c.model, model.id)))
        fileDtype = model.weightDtype;
    if (fileDtype && *fileDtype != kvDtype &&
        bytesPerElement(*fileDtype) != bytesPerElement(kvDtype))
        out.push_back(c.source + ": measured with a " + std::string(toString(*fileDtype)) +
                      " KV cache" + (c.kvDtypeText == "auto" ? " (kv_dtype auto)" : "") +
                      ", the scenario uses " + std::string(toString(kvDtype)));
    if (c.kvBytesPerToken && std::abs(*c.kvBytesPerToken - model.kvBytesPerToken(kvDtype)) > 0.5)
        out.push_back(c.source + ": " + formatTokens(*c.kvBytesPerToken) +
                      " KV bytes per token measured, the scenario's model has " +
                      formatTokens(model.kvBytesPerToken(kvDtype)));
    return out;
}

std::map<std::string, double> pyKvcacheGate(const Calibration& c) {
    const double margin = c.safetyMarginTokens.value_or(0);
    std::map<std::string, double> gate;
    for (const char* tier : {"ssd", "mem"}) {
        const auto it = c.breakevenPrefix.find(tier);
        const double t = it == c.breakevenPrefix.end() ? 0 : it->second;
        gate[tier] = t > 0 ? t + margin : 0;
    }
    return gate;
}

double interpolateKnots(const CurveKnots& c, double tokens) {
    const auto& k = c.knots;
    if (k.empty()) return c.floorS;
    const auto hi = std::lower_bound(k.begin(), k.end(), tokens,
                                     [](const auto& p, double v) { return p.first < v; });
    if (hi == k.end()) return k.back().second;
    if (hi->first == tokens || hi == k.begin()) return hi->second;
    const auto lo = hi - 1;
    return lo->second + (hi->second - lo->second) * (tokens - lo->first) / (hi->first - lo->first);
}

double pyKvcacheRuleThreshold(const CurveKnots& f, const CurveKnots& g) {
    if (f.knots.empty() || g.knots.empty()) return 0;
    const double lo = std::max(f.knots.front().first, g.knots.front().first);
    const double hi = std::min(f.knots.back().first, g.knots.back().first);
    std::vector<double> measured;
    for (const auto* c : {&f, &g})
        for (const auto& [m, s] : c->knots)
            if (m >= lo && m <= hi) measured.push_back(m);
    std::optional<double> lastLoss; // the longest measured m where recompute is no slower
    for (double m : measured)
        if (interpolateKnots(f, m) <= interpolateKnots(g, m))
            lastLoss = std::max(m, lastLoss.value_or(m));
    if (!lastLoss) return 0;
    return (std::floor(*lastLoss / kPyKvcacheBlockTokens) + 1) * kPyKvcacheBlockTokens;
}

long long pyKvcacheThresholdTokens(std::optional<double> tokens, double contextTokens) {
    if (!tokens) // never pays: one block past the context, so no prompt reaches it
        return static_cast<long long>(
            (std::floor(std::max(contextTokens, 0.0) / kPyKvcacheBlockTokens) + 1) *
            kPyKvcacheBlockTokens);
    // Whole tokens, rounded up: a threshold must never admit a load that loses.
    return static_cast<long long>(std::ceil(std::clamp(*tokens, 0.0, 9.0e15)));
}

std::optional<std::string> vllmKvCacheDtype(KvDtype kv, std::optional<KvDtype> modelDtype) {
    if (modelDtype && kv == *modelDtype) return "auto";
    switch (kv) {
    case KvDtype::BF16:
        return "bfloat16";
    case KvDtype::FP16:
        return "float16";
    case KvDtype::FP8:
        return "fp8";
    case KvDtype::FP32:
    case KvDtype::INT8:
        return std::nullopt;
    }
    return std::nullopt;
}

namespace {

json pyKvcacheV1Object(const PyKvcacheThresholds& t) {
    json j = json::object();
    if (!t.modelName.empty()) j["model_name"] = t.modelName;
    j["kv_dtype"] = t.kvDtype;
    if (t.writeSsd)
        j["break_even_ssd_tokens"] = pyKvcacheThresholdTokens(t.ssdTokens, t.contextTokens);
    if (t.writeMem)
        j["break_even_mem_tokens"] = pyKvcacheThresholdTokens(t.memTokens, t.contextTokens);
    j["safety_margin_tokens"] = pyKvcacheThresholdTokens(t.safetyMarginTokens, 0);
    return j;
}

json curveJson(const CurveKnots& c) {
    json knots = json::object();
    for (const auto& [m, s] : c.knots)
        knots[std::to_string(static_cast<long long>(m))] = s;
    return {{"floor", c.floorS}, {"knots", std::move(knots)}};
}

} // namespace

std::string pyKvcacheV1Json(const PyKvcacheThresholds& t) {
    return dumpJson(pyKvcacheV1Object(t), 2) + "\n";
}

std::string pyKvcacheV2Json(const PyKvcacheV2& v) {
    json j = {{"schema_version", 2}};
    j.update(pyKvcacheV1Object(v.thresholds));
    if (!v.gpuModel.empty()) j["gpu_model"] = v.gpuModel;
    if (!v.ssdModel.empty()) j["ssd_model"] = v.ssdModel;
    if (v.kvBytesPerToken > 0) j["kv_bytes_per_token"] = jsonCount(v.kvBytesPerToken);
    j["curves"] = {
        {"f", curveJson(v.f)}, {"g_ssd", curveJson(v.gSsd)}, {"g_mem", curveJson(v.gMem)}};
    j["golden"] = json::array();
    for (const auto& g : v.golden)
        j["golden"].push_back(
            {{"tokens", jsonCount(g.tokens)}, {"f", g.f}, {"g_ssd", g.gSsd}, {"g_mem", g.gMem}});
    j["provenance"] = v.provenance;
    return dumpJson(j, 2) + "\n";
}

} // namespace kvbe
