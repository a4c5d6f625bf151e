// Model geometry: what a Hugging Face config.json says about KV bytes, parameters and attention.
#pragma once

#include "kvbe/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

enum class KvDtype { FP32, BF16, FP16, FP8, INT8 };

int bytesPerElement(KvDtype d);
std::string_view toString(KvDtype d);
// "bf16", "bfloat16", "fp16", "float16", "half", "fp8", "fp8_e4m3", "int8", "fp32", "float32".
std::optional<KvDtype> parseKvDtype(std::string_view text);

enum class AttnKind {
    Full,    // every earlier token
    Sliding, // the last `window` tokens (Gemma 3, gpt-oss, Mistral with sliding_window)
    Chunked, // tokens of the same `window`-sized chunk (Llama 4 local attention)
};

// Layers that share an attention shape, so the cost model sums over a few groups, not L layers.
struct AttentionGroup {
    AttnKind kind = AttnKind::Full;
    double window = 0;           // tokens; 0 for Full
    int layers = 0;              // how many decoder layers have this shape
    double kvElemsPerToken = 0;  // cached elements per token and layer (2·Hkv·d, or the MLA latent)
    double flopsPerPair = 0;     // 2·Hq·(d_qk + d_v) per (query, key) pair and layer
};

// Number of (query, key) pairs a causal prefill of n_new tokens after n_past cached ones visits
// on one layer of the given kind. Real-valued so that solvers can bisect on it.
double attentionPairs(AttnKind kind, double window, double nNew, double nPast);
// Tokens a layer of this kind keeps in its cache after p tokens.
double cachedTokens(AttnKind kind, double window, double p);

struct ModelSpec {
    std::string id;         // Hugging Face id ("meta-llama/Llama-3.2-3B") or the file's name
    std::string source;     // where it was read from
    std::string modelType;  // config model_type (text part)

    int layers = 0;
    int hidden = 0;
    int qHeads = 0;
    int kvHeads = 0;
    int headDim = 0;        // d: head_dim, or hidden / heads
    double dQk = 0;         // query/key head dim used by attention (MLA: nope + rope)
    double dV = 0;          // value head dim
    double vocab = 0;
    double intermediate = 0;
    bool tiedEmbeddings = false;

    // Multi-head latent attention (DeepSeek V2/V3): the cache holds one latent per token and layer.
    bool mla = false;
    int kvLoraRank = 0;
    int qkRopeHeadDim = 0;

    // Mixture of experts.
    int experts = 0;         // routed experts per MoE layer (0: dense)
    int expertsPerToken = 0;
    int sharedExperts = 0;
    int moeLayers = 0;

    double contextLimit = 0; // max_position_embeddings
    KvDtype weightDtype = KvDtype::BF16; // torch_dtype / dtype: the KV dtype unless overridden

    double paramsTotal = 0;  // every weight; lm_head counted again when untied
    double paramsActive = 0; // what one token touches (MoE: routed top-k + shared), embeddings in
    double paramsMatmul = 0; // P_mm: per-token matmul weights of the decoder stack
    double lmHeadParams = 0; // h · vocab, applied to the last token only

    std::vector<AttentionGroup> attention;
    std::vector<std::string> notes; // assumptions the reader made (defaults, ignored windows)

    bool hasWindows() const;
    // KV bytes of a p-token prefix, window caps applied.
    double kvBytes(double p, KvDtype dtype) const;
    // KV bytes per token without window caps (the headline figure).
    double kvBytesPerToken(KvDtype dtype) const;
    // The simple FLOP model's attention coefficient, 2·L·Hq·d (with d = (d_qk + d_v) / 2).
    double simpleAttentionCoefficient() const;
    // Σ over layers of pairs · 2·Hq·(d_qk + d_v).
    double attentionFlops(double nNew, double nPast) const;
};

} // namespace kvbe
