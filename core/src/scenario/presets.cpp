#include "kvbe/scenario/presets.h"

#include "kvbe/base/text.h"

#include "kvbe/base/json_fields.h"
#include "kvbe/base/json_text.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/model/config_reader.h"
#include "kvbe/scenario/gpu_names.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>

namespace kvbe {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string joinKeys(const auto& map) {
    std::string out;
    for (const auto& [k, v] : map)
        out += (out.empty() ? "" : ", ") + k;
    return out;
}

constexpr double kTiniest = std::numeric_limits<double>::denorm_min();
constexpr double kLargest = std::numeric_limits<double>::max();

// A positive finite number at obj[key]; `at` names obj in messages ("gpus.h100").
double positive(const FieldReader& r, const json& obj, const std::string& key,
                const std::string& at) {
    auto v = r.number(obj, key, at + "." + key, kTiniest, kLargest, "a positive number");
    if (!v) r.fail(at + "." + key, "a positive number", nullptr);
    return *v;
}

// The same, where null stands for "none" (0) but the key must still be there.
double positiveOrNull(const FieldReader& r, const json& obj, const std::string& key,
                      const std::string& at) {
    if (!obj.contains(key)) r.fail(at + "." + key, "a positive number", nullptr);
    return r.number(obj, key, at + "." + key, kTiniest, kLargest, "a positive number").value_or(0);
}

std::map<std::string, std::string> sourcesOf(const json& obj) {
    std::map<std::string, std::string> out;
    if (obj.contains("sources") && obj["sources"].is_object())
        for (const auto& [k, v] : obj["sources"].items())
            if (v.is_string()) out[k] = v.get<std::string>();
    return out;
}

} // namespace

// Preset messages name the field bare after the file: "resources/gpus.json: gpus.h100.memory_GB …".
Result<std::map<std::string, GpuSpec>> parseGpuPresets(std::string_view text,
                                                       const std::string& source) {
    auto j = parseJsonText(text, source);
    if (!j) return j.error();
    // Each preset's device names are the matching rule's (gpu_names.h); a file whose names are
    // malformed is refused here too, rather than matching no device unseen.
    if (auto names = parseGpuDeviceNames(text, source); !names) return names.error();
    try {
        const FieldReader r(*j, source, FieldNaming::Bare);
        if (!j->is_object() || !j->contains("gpus") || !(*j)["gpus"].is_object())
            r.failWith("expected an object with a \"gpus\" object");
        std::map<std::string, GpuSpec> out;
        for (const auto& [key, g] : (*j)["gpus"].items()) {
            const std::string at = "gpus." + key;
            if (!g.is_object()) r.fail(at, "an object", &g);
            GpuSpec s;
            s.key = key;
            s.name = r.string(g, "name", at + ".name").value_or(key);
            s.bf16Flops = positive(r, g, "bf16_tflops", at) * 1e12;
            if (const double fp8 = positiveOrNull(r, g, "fp8_tflops", at); fp8 > 0)
                s.fp8Flops = fp8 * 1e12;
            s.memoryBytes = positive(r, g, "memory_GB", at) * 1e9;
            s.hostLink = r.string(g, "host_link", at + ".host_link").value_or("");
            s.hostLinkBps = positive(r, g, "host_link_practical_GBps", at) * 1e9;
            s.sources = sourcesOf(g);
            out[key] = s;
        }
        return out;
    } catch (const FieldError& e) {
        return Error{e.message};
    }
}

Result<std::map<std::string, TierSpec>> parseTierPresets(std::string_view text,
                                                         const std::string& source) {
    auto j = parseJsonText(text, source);
    if (!j) return j.error();
    try {
        const FieldReader r(*j, source, FieldNaming::Bare);
        if (!j->is_object() || !j->contains("tiers") || !(*j)["tiers"].is_object())
            r.failWith("expected an object with a \"tiers\" object");
        std::map<std::string, TierSpec> out;
        for (const auto& [key, t] : (*j)["tiers"].items()) {
            const std::string at = "tiers." + key;
            if (!t.is_object()) r.fail(at, "an object", &t);
            TierSpec s;
            s.key = key;
            s.name = r.string(t, "name", at + ".name").value_or(key);
            if (auto kind = r.string(t, "kind", at + ".kind")) {
                s.kind = parseTierKind(*kind);
                if (!s.kind) r.fail(at + ".kind", tierKindChoices(), &t["kind"]);
            }
            s.readBps = positive(r, t, "read_GBps", at) * 1e9;
            s.writeBps = positive(r, t, "write_GBps", at) * 1e9;
            const std::string fixed = "a number of milliseconds, 0 or more";
            auto tFixedMs = r.number(t, "t_fixed_ms", at + ".t_fixed_ms", 0, kLargest, fixed);
            if (!tFixedMs) r.fail(at + ".t_fixed_ms", fixed, nullptr);
            s.tFixedS = *tFixedMs * 1e-3;
            s.tLayerS = r.number(t, "t_layer_us", at + ".t_layer_us", 0, kLargest,
                                 "a number of microseconds per layer, 0 or more")
                            .value_or(0) *
                        1e-6;
            if (auto a = r.number(t, "amplification", at + ".amplification", 1, kMaxAmplification,
                                  "bytes moved per useful byte, from 1 to " +
                                      std::to_string(static_cast<int>(kMaxAmplification))))
                s.amplification = *a;
            s.drive = readDriveRating(r, t, at);
            s.sources = sourcesOf(t);
            out[key] = s;
        }
        return out;
    } catch (const FieldError& e) {
        return Error{e.message};
    }
}

