#include "kvbe/model/config_reader.h"

#include "config_parts.h"
#include "kvbe/base/json_text.h"
#include "kvbe/files/file_kind.h"

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

namespace detail {
bool hasAttention(const LayerSlot& s) {
    return s.mixer == Mixer::Attention || s.mixer == Mixer::Parallel;
}
} // namespace detail

namespace {
using detail::ArchDefaults;
using detail::AttentionLayout;
using detail::AttentionParams;
using detail::attentionParams;
using detail::ConfigError;
using detail::countParameters;
using detail::defaultsFor;
using detail::Fields;
using detail::hasAttention;
using detail::kMaxDim;
using detail::MlaDims;
using detail::MoeShape;
using detail::readMoe;

// Files that are JSON but no model config: a scenario, a tokenizer, something else.
void refuseOtherFiles(const json& top, const std::string& source) {
    if (!top.is_object())
        throw ConfigError{source + ": the file holds " + jsonTypeName(top) +
                          "; expected a config.json object"};
    const FileKind kind = classifyJson(top, source).kind;
    if (kind == FileKind::Scenario)
        throw ConfigError{source + ": this is a kvbe scenario, not a model config.json; open it "
                                   "with --scenario"};
    if (top.contains("model") && top.contains("added_tokens"))
        throw ConfigError{source + ": this looks like a tokenizer.json, not a model config.json"};
    if (kind != FileKind::ModelConfig)
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

// Layers that hold KV of their own or a state: attention layers that do not reuse another layer's
// KV, and every Mamba, linear-attention or conv mixer (Falcon-H1's parallel layer counts once).
int countCacheLayers(const AttentionLayout& a, int layers) {
    int n = 0;
    for (size_t i = 0; i < a.slots.size(); ++i) {
        const auto& slot = a.slots[i];
        const bool ownKv = hasAttention(slot) && static_cast<int>(i) < layers - a.kvShared;
        const bool state =
            slot.mixer != detail::Mixer::Attention && slot.mixer != detail::Mixer::None;
        if (ownKv || state) ++n;
    }
    return n;
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
    m.cacheLayers = countCacheLayers(a, m.layers);
    readStateDtype(f, m);
    readQuantization(f, m);
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

} // namespace kvbe
