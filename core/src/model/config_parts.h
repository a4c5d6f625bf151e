// The parts of the config reader shared between its files (internal): the architecture defaults
// (resources/model-defaults.json), the attention geometry the reader derives, and the parameter
// count built from them. config_reader.cpp runs the parts in order; parameter_count.cpp counts.
#pragma once

#include "config_fields.h"
#include "hybrid_layers.h"
#include "kvbe/model/model_spec.h"

#include <optional>
#include <string>
#include <vector>

namespace kvbe::detail {

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

// The defaults of `type`'s config class (none for an architecture the table does not list).
ArchDefaults defaultsFor(const std::string& type);

// Whether a layer computes attention pairs (attention alone, or beside Mamba in the same layer).
bool hasAttention(const LayerSlot& s);

// ---- Multi-head latent attention dims --------------------------------------------------------
struct MlaDims {
    int qkNope = 0, qkRope = 0, vHead = 0, qLora = 0;
};

// What the attention layers are: which layers, of which kind, over which window, with which
// sparse indexer, and how many at the end reuse earlier layers' KV.
struct AttentionLayout {
    bool explicitLayout = false; // the config lists each layer's kind
    std::vector<LayerSlot> slots;
    std::vector<AttnKind> kinds;
    double window = 0;
    std::optional<int> indexTopK;
    double indexerBytes = 0, indexerFlopsPerPair = 0, indexHeadDim = 0, indexHeads = 0;
    int kvShared = 0;
};

struct AttentionParams {
    double proj = 0;  // matmul weights
    double extra = 0; // norms, biases, sinks
};

AttentionParams attentionParams(const Fields& f, const std::string& type, const ArchDefaults& def,
                                bool mla, const MlaDims& dims, const AttentionLayout& a,
                                const ModelSpec& m);

struct MoeShape {
    int experts = 0, topK = 0, shared = 0;
    double expertWidth = 0, sharedWidth = 0, denseWidth = 0;
    std::vector<bool> moeLayer; // per layer: routed experts (where the layout does not say)
};

MoeShape readMoe(const Fields& f, const std::string& type, const ArchDefaults& def, ModelSpec& m);

// Every weight, the active ones and the matmul ones, layer by layer, with each layer's mixer and
// MLP named for the model description.
void countParameters(const Fields& f, const std::string& type, const ArchDefaults& def, bool mla,
                     const AttentionLayout& a, const AttentionParams& attn,
                     const MoeShape& moeShape, ModelSpec& m);

// The weights' precision config.json's quantization_config names (ModelSpec::quantizedWeights),
// or a note saying why it is not read (quantization.cpp).
void readQuantization(const Fields& f, ModelSpec& m);

} // namespace kvbe::detail
