// Hybrid and sparse models' layouts (docs/cost-model.md, "Hybrid and sparse models"): parallel
// blocks, layer-type lists, DeepSeek's indexer, shared KV, short convolutions, the KV and state
// layers of each layout, unknown layouts refused; the state in t_load, B* and p*.
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

const char* kLlamaLike = R"({"model_type":"llama","num_hidden_layers":4,"hidden_size":256,
  "num_attention_heads":4,"num_key_value_heads":2,"vocab_size":1000,"intermediate_size":512)";

} // namespace

class TestHybridLayouts : public QObject {
    Q_OBJECT
  private slots:
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

QTEST_GUILESS_MAIN(TestHybridLayouts)
#include "tst_hybrid_layouts.moc"
