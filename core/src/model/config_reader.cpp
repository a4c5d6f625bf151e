#include "kvbe/model/config_reader.h"

#include "config_fields.h"
#include "hybrid_layers.h"
#include "kvbe/base/embedded.h"
#include "kvbe/base/json_text.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>
#include <vector>

namespace kvbe {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
using detail::ConfigError;
using detail::Fields;
using detail::kMaxDim;

// Defaults of the Hugging Face config classes, for fields a published config may leave out.
// num_hidden_layers and hidden_size are never defaulted: a config without them is not a
// model description, and a default-sized model would draw a silently wrong chart.
struct ArchDefaults {
    std::optional<int> heads, kvHeads, headDim;
    std::optional<double> vocab, intermediate, maxPositions, slidingWindow;
    std::optional<int> slidingPattern; // every n-th layer is global (Gemma)
    bool tied = false;
    int normsPerLayer = 2;
    bool qkNorm = false;
    bool qkvBias = false;
    bool attentionSinks = false;
    bool expertBiases = false;
    bool routerBias = false;
    // MoE shapes for architectures whose config classes default them (Qwen3-Next, Qwen3.5 MoE,
    // granite-4.0-h).
    std::optional<int> experts, topK;
    std::optional<double> moeWidth, sharedWidth;
    std::optional<int> kvShared; // Gemma 3n: num_kv_shared_layers
};

// The defaults of each architecture's config class, by model_type: resources/model-defaults.json,
// read once. A broken shipped file is a build error, so it fails loudly at first use.
std::vector<std::pair<std::vector<std::string>, ArchDefaults>> readArchDefaults() {
    const std::string source = "resources/model-defaults.json";
    auto text = embeddedText("model-defaults.json");
    if (!text) throw ConfigError{source + ": not embedded in this build"};
    auto parsed = parseJsonText(*text, source);
    if (!parsed) throw ConfigError{parsed.message()};
    const json& top = *parsed;
    const FieldReader r(top, source);
    std::vector<std::pair<std::vector<std::string>, ArchDefaults>> out;
    const auto& list = r.array(top, "architectures", "architectures");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const json& e = list[i];
        const std::string at = "architectures[" + std::to_string(i) + "]";
        std::vector<std::string> types;
        const auto& names = r.array(e, "model_types", at + ".model_types");
        for (std::size_t k = 0; k < names.size(); ++k) {
            if (!names[k].is_string())
                r.fail(at + ".model_types[" + std::to_string(k) + "]", "a string", &names[k]);
            types.push_back(names[k].get<std::string>());
        }
        ArchDefaults d;
        const json empty = json::object();
        const json& c = e.contains("config_defaults")
                            ? r.object(e, "config_defaults", at + ".config_defaults")
                            : empty;
        const std::string cp = at + ".config_defaults.";
        auto count = [&](const char* key) -> std::optional<double> {
            return r.number(c, key, cp + key, 1, kMaxDim, "a positive whole number");
        };
        auto intCount = [&](const char* key) -> std::optional<int> {
            if (auto v = count(key)) return static_cast<int>(*v);
            return std::nullopt;
        };
        d.heads = intCount("num_attention_heads");
        d.kvHeads = intCount("num_key_value_heads");
        d.headDim = intCount("head_dim");
        d.vocab = count("vocab_size");
        d.intermediate = count("intermediate_size");
        d.maxPositions = count("max_position_embeddings");
        d.slidingWindow = count("sliding_window");
        d.slidingPattern = intCount("sliding_window_pattern");
        d.tied = r.boolean(c, "tie_word_embeddings", cp + "tie_word_embeddings").value_or(false);
        d.experts = intCount("num_experts");
        d.topK = intCount("num_experts_per_tok");
        d.moeWidth = count("moe_intermediate_size");
        d.sharedWidth = count("shared_expert_intermediate_size");
        d.kvShared = intCount("num_kv_shared_layers");
        const json& st =
            e.contains("structure") ? r.object(e, "structure", at + ".structure") : empty;
        const std::string sp = at + ".structure.";
        d.normsPerLayer = static_cast<int>(
            r.number(st, "norms_per_layer", sp + "norms_per_layer", 1, 16, "1 to 16").value_or(2));
        auto flag = [&](const char* key) {
            return r.boolean(st, key, sp + key).value_or(false);
        };
        d.qkNorm = flag("qk_norm");
        d.qkvBias = flag("qkv_bias");
        d.attentionSinks = flag("attention_sinks");
        d.expertBiases = flag("expert_biases");
        d.routerBias = flag("router_bias");
        out.emplace_back(std::move(types), d);
    }
    return out;
}

ArchDefaults defaultsFor(const std::string& type) {
    static const auto table = readArchDefaults();
    for (const auto& [types, defaults] : table)
        for (const auto& t : types)
            if (t == type) return defaults;
    return {};
}

// Whether a layer computes attention pairs (attention alone, or beside Mamba in the same layer).
bool hasAttention(const detail::LayerSlot& s) {
    return s.mixer == detail::Mixer::Attention || s.mixer == detail::Mixer::Parallel;
}

