#include "hybrid_layers.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace kvbe::detail {

bool isQwenLinear(const std::string& type) {
    return type == "qwen3_next" || type == "qwen3_5_text" || type == "qwen3_5_moe_text" ||
           type == "qwen3_5" || type == "qwen3_5_moe";
}

namespace {

bool startsWith(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}
bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Architectures whose recurrent layers this reader knows (state shapes after vLLM's
// MambaStateShapeCalculator and the transformers modelling code of each).
const std::set<std::string>& recurrentTypes() {
    static const std::set<std::string> types = {
        "nemotron_h",  "granitemoehybrid", "falcon_h1",        "jamba",
        "qwen3_next",  "qwen3_5_text",     "qwen3_5_moe_text", "qwen3_5",
        "qwen3_5_moe", "kimi_linear",      "minimax",          "lfm2"};
    return types;
}

// Recurrent architectures with no layout here: their state is not attention KV, and reading
// them as a transformer would be wrong by a wide margin.
const std::set<std::string>& refusedTypes() {
    static const std::set<std::string> types = {
        "mamba", "mamba2", "falcon_mamba",    "zamba", "zamba2", "bamba",    "rwkv",      "rwkv5",
        "rwkv6", "rwkv7",  "recurrent_gemma", "xlstm", "plamo2", "lfm2_moe", "minimax_m1"};
    return types;
}

std::string quoted(const std::string& s) {
    return "\"" + s + "\"";
}

// One layer_types / layers_block_type value.
LayerSlot slotFromTypeName(const Fields& f, const std::string& key, const std::string& value,
                           const std::string& type) {
    LayerSlot s;
    if (value == "full_attention" || value == "attention") return s;
    if (value == "sliding_attention") {
        s.attn = AttnKind::Sliding;
        return s;
    }
    if (value == "chunked_attention") {
        s.attn = AttnKind::Chunked;
        return s;
    }
    if (value == "linear_attention") {
        if (isQwenLinear(type))
            s.mixer = Mixer::GatedDeltaNet;
        else if (type == "minimax")
            s.mixer = Mixer::Lightning;
        else if (type == "kimi_linear")
            s.mixer = Mixer::Kda;
        else
            refuse(f, "field '" + f.path(key) +
                          "' holds \"linear_attention\", and kvbe does not know "
                          "the linear-attention state of model_type '" +
                          type + "'; the config is refused rather than read as full attention");
        return s;
    }
    if (value == "mamba") {
        if (type == "granitemoehybrid")
            s.mixer = Mixer::Mamba2;
        else if (type == "jamba")
            s.mixer = Mixer::Mamba1;
        else
            refuse(f, "field '" + f.path(key) +
                          "' holds \"mamba\", and kvbe does not know the Mamba "
                          "state of model_type '" +
                          type + "'; the config is refused rather than read as full attention");
        return s;
    }
    if (value == "conv") {
        if (type != "lfm2")
            refuse(f, "field '" + f.path(key) +
                          "' holds \"conv\", and kvbe knows short-convolution "
                          "layers only for model_type 'lfm2'; the config is refused");
        s.mixer = Mixer::ShortConv;
        return s;
    }
    refuse(f,
           "field '" + f.path(key) + "' holds " + quoted(value) +
               ", a layer kind kvbe does not know; expected full_attention, sliding_attention, "
               "chunked_attention, linear_attention, attention, mamba or conv. It could change "
               "which layers hold KV, so the config is refused rather than read as full attention");
}

const json& arrayOf(const Fields& f, const std::string& key, int layers, const char* what) {
    const json& a = *f.find(key);
    if (!a.is_array() || a.size() != static_cast<size_t>(layers))
        f.fail(key, "an array of " + std::to_string(layers) + " " + what + " (one per layer)", a);
    return a;
}

// 1-based layer numbers (Kimi-Linear's linear_attn_config lists).
std::vector<int> layerNumbers(const Fields& f, const json& cfg, const char* key, int layers) {
    std::vector<int> out;
    const std::string path = f.path("linear_attn_config") + "." + key;
    if (!cfg.contains(key) || !cfg[key].is_array())
        throw ConfigError{f.source() + ": field '" + path +
                          "' is missing or not an array; expected "
                          "the 1-based layer numbers"};
    for (const auto& v : cfg[key]) {
        if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > layers)
            throw ConfigError{f.source() + ": field '" + path + "' holds " + dumpJson(v) +
                              "; expected layer numbers from 1 to " + std::to_string(layers)};
        out.push_back(static_cast<int>(v.get<long long>()));
    }
    return out;
}

} // namespace

