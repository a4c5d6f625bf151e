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

[[noreturn]] void refuse(const Fields& f, const std::string& sentence) {
    throw ConfigError{f.source() + ": " + sentence};
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

int intField(const json& obj, const Fields& f, const std::string& parent, const char* key) {
    const std::string path = f.path(parent) + "." + key;
    if (!obj.contains(key) || !obj[key].is_number_integer() || obj[key].get<long long>() < 1 ||
        obj[key].get<long long>() > kMaxDim)
        throw ConfigError{f.source() + ": field '" + path + "' is " +
                          (obj.contains(key) ? jsonTypeName(obj[key]) : std::string("missing")) +
                          "; expected a positive integer"};
    return static_cast<int>(obj[key].get<long long>());
}

} // namespace

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

namespace {

// The Mamba-2 mixer (transformers' NemotronHMamba2Mixer, GraniteMoeHybridMambaLayer,
// FalconH1Mixer; vLLM's MambaMixer2): d_inner = heads · head_dim, conv over
// d_inner + 2·groups·d_state channels.
struct Mamba2Names {
    const char *heads, *headDim, *state, *groups, *kernel, *convBias, *projBias;
    bool convBiasDefault;
};

MixerFigures mamba2(const Fields& f, const std::string& type, int hidden) {
    Mamba2Names n{};
    if (type == "nemotron_h")
        n = {"mamba_num_heads", "mamba_head_dim", "ssm_state_size",  "n_groups",
             "conv_kernel",     "use_conv_bias",  "mamba_proj_bias", true};
    else
        n = {"mamba_n_heads", "mamba_d_head",    "mamba_d_state",   "mamba_n_groups",
             "mamba_d_conv",  "mamba_conv_bias", "mamba_proj_bias", true};
    const double h = hidden;
    const bool hf = type == "granitemoehybrid" || type == "falcon_h1";
    // GraniteMoeHybridConfig and FalconH1Config: 128 heads, d_state 256, mamba_d_head "auto".
    const int heads = hf ? f.intOr(n.heads, "a positive integer (Mamba-2 heads)", 1, kMaxDim, 128)
                         : f.requiredInt(n.heads, "a positive integer (Mamba-2 heads)", 1, kMaxDim);
    double dInner = 0;
    if (hf) {
        // The Mamba width: granite's mixer is mamba_expand · hidden; Falcon-H1's is mamba_d_ssm
        // (FalconH1Config default 1024; null means mamba_expand · hidden).
        const double expand = f.intOr("mamba_expand", "a positive integer", 1, 1024, 2);
        if (type == "falcon_h1" && f.find("mamba_d_ssm") == nullptr)
            dInner = 1024;
        else if (type == "falcon_h1" && f.has("mamba_d_ssm"))
            dInner = f.requiredInt("mamba_d_ssm", "a positive integer or null (the Mamba-2 width)",
                                   1, kMaxDim);
        else
            dInner = expand * h;
    }
    int headDim = 0;
    const json* hdj = f.find(n.headDim);
    if (hf && (!hdj || hdj->is_null() || (hdj->is_string() && hdj->get<std::string>() == "auto"))) {
        headDim = static_cast<int>(dInner) / heads; // "auto": width // heads
    } else {
        headDim =
            f.requiredInt(n.headDim, "a positive integer (Mamba-2 head dimension)", 1, kMaxDim);
    }
    if (hf && static_cast<double>(heads) * headDim != dInner) {
        const std::string width =
            type == "falcon_h1"
                ? "mamba_d_ssm (" + std::to_string(static_cast<long long>(dInner)) + ")"
                : "mamba_expand · hidden_size (" + std::to_string(static_cast<long long>(dInner)) +
                      ")";
        throw ConfigError{f.source() + ": field '" + f.path(n.heads) + "' (" +
                          std::to_string(heads) + ") times '" + f.path(n.headDim) + "' (" +
                          std::to_string(headDim) + ") is not " + width +
                          "; transformers refuses such a config, and so does kvbe"};
    }
    if (dInner <= 0) dInner = static_cast<double>(heads) * headDim;
    const double state =
        hf ? f.intOr(n.state, "a positive integer (the SSM state size)", 1, kMaxDim, 256)
           : f.requiredInt(n.state, "a positive integer (the SSM state size)", 1, kMaxDim);
    const double groups = f.intOr(n.groups, "a positive integer (Mamba-2 groups)", 1, kMaxDim, 1);
    const double kernel = f.intOr(n.kernel, "a positive integer (the conv kernel)", 1, 1024, 4);
    const bool convBias = f.boolean(n.convBias).value_or(n.convBiasDefault);
    const bool projBias = f.boolean(n.projBias).value_or(false);
    const bool norm = type == "falcon_h1" ? f.boolean("mamba_rms_norm").value_or(false) : true;

    const double convDim = dInner + 2 * groups * state;
    const double inProj = h * (dInner + convDim + heads);
    const double outProj = dInner * h;
    MixerFigures m;
    m.matmul = inProj + outProj + convDim * kernel;
    m.params = m.matmul + (convBias ? convDim : 0) + (projBias ? dInner + convDim + heads + h : 0) +
               3.0 * heads /* dt_bias, A_log, D */ + (norm ? dInner : 0);
    m.ssmElems = heads * static_cast<double>(headDim) * state;
    m.convElems = convDim * (kernel - 1);
    m.flopsPerToken = 4 * heads * static_cast<double>(headDim) * state;
    return m;
}

// Jamba's Mamba (v1) mixer: d_inner = mamba_expand · hidden; x_proj to dt_rank + 2·d_state;
// dt, B and C layer norms.
MixerFigures mamba1(const Fields& f, int hidden) {
    const double h = hidden;
    const double expand = f.intOr("mamba_expand", "a positive integer", 1, 1024, 2);
    const double di = expand * h;
    const double state =
        f.intOr("mamba_d_state", "a positive integer (the SSM state size)", 1, kMaxDim, 16);
    const double kernel =
        f.intOr("mamba_d_conv", "a positive integer (the conv kernel)", 1, 1024, 4);
    double rank = std::ceil(h / 16); // JambaConfig: mamba_dt_rank "auto"
    if (const json* j = f.find("mamba_dt_rank");
        j && !(j->is_string() && j->get<std::string>() == "auto"))
        rank = f.requiredInt("mamba_dt_rank", "a positive integer or \"auto\"", 1, kMaxDim);
    const bool convBias = f.boolean("mamba_conv_bias").value_or(true);
    const bool projBias = f.boolean("mamba_proj_bias").value_or(false);
    MixerFigures m;
    m.matmul = h * 2 * di + di * kernel + di * (rank + 2 * state) + rank * di + di * h;
    m.params = m.matmul + (convBias ? di : 0) + (projBias ? 2 * di + h : 0) + di /* dt bias */ +
               di * state /* A_log */ + di /* D */ + rank + 2 * state /* dt, B, C norms */;
    m.ssmElems = di * state;
    m.convElems = di * (kernel - 1);
    m.flopsPerToken = 4 * di * state;
    return m;
}

// Gated DeltaNet (transformers' Qwen3NextGatedDeltaNet): in_proj_qkvz, in_proj_ba, a depthwise
// conv over q, k and v, dt_bias, A_log, a gated norm over the value head, out_proj.
// Fields left out take Qwen3NextConfig's / Qwen3_5TextConfig's / Qwen3_5MoeTextConfig's defaults
// (the same in all three): 16 key heads, 32 value heads, 128 dims each, a 4-tap conv.
MixerFigures gatedDeltaNet(const Fields& f, int hidden) {
    const double h = hidden;
    const double hk = f.intOr("linear_num_key_heads", "a positive integer", 1, kMaxDim, 16);
    const double hv = f.intOr("linear_num_value_heads", "a positive integer", 1, kMaxDim, 32);
    const double dk = f.intOr("linear_key_head_dim", "a positive integer", 1, kMaxDim, 128);
    const double dv = f.intOr("linear_value_head_dim", "a positive integer", 1, kMaxDim, 128);
    const double kernel = f.intOr("linear_conv_kernel_dim", "a positive integer", 1, 1024, 4);
    const double convDim = 2 * hk * dk + hv * dv;
    MixerFigures m;
    m.matmul = h * (2 * hk * dk + 2 * hv * dv) + h * 2 * hv + convDim * kernel + hv * dv * h;
    m.params = m.matmul + 2 * hv /* dt_bias, A_log */ + dv /* norm */;
    m.ssmElems = hv * dk * dv;
    m.convElems = convDim * (kernel - 1);
    m.flopsPerToken = 6 * hv * dk * dv;
    return m;
}

// Kimi Delta Attention: num_heads heads of head_dim for q, k and v, each with its own short
// conv; the state is a head_dim × head_dim matrix per head (vLLM's kda_state_shape).
MixerFigures kda(const Fields& f, int hidden) {
    const json& c = *f.find("linear_attn_config");
    const double h = hidden;
    const double heads = intField(c, f, "linear_attn_config", "num_heads");
    const double d = intField(c, f, "linear_attn_config", "head_dim");
    const double kernel = intField(c, f, "linear_attn_config", "short_conv_kernel_size");
    MixerFigures m;
    m.matmul = 4 * h * heads * d + 3 * heads * d * kernel; // q, k, v, o; the three convs
    m.params = m.matmul;
    m.ssmElems = heads * d * d;
    m.convElems = 3 * heads * d * (kernel - 1);
    m.flopsPerToken = 6 * heads * d * d;
    return m;
}

// MiniMax lightning attention: qkv_proj, output_gate, out_proj and a norm; the state is a
// head_dim × head_dim matrix per head, no convolution.
MixerFigures lightning(int hidden, int qHeads, int headDim) {
    const double h = hidden, hd = static_cast<double>(qHeads) * headDim;
    MixerFigures m;
    m.matmul = h * 3 * hd + h * hd + hd * h;
    m.params = m.matmul + hd;
    m.ssmElems = hd * headDim;
    m.flopsPerToken = 6 * hd * headDim;
    return m;
}

// LFM2 short convolution: in_proj to 3·hidden, a depthwise conv of conv_L_cache taps, out_proj.
MixerFigures shortConv(const Fields& f, int hidden) {
    const double h = hidden;
    const double kernel =
        f.requiredInt("conv_L_cache", "a positive integer (the conv length)", 1, 1024);
    const bool bias = f.boolean("conv_bias").value_or(false);
    MixerFigures m;
    m.matmul = h * 3 * h + h * kernel + h * h;
    m.params = m.matmul + (bias ? 3 * h + h + h : 0);
    m.convElems = h * (kernel - 1);
    return m;
}

} // namespace

MixerFigures mixerFigures(const Fields& f, const std::string& type, Mixer mixer, int hidden,
                          int qHeads, int headDim) {
    switch (mixer) {
    case Mixer::Mamba2:
    case Mixer::Parallel:
        return mamba2(f, type, hidden);
    case Mixer::Mamba1:
        return mamba1(f, hidden);
    case Mixer::GatedDeltaNet:
        return gatedDeltaNet(f, hidden);
    case Mixer::Kda:
        return kda(f, hidden);
    case Mixer::Lightning:
        return lightning(hidden, qHeads, headDim);
    case Mixer::ShortConv:
        return shortConv(f, hidden);
    case Mixer::Attention:
    case Mixer::None:
        return {};
    }
    return {};
}

} // namespace kvbe::detail