// Files that are JSON but no model config: a scenario, a tokenizer, something else.
void refuseOtherFiles(const json& top, const std::string& source) {
    if (!top.is_object())
        throw ConfigError{source + ": the file holds " + jsonTypeName(top) +
                          "; expected a config.json object"};
    if (top.contains("kvbe_scenario"))
        throw ConfigError{source + ": this is a kvbe scenario, not a model config.json; open it "
                                   "with --scenario"};
    if (top.contains("model") && top.contains("added_tokens"))
        throw ConfigError{source + ": this looks like a tokenizer.json, not a model config.json"};
    if (!top.contains("num_hidden_layers") && !top.contains("hidden_size") &&
        !top.contains("text_config") && !top.contains("model_type") &&
        !top.contains("architectures"))
        throw ConfigError{source + ": not a Hugging Face model config: it has none of "
                                   "'model_type', 'architectures', 'num_hidden_layers'"};
}

// ---- Geometry: layers, widths, heads, vocabulary, context, dtype -------------------------------
void readGeometry(const Fields& f, const ArchDefaults& def, ModelSpec& m) {
    const std::string& source = f.source();

    m.layers =
        f.requiredInt("num_hidden_layers", "a positive integer (the decoder layers)", 1, 100000);
    m.hidden = f.requiredInt("hidden_size", "a positive integer (the model width)", 1, kMaxDim);
    m.qHeads = f.intOr("num_attention_heads", "a positive integer (the query heads)", 1, kMaxDim,
                       def.heads);
    if (!f.has("num_attention_heads"))
        m.notes.push_back("num_attention_heads: architecture default");
    m.kvHeads = f.intOr("num_key_value_heads", "a positive integer (the KV heads)", 1, kMaxDim,
                        def.kvHeads ? def.kvHeads : std::optional<int>(m.qHeads));
    if (!f.has("num_key_value_heads"))
        m.notes.push_back("num_key_value_heads: architecture default");

    if (auto hd = f.integer("head_dim", "a positive integer (the head dimension)", 1, kMaxDim)) {
        m.headDim = *hd;
    } else if (def.headDim) {
        m.headDim = *def.headDim;
        m.notes.push_back("head_dim: architecture default " + std::to_string(*def.headDim));
    } else {
        if (m.hidden % m.qHeads != 0)
            throw ConfigError{source + ": hidden_size " + std::to_string(m.hidden) +
                              " is not divisible by num_attention_heads " +
                              std::to_string(m.qHeads) + " and there is no head_dim"};
        m.headDim = m.hidden / m.qHeads;
    }

    auto vocab = f.number("vocab_size", "a positive integer (the vocabulary)", 1, 1e9);
    if (!vocab && !def.vocab) f.missing("vocab_size", "a positive integer (the vocabulary)");
    m.vocab = vocab ? *vocab : *def.vocab;
    if (!vocab) m.notes.push_back("vocab_size: architecture default");
    std::optional<double> inter;
    if (const json* j = f.find("intermediate_size");
        j && j->is_array() && !j->empty() && (*j)[0].is_number())
        inter = (*j)[0].get<double>(); // per-layer widths (Gemma 3n); read per layer below
    else
        inter = f.number("intermediate_size", "a positive integer (the MLP width)", 0, 1e8);
    m.intermediate = inter ? *inter : def.intermediate.value_or(4.0 * m.hidden);

    const auto tieAt = f.boolean("tie_word_embeddings");
    m.tiedEmbeddings = tieAt.value_or(def.tied);

    auto maxPos =
        f.number("max_position_embeddings", "a positive integer (the context length)", 1, 1e12);
    m.contextLimit = maxPos ? *maxPos : def.maxPositions.value_or(131072);

    if (auto dt =
            f.string("torch_dtype").has_value() ? f.string("torch_dtype") : f.string("dtype")) {
        auto parsed = parseKvDtype(*dt);
        if (!parsed)
            throw ConfigError{source + ": field '" +
                              f.path(f.has("torch_dtype") ? "torch_dtype" : "dtype") + "' is \"" +
                              *dt + "\"; expected bfloat16, float16 or float32"};
        m.weightDtype = *parsed;
    } else {
        m.weightDtype = KvDtype::BF16;
        m.notes.push_back("no torch_dtype: KV dtype defaults to bf16");
    }
}

// ---- Multi-head latent attention ----------------------------------------------------------------
struct MlaDims {
    int qkNope = 0, qkRope = 0, vHead = 0, qLora = 0;
};

MlaDims readMla(const Fields& f, bool mla, ModelSpec& m) {
    const std::string& source = f.source();
    MlaDims dims;
    int& qkNope = dims.qkNope;
    int& qkRope = dims.qkRope;
    int& vHead = dims.vHead;
    int& qLora = dims.qLora;
    if (mla) {
        m.mla = true;
        m.kvLoraRank = f.requiredInt("kv_lora_rank", "a positive integer", 1, kMaxDim);
        qkRope =
            f.requiredInt("qk_rope_head_dim", "a positive integer (MLA rope dims)", 1, kMaxDim);
        qkNope =
            f.requiredInt("qk_nope_head_dim", "a positive integer (MLA non-rope dims)", 1, kMaxDim);
        vHead = f.requiredInt("v_head_dim", "a positive integer (MLA value dims)", 1, kMaxDim);
        qLora = f.integer("q_lora_rank", "a positive integer or null", 1, kMaxDim).value_or(0);
        m.qkRopeHeadDim = qkRope;
        m.dQk = qkNope + qkRope;
        m.dV = vHead;
        m.headDim = qkNope + qkRope;
    } else {
        if (m.qHeads % m.kvHeads != 0)
            throw ConfigError{source + ": num_attention_heads " + std::to_string(m.qHeads) +
                              " is not divisible by num_key_value_heads " +
                              std::to_string(m.kvHeads) +
                              "; expected a whole number of query "
                              "heads per KV head"};
        m.dQk = m.headDim;
        m.dV = m.headDim;
    }
    return dims;
}

