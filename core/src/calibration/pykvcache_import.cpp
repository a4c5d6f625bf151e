// py-kvcache break-even files, v1 (thresholds) and v2 (curves), read the way py-kvcache reads
// them (the shared formats/py-kvcache.md): every field optional, thresholds non-negative
// integers, v2 curves f, g_ssd and g_mem with knots keyed by token counts written as strings.
#include "pykvcache_import.h"
#include "kvbe/files/file_kind.h"

#include "kvbe/scenario/presets.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace kvbe::detail {
using nlohmann::json;

namespace {

constexpr double kMaxTokens = 1e9, kMaxSeconds = 1e6;
const char* const kCurveNames[] = {"f", "g_ssd", "g_mem"};

std::string whole(double tokens) {
    return std::to_string(static_cast<long long>(tokens));
}

// The presets, parsed once: "auto" resolves to a known model's own dtype.
const Presets* builtinPresets() {
    static const Result<Presets> presets = Presets::loadBuiltin();
    return presets ? &*presets : nullptr;
}

// A threshold: a non-negative integer; absent means 0 ("gate off").
std::optional<double> threshold(const FieldReader& r, const json& j, const std::string& key) {
    if (!j.contains(key)) return std::nullopt;
    const auto& v = j[key];
    const std::string expected = "a whole number of tokens, 0 or more (0 or absent: gate off)";
    if (!v.is_number()) r.fail(key, expected, &v);
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0 || d != std::floor(d) || d > kMaxTokens)
        r.fail(key, expected, &v);
    return d;
}

// Knot keys: a non-negative integer written in decimal digits ("01024" is 1024).
std::optional<double> knotKey(const std::string& key) {
    if (key.empty() || key.size() > 10) return std::nullopt;
    double v = 0;
    for (char ch : key) {
        if (ch < '0' || ch > '9') return std::nullopt;
        v = v * 10 + (ch - '0');
    }
    if (v > kMaxTokens) return std::nullopt;
    return v;
}

CurveKnots readCurve(const FieldReader& r, const json& curves, const std::string& name) {
    const std::string at = "curves." + name;
    const auto& curve = r.object(curves, name, at);
    CurveKnots c;
    auto floor = r.number(curve, "floor", at + ".floor", 0, kMaxSeconds, "seconds, 0 or more");
    if (!floor) r.fail(at + ".floor", "seconds, 0 or more", nullptr);
    c.floorS = *floor;
    const auto& knots = r.object(curve, "knots", at + ".knots");
    std::set<double> seen;
    for (const auto& [key, value] : knots.items()) {
        const std::string kat = at + ".knots." + key;
        const auto tokens = knotKey(key);
        if (!tokens)
            r.failWith("field '" + at + ".knots' has the key \"" + key +
                       "\"; expected token counts written as whole numbers (\"0\", \"1024\")");
        if (!seen.insert(*tokens).second)
            r.failWith("field '" + at + ".knots' has two keys for " + whole(*tokens) +
                       " tokens (\"" + key + "\" repeats one); expected each token count once");
        if (!value.is_number()) r.fail(kat, "seconds, 0 or more", &value);
        const double s = value.get<double>();
        if (!std::isfinite(s) || s < 0 || s > kMaxSeconds)
            r.fail(kat, "seconds, 0 or more (at most 1e6)", &value);
        c.knots.emplace_back(*tokens, s);
    }
    if (c.knots.size() < 2)
        r.failWith("field '" + at + ".knots' has " + std::to_string(c.knots.size()) +
                   " knot(s); expected at least two");
    std::sort(c.knots.begin(), c.knots.end());
    return c;
}

void readCurves(const FieldReader& r, Calibration& c) {
    const json& j = r.root();
    const auto& curves = r.object(j, "curves", "curves");
    for (const auto& [name, v] : curves.items()) {
        (void)v;
        if (std::find(std::begin(kCurveNames), std::end(kCurveNames), name) ==
            std::end(kCurveNames))
            r.failWith("field 'curves' has a curve named '" + name +
                       "'; expected exactly f, g_ssd and g_mem");
    }
    for (const char* name : kCurveNames)
        if (!curves.contains(name))
            r.failWith("field 'curves' has no curve '" + std::string(name) +
                       "'; expected exactly f, g_ssd and g_mem");
    for (const char* name : kCurveNames)
        c.curves[name] = readCurve(r, curves, name);
}

void readGolden(const FieldReader& r, Calibration& c) {
    const auto& golden = r.array(r.root(), "golden", "golden");
    for (size_t i = 0; i < golden.size(); ++i) {
        const auto& g = golden[i];
        const std::string at = "golden[" + std::to_string(i) + "]";
        if (!g.is_object()) r.fail(at, "an object with tokens, f, g_ssd and g_mem", &g);
        auto need = [&](const char* key, double max, const std::string& what) {
            auto v = r.number(g, key, at + "." + key, 0, max, what);
            if (!v) r.fail(at + "." + key, what, nullptr);
            return *v;
        };
        GoldenPoint p;
        p.tokens = need("tokens", kMaxTokens, "a token count, 0 or more");
        if (p.tokens != std::floor(p.tokens))
            r.fail(at + ".tokens", "a whole number of tokens", &g["tokens"]);
        p.f = need("f", kMaxSeconds, "seconds, 0 or more");
        p.gSsd = need("g_ssd", kMaxSeconds, "seconds, 0 or more");
        p.gMem = need("g_mem", kMaxSeconds, "seconds, 0 or more");
        c.golden.push_back(p);
    }
}

