// Model geometry: what a Hugging Face config.json says about KV bytes, parameters and attention.
#pragma once

#include "kvbe/base/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

// Tokens in the KV block of ModelSpec::kvBlockBytes.
inline constexpr int kKvBlockTokens = 256;

enum class KvDtype { FP32, BF16, FP16, FP8, INT8 };

int bytesPerElement(KvDtype d);
std::string_view toString(KvDtype d);
// "bf16", "bfloat16", "fp16", "float16", "half", "fp8", "fp8_e4m3", "int8", "fp32", "float32".
std::optional<KvDtype> parseKvDtype(std::string_view text);

// The precision a model's weights are served in (docs/cost-model.md, "Weights in HBM"): what the
// weights take of the GPU's memory, so the HBM left for KV. INT4 counts half a byte a weight
// (the group scales of AWQ / GPTQ, about 3 % more, are not counted).
enum class WeightDtype { FP32, BF16, FP16, FP8, INT8, INT4 };
double bytesPerWeight(WeightDtype d);
std::string_view toString(WeightDtype d);
// "bf16", "bfloat16", "fp16", "float16", "fp8", "int8", "int4", "fp32", "float32".
std::optional<WeightDtype> parseWeightDtype(std::string_view text);
// The weights' dtype of an unquantized checkpoint of this torch_dtype.
WeightDtype weightDtypeOf(KvDtype torchDtype);

enum class AttnKind {
    Full,    // every earlier token
    Sliding, // the last `window` tokens (Gemma 3, gpt-oss, Mistral with sliding_window)
    Chunked, // tokens of the same `window`-sized chunk (Llama 4 local attention)
    Sparse,  // every earlier token is cached, but each query visits at most `window` of them
             // (DeepSeek-V3.2: the indexer's index_topk)
};

// Layers that share an attention shape, so the cost model sums over a few groups, not L layers.
struct AttentionGroup {
    AttnKind kind = AttnKind::Full;
    double window = 0;          // tokens; 0 for Full
    int layers = 0;             // how many decoder layers have this shape
    double kvElemsPerToken = 0; // cached elements per token and layer (2·Hkv·d, or the MLA latent);
                                // 0 for a layer that reads another layer's KV (Gemma 3n)
    double flopsPerPair = 0; // 2·Hq·(d_qk + d_v) per (query, key) pair and layer
    // Cached bytes per token and layer whose dtype is fixed by the model, not by the KV dtype
    // setting: DeepSeek-V3.2's indexer keys (index_head_dim FP8 values and one FP32 scale per 128).
    double kvFixedBytesPerToken = 0;
};

// Whether two model ids name the same model: their names after the organisation, ignoring case
// ("meta-llama/Llama-3.2-3B" and "llama-3.2-3b").
bool sameModelName(const std::string& a, const std::string& b);

// Number of (query, key) pairs a causal prefill of n_new tokens after n_past cached ones visits
// on one layer of the given kind. Real-valued so that solvers can bisect on it.
double attentionPairs(AttnKind kind, double window, double nNew, double nPast);
// Tokens a layer of this kind keeps in its cache after p tokens.
double cachedTokens(AttnKind kind, double window, double p);

struct ModelSpec {
    std::string id;        // Hugging Face id ("meta-llama/Llama-3.2-3B") or the file's name
    std::string source;    // where it was read from
    std::string modelType; // config model_type (text part)

    int layers = 0;
    int hidden = 0;
    int qHeads = 0;
    int kvHeads = 0;
    int headDim = 0; // d: head_dim, or hidden / heads
    double dQk = 0;  // query/key head dim used by attention (MLA: nope + rope)
    double dV = 0;   // value head dim
    double vocab = 0;
    double intermediate = 0;
    bool tiedEmbeddings = false;

    // Multi-head latent attention (DeepSeek V2/V3): the cache holds one latent per token and layer.
    bool mla = false;
    int kvLoraRank = 0;
    int qkRopeHeadDim = 0;

    // Mixture of experts.
    int experts = 0; // routed experts per MoE layer (0: dense)
    int expertsPerToken = 0;
    int sharedExperts = 0;
    int moeLayers = 0;

    double contextLimit = 0;             // max_position_embeddings
    KvDtype weightDtype = KvDtype::BF16; // torch_dtype / dtype: the KV dtype unless overridden
    // The weights' precision that config.json's quantization_config names (fp8, int4, ...);
    // none: the checkpoint is not quantized, or its method is not one kvbe reads (a note says so).
    std::optional<WeightDtype> quantizedWeights;