// What the attention layers are: which layers, of which kind, over which window, with which
// sparse indexer, and how many at the end reuse earlier layers' KV.
struct AttentionLayout {
    bool explicitLayout = false; // the config lists each layer's kind
    std::vector<detail::LayerSlot> slots;
    std::vector<AttnKind> kinds;
    double window = 0;
    std::optional<int> indexTopK;
    double indexerBytes = 0, indexerFlopsPerPair = 0, indexHeadDim = 0, indexHeads = 0;
    int kvShared = 0;
};

// ---- Layer layout: attention, Mamba, linear attention, ... per layer ----------------------------
AttentionLayout readLayout(const Fields& f, const std::string& type, ModelSpec& m) {
    AttentionLayout a;
    detail::refuseUnknownLayoutKeys(f, type);
    const detail::LayerLayout layout = detail::readLayerLayout(f, type, m.layers);
    const auto L = static_cast<size_t>(m.layers);
    a.explicitLayout = !layout.layers.empty();
    auto& slots = a.slots;
    slots = layout.layers;
    if (slots.empty()) slots.assign(L, detail::LayerSlot{});
    if (!layout.layers.empty() && std::none_of(slots.begin(), slots.end(), hasAttention) &&
        !f.has("kv_lora_rank"))
        m.notes.push_back(layout.key + ": no attention layer, so no KV cache; only the state");
    if (!layout.key.empty() && layout.key != "layer_types")
        m.notes.push_back("layer layout from " + layout.key);
    return a;
}

// ---- Attention kind per layer -------------------------------------------------------------------
void readAttentionKinds(const Fields& f, const std::string& type, const ArchDefaults& def,
                        ModelSpec& m, AttentionLayout& a) {
    const auto L = static_cast<size_t>(m.layers);
    const auto& slots = a.slots;
    auto& kinds = a.kinds;
    double& window = a.window;
    kinds.assign(L, AttnKind::Full);
    const bool slidingKeyPresent = f.find("sliding_window") != nullptr;
    auto sw =
        f.number("sliding_window", "a positive integer or null (the attention window)", 1, 1e12);
    if (!slidingKeyPresent && def.slidingWindow) sw = def.slidingWindow;
    const auto useSliding = f.boolean("use_sliding_window");

    if (a.explicitLayout) {
        for (size_t i = 0; i < L; ++i)
            kinds[i] = slots[i].attn;
        if (std::count(kinds.begin(), kinds.end(), AttnKind::Sliding) > 0) {
            if (!sw) f.missing("sliding_window", "a window size for the sliding_attention layers");
            window = *sw;
        }
        if (std::count(kinds.begin(), kinds.end(), AttnKind::Chunked) > 0) {
            auto chunk = f.number("attention_chunk_size", "a positive integer", 1, 1e12);
            if (!chunk)
                f.missing("attention_chunk_size", "a chunk size for chunked_attention layers");
            window = *chunk;
        }
    } else if (type == "llama4_text") {
        // Llama 4: three of four layers use chunked local attention with RoPE; every fourth is
        // a global NoPE layer (no_rope_layers; its default when the file leaves it out).
        auto chunk = f.number("attention_chunk_size", "a positive integer", 1, 1e12);
        if (chunk) {
            window = *chunk;
            const json* nrl = f.find("no_rope_layers");
            for (int i = 0; i < m.layers; ++i) {
                bool usesRope = (i + 1) % 4 != 0;
                if (nrl && nrl->is_array() && static_cast<size_t>(i) < nrl->size() &&
                    (*nrl)[static_cast<size_t>(i)].is_number())
                    usesRope = (*nrl)[static_cast<size_t>(i)].get<double>() != 0;
                kinds[static_cast<size_t>(i)] = usesRope ? AttnKind::Chunked : AttnKind::Full;
            }
            if (!nrl) m.notes.push_back("no_rope_layers: default, every 4th layer global");
        }
    } else if (def.slidingPattern && sw) {
        const int pattern =
            f.intOr("sliding_window_pattern", "a positive integer", 1, 100000, def.slidingPattern);
        window = *sw;
        for (int i = 0; i < m.layers; ++i)
            kinds[static_cast<size_t>(i)] =
                ((i + 1) % pattern != 0) ? AttnKind::Sliding : AttnKind::Full;
    } else if (type.rfind("qwen", 0) == 0) {
        // Qwen: the window is off unless use_sliding_window; then layers from max_window_layers on.
        if (useSliding.value_or(false) && sw) {
            const int from =
                f.intOr("max_window_layers", "a non-negative integer", 0, 100000, m.layers);
            window = *sw;
            for (int i = from; i < m.layers; ++i)
                kinds[static_cast<size_t>(i)] = AttnKind::Sliding;
        }
    } else if (sw && useSliding.value_or(true)) {
        window = *sw;
        std::fill(kinds.begin(), kinds.end(), AttnKind::Sliding);
    }
    if (window > 0 && window >= m.contextLimit) {
        // A window as long as the context (Phi-4-mini's 262,144) changes nothing.
        std::fill(kinds.begin(), kinds.end(), AttnKind::Full);
        window = 0;
        m.notes.push_back("window not shorter than the context: treated as full attention");
    }
}