// Free-form: strings as they are, anything else as its JSON text.
void readProvenance(const json& j, Calibration& c) {
    if (!j.contains("provenance") || !j["provenance"].is_object()) return;
    for (const auto& [k, v] : j["provenance"].items())
        c.provenance[k] = v.is_string() ? v.get<std::string>() : dumpJson(v, -1);
}

// The curves and golden points as samples the fit and the charts use: f is the cold prefill of
// m tokens; g_ssd and g_mem the time to serve m tokens whose whole KV came from the SSD or host
// memory, i.e. hits with prefix = prompt = m, of tiers "ssd" and "mem" (v1's names).
void samplesFromCurves(Calibration& c) {
    for (const auto& [m, s] : c.curves.at("f").knots)
        if (m > 0 && s > 0) c.prefill.push_back({m, s});
    for (const auto& [curve, tier] : {std::pair{"g_ssd", "ssd"}, std::pair{"g_mem", "mem"}})
        for (const auto& [m, s] : c.curves.at(curve).knots)
            if (m > 0 && s > 0) c.hits.push_back({m, m, tier, s});
}

void samplesFromGolden(Calibration& c) {
    for (const auto& g : c.golden) {
        if (g.tokens <= 0) continue;
        if (g.f > 0) c.prefill.push_back({g.tokens, g.f});
        if (g.gSsd > 0) c.hits.push_back({g.tokens, g.tokens, "ssd", g.gSsd});
        if (g.gMem > 0) c.hits.push_back({g.tokens, g.tokens, "mem", g.gMem});
    }
}

} // namespace

Calibration parsePyKvcache(const FieldReader& r) {
    const json& j = r.root();
    Calibration c;
    int schema = j.contains("curves") ? 2 : 1;
    if (j.contains("schema_version")) {
        const auto& v = j["schema_version"];
        if (!v.is_number_integer() || (v.get<long long>() != 1 && v.get<long long>() != 2))
            r.fail("schema_version", "1 or 2 (the py-kvcache schemas kvbe reads)", &v);
        schema = static_cast<int>(v.get<long long>());
    }
    c.format =
        toString(schema == 2 ? CalibrationFormat::PyKvcacheV2 : CalibrationFormat::PyKvcacheV1);
    c.model = r.string(j, "model_name", "model_name").value_or("");
    if (auto kd = r.string(j, "kv_dtype", "kv_dtype")) {
        c.kvDtypeText = *kd;
        if (*kd == "auto") {
            const auto* presets = builtinPresets();
            const auto* m = presets && !c.model.empty() ? presets->findModel(c.model) : nullptr;
            if (m) c.kvDtype = m->spec.weightDtype;
        } else if (*kd == "fp8" || *kd == "fp8_e4m3" || *kd == "fp8_e5m2") {
            c.kvDtype = KvDtype::FP8;
        } else if (*kd == "bfloat16") {
            c.kvDtype = KvDtype::BF16;
        } else if (*kd == "float16") {
            c.kvDtype = KvDtype::FP16;
        } else {
            // py-kvcache only compares the string (a difference is a warning), so neither do we
            // refuse it.
            c.kvDtype = parseKvDtype(*kd);
            c.warnings.push_back(
                r.source() + ": kv_dtype '" + *kd +
                "' is not one of vLLM's auto, fp8, fp8_e4m3, fp8_e5m2, bfloat16, float16" +
                (c.kvDtype ? "; read as " + std::string(toString(*c.kvDtype))
                           : "; KV dtype unknown"));
        }
    }
    if (auto v = threshold(r, j, "break_even_ssd_tokens")) c.breakevenPrefix["ssd"] = *v;
    if (auto v = threshold(r, j, "break_even_mem_tokens")) c.breakevenPrefix["mem"] = *v;
    if (j.contains("safety_margin_tokens")) {
        const auto& v = j["safety_margin_tokens"];
        const std::string expected = "a whole number of tokens, 0 or more";
        if (!v.is_number()) r.fail("safety_margin_tokens", expected, &v);
        const double d = v.get<double>();
        if (!std::isfinite(d) || d < 0 || d != std::floor(d) || d > kMaxTokens)
            r.fail("safety_margin_tokens", expected, &v);
        c.safetyMarginTokens = d;
    }
    c.kvBytesPerToken = r.number(j, "kv_bytes_per_token", "kv_bytes_per_token", 1e-3, 1e12,
                                 "a positive number of bytes");
    c.gpuName = r.string(j, "gpu_model", "gpu_model").value_or("");
    c.ssdModel = r.string(j, "ssd_model", "ssd_model").value_or("");
    readProvenance(j, c);
    if (schema == 1) return c;

    if (!j.contains("curves"))
        r.fail("curves", "the f, g_ssd and g_mem curves of a schema 2 file", nullptr);
    readCurves(r, c);
    if (j.contains("golden") && !j["golden"].is_null()) readGolden(r, c);
    samplesFromCurves(c);
    samplesFromGolden(c);
    // The scalar thresholds are what a v1 reader gates with; say so where the curves imply others.
    for (const auto& [curve, tier] : {std::pair{"g_ssd", "ssd"}, std::pair{"g_mem", "mem"}}) {
        const double rule = pyKvcacheRuleThreshold(c.curves.at("f"), c.curves.at(curve));
        const auto it = c.breakevenPrefix.find(tier);
        const double stated = it == c.breakevenPrefix.end() ? 0 : it->second;
        if (std::abs(rule - stated) >= kPyKvcacheBlockTokens)
            c.warnings.push_back(r.source() + ": break_even_" + std::string(tier) + "_tokens is " +
                                 whole(stated) + "; its curves give " + whole(rule) +
                                 " by py-kvcache's rule");
    }
    return c;
}

} // namespace kvbe::detail