    double paramsTotal = 0;  // every weight; lm_head counted again when untied
    double paramsActive = 0; // what one token touches (MoE: routed top-k + shared), embeddings in
    double paramsMatmul = 0; // P_mm: per-token matmul weights of the decoder stack
    double lmHeadParams = 0; // h · vocab, applied to the last token only

    std::vector<AttentionGroup> attention;
    std::vector<std::string> notes; // assumptions the reader made (defaults, ignored windows)

    // ---- Hybrid models (docs/cost-model.md, "Hybrid and sparse models") ----------------------
    // Each decoder layer's token mixer ("attention", "Mamba-2", "Gated DeltaNet", ...; empty for
    // an MLP-only block of Nemotron-H) and its MLP ("MoE", "dense"; empty when the block has none).
    std::vector<std::string> layerMixers;
    std::vector<std::string> layerMlps;
    // Layers that compute softmax attention pairs (the simple FLOP model's L); shared-KV layers
    // count, Mamba and linear-attention layers do not. 0 means every layer (a hand-built spec).
    int softmaxLayers = 0;
    // Layers that hold KV of their own or a state (what a hit loads layer by layer): attention
    // layers less shared-KV ones, plus Mamba, linear-attention and conv layers; a layer with both
    // counts once. 0 means every layer (a hand-built spec).
    int cacheLayers = 0;
    // Elements of the per-prefix state snapshot, summed over layers: the recurrent / SSM state
    // (in the state dtype) and the convolution state (in the model's dtype).
    double stateSsmElems = 0;
    double stateConvElems = 0;
    // The recurrent state's dtype when the scenario does not set one: the config's
    // mamba_ssm_cache_dtype / mamba_ssm_dtype where it names one, else the model's dtype.
    KvDtype stateDtypeDefault = KvDtype::BF16;
    // FLOPs per token of the recurrences (linear attention, Mamba), beyond 2·P_mm, summed over
    // layers.
    double recurrentFlopsPerToken = 0;

    // The weights' precision when served: the one chosen, else quantization_config's, else
    // torch_dtype's.
    WeightDtype servedWeights(std::optional<WeightDtype> chosen) const;
    // Bytes of the weights in HBM, across all GPUs, at that precision. A quantized precision
    // applies to the decoder's weights; the embeddings and an untied lm_head stay in torch_dtype,
    // as FP8, AWQ and GPTQ checkpoints keep them (docs/cost-model.md, "Weights in HBM").
    double weightBytes(std::optional<WeightDtype> chosen) const;

    // The layers a per-layer fixed cost counts (cacheLayers, else every layer).
    int kvStateLayers() const { return cacheLayers > 0 ? cacheLayers : layers; }
    // A state per prefix, or layers without a KV cache of their own: the charts mark these.
    bool isHybrid() const;
    // Attention that visits at most index_topk keys per query (DeepSeek-V3.2).
    bool hasSparseAttention() const;
    // "52 layers: 23 Mamba-2, 23 MoE, 6 attention" (mixers and MLP-only blocks, most first; then
    // the MLPs of layers that have a mixer too, "; MLP: 48 MoE").
    std::string layerMix() const;
    // Bytes of one state snapshot: SSM state in `ssmDtype`, conv state in the model's dtype.
    double stateBytes(KvDtype ssmDtype) const;

    bool hasWindows() const;
    // KV bytes of a p-token prefix, window caps applied.
    double kvBytes(double p, KvDtype dtype) const;
    // KV bytes per token without window caps (the headline figure).
    double kvBytesPerToken(KvDtype dtype) const;
    // The KV block the drive and copy probes move: kKvBlockTokens tokens × KV bytes per token
    // (28 MiB for Llama 3.2 3B in bf16), rounded up to whole 4 KiB pages so O_DIRECT accepts it;
    // 0 for a model without KV bytes per token.
    std::uint64_t kvBlockBytes(KvDtype dtype) const;
    // The simple FLOP model's attention coefficient, 2·L·Hq·d (with d = (d_qk + d_v) / 2).
    double simpleAttentionCoefficient() const;
    // Σ over layers of pairs · 2·Hq·(d_qk + d_v).
    double attentionFlops(double nNew, double nPast) const;
};

} // namespace kvbe