// Sparse attention (DeepSeek-V3.2) and shared KV (Gemma 3n).
void readIndexerAndSharing(const Fields& f, const ArchDefaults& def, bool mla, ModelSpec& m,
                           AttentionLayout& a) {
    const std::string& source = f.source();
    const auto L = static_cast<size_t>(m.layers);
    const auto& slots = a.slots;
    auto& kinds = a.kinds;
    // Sparse attention (DeepSeek-V3.2): the lightning indexer picks index_topk keys per query;
    // every key stays cached, and the indexer keeps its own key per token and layer.
    auto& indexTopK = a.indexTopK;
    indexTopK = f.integer("index_topk", "a positive integer (keys per query)", 1, 1 << 30);
    double& indexerBytes = a.indexerBytes;
    double& indexerFlopsPerPair = a.indexerFlopsPerPair;
    double& indexHeadDim = a.indexHeadDim;
    double& indexHeads = a.indexHeads;
    if (indexTopK) {
        if (!mla)
            throw ConfigError{source + ": field '" + f.path("index_topk") +
                              "' is DeepSeek-V3.2's sparse attention, which kvbe knows only with "
                              "MLA (kv_lora_rank); the config is refused"};
        const int ihd =
            f.requiredInt("index_head_dim", "a positive integer (indexer key dims)", 1, kMaxDim);
        const int inh =
            f.requiredInt("index_n_heads", "a positive integer (indexer heads)", 1, kMaxDim);
        // vLLM keeps indexer keys in FP8 with one FP32 scale per 128 values.
        indexerBytes = ihd + 4.0 * std::ceil(ihd / 128.0);
        indexerFlopsPerPair = 2.0 * inh * ihd;
        indexHeadDim = ihd;
        indexHeads = inh;
        for (size_t i = 0; i < L; ++i)
            if (hasAttention(slots[i])) kinds[i] = AttnKind::Sparse;
    } else {
        for (const char* k : {"index_head_dim", "index_n_heads"})
            if (f.has(k))
                throw ConfigError{source + ": field '" + f.path(k) +
                                  "' belongs to a sparse-attention "
                                  "indexer, but there is no index_topk; expected both or neither"};
    }

    // Gemma 3n: the last num_kv_shared_layers layers read the KV of earlier layers.
    int& kvShared = a.kvShared;
    if (auto v = f.integer("num_kv_shared_layers",
                           "a non-negative integer (layers that reuse "
                           "earlier KV)",
                           0, m.layers)) {
        kvShared = *v;
    } else if (def.kvShared) {
        kvShared = std::min(*def.kvShared, m.layers);
        m.notes.push_back("num_kv_shared_layers: architecture default " + std::to_string(kvShared));
    }
    // The shared layers read the KV of an earlier attention layer, so one must store it (HF's
    // Gemma 3n indexes layer num_hidden_layers - num_kv_shared_layers - 1 for it).
    if (kvShared > 0) {
        const auto own = static_cast<size_t>(m.layers - kvShared);
        if (std::none_of(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(own),
                         hasAttention))
            throw ConfigError{
                source + ": field '" + f.path("num_kv_shared_layers") + "' is " +
                std::to_string(kvShared) +
                (f.has("num_kv_shared_layers") ? "" : " (the architecture's default)") + " of " +
                std::to_string(m.layers) +
                " layers, which leaves no earlier "
                "attention layer to store the KV they share; expected fewer shared "
                "layers than layers, with attention before them"};
    }
}

// The attention layers grouped by kind, window and KV per token, as ModelSpec keeps them.
void groupAttention(bool mla, const MlaDims& dims, const AttentionLayout& a, ModelSpec& m) {
    const auto L = static_cast<size_t>(m.layers);
    const auto& slots = a.slots;
    const auto& kinds = a.kinds;
    const double window = a.window;
    const auto& indexTopK = a.indexTopK;
    const int kvShared = a.kvShared;
    const int qkRope = dims.qkRope;
    const double kvElems =
        mla ? static_cast<double>(m.kvLoraRank + qkRope) : 2.0 * m.kvHeads * m.headDim;
    const double perPair = 2.0 * m.qHeads * (m.dQk + m.dV);
    int softmax = 0;
    for (size_t i = 0; i < L; ++i) {
        if (!hasAttention(slots[i])) continue;
        ++softmax;
        const bool shared = static_cast<int>(i) >= m.layers - kvShared;
        const AttnKind k = kinds[i];
        const double w = k == AttnKind::Full ? 0.0 : (k == AttnKind::Sparse ? *indexTopK : window);
        const double elems = shared ? 0.0 : kvElems;
        auto same = [&](const AttentionGroup& g) {
            return g.kind == k && g.window == w && g.kvElemsPerToken == elems &&
                   g.kvFixedBytesPerToken == 0;
        };
        auto it = std::find_if(m.attention.begin(), m.attention.end(), same);
        if (it != m.attention.end())
            ++it->layers;
        else
            m.attention.push_back({k, w, 1, elems, perPair, 0});
    }
    if (indexTopK && softmax > 0)
        m.attention.push_back(
            {AttnKind::Full, 0, softmax, 0, a.indexerFlopsPerPair, a.indexerBytes});
    // Keep the groups in the order full, sliding, chunked, sparse, whatever the layer order.
    std::stable_sort(
        m.attention.begin(), m.attention.end(),
        [](const AttentionGroup& x, const AttentionGroup& y) { return x.kind < y.kind; });
    m.softmaxLayers = softmax;
    if (kvShared > 0)
        m.notes.push_back("num_kv_shared_layers: the last " + std::to_string(kvShared) +
                          " layers reuse earlier layers' KV");
}

