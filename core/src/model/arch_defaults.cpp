#include "config_parts.h"

#include "kvbe/base/embedded.h"
#include "kvbe/base/json_text.h"

#include <utility>

namespace kvbe::detail {

// The defaults of each architecture's config class, by model_type: resources/model-defaults.json,
// read once. A broken shipped file is a build error, so it fails loudly at first use.
namespace {

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
        auto flag = [&](const char* key) { return r.boolean(st, key, sp + key).value_or(false); };
        d.qkNorm = flag("qk_norm");
        d.qkvBias = flag("qkv_bias");
        d.attentionSinks = flag("attention_sinks");
        d.expertBiases = flag("expert_biases");
        d.routerBias = flag("router_bias");
        out.emplace_back(std::move(types), d);
    }
    return out;
}

} // namespace

ArchDefaults defaultsFor(const std::string& type) {
    static const auto table = readArchDefaults();
    for (const auto& [types, defaults] : table)
        for (const auto& t : types)
            if (t == type) return defaults;
    return {};
}

} // namespace kvbe::detail
