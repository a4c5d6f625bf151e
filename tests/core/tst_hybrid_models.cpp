// Hybrid and sparse models (docs/cost-model.md, "Hybrid and sparse models"): KV only from the
// attention layers, the per-prefix state, parameters per layer kind and the layer mix, each
// computed here by hand from the layer pattern and the config's shapes, not through the reader;
// unknown layouts refused; the state in t_load, B* and p*.
#include "kvbe/base/json_text.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/model/config_reader.h"
#include "kvbe/scenario/scenario.h"
#include "test_support.h"

using namespace kvbe;
using kvbe::test::preset;

namespace {

ModelSpec parse(const std::string& json) {
    auto m = parseModelConfig(json, "test.json", "test");
    if (!m) qFatal("%s", m.message().c_str());
    return *m;
}

std::string refusal(const std::string& json) {
    auto m = parseModelConfig(json, "test.json", "test");
    return m ? std::string() : m.message();
}

std::string repeatList(const std::vector<std::string>& unit, int times) {
    std::string s;
    for (int t = 0; t < times; ++t)
        for (const auto& u : unit)
            s += (s.empty() ? "" : ",") + ("\"" + u + "\"");
    return "[" + s + "]";
}

// Mamba-2 state per layer (vLLM mamba2_state_shape): ssm heads·head_dim·d_state, conv
// (heads·head_dim + 2·groups·d_state)·(kernel − 1).
double mamba2Ssm(double heads, double headDim, double state) {
    return heads * headDim * state;
}
double mamba2Conv(double heads, double headDim, double groups, double state, double kernel) {
    return (heads * headDim + 2 * groups * state) * (kernel - 1);
}
// Gated DeltaNet state per layer: recurrent h_v·d_k·d_v, conv (2·h_k·d_k + h_v·d_v)·(kernel − 1).
double gdnSsm(double hv, double dk, double dv) {
    return hv * dk * dv;
}
double gdnConv(double hk, double hv, double dk, double dv, double kernel) {
    return (2 * hk * dk + hv * dv) * (kernel - 1);
}

// A shipped config with some keys taken out (of text_config where there is one, else the top).
std::string shippedWithout(const char* file, const std::vector<std::string>& keys,
                           const nlohmann::json& set = nlohmann::json::object()) {
    QFile f(QString::fromUtf8(KVBE_SOURCE_DIR "/resources/models/") + QString::fromUtf8(file));
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read %s", file);
    auto j = *parseJsonText(f.readAll().toStdString(), file);
    nlohmann::json& target = j.contains("text_config") ? j["text_config"] : j;
    for (const auto& k : keys) {
        if (!target.contains(k)) qFatal("%s has no %s", file, k.c_str());
        target.erase(k);
    }
    for (const auto& [k, v] : set.items())
        target[k] = v;
    return dumpJson(j);
}

const char* kLlamaLike = R"({"model_type":"llama","num_hidden_layers":4,"hidden_size":256,
  "num_attention_heads":4,"num_key_value_heads":2,"vocab_size":1000,"intermediate_size":512)";

} // namespace