// ---- Parameters: attention projections
// -----------------------------------------------------------
struct AttentionParams {
    double proj = 0;  // matmul weights
    double extra = 0; // norms, biases, sinks
};

AttentionParams attentionParams(const Fields& f, const std::string& type, const ArchDefaults& def,
                                bool mla, const MlaDims& dims, const AttentionLayout& a,
                                const ModelSpec& m) {
    const auto& indexTopK = a.indexTopK;
    const double indexHeads = a.indexHeads, indexHeadDim = a.indexHeadDim;
    const int qkNope = dims.qkNope, qkRope = dims.qkRope, vHead = dims.vHead, qLora = dims.qLora;
    const double h = m.hidden, Hq = m.qHeads, Hkv = m.kvHeads, d = m.headDim;
    AttentionParams p;
    double& attnProj = p.proj;
    double& attnExtra = p.extra;
    if (mla) {
        const double qProj =
            qLora > 0 ? h * qLora + qLora * Hq * (qkNope + qkRope) : h * Hq * (qkNope + qkRope);
        attnProj = qProj + h * (m.kvLoraRank + qkRope) + m.kvLoraRank * Hq * (qkNope + vHead) +
                   Hq * vHead * h;
        attnExtra = (qLora > 0 ? qLora : 0) + m.kvLoraRank; // the two latent norms
        if (indexTopK) {
            // DeepSeek-V3.2's indexer: wq_b from the query latent, wk, weights_proj, k_norm
            // (a LayerNorm: weight and bias).
            attnProj += (qLora > 0 ? qLora : h) * indexHeads * indexHeadDim + h * indexHeadDim +
                        h * indexHeads;
            attnExtra += 2 * indexHeadDim;
        }
    } else {
        attnProj = h * Hq * d + 2 * h * Hkv * d + Hq * d * h;
        // Gated attention (Qwen3-Next and Qwen3.5 unless attn_output_gate is false): q_proj also
        // produces the output gate, Hq·d more columns
        // (transformers always gates them; vLLM reads attn_output_gate, default true).
        if (f.boolean("attn_output_gate").value_or(detail::isQwenLinear(type)))
            attnProj += h * Hq * d;
        const bool attnBias = f.boolean("attention_bias").value_or(false);
        if (attnBias)
            attnExtra += Hq * d + 2 * Hkv * d + h;
        else if (def.qkvBias)
            attnExtra += Hq * d + 2 * Hkv * d;
        if (def.qkNorm) attnExtra += 2 * d;
        if (def.attentionSinks) attnExtra += Hq;
    }
    return p;
}

// ---- MoE geometry
// --------------------------------------------------------------------------------
struct MoeShape {
    int experts = 0, topK = 0, shared = 0;
    double expertWidth = 0, sharedWidth = 0, denseWidth = 0;
    std::vector<bool> moeLayer; // per layer: routed experts (where the layout does not say)
};