[[noreturn]] void refuse(const Fields& f, const std::string& sentence) {
    throw ConfigError{f.source() + ": " + sentence};
}

int intField(const json& obj, const Fields& f, const std::string& parent, const char* key) {
    const std::string path = f.path(parent) + "." + key;
    if (!obj.contains(key) || !obj[key].is_number_integer() || obj[key].get<long long>() < 1 ||
        obj[key].get<long long>() > kMaxDim)
        throw ConfigError{f.source() + ": field '" + path + "' is " +
                          (obj.contains(key) ? jsonTypeName(obj[key]) : std::string("missing")) +
                          "; expected a positive integer"};
    return static_cast<int>(obj[key].get<long long>());
}

void refuseUnknownLayoutKeys(const Fields& f, const std::string& type) {
    if (refusedTypes().count(type))
        refuse(f, "model_type '" + type +
                      "' is a recurrent architecture whose state kvbe does not "
                      "read yet; it is refused rather than read as a transformer");
    static const std::set<std::string> knownPatterns = {
        "sliding_window_pattern", "hybrid_override_pattern",
        "activation_sparsity_pattern"}; // Gemma 3n: MLP sparsity, no bearing on KV
    const bool recurrent = recurrentTypes().count(type) > 0;
    for (const auto& [key, path] : f.keys()) {
        if (endsWith(key, "_pattern") && !knownPatterns.count(key))
            refuse(f, "field '" + path +
                          "' is a layer pattern kvbe does not know; it could change "
                          "which layers hold KV, so the config is refused rather than read as full "
                          "attention");
        if (!recurrent &&
            (startsWith(key, "mamba_") || startsWith(key, "ssm_") || startsWith(key, "linear_")))
            refuse(f,
                   "field '" + path +
                       "' describes recurrent (Mamba or linear-attention) layers, "
                       "and kvbe does not know how model_type '" +
                       type +
                       "' lays them out; the config is refused rather than read as full attention");
    }
}