class TestHybridModels : public QObject {
    Q_OBJECT
  private slots:
    // Nemotron 3 Nano 30B-A3B: pattern MEMEM*EMEMEM*... → 23 Mamba-2, 23 MoE, 6 attention.
    void nemotron3NanoByHand() {
        const auto& m = preset("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16");
        const std::string pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME";
        const double nM = 23, nE = 23, nA = 6;
        QCOMPARE(static_cast<double>(std::count(pattern.begin(), pattern.end(), 'M')), nM);
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("52 layers: 23 Mamba-2, 23 MoE, 6 attention"));
        // KV: 6 attention layers × 2 × 2 KV heads × 128 × 2 B (6,144).
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 6144.0);
        QCOMPARE(m.kvBytes(1000, KvDtype::BF16), 6144.0 * 1000);
        // State: 64 heads × 64 × d_state 128; conv (4096 + 2·8·128)·3; SSM kept in FP32
        // (mamba_ssm_cache_dtype), conv in BF16.
        QCOMPARE(m.stateSsmElems, nM * 64 * 64 * 128);
        QCOMPARE(m.stateConvElems, nM * (64 * 64 + 2 * 8 * 128) * 3);
        QVERIFY(m.stateDtypeDefault == KvDtype::FP32);
        QCOMPARE(m.stateBytes(KvDtype::FP32), 49082368.0);
        QCOMPARE(m.stateBytes(KvDtype::BF16), 24965120.0);
        // Parameters: Mamba-2 mixer (in_proj, conv + bias, dt/A/D, norm, out_proj), MoE with
        // 128 relu2 experts of 1856 (2 matrices each), one shared of 3712, router + bias; GQA
        // attention; one norm per block; untied embeddings; final norm.
        const double h = 2688, di = 64 * 64, conv = di + 2 * 8 * 128;
        const double mamba = h * (di + conv + 64) + conv * 4 + conv + 3 * 64 + di + di * h;
        const double attn = h * 32 * 128 + 2 * h * 2 * 128 + 32 * 128 * h;
        const double moeTotal = 128 * 2 * h * 1856 + 2 * h * 3712 + 128 * h + 128;
        const double moeActive = 6 * 2 * h * 1856 + 2 * h * 3712 + 128 * h + 128;
        const double embed = 2 * 131072 * h + h;
        QCOMPARE(m.paramsTotal, nM * (mamba + h) + nE * (moeTotal + h) + nA * (attn + h) + embed);
        QCOMPARE(m.paramsActive, nM * (mamba + h) + nE * (moeActive + h) + nA * (attn + h) + embed);
        QVERIFY(std::abs(m.paramsTotal - 31.58e9) < 0.01e9); // "31.6B total"
        QVERIFY(std::abs(m.paramsActive - 3.58e9) < 0.01e9); // "3.6B active incl. embeddings"
        QCOMPARE(m.softmaxLayers, 6);
        QCOMPARE(m.recurrentFlopsPerToken, nM * 4 * 64 * 64 * 128);
        QVERIFY(m.isHybrid());
    }

    // Qwen3-Next-80B-A3B: full_attention_interval 4 → 12 gated attention, 36 Gated DeltaNet.
    void qwen3NextByHand() {
        const auto& m = preset("Qwen/Qwen3-Next-80B-A3B-Instruct");
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("48 layers: 36 Gated DeltaNet, 12 attention; MLP: 48 MoE"));
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 12.0 * 2 * 2 * 256 * 2); // 24,576
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 24576.0);
        // cost-model.md: 36 × (32·128·128 + (2·16·128 + 32·128)·3) = 19,759,104 state elements.
        QCOMPARE(m.stateSsmElems + m.stateConvElems, 19759104.0);
        QCOMPARE(m.stateSsmElems, 36 * gdnSsm(32, 128, 128));
        QCOMPARE(m.stateConvElems, 36 * gdnConv(16, 32, 128, 128, 4));
        QVERIFY(m.stateDtypeDefault == KvDtype::BF16);
        QCOMPARE(m.stateBytes(KvDtype::BF16), 19759104.0 * 2);
        const double h = 2048, cd = 2 * 16 * 128 + 32 * 128;
        const double attn = h * 16 * 256 * 2 + 2 * h * 2 * 256 + 16 * 256 * h + 2 * 256;
        const double gdn =
            h * (2 * 16 * 128 + 2 * 32 * 128) + h * 64 + cd * 4 + 32 * 128 * h + 64 + 128;
        const double moeTotal = 512 * 3 * h * 512 + 3 * h * 512 + h + 512 * h;
        const double moeActive = 10 * 3 * h * 512 + 3 * h * 512 + h + 512 * h;
        const double embed = 2 * 151936 * h + h;
        QCOMPARE(m.paramsTotal, 12 * attn + 36 * gdn + 48 * (moeTotal + 2 * h) + embed);
        QCOMPARE(m.paramsActive, 12 * attn + 36 * gdn + 48 * (moeActive + 2 * h) + embed);
        QVERIFY(std::abs(m.paramsTotal - 79.67e9) < 0.01e9); // "80B total"
        QCOMPARE(m.recurrentFlopsPerToken, 36 * 6.0 * 32 * 128 * 128);
    }

    // Jamba 1.5 Mini: attention where i % 8 == 4 (4 layers), MoE where i % 2 == 1.
    void jamba15MiniByHand() {
        const auto& m = preset("ai21labs/AI21-Jamba-1.5-Mini");
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("32 layers: 28 Mamba, 4 attention; MLP: 16 MoE, 16 dense"));
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 4.0 * 2 * 8 * 128 * 2); // 16,384
        // Mamba (v1): d_inner = 2·4096; ssm d_inner·16, conv d_inner·3.
        QCOMPARE(m.stateSsmElems, 28.0 * 8192 * 16);
        QCOMPARE(m.stateConvElems, 28.0 * 8192 * 3);
        QCOMPARE(m.stateBytes(KvDtype::BF16), 8716288.0);
        const double h = 4096, di = 8192, r = 256, n = 16;
        const double mamba = h * 2 * di + di * 4 + di + di * (r + 2 * n) + r * di + di + di * n +
                             di + di * h + r + 2 * n;
        const double attn = h * 32 * 128 + 2 * h * 8 * 128 + 32 * 128 * h;
        const double moeT = 16 * 3 * h * 14336 + 16 * h, moeA = 2 * 3 * h * 14336 + 16 * h;
        const double dense = 3 * h * 14336;
        const double rest = 32 * 2 * h + 2 * 65536 * h + h;
        QCOMPARE(m.paramsTotal, 4 * attn + 28 * mamba + 16 * moeT + 16 * dense + rest);
        QCOMPARE(m.paramsActive, 4 * attn + 28 * mamba + 16 * moeA + 16 * dense + rest);
        QVERIFY(std::abs(m.paramsTotal - 51.57e9) < 0.01e9); // "52B total, 12B active"
        QVERIFY(std::abs(m.paramsActive - 12.11e9) < 0.01e9);
    }

    // Qwen3.5-35B-A3B (the shipped file): text_config.layer_types, three linear_attention to one
    // full_attention → 30 Gated DeltaNet, 10 gated attention; 256 experts (top 8) and a gated
    // shared expert in every layer; the recurrent state in FP32 (mamba_ssm_dtype), the conv
    // state in BF16 (vLLM's gated_delta_net_state_dtype).
    void qwen35MoePresetByHand() {
        const auto& m = preset("Qwen/Qwen3.5-35B-A3B");
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("40 layers: 30 Gated DeltaNet, 10 attention; MLP: 40 MoE"));
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 10.0 * 2 * 2 * 256 * 2); // 20,480
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 20480.0);
        QCOMPARE(m.stateSsmElems, 30 * gdnSsm(32, 128, 128));
        QCOMPARE(m.stateConvElems, 30 * gdnConv(16, 32, 128, 128, 4));
        QVERIFY(m.stateDtypeDefault == KvDtype::FP32);
        // 30 × (32·128·128 · 4 B + (2·16·128 + 32·128)·3 · 2 B) = 30 × (2,097,152 + 49,152).
        QCOMPARE(m.stateBytes(KvDtype::FP32), 30.0 * (2097152 + 49152));
        QCOMPARE(m.stateBytes(KvDtype::FP32), 64389120.0);
        QCOMPARE(m.stateBytes(KvDtype::BF16), 30.0 * (32 * 128 * 128 + 8192 * 3) * 2);
        // Parameters: gated attention (q_proj doubled for the output gate, q/k norms), Gated
        // DeltaNet (in_proj_qkv, in_proj_z, in_proj_b, in_proj_a, conv, dt_bias, A_log, norm,
        // out_proj), MoE (experts of 3·h·512, shared expert with its gate, router), two norms per
        // layer, untied embeddings, final norm. The vision tower and the MTP layer are not counted.
        const double h = 2048, d = 256, cd = 2 * 16 * 128 + 32 * 128;
        const double attn = h * 16 * d * 2 + 2 * h * 2 * d + 16 * d * h + 2 * d;
        const double gdn =
            h * (2 * 16 * 128 + 2 * 32 * 128) + h * 2 * 32 + cd * 4 + 32 * 128 * h + 2 * 32 + 128;
        const double moeTotal = 256 * 3 * h * 512 + 3 * h * 512 + h + 256 * h;
        const double moeActive = 8 * 3 * h * 512 + 3 * h * 512 + h + 256 * h;
        const double embed = 2 * 248320 * h + h;
        QCOMPARE(m.paramsTotal, 10 * attn + 30 * gdn + 40 * (moeTotal + 2 * h) + embed);
        QCOMPARE(m.paramsActive, 10 * attn + 30 * gdn + 40 * (moeActive + 2 * h) + embed);
        QCOMPARE(m.paramsTotal, 34660610688.0); // "35B total"
        QCOMPARE(m.paramsActive, 3454988928.0); // "3B active"
        QCOMPARE(m.contextLimit, 262144.0);
        QCOMPARE(m.recurrentFlopsPerToken, 30 * 6.0 * 32 * 128 * 128);
        QVERIFY(m.isHybrid());
    }

    // Falcon-H1-0.5B-Instruct (the shipped file): attention and a Mamba-2 mixer of
    // mamba_d_ssm = 24 heads × 64 side by side in all 36 layers; dense MLP in every layer.
    void falconH1HalfBPresetByHand() {
        const auto& m = preset("tiiuae/Falcon-H1-0.5B-Instruct");
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("36 layers: 36 attention + Mamba-2; MLP: 36 dense"));
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 36.0 * 2 * 2 * 64 * 2); // 18,432
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 18432.0);
        // vLLM mamba2_state_shape with intermediate = mamba_d_ssm: ssm 24·64·128, conv
        // (1536 + 2·1·128)·3; the model's dtype for both (mamba_ssm_cache_dtype auto).
        QCOMPARE(m.stateSsmElems, 36 * mamba2Ssm(24, 64, 128));
        QCOMPARE(m.stateConvElems, 36 * mamba2Conv(24, 64, 1, 128, 4));
        QVERIFY(m.stateDtypeDefault == KvDtype::BF16);
        QCOMPARE(m.stateBytes(KvDtype::BF16), 36.0 * (196608 + 5376) * 2);
        QCOMPARE(m.stateBytes(KvDtype::BF16), 14542848.0);
        // Parameters: the mixer (in_proj to d_ssm + conv + heads, conv + bias, dt_bias/A_log/D,
        // no gated norm since mamba_rms_norm is false, out_proj), GQA attention, SwiGLU MLP of
        // 2048, two norms per layer, untied embeddings, final norm.
        const double h = 1024, di = 1536, conv = di + 2 * 128;
        const double mamba = h * (di + conv + 24) + conv * 4 + conv + 3 * 24 + di * h;
        const double attn = h * 8 * 64 + 2 * h * 2 * 64 + 8 * 64 * h;
        const double mlp = 3 * h * 2048;
        const double embed = 2 * 32784 * h + h;
        QCOMPARE(m.paramsTotal, 36 * (mamba + attn + mlp + 2 * h) + embed);
        QCOMPARE(m.paramsTotal, 521411104.0); // "0.5B"; 521M
        QCOMPARE(m.paramsActive, m.paramsTotal);
        QCOMPARE(m.softmaxLayers, 36);
        QCOMPARE(m.recurrentFlopsPerToken, 36 * 4.0 * 24 * 64 * 128);
    }

    // Fields a Qwen3.5 MoE config leaves out take Qwen3_5MoeTextConfig's defaults, which are the
    // 35B-A3B's own shapes (heads 16/2, head_dim 256, linear 16/32 heads of 128 with a 4-tap
    // conv, 256 experts of 512, top 8, shared 512, vocab 248,320); the attention output gate is
    // always there (transformers' Qwen3NextAttention; vLLM: attn_output_gate defaults to true).
    void qwen35DefaultsFollowTransformers() {
        const auto& shipped = preset("Qwen/Qwen3.5-35B-A3B");
        const auto m = parse(shippedWithout(
            "Qwen__Qwen3.5-35B-A3B.json",
            {"head_dim", "num_attention_heads", "num_key_value_heads", "attn_output_gate",
             "linear_conv_kernel_dim", "linear_key_head_dim", "linear_value_head_dim",
             "linear_num_key_heads", "linear_num_value_heads", "num_experts", "num_experts_per_tok",
             "moe_intermediate_size", "shared_expert_intermediate_size", "vocab_size",
             "layer_types", "full_attention_interval"}));
        QCOMPARE(QString::fromStdString(m.layerMix()), QString::fromStdString(shipped.layerMix()));
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 10.0 * 2 * 2 * 256 * 2);
        QCOMPARE(m.stateBytes(KvDtype::FP32), 64389120.0);
        QCOMPARE(m.paramsTotal, 34660610688.0);
        QCOMPARE(m.paramsActive, 3454988928.0);
        // An explicit attn_output_gate: false drops the gate half of q_proj (10 × 2048·16·256).
        const auto ungated = parse(shippedWithout(
            "Qwen__Qwen3.5-35B-A3B.json", {"attn_output_gate"}, {{"attn_output_gate", false}}));
        QCOMPARE(ungated.paramsTotal, 34660610688.0 - 10.0 * 2048 * 16 * 256);
    }

    // The same for Qwen3-Next: Qwen3NextConfig's defaults are the 80B-A3B's shapes.
    void qwen3NextDefaultsFollowTransformers() {
        const auto m = parse(shippedWithout(
            "Qwen__Qwen3-Next-80B-A3B-Instruct.json",
            {"head_dim", "num_attention_heads", "num_key_value_heads", "linear_conv_kernel_dim",
             "linear_key_head_dim", "linear_value_head_dim", "linear_num_key_heads",
             "linear_num_value_heads", "num_experts", "num_experts_per_tok",
             "moe_intermediate_size", "shared_expert_intermediate_size", "vocab_size",
             "full_attention_interval"}));
        const auto& shipped = preset("Qwen/Qwen3-Next-80B-A3B-Instruct");
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 24576.0);
        QCOMPARE(m.stateSsmElems + m.stateConvElems, 19759104.0);
        QCOMPARE(m.paramsTotal, shipped.paramsTotal);
        QCOMPARE(m.paramsActive, shipped.paramsActive);
    }

    // Falcon-H1 without mamba_d_ssm: FalconH1Config's 1024, and mamba_d_head "auto" is
    // d_ssm / heads; a head size that does not fill d_ssm is refused, as transformers refuses it.
    void falconH1DefaultsFollowTransformers() {
        const auto m = parse(shippedWithout("tiiuae__Falcon-H1-0.5B-Instruct.json",
                                            {"mamba_d_ssm", "mamba_d_head", "mamba_n_heads"},
                                            {{"mamba_n_heads", 16}, {"mamba_d_head", "auto"}}));
        QCOMPARE(m.stateSsmElems, 36 * mamba2Ssm(16, 64, 128)); // 1024 / 16 = 64
        QCOMPARE(m.stateConvElems, 36 * mamba2Conv(16, 64, 1, 128, 4));
        const auto noHeads = parse(
            shippedWithout("tiiuae__Falcon-H1-0.5B-Instruct.json",
                           {"mamba_d_ssm", "mamba_d_head", "mamba_n_heads", "mamba_d_state"}));
        // Defaults: 128 heads of 1024 / 128 = 8, d_state 256.
        QCOMPARE(noHeads.stateSsmElems, 36 * mamba2Ssm(128, 8, 256));
        QCOMPARE(noHeads.stateConvElems, 36 * mamba2Conv(128, 8, 1, 256, 4));
        // mamba_d_ssm null: mamba_expand · hidden = 2048.
        const auto nullSsm = parse(shippedWithout(
            "tiiuae__Falcon-H1-0.5B-Instruct.json",
            {"mamba_d_ssm", "mamba_d_head", "mamba_n_heads"},
            {{"mamba_d_ssm", nullptr}, {"mamba_n_heads", 32}, {"mamba_d_head", "auto"}}));
        QCOMPARE(nullSsm.stateSsmElems, 36 * mamba2Ssm(32, 64, 128));
        // The Megatron-Bridge dict as it is, without mamba_d_ssm: 24 heads of 64 ≠ 1024.
        const auto msg =
            refusal(shippedWithout("tiiuae__Falcon-H1-0.5B-Instruct.json", {"mamba_d_ssm"}));
        QVERIFY2(msg.find("mamba_d_ssm") != std::string::npos, msg.c_str());
    }

    // granite-4.0-h fields left out take GraniteMoeHybridConfig's defaults: 8 experts, top 2,
    // a shared MLP of 1024, 128 Mamba heads of mamba_expand·hidden / 128, d_state 256; without
    // layer_types every layer is Mamba (its layers_block_type).
    void graniteDefaultsFollowTransformers() {
        const std::string types = repeatList({"mamba", "mamba", "mamba", "mamba", "attention"}, 2);
        const auto m =
            parse(R"({"model_type":"granitemoehybrid","hidden_size":1024,"num_hidden_layers":10,
          "layer_types":)" +
                  types + R"(,"num_attention_heads":8,"num_key_value_heads":2,
          "intermediate_size":512,"vocab_size":1000,"tie_word_embeddings":true})");
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("10 layers: 8 Mamba-2, 2 attention; MLP: 10 MoE"));
        QCOMPARE(m.experts, 8);
        QCOMPARE(m.expertsPerToken, 2);
        QCOMPARE(m.stateSsmElems, 8 * mamba2Ssm(128, 16, 256)); // 2·1024 / 128 = 16
        QCOMPARE(m.stateConvElems, 8 * mamba2Conv(128, 16, 1, 256, 4));
        const double h = 1024, di = 2048, conv = di + 2 * 256;
        const double mamba = h * (di + conv + 128) + conv * 4 + conv + 3 * 128 + di + di * h;
        const double attn = h * 8 * 128 * 2 + 2 * h * 2 * 128;
        const double moeT = 8 * 3 * h * 512 + 3 * h * 1024 + 8 * h;
        QCOMPARE(m.paramsTotal, 8 * mamba + 2 * attn + 10 * (moeT + 2 * h) + 1000 * h + h);
        const auto allMamba = parse(R"({"model_type":"granitemoehybrid","hidden_size":1024,
          "num_hidden_layers":4,"num_attention_heads":8,"vocab_size":1000})");
        QCOMPARE(QString::fromStdString(allMamba.layerMix()),
                 QStringLiteral("4 layers: 4 Mamba-2; MLP: 4 MoE"));
        QCOMPARE(allMamba.kvBytesPerToken(KvDtype::BF16), 0.0);
        // A head size that does not fill mamba_expand · hidden is refused, as transformers does.
        const auto msg =
            refusal(R"({"model_type":"granitemoehybrid","hidden_size":1024,"num_hidden_layers":2,
          "layer_types":["mamba","attention"],"num_attention_heads":8,"vocab_size":1000,
          "mamba_n_heads":16,"mamba_d_head":64})");
        QVERIFY2(msg.find("mamba_d_head") != std::string::npos, msg.c_str());
    }

    // Gemma 3n fields left out take Gemma3nTextConfig's defaults (the E4B's): 8/2 heads of 256,
    // four sliding layers (window 512) to one full, and the last 15 layers sharing KV.
    void gemma3nDefaultsFollowTransformers() {
        const auto m = parse(R"({"model_type":"gemma3n","text_config":{"model_type":"gemma3n_text",
          "hidden_size":2048,"num_hidden_layers":35,"vocab_size":262400},"torch_dtype":"bfloat16"})");
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 20.0 * 2 * 2 * 256 * 2);
        QCOMPARE(m.kvBytes(4096, KvDtype::BF16), 2048.0 * (4 * 4096 + 16 * 512));
        QCOMPARE(m.softmaxLayers, 35);
        QVERIFY(m.tiedEmbeddings);
        QCOMPARE(m.contextLimit, 32768.0);
    }

    // granite-4.0-h layout (layer_types "mamba"/"attention"), the shapes of the tiny
    // granitemoehybrid config in transformers' docs: 6 Mamba-2, 2 attention, MoE + shared MLP.
    void graniteLayerTypes() {
        const auto m = parse(R"({"model_type":"granitemoehybrid","hidden_size":512,
          "num_hidden_layers":8,"layer_types":["mamba","mamba","mamba","attention","mamba","mamba","mamba","attention"],
          "num_attention_heads":8,"num_key_value_heads":8,"mamba_n_heads":8,"mamba_d_head":128,
          "mamba_d_state":128,"mamba_n_groups":1,"mamba_d_conv":4,"mamba_conv_bias":true,
          "mamba_proj_bias":false,"num_local_experts":8,"num_experts_per_tok":2,
          "intermediate_size":1024,"shared_intermediate_size":512,"vocab_size":49152,
          "tie_word_embeddings":true,"torch_dtype":"bfloat16","max_position_embeddings":4096})");
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("8 layers: 6 Mamba-2, 2 attention; MLP: 8 MoE"));
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 2.0 * 2 * 8 * 64 * 2);
        QCOMPARE(m.stateSsmElems, 6 * mamba2Ssm(8, 128, 128));
        QCOMPARE(m.stateConvElems, 6 * mamba2Conv(8, 128, 1, 128, 4));
        const double h = 512, di = 1024, conv = di + 2 * 128;
        const double mamba = h * (di + conv + 8) + conv * 4 + conv + 3 * 8 + di + di * h;
        const double attn = h * 8 * 64 * 4;
        const double moeT = 8 * 3 * h * 1024 + 3 * h * 512 + 8 * h;
        QCOMPARE(m.paramsTotal, 6 * mamba + 2 * attn + 8 * (moeT + 2 * h) + 49152 * h + h);
    }

    // granite-4.0-h-tiny's shapes written inline (the fields on which several partial copies
    // agree; the shipped file, rebuilt from them, is checked in graniteTinyPresetByHand): 40
    // layers, attention at 5, 15, 25, 35; 48 Mamba-2 heads of 64, d_state 128; 64 experts of 512,
    // top 6, shared MLP 1024; tied embeddings.
    void graniteTinyShapesByHand() {
        std::vector<std::string> unit = {"mamba",     "mamba", "mamba", "mamba", "mamba",
                                         "attention", "mamba", "mamba", "mamba", "mamba"};
        const auto m =
            parse(R"({"model_type":"granitemoehybrid","hidden_size":1536,"num_hidden_layers":40,
          "layer_types":)" +
                  repeatList(unit, 4) + R"(,"num_attention_heads":12,"num_key_value_heads":4,
          "intermediate_size":512,"shared_intermediate_size":1024,"num_local_experts":64,
          "num_experts_per_tok":6,"vocab_size":100352,"tie_word_embeddings":true,"mamba_n_heads":48,
          "mamba_d_head":64,"mamba_d_state":128,"mamba_n_groups":1,"mamba_d_conv":4,"mamba_expand":2,
          "mamba_conv_bias":true,"mamba_proj_bias":false,"max_position_embeddings":131072,
          "position_embedding_type":"nope","torch_dtype":"bfloat16"})");
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("40 layers: 36 Mamba-2, 4 attention; MLP: 40 MoE"));
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 4.0 * 2 * 4 * 128 * 2); // 8,192
        // 36 × (48·64·128 + (3072 + 2·128)·3) = 14,515,200 elements.
        QCOMPARE(m.stateSsmElems + m.stateConvElems, 14515200.0);
        QCOMPARE(m.stateBytes(KvDtype::BF16), 29030400.0);
        const double h = 1536, di = 48 * 64, conv = di + 2 * 128;
        const double mamba = h * (di + conv + 48) + conv * 4 + conv + 3 * 48 + di + di * h;
        const double attn = h * 12 * 128 + 2 * h * 4 * 128 + 12 * 128 * h;
        const double moeT = 64 * 3 * h * 512 + 3 * h * 1024 + 64 * h;
        const double moeA = 6 * 3 * h * 512 + 3 * h * 1024 + 64 * h;
        const double rest = 100352 * h + h;
        QCOMPARE(m.paramsTotal, 36 * mamba + 4 * attn + 40 * (moeT + 2 * h) + rest);
        QCOMPARE(m.paramsActive, 36 * mamba + 4 * attn + 40 * (moeA + 2 * h) + rest);
        QVERIFY(std::abs(m.paramsTotal - 6.94e9) < 0.01e9); // "7B total"
    }

    // The shipped granite-4.0-h-tiny file (rebuilt from partial copies;
    // resources/models/README.md): attention at layers 5, 15, 25, 35, Mamba-2 elsewhere; 64 experts
    // of 512 (top 6) beside a shared MLP of 1024 in every layer; 48 Mamba heads of 64, d_state 128;
    // tied embeddings.
    void graniteTinyPresetByHand() {
        const auto& m = preset("ibm-granite/granite-4.0-h-tiny");
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("40 layers: 36 Mamba-2, 4 attention; MLP: 40 MoE"));
        // KV: 4 attention layers × 2 × 4 KV heads × 128 (1536 / 12) × 2 B.
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 4.0 * 2 * 4 * 128 * 2);
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 8192.0);
        // State (vLLM mamba2_state_shape): 36 × (48·64·128 + (48·64 + 2·1·128)·3), BF16 (no
        // mamba_ssm_cache_dtype in the file).
        QCOMPARE(m.stateSsmElems, 36 * mamba2Ssm(48, 64, 128));
        QCOMPARE(m.stateConvElems, 36 * mamba2Conv(48, 64, 1, 128, 4));
        QVERIFY(m.stateDtypeDefault == KvDtype::BF16);
        QCOMPARE(m.stateBytes(KvDtype::BF16), 36.0 * (393216 + 9984) * 2);
        QCOMPARE(m.stateBytes(KvDtype::BF16), 29030400.0);
        // Parameters: the Mamba-2 mixer (in_proj to d_inner + conv + heads, conv + bias,
        // dt_bias/A_log/D, gated norm, out_proj), GQA attention without biases, 64 experts of
        // 3·h·512 + the shared MLP of 3·h·1024 + the router, two norms per layer, tied
        // embeddings, final norm.
        const double h = 1536, di = 48 * 64, conv = di + 2 * 128;
        const double mamba = h * (di + conv + 48) + conv * 4 + conv + 3 * 48 + di + di * h;
        const double attn = h * 12 * 128 + 2 * h * 4 * 128 + 12 * 128 * h;
        const double moeT = 64 * 3 * h * 512 + 3 * h * 1024 + 64 * h;
        const double moeA = 6 * 3 * h * 512 + 3 * h * 1024 + 64 * h;
        const double rest = 100352 * h + h;
        QCOMPARE(m.paramsTotal, 36 * mamba + 4 * attn + 40 * (moeT + 2 * h) + rest);
        QCOMPARE(m.paramsActive, 36 * mamba + 4 * attn + 40 * (moeA + 2 * h) + rest);
        QCOMPARE(m.paramsTotal, 6939037248.0);  // the model card's "7B"
        QCOMPARE(m.paramsActive, 1465470528.0); // its "1B active", embeddings counted here
        QVERIFY(m.tiedEmbeddings);
        QCOMPARE(m.contextLimit, 131072.0);
        QCOMPARE(m.softmaxLayers, 4);
        QVERIFY(m.isHybrid());
    }

    // The shipped gemma-3n-E2B-it file (rebuilt from partial copies): 30 layers, every fifth
    // full, the rest sliding (512); the last 10 layers read earlier layers' KV, so 20 hold it:
    // layers 4, 9, 14, 19 full and 16 sliding. 2·2·256·2 = 2,048 B per token and layer.
    void gemma3nE2BPresetByHand() {
        const auto& m = preset("google/gemma-3n-E2B-it");
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("30 layers: 16 sliding attention, 8 sliding attention (shared KV), "
                                "4 attention, 2 attention (shared KV); MLP: 30 dense"));
        // No window cap: 20 layers × 2 × 2 KV heads × 256 × 2 B.
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 20.0 * 2 * 2 * 256 * 2);
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 40960.0);
        // With the window: the 4 full layers keep p tokens, the 16 sliding ones min(p, 512).
        QCOMPARE(m.kvBytes(4096, KvDtype::BF16), 2048.0 * (4 * 4096 + 16 * 512));
        QCOMPARE(m.kvBytes(300, KvDtype::BF16), 2048.0 * 20 * 300);
        QCOMPARE(m.kvBytes(32768, KvDtype::BF16), 285212672.0);
        QCOMPARE(m.stateSsmElems + m.stateConvElems, 0.0);
        QCOMPARE(m.softmaxLayers, 30); // the sharing layers still attend
        // Parameters (the text model; per-layer embeddings, AltUp and LAuReL not counted):
        // attention q/k/v/o + q/k norms, four norms per layer, a GELU MLP of 8192, tied
        // embeddings of 262,400 × 2048, final norm.
        const double h = 2048;
        const double layer =
            h * 8 * 256 + 2 * h * 2 * 256 + 8 * 256 * h + 2 * 256 + 4 * h + 3 * h * 8192;
        QCOMPARE(m.paramsTotal, 30 * layer + 262400 * h + h);
        QCOMPARE(m.paramsTotal, 2362180608.0);
        QCOMPARE(m.paramsActive, m.paramsTotal);
        // With the 262,144 × 30 × 256 per-layer embeddings it is 4.38e9 of the 4.46e9 text
        // parameters a text-only export of E2B-it reports (AltUp, LAuReL, PLE projections).
        QVERIFY(std::abs(m.paramsTotal + 262144.0 * 30 * 256 - 4.46e9) < 0.1e9);
        QVERIFY(m.tiedEmbeddings);
        QCOMPARE(m.contextLimit, 32768.0);
        QVERIFY(m.isHybrid());
    }

    // Falcon-H1 7B's shapes: attention and Mamba-2 side by side in all 44 layers.
    void falconH1Parallel() {
        const auto m = parse(R"({"model_type":"falcon_h1","hidden_size":3072,"num_hidden_layers":44,
          "num_attention_heads":12,"num_key_value_heads":2,"head_dim":128,"intermediate_size":12288,
          "vocab_size":130049,"mamba_d_conv":4,"mamba_d_head":128,"mamba_d_ssm":3072,
          "mamba_d_state":256,"mamba_expand":2,"mamba_n_groups":1,"mamba_n_heads":24,
          "attn_layer_indices":null,"torch_dtype":"bfloat16","max_position_embeddings":262144})");
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("44 layers: 44 attention + Mamba-2; MLP: 44 dense"));
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 44.0 * 2 * 2 * 128 * 2); // 45,056
        QCOMPARE(m.stateSsmElems, 44 * mamba2Ssm(24, 128, 256));
        QCOMPARE(m.stateConvElems, 44 * mamba2Conv(24, 128, 1, 256, 4));
        QCOMPARE(m.stateBytes(KvDtype::BF16), 44.0 * (786432 + 10752) * 2);
        QCOMPARE(m.softmaxLayers, 44);
    }

    // Qwen3.5 MoE (text_config.layer_types with linear_attention; mamba_ssm_dtype float32).
    void qwen35LayerTypes() {
        const std::string types = repeatList(
            {"linear_attention", "linear_attention", "linear_attention", "full_attention"}, 10);
        const auto m = parse(
            R"({"model_type":"qwen3_5_moe","architectures":["Qwen3_5MoeForConditionalGeneration"],
          "text_config":{"model_type":"qwen3_5_moe_text","hidden_size":2048,"num_hidden_layers":40,
          "num_attention_heads":16,"num_key_value_heads":2,"head_dim":256,"layer_types":)" +
            types + R"(,
          "full_attention_interval":4,"linear_num_key_heads":16,"linear_num_value_heads":32,
          "linear_key_head_dim":128,"linear_value_head_dim":128,"linear_conv_kernel_dim":4,
          "num_experts":256,"num_experts_per_tok":8,"moe_intermediate_size":512,
          "shared_expert_intermediate_size":512,"vocab_size":248320,"attn_output_gate":true,
          "mamba_ssm_dtype":"float32","dtype":"bfloat16","max_position_embeddings":262144},
          "vision_config":{"depth":27,"hidden_size":1152}})");
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("40 layers: 30 Gated DeltaNet, 10 attention; MLP: 40 MoE"));
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 10.0 * 2 * 2 * 256 * 2); // 20,480
        QVERIFY(m.stateDtypeDefault == KvDtype::FP32);
        QCOMPARE(m.stateBytes(KvDtype::FP32),
                 30 * gdnSsm(32, 128, 128) * 4 + 30 * gdnConv(16, 32, 128, 128, 4) * 2);
    }

    // DeepSeek-V3.2: the V3 config plus the indexer; the MLA latent and the indexer key
    // (128 FP8 values + one FP32 scale) per token and layer; pairs capped at index_topk.
    void deepseekV32Indexer() {
        QFile f(QStringLiteral(KVBE_SOURCE_DIR "/resources/models/deepseek-ai__DeepSeek-V3.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        std::string text = f.readAll().toStdString();
        text.replace(text.find("\"deepseek_v3\""), 13, "\"deepseek_v32\"");
        text.insert(text.rfind('}'),
                    R"(,"index_topk":2048,"index_head_dim":128,"index_n_heads":64)");
        const auto m = parse(text);
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 61.0 * ((512 + 64) * 2 + 128 + 4)); // 78,324
        QCOMPARE(m.kvBytesPerToken(KvDtype::FP8), 61.0 * ((512 + 64) + 128 + 4));
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("61 layers: 61 sparse MLA; MLP: 58 MoE, 3 dense"));
        // 4096 tokens from nothing: each query visits min(i + 1, 2048) keys; the indexer scores
        // all i + 1.
        double capped = 0, all = 0;
        for (int i = 0; i < 4096; ++i) {
            capped += std::min(i + 1, 2048);
            all += i + 1;
        }
        const double perPair = 2.0 * 128 * (192 + 128), indexer = 2.0 * 64 * 128;
        QCOMPARE(m.attentionFlops(4096, 0), 61 * (capped * perPair + all * indexer));
        QCOMPARE(m.kvBytes(4096, KvDtype::BF16), 4096 * 61.0 * 1284); // no window on the cache
        const double v3 = preset("deepseek-ai/DeepSeek-V3").paramsTotal;
        QCOMPARE(m.paramsTotal - v3, 61.0 * (1536 * 64 * 128 + 7168 * 128 + 7168 * 64 + 2 * 128));
        QVERIFY(m.hasSparseAttention());
        QVERIFY(!m.isHybrid()); // every layer keeps its own KV
    }

    // The shipped DeepSeek-V3.2 file: the same figures; its checkpoint's 685,396,921,376
    // weights are these 671,877,944,064 plus the MTP layer and the FP8 scales.
    void deepseekV32Preset() {
        const auto& m = preset("deepseek-ai/DeepSeek-V3.2");
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 78324.0);
        QCOMPARE(m.paramsTotal, 671877944064.0);
        QCOMPARE(m.paramsActive, 38403822336.0);
        QCOMPARE(m.stateBytes(KvDtype::BF16), 0.0);
    }

    // Gemma 3n: 35 layers, four sliding to one full, the last 15 reuse earlier KV.
    void gemma3nSharedKv() {
        const std::string types =
            repeatList({"sliding_attention", "sliding_attention", "sliding_attention",
                        "sliding_attention", "full_attention"},
                       7);
        std::string widths = "[16384";
        for (int i = 1; i < 35; ++i)
            widths += ",16384";
        widths += "]";
        const auto m = parse(R"({"model_type":"gemma3n","text_config":{"model_type":"gemma3n_text",
          "hidden_size":2048,"num_hidden_layers":35,"num_attention_heads":8,"num_key_value_heads":2,
          "head_dim":256,"layer_types":)" +
                             types + R"(,"sliding_window":512,"num_kv_shared_layers":15,
          "intermediate_size":)" +
                             widths + R"(,"vocab_size":262400,"max_position_embeddings":32768,
          "activation_sparsity_pattern":[0.95,0.95]},"torch_dtype":"bfloat16"})");
        // Layers 0–19 hold KV: 16 sliding, 4 full; 2·2·256·2 = 2,048 B per token and layer.
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 20.0 * 2048);
        QCOMPARE(m.kvBytes(4096, KvDtype::BF16), 2048.0 * (4 * 4096 + 16 * 512));
        QCOMPARE(m.softmaxLayers, 35); // the sharing layers still compute attention
        QCOMPARE(m.stateSsmElems + m.stateConvElems, 0.0);
        QVERIFY(m.isHybrid());
    }

    // Kimi-Linear: linear_attn_config lists KDA and full (MLA) layers from 1.
    void kimiLinearConfig() {
        const auto m =
            parse(R"({"model_type":"kimi_linear","hidden_size":2304,"num_hidden_layers":4,
          "num_attention_heads":32,"num_key_value_heads":32,"kv_lora_rank":512,"qk_rope_head_dim":64,
          "qk_nope_head_dim":128,"v_head_dim":128,"vocab_size":1000,"intermediate_size":4096,
          "linear_attn_config":{"kda_layers":[1,2,3],"full_attn_layers":[4],"num_heads":32,
          "head_dim":128,"short_conv_kernel_size":4},"torch_dtype":"bfloat16"})");
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("4 layers: 3 KDA, 1 MLA; MLP: 4 dense"));
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), (512.0 + 64) * 2);
        QCOMPARE(m.stateSsmElems, 3.0 * 32 * 128 * 128);
        QCOMPARE(m.stateConvElems, 3.0 * 3 * 32 * 128 * 3);
    }

    // MiniMax: attn_type_list, 0 lightning (a head_dim² state per head), 1 softmax.
    void minimaxAttnTypeList() {
        const auto m = parse(R"({"model_type":"minimax","hidden_size":6144,"num_hidden_layers":8,
          "num_attention_heads":64,"num_key_value_heads":8,"head_dim":128,"vocab_size":1000,
          "intermediate_size":9216,"attn_type_list":[0,0,0,0,0,0,0,1],"torch_dtype":"bfloat16"})");
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("8 layers: 7 lightning attention, 1 attention; MLP: 8 dense"));
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 1.0 * 2 * 8 * 128 * 2);
        QCOMPARE(m.stateSsmElems, 7.0 * 64 * 128 * 128);
        QCOMPARE(m.stateConvElems, 0.0);
    }

    // LFM2: layer_types "conv", a hidden × (L_cache − 1) conv state.
    void lfm2ShortConv() {
        const auto m = parse(R"({"model_type":"lfm2","hidden_size":1024,"num_hidden_layers":4,
          "num_attention_heads":16,"num_key_value_heads":8,"vocab_size":1000,"conv_L_cache":3,
          "layer_types":["conv","conv","full_attention","conv"],"torch_dtype":"bfloat16"})");
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 1.0 * 2 * 8 * 64 * 2);
        QCOMPARE(m.stateConvElems, 3.0 * 1024 * 2);
        QCOMPARE(m.stateBytes(KvDtype::BF16), 3.0 * 1024 * 2 * 2);
    }

    // A plain transformer keeps its figures and has no state.
    // The layers a per-layer fixed cost counts: those holding KV of their own or a state. By hand
    // from each config: Nemotron 3 Nano's pattern has 23 M (Mamba-2) and 6 * (attention) among
    // 52 blocks, the 23 E are MoE blocks with neither; Gemma 3n E2B's last 10 of 30 layers reuse
    // earlier KV; Jamba, Qwen3-Next and granite-4.0-h hold attention KV or a state in every
    // layer; Falcon-H1's parallel attention + Mamba-2 layer counts once.
    void kvStateLayers_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("kvStateLayers");
        QTest::newRow("Nemotron 3 Nano")
            << "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16" << 52 << 23 + 6;
        QTest::newRow("Gemma 3n E2B") << "google/gemma-3n-E2B-it" << 30 << 30 - 10;
        QTest::newRow("Jamba 1.5 Mini") << "ai21labs/AI21-Jamba-1.5-Mini" << 32 << 32;
        QTest::newRow("Qwen3-Next") << "Qwen/Qwen3-Next-80B-A3B-Instruct" << 48 << 12 + 36;
        QTest::newRow("granite-4.0-h-tiny") << "ibm-granite/granite-4.0-h-tiny" << 40 << 40;
        QTest::newRow("Falcon-H1 0.5B") << "tiiuae/Falcon-H1-0.5B-Instruct" << 36 << 36;
        QTest::newRow("Llama 3.2 3B") << "meta-llama/Llama-3.2-3B" << 28 << 28;
    }
    void kvStateLayers() {
        QFETCH(QString, model);
        QFETCH(int, layers);
        QFETCH(int, kvStateLayers);
        const auto& m = preset(model.toUtf8().constData());
        QCOMPARE(m.layers, layers);
        QCOMPARE(m.kvStateLayers(), kvStateLayers);
        // A tier's per-layer part counts those layers only.
        CostInputs in;
        in.model = m;
        in.peakFlops = 989e12;
        auto cost = CostModel::create(in);
        QVERIFY(cost.ok());
        QCOMPARE(cost->tFixed(TierPath{"nvme", 10e9, 0.002, 1, 0.0001}),
                 0.002 + kvStateLayers * 0.0001);
    }

    void plainModelIsNotHybrid() {
        const auto& m = preset("meta-llama/Llama-3.2-3B");
        QVERIFY(!m.isHybrid());
        QCOMPARE(m.stateBytes(KvDtype::FP32), 0.0);
        QCOMPARE(QString::fromStdString(m.layerMix()),
                 QStringLiteral("28 layers: 28 attention; MLP: 28 dense"));
    }

    // Unknown means refused, with a sentence naming the key; never counted as full attention.
    void unknownLayoutsRefused_data() {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("names");
        const std::string base = kLlamaLike;
        QTest::newRow("unknown layer_types value")
            << QString::fromStdString(
                   base +
                   R"(,"layer_types":["full_attention","psychic_attention","full_attention","full_attention"]})")
            << "psychic_attention";
        QTest::newRow("linear_attention on llama")
            << QString::fromStdString(
                   base +
                   R"(,"layer_types":["linear_attention","full_attention","full_attention","full_attention"]})")
            << "linear_attention";
        QTest::newRow("mamba_ key on llama")
            << QString::fromStdString(base + R"(,"mamba_d_state":16})") << "mamba_d_state";
        QTest::newRow("ssm_ key on llama")
            << QString::fromStdString(base + R"(,"ssm_state_size":128})") << "ssm_state_size";
        QTest::newRow("unknown _pattern")
            << QString::fromStdString(base + R"(,"block_pattern":"AMAM"})") << "block_pattern";
        QTest::newRow("full_attention_interval on llama")
            << QString::fromStdString(base + R"(,"full_attention_interval":4})")
            << "full_attention_interval";
        QTest::newRow("attn_layer_period on llama")
            << QString::fromStdString(base + R"(,"attn_layer_period":8})") << "attn_layer_period";
        QTest::newRow("hybrid pattern with an unknown block")
            << R"({"model_type":"nemotron_h","num_hidden_layers":4,"hidden_size":256,"num_attention_heads":4,
                 "num_key_value_heads":2,"vocab_size":1000,"hybrid_override_pattern":"M*X-"})"
            << "hybrid_override_pattern";
        QTest::newRow("hybrid pattern too short")
            << R"({"model_type":"nemotron_h","num_hidden_layers":4,"hidden_size":256,"num_attention_heads":4,
                 "num_key_value_heads":2,"vocab_size":1000,"hybrid_override_pattern":"M*-"})"
            << "hybrid_override_pattern";
        QTest::newRow("nemotron_h without a pattern")
            << R"({"model_type":"nemotron_h","num_hidden_layers":4,"hidden_size":256,"num_attention_heads":4,
                 "num_key_value_heads":2,"vocab_size":1000})"
            << "nemotron_h";
        QTest::newRow("recurrent model_type")
            << R"({"model_type":"zamba2","num_hidden_layers":4,"hidden_size":256,"num_attention_heads":4,
                 "vocab_size":1000})"
            << "zamba2";
        QTest::newRow("mamba layer on an unknown architecture")
            << R"({"model_type":"bamba2x","num_hidden_layers":2,"hidden_size":256,"num_attention_heads":4,
                 "vocab_size":1000,"layer_types":["mamba","attention"]})"
            << "mamba";
        QTest::newRow("indexer without index_topk")
            << QString::fromStdString(base + R"(,"index_head_dim":128})") << "index_head_dim";
    }
    void unknownLayoutsRefused() {
        QFETCH(QString, json);
        QFETCH(QString, names);
        const auto msg = refusal(json.toStdString());
        QVERIFY2(!msg.empty(), "accepted");
        QVERIFY2(msg.find(names.toStdString()) != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("test.json") != std::string::npos, msg.c_str());
    }

    // t_load = t_fixed + (kv_bytes(p) + state_bytes) / B.
    void tLoadAddsTheState() {
        CostInputs in;
        in.model = preset("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16");
        in.kvDtype = KvDtype::BF16;
        in.peakFlops = 989e12;
        in.utilisation = 0.5;
        const auto cm = *CostModel::create(in);
        QCOMPARE(cm.stateBytes(), 49082368.0); // FP32 SSM state by default
        const TierPath tier{"nvme", 10e9, 1e-3};
        QCOMPARE(cm.tLoad(tier, 1000), 1e-3 + (6144.0 * 1000 + 49082368.0) / 10e9);
        in.stateDtype = KvDtype::BF16;
        const auto bf16 = *CostModel::create(in);
        QCOMPARE(bf16.tLoad(tier, 1000), 1e-3 + (6144.0 * 1000 + 24965120.0) / 10e9);
        // Shared storage path under TP 2: both GPUs' bytes cross it; own paths: half each.
        in.tensorParallel = 2;
        QCOMPARE(CostModel::create(in)->loadBytes(1000), (6144.0 * 1000 + 24965120.0) / 2);
        in.sharedPath = true;
        QCOMPARE(CostModel::create(in)->loadBytes(1000), 6144.0 * 1000 + 24965120.0);
    }

    // B*(N) = (kv_bytes(N) + state) / t_re(N, 0); the simple model's quadratic term has only the
    // 6 attention layers: 2·6·32·128·N².
    void breakevenWithState() {
        CostInputs in;
        in.model = preset("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16");
        in.peakFlops = 989e12;
        in.utilisation = 0.5;
        const auto cm = *CostModel::create(in);
        const double n = 32768, P = in.model.paramsActive;
        const double t = (2 * P * n + 2.0 * 6 * 32 * 128 * n * n) / (989e12 * 0.5);
        QCOMPARE(cm.tMiss(n), t);
        QCOMPARE(*cm.breakevenBandwidth(n), (6144.0 * n + 49082368.0) / t);
    }

    // With the state as a per-hit constant the closed form and the solver still agree, and the
    // state pushes p* out.
    void closedFormAgreesWithState() {
        CostInputs in;
        in.model = preset("Qwen/Qwen3-Next-80B-A3B-Instruct");
        in.peakFlops = 989e12;
        in.utilisation = 0.5;
        const auto cm = *CostModel::create(in);
        const TierPath tier{"nvme", 5e9, 0.5e-3};
        const auto closed = cm.breakevenPrefixClosedForm(tier);
        const auto solved = cm.breakevenPrefix(tier);
        QVERIFY(closed && solved);
        KVBE_COMPARE_REL(*solved, *closed, 1e-6);
        in.model.stateSsmElems = 0;
        in.model.stateConvElems = 0;
        QVERIFY(*CostModel::create(in)->breakevenPrefix(tier) < *solved);
    }

    // Detailed FLOPs: recurrences are linear in n, so F(N, 0) = F(p, 0) + F(N − p, p) up to the
    // one lm_head token, and the per-token term is 36 × 6·32·128·128 for Qwen3-Next.
    void detailedAdditivityAndRecurrence() {
        CostInputs in;
        in.model = preset("Qwen/Qwen3-Next-80B-A3B-Instruct");
        in.flopModel = FlopModel::Detailed;
        in.peakFlops = 989e12;
        const auto cm = *CostModel::create(in);
        const double n = 20000, p = 7000, lm = 2 * in.model.lmHeadParams;
        KVBE_COMPARE_REL(cm.flops(n, 0), cm.flops(p, 0) + cm.flops(n - p, p) - lm, 1e-12);
        double pairs = 0;
        for (int i = 0; i < 1000; ++i)
            pairs += i + 1;
        const double expected = (2 * in.model.paramsMatmul + 36 * 6.0 * 32 * 128 * 128) * 1000 +
                                lm + 12 * pairs * 2.0 * 16 * (256 + 256);
        QCOMPARE(cm.flops(1000, 0), expected);
    }

    // The scenario carries the state dtype; unset, the model's default applies.
    void scenarioStateDtype() {
        auto s = *defaultScenario(test::presets());
        s.model = "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16";
        auto ev = evaluate(s, test::presets());
        QVERIFY2(ev, ev ? "" : ev.message().c_str());
        QCOMPARE(ev->cost.stateBytes(), 49082368.0);
        s.stateDtype = KvDtype::BF16;
        const auto back = scenarioFromJson(scenarioToJson(s), "round trip", test::presets());
        QVERIFY(back);
        QVERIFY(back->stateDtype == std::optional<KvDtype>(KvDtype::BF16));
        QCOMPARE(evaluate(*back, test::presets())->cost.stateBytes(), 24965120.0);
    }
};

QTEST_GUILESS_MAIN(TestHybridModels)
#include "tst_hybrid_models.moc"
