#include "kvbe/gpu/layer_plan.h"

#include "kvbe/base/json_text.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

namespace kvbe::gpu {

std::int64_t GemmOp::rows(std::int64_t tokens) const {
    return static_cast<std::int64_t>(std::llround(static_cast<double>(tokens) * rowsPerToken));
}

std::int64_t GemmOp::rowsOf(int instance, std::int64_t tokens) const {
    const std::int64_t total = rows(tokens);
    const std::int64_t base = total / instances;
    return base + (instance < total % instances ? 1 : 0);
}

double AttentionOp::pairs(std::int64_t tokens) const {
    return attentionPairs(kind, window, static_cast<double>(tokens), 0);
}

double AttentionOp::flops(std::int64_t tokens) const {
    return pairs(tokens) * 2.0 * qHeads * (dQk + dV);
}

std::string AttentionOp::label() const {
    const std::string w = std::to_string(static_cast<long long>(window));
    switch (kind) {
    case AttnKind::Full:
        return "full";
    case AttnKind::Sliding:
        return "sliding " + w;
    case AttnKind::Chunked:
        return "chunked " + w;
    case AttnKind::Sparse:
        return "sparse top-" + w;
    }
    return "full";
}

double Block::flops(std::int64_t tokens) const {
    double f = 0;
    for (const auto& g : gemms)
        f += g.flops(tokens);
    for (const auto& a : attention)
        f += a.flops(tokens);
    return f;
}

double Block::weightBytes() const {
    double b = 0;
    for (const auto& g : gemms)
        b += g.weightBytes();
    return b;
}

double LayerPlan::flops(std::int64_t tokens) const {
    return gemmFlops(tokens) + attentionFlops(tokens) + (tokens > 0 ? lmHead.flops(1) : 0);
}

double LayerPlan::attentionFlops(std::int64_t tokens) const {
    double f = 0;
    for (const auto& b : blocks)
        for (const auto& a : b.attention)
            f += b.layers * a.flops(tokens);
    return f;
}

double LayerPlan::gemmFlops(std::int64_t tokens) const {
    double f = 0;
    for (const auto& b : blocks)
        for (const auto& g : b.gemms)
            f += b.layers * g.flops(tokens);
    return f;
}

double LayerPlan::paramsMatmulPerToken() const {
    double p = 0;
    for (const auto& b : blocks)
        for (const auto& g : b.gemms)
            p += b.layers * g.paramsPerToken();
    return p;
}

double LayerPlan::weightBytes() const {
    double w = lmHead.weightBytes();
    for (const auto& b : blocks)
        w += b.weightBytes();
    return w;
}

namespace {

const nlohmann::json* field(const nlohmann::json& top, const char* key) {
    if (top.contains("text_config") && top["text_config"].is_object() &&
        top["text_config"].contains(key) && !top["text_config"][key].is_null())
        return &top["text_config"][key];
    if (top.contains(key) && !top[key].is_null()) return &top[key];
    return nullptr;
}

std::optional<double> number(const nlohmann::json& top, const char* key) {
    const auto* j = field(top, key);
    if (!j || !j->is_number()) return std::nullopt;
    return j->get<double>();
}

std::int64_t dim(double v) {
    return static_cast<std::int64_t>(std::llround(v));
}

} // namespace

Result<PlanExtras> parsePlanExtras(const ModelSpec& m, const std::string& text) {
    auto parsed = parseJsonText(text, m.source);
    if (!parsed) return parsed.error();
    const nlohmann::json& top = *parsed;
    PlanExtras e;
    e.qLoraRank = static_cast<int>(number(top, "q_lora_rank").value_or(0));
    e.expertWidth = number(top, "moe_intermediate_size").value_or(m.intermediate);
    e.sharedWidth = number(top, "shared_expert_intermediate_size").value_or(e.expertWidth);
    e.denseWidth = m.intermediate;
    // Llama 4 (as core reads it): experts and the one shared expert are intermediate_size wide;
    // its dense layers use intermediate_size_mlp.
    if (m.modelType == "llama4_text" && m.experts > 0) {
        e.expertWidth = m.intermediate;
        e.sharedWidth = m.intermediate;
        e.denseWidth = number(top, "intermediate_size_mlp").value_or(m.intermediate);
    }
    return e;
}

Result<PlanExtras> readPlanExtras(const ModelSpec& m) {
    const std::string prefix = "resources/";
    if (m.source.rfind(prefix, 0) == 0) {
        unsigned long count = 0;
        const EmbeddedFile* files = embeddedFiles(&count);
        const std::string path = m.source.substr(prefix.size());
        for (unsigned long i = 0; i < count; ++i)
            if (path == files[i].path)
                return parsePlanExtras(
                    m, std::string(reinterpret_cast<const char*>(files[i].data), files[i].size));
    }
    auto text = readTextFile(m.source, kMaxJsonFileBytes);
    if (!text)
        return Error{"cannot read the model's config again for its MLP widths: " + text.message()};
    return parsePlanExtras(m, *text);
}

Result<LayerPlan> buildLayerPlan(const ModelSpec& m, const PlanExtras& e) {
    if (m.isHybrid() || m.hasSparseAttention())
        return Error{m.id +
                     ": the prefill probe builds dense attention and MLP layers only; this "
                     "model has " +
                     m.layerMix() + ", which it cannot run yet"};
    if (m.layers <= 0 || m.hidden <= 0 || m.qHeads <= 0 || m.kvHeads <= 0)
        return Error{m.id + ": the model has no layers, width or heads to build a layer from"};
    LayerPlan plan;
    plan.modelId = m.id;
    plan.mla = m.mla;
    plan.hidden = m.hidden;
    const std::int64_t h = m.hidden, hq = m.qHeads, hkv = m.kvHeads, d = m.headDim;
    const std::int64_t dqk = dim(m.dQk), dv = dim(m.dV);

    Block proj{BlockKind::Projections, "attention projections", m.layers, {}, {}};
    if (m.mla) {
        const std::int64_t rope = m.qkRopeHeadDim, nope = dqk - rope, rank = m.kvLoraRank;
        if (e.qLoraRank > 0) {
            proj.gemms.push_back({"q_a_proj", 1, 1, e.qLoraRank, h});
            proj.gemms.push_back({"q_b_proj", 1, 1, hq * dqk, e.qLoraRank});
        } else {
            proj.gemms.push_back({"q_proj", 1, 1, hq * dqk, h});
        }
        proj.gemms.push_back({"kv_a_proj", 1, 1, rank + rope, h});
        proj.gemms.push_back({"kv_b_proj", 1, 1, hq * (nope + dv), rank});
        proj.gemms.push_back({"o_proj", 1, 1, h, hq * dv});
    } else {
        proj.gemms.push_back({"qkv_proj", 1, 1, (hq + 2 * hkv) * d, h});
        proj.gemms.push_back({"o_proj", 1, 1, h, hq * d});
    }
    plan.blocks.push_back(proj);

    // After MLA's up-projection every query head has its own key and value head.
    const int attnKv = m.mla ? m.qHeads : m.kvHeads;
    for (const auto& g : m.attention) {
        AttentionOp op{
            g.kind, g.window, m.qHeads, attnKv, static_cast<int>(dqk), static_cast<int>(dv)};
        plan.blocks.push_back(
            {BlockKind::Attention, "attention (" + op.label() + ")", g.layers, {}, {op}});
    }

    const int denseLayers = m.layers - m.moeLayers;
    if (denseLayers > 0) {
        const std::int64_t w = dim(e.denseWidth);
        Block mlp{BlockKind::DenseMlp, "dense MLP", denseLayers, {}, {}};
        mlp.gemms.push_back({"gate_up_proj", 1, 1, 2 * w, h});
        mlp.gemms.push_back({"down_proj", 1, 1, h, w});
        plan.blocks.push_back(mlp);
    }
    if (m.moeLayers > 0) {
        if (m.experts <= 0 || m.expertsPerToken <= 0)
            return Error{m.id + ": MoE layers without experts per token"};
        const std::int64_t ew = dim(e.expertWidth);
        const double topK = m.expertsPerToken;
        Block moe{BlockKind::MoeMlp, "MoE MLP", m.moeLayers, {}, {}};
        moe.gemms.push_back({"router", 1, 1, m.experts, h});
        moe.gemms.push_back({"experts.gate_up_proj", topK, m.experts, 2 * ew, h});
        moe.gemms.push_back({"experts.down_proj", topK, m.experts, h, ew});
        if (m.sharedExperts > 0) {
            const std::int64_t sw = m.sharedExperts * dim(e.sharedWidth);
            moe.gemms.push_back({"shared.gate_up_proj", 1, 1, 2 * sw, h});
            moe.gemms.push_back({"shared.down_proj", 1, 1, h, sw});
        }
        plan.blocks.push_back(moe);
    }
    plan.lmHead = {"lm_head", 1, 1, dim(m.vocab), h};
    return plan;
}

Result<LayerPlan> buildLayerPlan(const ModelSpec& m) {
    auto extras = readPlanExtras(m);
    if (!extras) return extras.error();
    return buildLayerPlan(m, *extras);
}

double blockActivationBytes(const LayerPlan&, const Block& b, std::int64_t tokens) {
    const double n = static_cast<double>(tokens);
    if (b.kind == BlockKind::Attention) {
        const auto& a = b.attention.front();
        return 2.0 * n *
               (double(a.qHeads) * a.dQk + double(a.kvHeads) * a.dQk + double(a.kvHeads) * a.dV +
                double(a.qHeads) * a.dV);
    }
    // The GEMMs of a block run one after the other: one input and one output buffer, each as
    // large as the largest operand, serve them all (MoE instances take consecutive rows).
    double in = 0, out = 0;
    for (const auto& g : b.gemms) {
        in = std::max(in, double(g.rows(tokens)) * double(g.k));
        out = std::max(out, double(g.rows(tokens)) * double(g.n));
    }
    return 2.0 * (in + out);
}

MemoryEstimate estimateMemory(const LayerPlan& plan, std::int64_t tokens) {
    MemoryEstimate e;
    e.weightBytes = plan.weightBytes();
    double act = 2.0 * (double(plan.lmHead.k) + double(plan.lmHead.n)); // one token's lm_head
    for (const auto& b : plan.blocks)
        act = std::max(act, blockActivationBytes(plan, b, tokens));
    e.activationBytes = act;
    e.workspaceBytes = kGemmWorkspaceBytes;
    return e;
}

} // namespace kvbe::gpu