namespace {

// The layouts a config can give, each read by one function: none when the config does not use
// that layout, a refusal when it uses it wrongly. readLayerLayout tries them in this order.

// Nemotron-H's hybrid_override_pattern.
std::optional<LayerLayout> nemotronPattern(const Fields& f, const std::string&, int layers) {
    LayerLayout out;
    const auto n = static_cast<size_t>(layers);
    if (f.has("hybrid_override_pattern")) {
        // Nemotron-H: one character per block. transformers' NemotronHConfig: M Mamba-2,
        // * attention, - MLP, E MoE.
        const json& j = *f.find("hybrid_override_pattern");
        if (!j.is_string()) f.fail("hybrid_override_pattern", "a string of M, *, - and E", j);
        const auto p = j.get<std::string>();
        if (p.size() != n)
            f.fail("hybrid_override_pattern",
                   "one character per layer (" + std::to_string(layers) + "), not " +
                       std::to_string(p.size()),
                   j);
        out.key = "hybrid_override_pattern";
        for (size_t i = 0; i < n; ++i) {
            LayerSlot s;
            switch (p[i]) {
            case 'M':
                s.mixer = Mixer::Mamba2;
                s.mlp = Mlp::None;
                break;
            case '*':
                s.mixer = Mixer::Attention;
                s.mlp = Mlp::None;
                break;
            case '-':
                s.mixer = Mixer::None;
                s.mlp = Mlp::Dense;
                break;
            case 'E':
                s.mixer = Mixer::None;
                s.mlp = Mlp::Moe;
                break;
            default:
                refuse(f, "field '" + f.path("hybrid_override_pattern") + "' holds '" +
                              std::string(1, p[i]) + "' at layer " + std::to_string(i) +
                              ", a block kvbe does not know; expected M (Mamba-2), * (attention), "
                              "- (MLP) or E (MoE). The config is refused rather than read as full "
                              "attention");
            }
            out.layers.push_back(s);
        }
        return out;
    }
    return std::nullopt;
}

// layer_types or layers_block_type: one name per layer.
std::optional<LayerLayout> layerTypeList(const Fields& f, const std::string& type, int layers) {
    LayerLayout out;
    for (const char* key : {"layer_types", "layers_block_type"}) {
        if (!f.has(key)) continue;
        const json& a = arrayOf(f, key, layers, "layer types");
        out.key = key;
        for (const auto& v : a) {
            if (!v.is_string()) f.fail(key, "an array of strings", a);
            out.layers.push_back(slotFromTypeName(f, key, v.get<std::string>(), type));
        }
        return out;
    }
    return std::nullopt;
}

// MiniMax's attn_type_list.
std::optional<LayerLayout> miniMaxList(const Fields& f, const std::string& type, int layers) {
    LayerLayout out;
    if (f.has("attn_type_list")) {
        // MiniMax-Text-01: 0 lightning (linear) attention, 1 softmax attention.
        const json& a = arrayOf(f, "attn_type_list", layers, "attention types");
        if (type != "minimax")
            refuse(f, "field '" + f.path("attn_type_list") +
                          "' is MiniMax's layout, and kvbe "
                          "does not know it for model_type '" +
                          type + "'; the config is refused");
        out.key = "attn_type_list";
        for (const auto& v : a) {
            LayerSlot s;
            if (v.is_number_integer() && v.get<long long>() == 1)
                s.mixer = Mixer::Attention;
            else if (v.is_number_integer() && v.get<long long>() == 0)
                s.mixer = Mixer::Lightning;
            else
                f.fail("attn_type_list",
                       "0 (lightning attention) or 1 (softmax attention) per layer", v);
            out.layers.push_back(s);
        }
        return out;
    }
    return std::nullopt;
}

// Kimi-Linear's linear_attn_config.
std::optional<LayerLayout> kimiLinearConfig(const Fields& f, const std::string& type, int layers) {
    LayerLayout out;
    const auto n = static_cast<size_t>(layers);
    if (f.has("linear_attn_config")) {
        // Kimi-Linear: kda_layers and full_attn_layers, numbered from 1.
        const json& c = *f.find("linear_attn_config");
        if (!c.is_object()) f.fail("linear_attn_config", "an object", c);
        if (type != "kimi_linear")
            refuse(f, "field '" + f.path("linear_attn_config") +
                          "' is Kimi-Linear's layout, and "
                          "kvbe does not know it for model_type '" +
                          type + "'; the config is refused");
        out.key = "linear_attn_config";
        out.layers.assign(n, LayerSlot{Mixer::None, AttnKind::Full, Mlp::Default});
        for (int l : layerNumbers(f, c, "kda_layers", layers))
            out.layers[static_cast<size_t>(l - 1)].mixer = Mixer::Kda;
        for (int l : layerNumbers(f, c, "full_attn_layers", layers))
            out.layers[static_cast<size_t>(l - 1)].mixer = Mixer::Attention;
        for (size_t i = 0; i < n; ++i)
            if (out.layers[i].mixer == Mixer::None)
                refuse(f, "field '" + f.path("linear_attn_config") + "' names layer " +
                              std::to_string(i + 1) +
                              " in neither kda_layers nor full_attn_layers; "
                              "the config is refused rather than read as full attention");
        return out;
    }
    return std::nullopt;
}

// Types whose layout has a default when the config gives none.
std::optional<LayerLayout> typeDefault(const Fields&, const std::string& type, int layers) {
    LayerLayout out;
    const auto n = static_cast<size_t>(layers);
    if (type == "granitemoehybrid") {
        // GraniteMoeHybridConfig.layers_block_type without layer_types: every layer Mamba.
        out.key = "layer_types (default: every layer Mamba)";
        out.layers.assign(n, LayerSlot{Mixer::Mamba2, AttnKind::Full, Mlp::Default});
        return out;
    }
    if (type == "gemma3n_text") {
        // Gemma3nTextConfig without layer_types: every fifth layer full, the others sliding.
        out.key = "layer_types (default: every 5th layer full)";
        for (size_t i = 0; i < n; ++i) {
            LayerSlot s;
            if ((i + 1) % 5 != 0) s.attn = AttnKind::Sliding;
            out.layers.push_back(s);
        }
        return out;
    }
    return std::nullopt;
}

// Qwen3-Next / Qwen3.5's full_attention_interval.
std::optional<LayerLayout> qwenInterval(const Fields& f, const std::string& type, int layers) {
    LayerLayout out;
    const auto n = static_cast<size_t>(layers);
    if (isQwenLinear(type)) {
        // Qwen3-Next / Qwen3.5 without layer_types: every full_attention_interval-th layer is
        // full attention, the rest Gated DeltaNet (transformers' Qwen3NextConfig, default 4).
        int k = 4;
        if (auto v = f.integer("full_attention_interval", "a positive integer", 1, 100000)) k = *v;
        out.key = f.has("full_attention_interval") ? "full_attention_interval"
                                                   : "full_attention_interval (default 4)";
        for (size_t i = 0; i < n; ++i) {
            LayerSlot s;
            if ((i + 1) % static_cast<size_t>(k) != 0) s.mixer = Mixer::GatedDeltaNet;
            out.layers.push_back(s);
        }
        return out;
    }
    if (f.has("full_attention_interval"))
        refuse(f, "field '" + f.path("full_attention_interval") +
                      "' is the Qwen3-Next layout, and "
                      "kvbe does not know the linear layers of model_type '" +
                      type + "'; the config is refused rather than read as full attention");

    return std::nullopt;
}

// Jamba's periods and offsets.
std::optional<LayerLayout> jambaPeriods(const Fields& f, const std::string& type, int layers) {
    LayerLayout out;
    if (type == "jamba") {
        // Jamba: attention where i % attn_layer_period == attn_layer_offset, Mamba elsewhere;
        // MoE where i % expert_layer_period == expert_layer_offset (JambaConfig defaults 8/4, 2/1).
        const int ap = f.integer("attn_layer_period", "a positive integer", 1, 100000).value_or(8);
        const int ao =
            f.integer("attn_layer_offset", "a non-negative integer", 0, 100000).value_or(4);
        const int ep =
            f.integer("expert_layer_period", "a positive integer", 1, 100000).value_or(2);
        const int eo =
            f.integer("expert_layer_offset", "a non-negative integer", 0, 100000).value_or(1);
        const int experts = f.integer("num_experts", "a positive integer", 1, 1 << 20).value_or(16);
        out.key = "attn_layer_period/attn_layer_offset";
        for (int i = 0; i < layers; ++i) {
            LayerSlot s;
            s.mixer = i % ap == ao ? Mixer::Attention : Mixer::Mamba1;
            s.mlp = experts > 1 && i % ep == eo ? Mlp::Moe : Mlp::Dense;
            out.layers.push_back(s);
        }
        return out;
    }
    for (const char* key : {"attn_layer_period", "attn_layer_offset"})
        if (f.has(key))
            refuse(f, "field '" + f.path(key) +
                          "' is Jamba's layout, and kvbe does not know it for "
                          "model_type '" +
                          type +
                          "'; the config is refused rather than read as full "
                          "attention");

    return std::nullopt;
}

// Falcon-H1: attention and Mamba-2 side by side.
std::optional<LayerLayout> falconParallel(const Fields& f, const std::string& type, int layers) {
    LayerLayout out;
    const auto n = static_cast<size_t>(layers);
    if (type == "falcon_h1") {
        // Falcon-H1: attention and a Mamba-2 mixer side by side in every layer.
        if (const json* j = f.find("attn_layer_indices"); j && !j->is_null())
            refuse(f, "field '" + f.path("attn_layer_indices") +
                          "' is set, and kvbe knows Falcon-H1 "
                          "only with attention in every layer; the config is refused");
        out.key = "falcon_h1 (parallel attention + Mamba-2 in every layer)";
        out.layers.assign(n, LayerSlot{Mixer::Parallel, AttnKind::Full, Mlp::Dense});
        return out;
    }
    return std::nullopt;
}

} // namespace