MoeShape readMoe(const Fields& f, const std::string& type, const ArchDefaults& def, ModelSpec& m) {
    const std::string& source = f.source();
    MoeShape s;
    int& experts = s.experts;
    int& topK = s.topK;
    int& shared = s.shared;
    double& expertWidth = s.expertWidth;
    double& sharedWidth = s.sharedWidth;
    double& denseWidth = s.denseWidth;
    auto& moeLayer = s.moeLayer;
    // MoE geometry.
    const char* expertKeys[] = {"num_local_experts", "num_experts", "n_routed_experts"};
    bool expertKey = false;
    for (const char* k : expertKeys)
        if (auto v = f.integer(k, "a non-negative integer (routed experts)", 0, 1 << 20)) {
            experts = std::max(experts, *v);
            expertKey = true;
        }
    if (!expertKey && def.experts) {
        experts = *def.experts;
        m.notes.push_back("routed experts: architecture default " + std::to_string(experts));
    }
    if (experts > 0) {
        auto k =
            f.integer("num_experts_per_tok", "a positive integer (experts per token)", 1, 1 << 20);
        if (!k)
            k = f.integer("experts_per_token", "a positive integer (experts per token)", 1,
                          1 << 20);
        if (!k) k = def.topK;
        if (!k) f.missing("num_experts_per_tok", "a positive integer (experts per token)");
        if (*k > experts)
            throw ConfigError{source + ": num_experts_per_tok " + std::to_string(*k) +
                              " is more than the " + std::to_string(experts) + " experts"};
        topK = *k;
    }
    expertWidth = def.moeWidth.value_or(m.intermediate);
    if (auto v = f.number("moe_intermediate_size", "a positive integer", 1, 1e8)) expertWidth = *v;
    shared = f.integer("n_shared_experts", "a non-negative integer", 0, 1 << 20).value_or(0);
    sharedWidth = expertWidth;
    auto sharedExpert =
        f.number("shared_expert_intermediate_size", "a non-negative integer", 0, 1e8);
    if (!sharedExpert && type != "granitemoehybrid") sharedExpert = def.sharedWidth;
    if (sharedExpert) {
        shared = *sharedExpert > 0 ? 1 : 0;
        sharedWidth = *sharedExpert;
    }
    if (auto v =
            f.number("moe_shared_expert_intermediate_size", "a non-negative integer", 0, 1e8)) {
        shared = std::max(shared, *v > 0 ? 1 : 0); // Nemotron-H
        sharedWidth = *v;
    }
    denseWidth = m.intermediate;
    if (type == "granitemoehybrid") {
        // GraniteMoeHybrid: every layer has a shared MLP of shared_intermediate_size beside its
        // experts (of intermediate_size); without experts that MLP is the layer's whole MLP.
        const double w = f.number("shared_intermediate_size", "a positive integer", 1, 1e8)
                             .value_or(def.sharedWidth.value_or(m.intermediate));
        if (experts > 0) {
            shared = 1;
            sharedWidth = w;
        } else {
            denseWidth = w;
        }
    }
    if (type == "llama4_text" && experts > 0) {
        shared = 1; // Llama 4 MoE layers add one shared expert of intermediate_size
        sharedWidth = m.intermediate;
        expertWidth = m.intermediate;
        denseWidth = f.number("intermediate_size_mlp", "a positive integer", 1, 1e8)
                         .value_or(m.intermediate);
    }

    moeLayer.assign(static_cast<size_t>(m.layers), experts > 0);
    if (experts > 0) {
        const int firstDense =
            f.integer("first_k_dense_replace", "a non-negative integer", 0, 100000).value_or(0);
        int step = f.integer("moe_layer_freq", "a positive integer", 1, 100000).value_or(1);
        if (auto v = f.integer("decoder_sparse_step", "a positive integer", 1, 100000)) step = *v;
        if (auto v = f.integer("interleave_moe_layer_step", "a positive integer", 1, 100000))
            step = *v;
        std::set<int> mlpOnly;
        if (const json* j = f.find("mlp_only_layers"); j && j->is_array())
            for (const auto& v : *j)
                if (v.is_number_integer()) mlpOnly.insert(v.get<int>());
        for (int i = 0; i < m.layers; ++i) {
            bool moe = i >= firstDense && ((i - firstDense + 1) % step == 0 || step == 1);
            if (type == "llama4_text") moe = (i + 1) % step == 0; // moe_layers default
            if (type.rfind("qwen", 0) == 0) moe = !mlpOnly.count(i) && (i + 1) % step == 0;
            if (type.rfind("deepseek", 0) == 0) moe = i >= firstDense && i % step == 0;
            moeLayer[static_cast<size_t>(i)] = moe;
        }
    }
    return s;
}

