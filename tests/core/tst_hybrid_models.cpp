// Hybrid and sparse models (docs/cost-model.md, "Hybrid and sparse models"): KV only from the
// attention layers, the per-prefix state, parameters per layer kind and the layer mix of each
// shipped hybrid, computed here by hand from the layer pattern and the config's shapes, not
// through the reader; the architecture defaults against transformers'.
#include "hybrid_test_support.h"
#include "kvbe/base/json_text.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/model/config_reader.h"
#include "kvbe/scenario/scenario.h"
#include "test_support.h"

using namespace kvbe;
using kvbe::test::preset;
using namespace kvbe::test::hybrid;

namespace {

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
};

QTEST_GUILESS_MAIN(TestHybridModels)
#include "tst_hybrid_models.moc"