DriveRating readDriveRating(const FieldReader& r, const json& obj, const std::string& at) {
    DriveRating d;
    d.model = r.string(obj, "drive_model", at + ".drive_model").value_or("");
    d.writesPerDay = r.number(obj, "drive_writes_per_day", at + ".drive_writes_per_day", 1e-6, 1e6,
                              "drive writes per day above 0, e.g. 1 or 3");
    d.warrantyYears = r.number(obj, "warranty_years", at + ".warranty_years", 1e-3, 100,
                               "years above 0 and at most 100, e.g. 5");
    if (auto tb = r.number(obj, "drive_capacity_TB", at + ".drive_capacity_TB", 1e-6, 1e6,
                           "the capacity of one drive in TB (1e12 bytes) above 0, e.g. 7.68"))
        d.capacityBytes = *tb * 1e12;
    return d;
}

Result<Presets> Presets::loadBuiltin() {
    Presets p;
    unsigned long count = 0;
    const EmbeddedFile* files = embeddedFiles(&count);
    for (unsigned long i = 0; i < count; ++i) {
        const std::string path = files[i].path;
        const std::string_view text(reinterpret_cast<const char*>(files[i].data), files[i].size);
        const std::string source = "resources/" + path;
        if (path == "gpus.json") {
            auto g = parseGpuPresets(text, source);
            if (!g) return g.error();
            p.m_gpus = std::move(*g);
        } else if (path == "tiers.json") {
            auto t = parseTierPresets(text, source);
            if (!t) return t.error();
            p.m_tiers = std::move(*t);
        } else if (path == "scenarios/default.kvbe.json") {
            p.m_defaultScenario = std::string(text);
        } else if (path.rfind("scenarios/", 0) == 0) {
            p.m_scenarios.emplace_back(path, std::string(text));
        } else if (path.rfind("published/", 0) == 0) {
            p.m_published.emplace_back(path, std::string(text));
        } else if (path.rfind("models/", 0) == 0 && path.size() > 5 &&
                   path.compare(path.size() - 5, 5, ".json") == 0) {
            std::string stem = fs::path(path).stem().string();
            const auto sep = stem.find("__");
            const std::string id =
                sep == std::string::npos ? stem : stem.substr(0, sep) + "/" + stem.substr(sep + 2);
            auto spec = parseModelConfig(text, source, id);
            if (!spec) return spec.error();
            p.m_models.push_back({id, path, std::move(*spec)});
        }
    }
    std::sort(p.m_scenarios.begin(), p.m_scenarios.end());
    std::sort(p.m_published.begin(), p.m_published.end());
    std::sort(p.m_models.begin(), p.m_models.end(), [](const ModelPreset& a, const ModelPreset& b) {
        return a.spec.paramsTotal < b.spec.paramsTotal;
    });
    return p;
}

const ModelPreset* Presets::findModel(std::string_view id) const {
    const std::string want = lower(id);
    for (const auto& m : m_models) {
        const std::string have = lower(m.id);
        if (have == want) return &m;
        std::string underscored = have;
        if (auto pos = underscored.find('/'); pos != std::string::npos)
            underscored.replace(pos, 1, "__");
        if (underscored == want) return &m;
        if (auto pos = have.find('/'); pos != std::string::npos && have.substr(pos + 1) == want)
            return &m;
    }
    return nullptr;
}

const GpuSpec* Presets::findGpu(std::string_view key) const {
    auto it = m_gpus.find(lower(key));
    return it == m_gpus.end() ? nullptr : &it->second;
}

const TierSpec* Presets::findTier(std::string_view key) const {
    auto it = m_tiers.find(lower(key));
    return it == m_tiers.end() ? nullptr : &it->second;
}

std::string Presets::gpuKeys() const {
    return joinKeys(m_gpus);
}
std::string Presets::tierKeys() const {
    return joinKeys(m_tiers);
}
std::string Presets::modelIds() const {
    std::string out;
    for (const auto& m : m_models)
        out += (out.empty() ? "" : ", ") + m.id;
    return out;
}

Result<ModelSpec> resolveModel(const std::string& ref, const Presets& presets) {
    if (ref.empty())
        return Error{"no model given; expected a preset id, a config.json path or a folder"};
    std::error_code ec;
    if (fs::exists(ref, ec)) return readModelConfig(ref);
    if (const auto* m = presets.findModel(ref)) return m->spec;
    if (auto cached = findInHfCache(ref)) return readModelConfig(*cached);
    return Error{"model '" + ref +
                 "' is neither a file, a preset nor in the Hugging Face cache; "
                 "presets: " +
                 presets.modelIds()};
}

} // namespace kvbe