// ---- Parameter counts, layer by layer
// --------------------------------------------------------------
void countParameters(const Fields& f, const std::string& type, const ArchDefaults& def, bool mla,
                     const AttentionLayout& a, const AttentionParams& attn,
                     const MoeShape& moeShape, ModelSpec& m) {
    const auto L = static_cast<size_t>(m.layers);
    const auto& slots = a.slots;
    const auto& kinds = a.kinds;
    const int kvShared = a.kvShared;
    const double h = m.hidden;
    const double attnProj = attn.proj, attnExtra = attn.extra;
    const double norms = def.normsPerLayer * h;
    const int experts = moeShape.experts, topK = moeShape.topK, shared = moeShape.shared;
    const double expertWidth = moeShape.expertWidth, sharedWidth = moeShape.sharedWidth,
                 denseWidth = moeShape.denseWidth;
    const auto& moeLayer = moeShape.moeLayer;
    // Nemotron-H's MLPs and experts are not gated (relu2: up and down projections only).
    const double mats = type == "nemotron_h" ? 2 : 3;
    const double expertParams =
        mats * h * expertWidth + (def.expertBiases ? 2 * expertWidth + h : 0);
    const bool routerBias =
        def.routerBias || type.rfind("deepseek", 0) == 0 || type == "nemotron_h";
    const double router = experts * h + (routerBias ? experts : 0);
    const bool sharedGate = type == "qwen2_moe" || type == "qwen3_moe" || type == "qwen3_next" ||
                            type == "qwen3_5_moe_text" || type == "qwen3_5_moe";
    // Per-layer dense widths (Gemma 3n lists intermediate_size per layer).
    std::vector<double> widths(L, denseWidth);
    if (const json* j = f.find("intermediate_size"); j && j->is_array()) {
        if (j->size() != L) f.fail("intermediate_size", "a number or one width per layer", *j);
        for (size_t i = 0; i < L; ++i) {
            if (!(*j)[i].is_number() || (*j)[i].get<double>() < 0 || (*j)[i].get<double>() > 1e8)
                f.fail("intermediate_size", "a number or one width per layer", *j);
            widths[i] = (*j)[i].get<double>();
        }
    }

    std::map<detail::Mixer, detail::MixerFigures> figures;
    double total = 0, active = 0, matmul = 0;
    int moeCount = 0;
    for (size_t i = 0; i < L; ++i) {
        const auto& slot = slots[i];
        double layerTotal = norms;
        double layerMm = 0;
        std::string mixerName;
        if (hasAttention(slot)) {
            layerTotal += attnProj + attnExtra;
            layerMm += attnProj;
            if (mla)
                mixerName = kinds[i] == AttnKind::Sparse ? "sparse MLA" : "MLA";
            else if (kinds[i] == AttnKind::Sliding)
                mixerName = "sliding attention";
            else if (kinds[i] == AttnKind::Chunked)
                mixerName = "chunked attention";
            else
                mixerName = "attention";
            if (static_cast<int>(i) >= m.layers - kvShared) mixerName += " (shared KV)";
        }
        if (slot.mixer != detail::Mixer::Attention && slot.mixer != detail::Mixer::None) {
            auto it = figures.find(slot.mixer);
            if (it == figures.end())
                it = figures
                         .emplace(slot.mixer, detail::mixerFigures(f, type, slot.mixer, m.hidden,
                                                                   m.qHeads, m.headDim))
                         .first;
            const auto& fig = it->second;
            layerTotal += fig.params;
            layerMm += fig.matmul;
            m.stateSsmElems += fig.ssmElems;
            m.stateConvElems += fig.convElems;
            m.recurrentFlopsPerToken += fig.flopsPerToken;
            mixerName = detail::mixerLabel(slot.mixer);
        }
        double layerActive = layerTotal;
        const bool moe = slot.mlp == detail::Mlp::Default ? moeLayer[i] && experts > 0
                                                          : slot.mlp == detail::Mlp::Moe;
        if (slot.mlp == detail::Mlp::Moe && experts == 0)
            f.missing("n_routed_experts", "the routed experts of the MoE layers");
        std::string mlpName;
        if (slot.mlp == detail::Mlp::None) {
            // a Nemotron-H mixer block: no MLP
        } else if (moe) {
            ++moeCount;
            mlpName = "MoE";
            const double sharedP = shared * mats * h * sharedWidth + (sharedGate && shared ? h : 0);
            layerTotal += experts * expertParams + sharedP + router;
            layerActive += topK * expertParams + sharedP + router;
            layerMm +=
                topK * mats * h * expertWidth + shared * mats * h * sharedWidth + experts * h;
        } else {
            mlpName = mixerName.empty() ? "MLP" : "dense";
            layerTotal += mats * h * widths[i];
            layerActive += mats * h * widths[i];
            layerMm += mats * h * widths[i];
        }
        total += layerTotal;
        active += layerActive;
        matmul += layerMm;
        m.layerMixers.push_back(mixerName);
        m.layerMlps.push_back(mlpName);
    }
    if (figures.count(detail::Mixer::Kda))
        m.notes.push_back("KDA layers: the q, k, v, o projections and convolutions are counted, "
                          "not the gate projections");
    if (type == "gemma3n_text")
        m.notes.push_back("Gemma 3n: per-layer embeddings, AltUp and LAuReL weights are not "
                          "counted in the parameters");
    const double embed = m.vocab * h;
    const double lmHead = m.tiedEmbeddings ? 0 : m.vocab * h;
    m.paramsTotal = total + embed + lmHead + h;
    m.paramsActive = active + embed + lmHead + h;
    m.paramsMatmul = matmul;
    m.lmHeadParams = m.vocab * h;
    m.experts = experts;
    m.expertsPerToken = topK;
    m.sharedExperts = shared;
    m.moeLayers = moeCount;
}

// The recurrent state's dtype as the serving stack keeps it: the config's own
// mamba_ssm_cache_dtype / mamba_ssm_dtype where it names one, else the model's dtype
// (vLLM's --mamba-ssm-cache-dtype auto).
void readStateDtype(const Fields& f, ModelSpec& m) {
    const std::string& source = f.source();
    m.stateDtypeDefault = m.weightDtype;
    for (const char* key : {"mamba_ssm_cache_dtype", "mamba_ssm_dtype"}) {
        if (auto v = f.string(key)) {
            if (*v == "auto") continue;
            auto parsed = parseKvDtype(*v);
            if (!parsed)
                throw ConfigError{source + ": field '" + f.path(key) + "' is \"" + *v +
                                  "\"; expected auto, bfloat16, float16 or float32"};
            m.stateDtypeDefault = *parsed;
            break;
        }
    }
}

