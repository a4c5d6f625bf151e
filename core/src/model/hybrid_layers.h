// The layer layout of hybrid models (internal to the config reader): which decoder layers are
// attention, which are Mamba, linear attention or short convolutions, and what each of those
// non-attention mixers weighs, keeps as state and costs per token. docs/cost-model.md,
// "Hybrid and sparse models", has the table this follows.
#pragma once

#include "config_fields.h"
#include "kvbe/model/model_spec.h"

#include <string>
#include <vector>

namespace kvbe::detail {

enum class Mixer {
    Attention,     // softmax attention (full, sliding, chunked; MLA where kv_lora_rank is set)
    Mamba1,        // Jamba's Mamba layers
    Mamba2,        // Nemotron-H, granite-4.0-h, the Mamba half of Falcon-H1
    GatedDeltaNet, // Qwen3-Next, Qwen3.5 linear_attention
    Kda,           // Kimi-Linear's Kimi Delta Attention
    Lightning,     // MiniMax lightning (linear) attention
    ShortConv,     // LFM2 conv layers
    Parallel,      // Falcon-H1: attention and Mamba-2 side by side in one layer
    None,          // a Nemotron-H block with an MLP only
};

enum class Mlp { Default, Dense, Moe, None };

struct LayerSlot {
    Mixer mixer = Mixer::Attention;
    AttnKind attn = AttnKind::Full; // for Attention and Parallel layers
    Mlp mlp = Mlp::Default;         // Default: the reader's MoE rules (decoder_sparse_step, ...)
};

struct LayerLayout {
    std::vector<LayerSlot> layers; // empty: no layout key, every layer full attention
    std::string key;               // the field the layout came from, for notes
};

// Qwen3-Next and Qwen3.5 (text and MoE): Gated DeltaNet linear layers, gated attention.
bool isQwenLinear(const std::string& type);

// Refuses a config with a key that could change which layers hold KV and that the reader does
// not understand: an unknown *_pattern, mamba_*/ssm_*/linear_* keys on an architecture whose
// recurrent layers it does not know, or a recurrent model_type it does not read.
void refuseUnknownLayoutKeys(const Fields& f, const std::string& type);

// The per-layer layout from layer_types, hybrid_override_pattern, full_attention_interval,
// attn_layer_period/offset, attn_type_list, linear_attn_config, layers_block_type or the
// architecture (Falcon-H1). Unknown layer kinds are refused with a sentence naming the key.
LayerLayout readLayerLayout(const Fields& f, const std::string& type, int layers);

// "Mamba-2", "Gated DeltaNet", ...; for attention the caller names the kind.
std::string mixerLabel(Mixer mixer);

// The reader's parts' shared refusals: a sentence after the file's name, and a required
// positive integer inside a nested object (parent names it in the message).
[[noreturn]] void refuse(const Fields& f, const std::string& sentence);
int intField(const json& obj, const Fields& f, const std::string& parent, const char* key);

} // namespace kvbe::detail
