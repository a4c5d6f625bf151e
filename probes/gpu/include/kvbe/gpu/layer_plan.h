// The synthetic prefill of gpu-prefill: the GEMMs and attention one decoder layer runs, at the
// model's real shapes, and what they cost in FLOPs and bytes. Plain C++, no CUDA: the plan is
// unit-tested on machines without a GPU, against core's detailed FLOP model.
//
// A layer's time is the sum of its kernels, so the plan times blocks, not whole layers: the
// attention projections (every layer), the attention core once per attention group (full,
// sliding, chunked), the dense MLP and the MoE MLP once each. The prefill time is each block's
// time times the layers that have it, plus the lm_head for the last token. This needs no
// knowledge of which layer is both sliding and MoE, and it is exact as long as kernels run one
// after the other, as they do in a single-stream prefill.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/model/model_spec.h"
#include "kvbe/scenario/presets.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kvbe::gpu {

// C[m × n] = A[m × k] · W[k × n], BF16 in and out, FP32 accumulation. `instances` GEMMs of the
// same n and k share `rows` rows between them as evenly as possible (balanced MoE routing):
// the first rows % instances get one row more.
struct GemmOp {
    std::string name;
    double rowsPerToken = 1; // rows = tokens · rowsPerToken (MoE routed experts: top-k)
    int instances = 1;       // one weight matrix each (routed experts)
    std::int64_t n = 0;      // output features
    std::int64_t k = 0;      // input features

    std::int64_t rows(std::int64_t tokens) const;
    // Rows of instance i (0-based) for `tokens` prompt tokens.
    std::int64_t rowsOf(int instance, std::int64_t tokens) const;
    double flops(std::int64_t tokens) const {
        return 2.0 * static_cast<double>(rows(tokens)) * static_cast<double>(n) *
               static_cast<double>(k);
    }
    double weightBytes() const {
        return 2.0 * instances * static_cast<double>(n) * static_cast<double>(k);
    }
    // Per-token matmul weights, the P_mm share of this op: rowsPerToken · n · k.
    double paramsPerToken() const {
        return rowsPerToken * static_cast<double>(n) * static_cast<double>(k);
    }
};

// Causal attention over one layer: Hq query heads, Hkv key/value heads (Hq a multiple of Hkv).
struct AttentionOp {
    AttnKind kind = AttnKind::Full;
    double window = 0; // tokens; 0 for Full
    int qHeads = 0;
    int kvHeads = 0;
    int dQk = 0;
    int dV = 0;

    double pairs(std::int64_t tokens) const;
    double flops(std::int64_t tokens) const;
    std::string label() const; // "full", "sliding 4096", "chunked 8192"
};

enum class BlockKind { Projections, Attention, DenseMlp, MoeMlp };

struct Block {
    BlockKind kind = BlockKind::Projections;
    std::string name; // "attention projections", "attention (sliding 1024)", "MoE MLP"
    int layers = 0;   // how many decoder layers run this block
    std::vector<GemmOp> gemms;
    std::vector<AttentionOp> attention; // one op for Attention blocks, none otherwise

    double flops(std::int64_t tokens) const; // one layer's worth
    double weightBytes() const;
};

// MLA: queries, keys and values enter attention as separate tensors (after the latent
// up-projection), so the attention core reads three buffers, not one fused QKV.
struct LayerPlan {
    std::string modelId;
    bool mla = false;
    int hidden = 0;
    std::vector<Block> blocks;
    GemmOp lmHead; // applied to the last token only (rows = 1)

    // Σ over blocks of layers · block FLOPs + the lm_head: core's detailed F(N, 0).
    double flops(std::int64_t tokens) const;
    double attentionFlops(std::int64_t tokens) const;
    double gemmFlops(std::int64_t tokens) const; // without the lm_head
    // Σ layers · per-token GEMM weights: core's P_mm.
    double paramsMatmulPerToken() const;
    // One layer of each block's weights plus the lm_head: what the probe holds on the GPU.
    double weightBytes() const;
};

// Widths the ModelSpec does not keep: read back from the model's config text.
struct PlanExtras {
    int qLoraRank = 0;      // MLA q_lora_rank (0: direct query projection)
    double expertWidth = 0; // moe_intermediate_size (default intermediate_size)
    double sharedWidth = 0; // shared_expert_intermediate_size (default: expert width)
    double denseWidth = 0;  // intermediate_size_mlp (Llama 4), else intermediate_size
};
Result<PlanExtras> readPlanExtras(const ModelSpec& model);
// The same from config text (tests).
Result<PlanExtras> parsePlanExtras(const ModelSpec& model, const std::string& configText);

Result<LayerPlan> buildLayerPlan(const ModelSpec& model, const PlanExtras& extras);
Result<LayerPlan> buildLayerPlan(const ModelSpec& model);

// The device buffers a timed prefill of `tokens` tokens holds at once, in bytes: one layer of
// weights per block, the lm_head, and the activations of the largest block.
struct MemoryEstimate {
    double weightBytes = 0;
    double activationBytes = 0;
    double workspaceBytes = 0;
    double totalBytes() const { return weightBytes + activationBytes + workspaceBytes; }
};
inline constexpr double kGemmWorkspaceBytes = 64.0 * 1024 * 1024;
// Activations of one block at `tokens` tokens: its input, every GEMM's output, the attention
// inputs and output (BF16).
double blockActivationBytes(const LayerPlan& plan, const Block& block, std::int64_t tokens);
MemoryEstimate estimateMemory(const LayerPlan& plan, std::int64_t tokens);

} // namespace kvbe::gpu