ModelSpec build(const json& top, const std::string& source, const std::string& id) {
    refuseOtherFiles(top, source);
    Fields f(top, source);
    ModelSpec m;
    m.id = id;
    m.source = source;

    std::string type = f.string("model_type").value_or("");
    if (type == "gemma3") type = "gemma3_text";
    if (type == "llama4") type = "llama4_text";
    if (type == "gemma3n") type = "gemma3n_text";
    m.modelType = type;
    const ArchDefaults def = defaultsFor(type);
    readGeometry(f, def, m);
    const bool mla = f.has("kv_lora_rank");
    const MlaDims dims = readMla(f, mla, m);
    AttentionLayout a = readLayout(f, type, m);
    readAttentionKinds(f, type, def, m, a);
    readIndexerAndSharing(f, def, mla, m, a);
    groupAttention(mla, dims, a, m);
    const AttentionParams attn = attentionParams(f, type, def, mla, dims, a, m);
    const MoeShape moe = readMoe(f, type, def, m);
    countParameters(f, type, def, mla, a, attn, moe, m);
    readStateDtype(f, m);
    return m;
}

std::string readableId(const fs::path& file) {
    if (auto hf = hfIdFromCachePath(file)) return *hf;
    auto stem = file.stem().string();
    if (stem == "config" && file.has_parent_path()) return file.parent_path().filename().string();
    // Shipped presets are named org__model.json.
    if (auto pos = stem.find("__"); pos != std::string::npos)
        return stem.substr(0, pos) + "/" + stem.substr(pos + 2);
    return stem;
}

} // namespace

Result<ModelSpec> parseModelConfig(std::string_view text, const std::string& source,
                                   const std::string& id) {
    auto j = parseJsonText(text, source);
    if (!j) return j.error();
    try {
        return build(*j, source, id);
    } catch (const ConfigError& e) {
        return Error{e.message};
    } catch (const nlohmann::json::exception& e) {
        return Error{source + ": unexpected content (" + std::string(e.what()) + ")"};
    }
}

std::optional<std::string> hfIdFromCachePath(const fs::path& path) {
    for (fs::path p = path; !p.empty() && p != p.root_path(); p = p.parent_path()) {
        const auto name = p.filename().string();
        if (name.rfind("models--", 0) == 0) {
            std::string rest = name.substr(8);
            if (auto pos = rest.find("--"); pos != std::string::npos)
                return rest.substr(0, pos) + "/" + rest.substr(pos + 2);
            return rest;
        }
    }
    return std::nullopt;
}

namespace {
// Inside a models--org--name folder: the snapshot refs/main points at, else the newest.
std::optional<fs::path> snapshotConfig(const fs::path& entry) {
    std::error_code ec;
    const auto snapshots = entry / "snapshots";
    if (!fs::is_directory(snapshots, ec)) return std::nullopt;
    if (auto ref = readTextFile(entry / "refs" / "main", 4096)) {
        std::string rev = *ref;
        rev.erase(rev.find_last_not_of(" \r\n\t") + 1);
        const auto cfg = snapshots / rev / "config.json";
        if (!rev.empty() && fs::exists(cfg, ec)) return cfg;
    }
    std::optional<fs::path> best;
    fs::file_time_type bestTime{};
    for (const auto& e : fs::directory_iterator(snapshots, ec)) {
        const auto cfg = e.path() / "config.json";
        if (!fs::exists(cfg, ec)) continue;
        const auto t = fs::last_write_time(e.path(), ec);
        if (!best || t > bestTime) {
            best = cfg;
            bestTime = t;
        }
    }
    return best;
}
} // namespace

Result<ModelSpec> readModelConfig(const fs::path& path) {
    std::error_code ec;
    fs::path file = path;
    if (fs::is_directory(path, ec)) {
        if (fs::exists(path / "config.json", ec))
            file = path / "config.json";
        else if (auto snap = snapshotConfig(path))
            file = *snap;
        else
            return Error{path.string() + ": the folder holds no config.json (nor a Hugging Face "
                                         "snapshot with one)"};
    }
    auto text = readTextFile(file, kMaxJsonFileBytes);
    if (!text) return text.error();
    return parseModelConfig(*text, file.string(), readableId(file));
}

std::vector<fs::path> hfCacheRoots() {
    std::vector<fs::path> roots;
    auto add = [&](const fs::path& p) {
        std::error_code ec;
        if (fs::is_directory(p, ec) && std::find(roots.begin(), roots.end(), p) == roots.end())
            roots.push_back(p);
    };
    if (const char* v = std::getenv("HF_HUB_CACHE")) add(v);
    if (const char* v = std::getenv("HUGGINGFACE_HUB_CACHE")) add(v);
    if (const char* v = std::getenv("HF_HOME")) add(fs::path(v) / "hub");
    if (const char* home = std::getenv("HOME"))
        add(fs::path(home) / ".cache" / "huggingface" / "hub");
    return roots;
}

std::optional<fs::path> findInHfCache(const std::string& id) {
    const auto slash = id.find('/');
    if (slash == std::string::npos) return std::nullopt;
    const std::string folder = "models--" + id.substr(0, slash) + "--" + id.substr(slash + 1);
    for (const auto& root : hfCacheRoots())
        if (auto cfg = snapshotConfig(root / folder)) return cfg;
    return std::nullopt;
}

std::vector<std::pair<std::string, fs::path>> listHfCache() {
    std::vector<std::pair<std::string, fs::path>> out;
    for (const auto& root : hfCacheRoots()) {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(root, ec)) {
            const auto name = e.path().filename().string();
            if (name.rfind("models--", 0) != 0) continue;
            if (auto cfg = snapshotConfig(e.path()))
                out.emplace_back(*hfIdFromCachePath(e.path()), *cfg);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace kvbe
