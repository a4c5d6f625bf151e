#include "config_parts.h"
#include "mixer_figures.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace kvbe::detail {

// ---- Parameters: attention projections -------------------------------------------------------

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
        if (f.boolean("attn_output_gate").value_or(isQwenLinear(type))) attnProj += h * Hq * d;
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

// ---- MoE geometry ------------------------------------------------------------------------------

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

// ---- Parameter counts, layer by layer ----------------------------------------------------------
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

    std::map<Mixer, MixerFigures> figures;
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
        if (slot.mixer != Mixer::Attention && slot.mixer != Mixer::None) {
            auto it = figures.find(slot.mixer);
            if (it == figures.end())
                it = figures
                         .emplace(slot.mixer,
                                  mixerFigures(f, type, slot.mixer, m.hidden, m.qHeads, m.headDim))
                         .first;
            const auto& fig = it->second;
            layerTotal += fig.params;
            layerMm += fig.matmul;
            m.stateSsmElems += fig.ssmElems;
            m.stateConvElems += fig.convElems;
            m.recurrentFlopsPerToken += fig.flopsPerToken;
            mixerName = mixerLabel(slot.mixer);
        }
        double layerActive = layerTotal;
        const bool moe =
            slot.mlp == Mlp::Default ? moeLayer[i] && experts > 0 : slot.mlp == Mlp::Moe;
        if (slot.mlp == Mlp::Moe && experts == 0)
            f.missing("n_routed_experts", "the routed experts of the MoE layers");
        std::string mlpName;
        if (slot.mlp == Mlp::None) {
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
    if (figures.count(Mixer::Kda))
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

} // namespace kvbe::detail