LayerLayout readLayerLayout(const Fields& f, const std::string& type, int layers) {
    using Reader = std::optional<LayerLayout> (*)(const Fields&, const std::string&, int);
    for (Reader read : {nemotronPattern, layerTypeList, miniMaxList, kimiLinearConfig, typeDefault,
                        qwenInterval, jambaPeriods, falconParallel})
        if (auto layout = read(f, type, layers)) return std::move(*layout);
    if (type == "nemotron_h" || type == "minimax" || type == "kimi_linear" || type == "lfm2")
        refuse(f, "model_type '" + type +
                      "' needs a layer layout (hybrid_override_pattern, "
                      "layer_types, attn_type_list or linear_attn_config) and the config has none");
    return {};
}

std::string mixerLabel(Mixer mixer) {
    switch (mixer) {
    case Mixer::Attention:
        return "attention";
    case Mixer::Mamba1:
        return "Mamba";
    case Mixer::Mamba2:
        return "Mamba-2";
    case Mixer::GatedDeltaNet:
        return "Gated DeltaNet";
    case Mixer::Kda:
        return "KDA";
    case Mixer::Lightning:
        return "lightning attention";
    case Mixer::ShortConv:
        return "short conv";
    case Mixer::Parallel:
        return "attention + Mamba-2";
    case Mixer::None:
        return "";
    }
    return "";
}

} // namespace kvbe::detail
