// The config.json reader: the figures of resources/models/README.md for every shipped config,
// the traps those files contain, the ways a config can be addressed, and bad input.
#include "kvbe/model/config_reader.h"
#include "test_support.h"

#include <QDir>
#include <QTemporaryDir>
#include <algorithm>

using namespace kvbe;
using kvbe::test::preset;

class TestModelConfig : public QObject {
    Q_OBJECT
  private slots:
    // resources/models/README.md: KV bytes per token (BF16, no window cap) and total parameters.
    // The tolerance is half a unit of the last digit printed there.
    void readmeFigures_data() {
        QTest::addColumn<QString>("id");
        QTest::addColumn<double>("kvPerToken");
        QTest::addColumn<double>("total");
        QTest::addColumn<double>("totalTol");
        QTest::addColumn<double>("active");
        QTest::addColumn<double>("activeTol");
        QTest::newRow("Llama 3.2 3B")
            << "meta-llama/Llama-3.2-3B" << 114688.0 << 3.213e9 << 0.0005e9 << 3.213e9 << 0.0005e9;
        QTest::newRow("Llama 3.1 8B") << "meta-llama/Llama-3.1-8B-Instruct" << 131072.0 << 8.030e9
                                      << 0.0005e9 << 8.030e9 << 0.0005e9;
        QTest::newRow("Llama 3.3 70B") << "meta-llama/Llama-3.3-70B-Instruct" << 327680.0
                                       << 70.554e9 << 0.0005e9 << 70.554e9 << 0.0005e9;
        QTest::newRow("Llama 3.1 405B") << "meta-llama/Llama-3.1-405B" << 516096.0 << 405.85e9
                                        << 0.005e9 << 405.85e9 << 0.005e9;
        QTest::newRow("Qwen3 4B") << "Qwen/Qwen3-4B-Instruct-2507" << 147456.0 << 4.022e9
                                  << 0.0005e9 << 4.022e9 << 0.0005e9;
        QTest::newRow("Qwen3 32B")
            << "Qwen/Qwen3-32B" << 262144.0 << 32.76e9 << 0.005e9 << 32.76e9 << 0.005e9;
        QTest::newRow("DeepSeek V3 (MLA)")
            << "deepseek-ai/DeepSeek-V3" << 70272.0 << 671.0e9 << 0.05e9 << 37.6e9 << 0.05e9;
        QTest::newRow("Mixtral 8x7B") << "mistralai/Mixtral-8x7B-v0.1" << 131072.0 << 46.70e9
                                      << 0.005e9 << 12.88e9 << 0.005e9;
    }
    void readmeFigures() {
        QFETCH(QString, id);
        QFETCH(double, kvPerToken);
        QFETCH(double, total);
        QFETCH(double, totalTol);
        QFETCH(double, active);
        QFETCH(double, activeTol);
        const auto& m = preset(id.toUtf8().constData());
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), kvPerToken);
        QVERIFY2(std::abs(m.paramsTotal - total) <= totalTol,
                 qPrintable(QString("total %1").arg(m.paramsTotal, 0, 'g', 12)));
        QVERIFY2(std::abs(m.paramsActive - active) <= activeTol,
                 qPrintable(QString("active %1").arg(m.paramsActive, 0, 'g', 12)));
    }

    void everySharedConfigIsAPreset() {
        const QDir dir(QStringLiteral(KVBE_SOURCE_DIR "/resources/models"));
        const auto files = dir.entryList({"*.json"}, QDir::Files);
        QVERIFY(files.size() >= 16);
        for (const auto& f : files) {
            QString id = f.chopped(5);
            id.replace("__", "/");
            QVERIFY2(test::presets().findModel(id.toStdString()), qPrintable(id));
        }
        QCOMPARE(static_cast<qsizetype>(test::presets().models().size()), files.size());
    }

    // Llama 3.2 3B by hand: L·2·Hkv·d·b = 28·2·8·128·2; attention 3072² ·2 + 3072·1024·2,
    // MLP 3·3072·8192, 2 norms per layer, tied embedding 128256·3072, final norm.
    void llama32ShapesByHand() {
        const auto& m = preset("meta-llama/Llama-3.2-3B");
        QCOMPARE(m.layers, 28);
        QCOMPARE(m.qHeads, 24);
        QCOMPARE(m.kvHeads, 8);
        QCOMPARE(m.headDim, 128);
        QCOMPARE(m.contextLimit, 131072.0);
        QVERIFY(m.tiedEmbeddings);
        const double perLayer =
            3072.0 * 3072 * 2 + 3072.0 * 1024 * 2 + 3.0 * 3072 * 8192 + 2 * 3072;
        QCOMPARE(m.paramsTotal, 28 * perLayer + 128256.0 * 3072 + 3072);
        QCOMPARE(m.paramsMatmul, 28 * (3072.0 * 3072 * 2 + 3072.0 * 1024 * 2 + 3.0 * 3072 * 8192));
        QCOMPARE(m.lmHeadParams, 128256.0 * 3072);
    }

    // Qwen3 4B: head_dim 128 is explicit and differs from hidden/heads = 80.
    void explicitHeadDimWins() {
        const auto& m = preset("Qwen/Qwen3-4B-Instruct-2507");
        QCOMPARE(m.headDim, 128);
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 36.0 * 2 * 8 * 128 * 2);
    }

    // DeepSeek V3: the cache holds one latent (kv_lora_rank + qk_rope_head_dim) per token and
    // layer, not 128 KV heads; attention uses d_qk = 128 + 64 and d_v = 128.
    void mlaLatent() {
        const auto& m = preset("deepseek-ai/DeepSeek-V3");
        QVERIFY(m.mla);
        QCOMPARE(m.kvBytesPerToken(KvDtype::BF16), 61.0 * (512 + 64) * 2);
        QCOMPARE(m.kvBytesPerToken(KvDtype::FP8), 61.0 * (512 + 64));
        QCOMPARE(m.dQk, 192.0);
        QCOMPARE(m.dV, 128.0);
        QCOMPARE(m.attention.front().flopsPerPair, 2.0 * 128 * (192 + 128));
        QCOMPARE(m.moeLayers, 61 - 3); // first_k_dense_replace = 3
    }

    // Gemma 3 27B: shapes under text_config; every 6th layer global, the rest window 1024;
    // vocab_size left out, so the architecture default (262,208) applies, embeddings tied.
    void gemma3TextConfigAndWindows() {
        const auto& m = preset("google/gemma-3-27b-it");
        QCOMPARE(m.layers, 62);
        QCOMPARE(m.qHeads, 32);
        QCOMPARE(m.kvHeads, 16);
        QCOMPARE(m.headDim, 128);
        QCOMPARE(m.vocab, 262208.0);
        QVERIFY(m.hasWindows());
        int full = 0, sliding = 0;
        for (const auto& g : m.attention) {
            if (g.kind == AttnKind::Full) full += g.layers;
            if (g.kind == AttnKind::Sliding) {
                sliding += g.layers;
                QCOMPARE(g.window, 1024.0);
            }
        }
        QCOMPARE(full, 10); // layers 6, 12, ..., 60
        QCOMPARE(sliding, 52);
        // Window cap on KV: at 32k tokens the 52 windowed layers hold only 1,024 tokens each.
        const double perLayerToken = 2.0 * 16 * 128 * 2;
        QCOMPARE(m.kvBytes(32768, KvDtype::BF16), perLayerToken * (10 * 32768.0 + 52 * 1024.0));
        QCOMPARE(m.kvBytes(512, KvDtype::BF16), perLayerToken * 62 * 512);
    }

    // Gemma 3 text config that leaves out heads and head_dim: the Gemma3TextConfig defaults.
    void gemma3OmittedHeadsTakeDefaults() {
        const char* cfg = R"({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text",
            "hidden_size": 2560, "intermediate_size": 10240, "num_hidden_layers": 34}})";
        auto m = parseModelConfig(cfg, "gemma.json", "g");
        QVERIFY2(m.ok(), m.ok() ? "" : m.message().c_str());
        QCOMPARE(m->qHeads, 8);
        QCOMPARE(m->kvHeads, 4);
        QCOMPARE(m->headDim, 256);
        QCOMPARE(m->vocab, 262208.0);
        QVERIFY(m->hasWindows());
    }

    // gpt-oss: layer_types alternate sliding (window 128) and full; MoE with 4 of 128 experts.
    void gptOssLayerTypes() {
        const auto& m = preset("openai/gpt-oss-120b");
        QCOMPARE(m.attention.size(), size_t(2));
        for (const auto& g : m.attention) {
            QCOMPARE(g.layers, 18);
            if (g.kind == AttnKind::Sliding) QCOMPARE(g.window, 128.0);
        }
        QCOMPARE(m.experts, 128);
        QCOMPARE(m.expertsPerToken, 4);
        QVERIFY(m.weightDtype == KvDtype::BF16); // no torch_dtype; MXFP4 experts do not change KV
        QVERIFY(!m.notes.empty());
    }

    // The weights' precision: quantization_config as each method writes it (transformers'
    // FineGrainedFP8Config for DeepSeek-V3's; llm-compressor's compressed-tensors config_groups;
    // AutoAWQ's bits), else torch_dtype. A method kvbe does not read (gpt-oss's mxfp4, which
    // quantizes only the experts) leaves torch_dtype, with a note.
    void quantizationConfigSetsTheWeights() {
        QVERIFY(preset("deepseek-ai/DeepSeek-V3").quantizedWeights == WeightDtype::FP8);
        QVERIFY(preset("deepseek-ai/DeepSeek-V3").weightDtype == KvDtype::BF16); // KV stays
        const auto& oss = preset("openai/gpt-oss-120b");
        QVERIFY(!oss.quantizedWeights);
        QVERIFY(oss.servedWeights(std::nullopt) == WeightDtype::BF16);
        QVERIFY(std::any_of(oss.notes.begin(), oss.notes.end(), [](const std::string& n) {
            return n.find("mxfp4") != std::string::npos;
        }));
        const auto& llama = preset("meta-llama/Llama-3.3-70B-Instruct");
        QVERIFY(!llama.quantizedWeights);
        QVERIFY(llama.servedWeights(std::nullopt) == WeightDtype::BF16);

        const std::string base =
            R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
                "num_attention_heads": 4, "vocab_size": 10, "torch_dtype": "bfloat16",
                "quantization_config": )";
        const auto read = [&](const std::string& q) {
            auto r = parseModelConfig(base + q + "}", "q/config.json", "q");
            if (!r) qFatal("%s", r.message().c_str());
            return *r;
        };
        const char* ctFloat8 =
            R"({"config_groups": {"group_0": {"input_activations": {"dynamic": true,
                "num_bits": 8, "strategy": "token", "symmetric": true, "type": "float"},
                "targets": ["Linear"], "weights": {"dynamic": false, "num_bits": 8,
                "strategy": "channel", "symmetric": true, "type": "float"}}},
                "format": "float-quantized", "ignore": ["lm_head"],
                "quant_method": "compressed-tensors", "quantization_status": "compressed"})";
        QVERIFY(read(ctFloat8).quantizedWeights == WeightDtype::FP8);
        const char* ctInt4 =
            R"({"config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4,
                "type": "int", "symmetric": true, "strategy": "group", "group_size": 128}}},
                "format": "pack-quantized", "quant_method": "compressed-tensors"})";
        QVERIFY(read(ctInt4).quantizedWeights == WeightDtype::INT4);
        const char* awq =
            R"({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true,
                "version": "gemm"})";
        QVERIFY(read(awq).quantizedWeights == WeightDtype::INT4);
        QVERIFY(
            read(R"({"quant_method": "bitsandbytes", "load_in_8bit": true})").quantizedWeights ==
            WeightDtype::INT8);

        // Not an object: refused, naming the field.
        auto bad = parseModelConfig(base + R"("fp8"})", "q/config.json", "q");
        QVERIFY(!bad.ok());
        QVERIFY2(QString::fromStdString(bad.message()).contains("'quantization_config'"),
                 bad.message().c_str());
    }

    // The weights' bytes by hand for Llama 3.3 70B: 80 layers of attention 8192²·2 +
    // 8192·1024·2, MLP 3·8192·28672 and 2 norms, a final norm, and the embeddings and untied
    // lm_head of 128256·8192 each. In BF16 every weight takes 2 bytes; in FP8 the decoder's take
    // 1 and the embeddings and lm_head stay in BF16; in INT4 the decoder's take half a byte.
    void weightBytesByHand() {
        const auto& m = preset("meta-llama/Llama-3.3-70B-Instruct");
        const double decoder =
            80 * (8192.0 * 8192 * 2 + 8192.0 * 1024 * 2 + 3.0 * 8192 * 28672 + 2 * 8192) + 8192;
        const double embeddings = 2 * 128256.0 * 8192;
        QCOMPARE(m.paramsTotal, decoder + embeddings);
        QCOMPARE(m.weightBytes(std::nullopt), 2 * (decoder + embeddings));
        QCOMPARE(m.weightBytes(WeightDtype::BF16), 2 * (decoder + embeddings));
        QCOMPARE(m.weightBytes(WeightDtype::FP8), decoder + 2 * embeddings);
        QCOMPARE(m.weightBytes(WeightDtype::INT4), 0.5 * decoder + 2 * embeddings);
        QCOMPARE(m.weightBytes(WeightDtype::FP32), 4 * (decoder + embeddings));
        QVERIFY(parseWeightDtype("INT4") == WeightDtype::INT4);
        QVERIFY(parseWeightDtype("float8_e4m3fn") == WeightDtype::FP8);
        QVERIFY(!parseWeightDtype("int3"));
    }

    // Switched-off and context-long windows change nothing.
    void inactiveWindowsAreFullAttention_data() {
        QTest::addColumn<QString>("id");
        QTest::newRow("Qwen2.5 use_sliding_window false") << "Qwen/Qwen2.5-7B-Instruct";
        QTest::newRow("Phi-4-mini window longer than context") << "microsoft/Phi-4-mini-instruct";
        QTest::newRow("Mistral sliding_window null") << "mistralai/Mistral-7B-Instruct-v0.3";
    }
    void inactiveWindowsAreFullAttention() {
        QFETCH(QString, id);
        QVERIFY(!preset(id.toUtf8().constData()).hasWindows());
    }

    void qwenWindowFromMaxWindowLayers() {
        const char* cfg = R"({"model_type": "qwen2", "hidden_size": 1024, "num_hidden_layers": 8,
            "num_attention_heads": 16, "num_key_value_heads": 4, "vocab_size": 1000,
            "use_sliding_window": true, "sliding_window": 4096, "max_window_layers": 6,
            "max_position_embeddings": 32768})";
        auto m = parseModelConfig(cfg, "q.json", "q");
        QVERIFY(m.ok());
        int sliding = 0;
        for (const auto& g : m->attention)
            if (g.kind == AttnKind::Sliding) sliding = g.layers;
        QCOMPARE(sliding, 2);
    }

    // Mixtral: 2 of 8 experts. Active parameters by hand.
    void moeActiveByHand() {
        const auto& m = preset("mistralai/Mixtral-8x7B-v0.1");
        const double attn = 4096.0 * 4096 * 2 + 4096.0 * 1024 * 2;
        const double expert = 3.0 * 4096 * 14336;
        const double perLayerActive = attn + 2 * expert + 4096.0 * 8 + 2 * 4096;
        QCOMPARE(m.paramsActive, 32 * perLayerActive + 2 * 32000.0 * 4096 + 4096);
        QCOMPARE(m.paramsMatmul, 32 * (attn + 2 * expert + 4096.0 * 8));
    }

    void llama4ChunkedAndShared() {
        const auto& m = preset("meta-llama/Llama-4-Scout-17B-16E-Instruct");
        QCOMPARE(m.layers, 48);
        QCOMPARE(m.experts, 16);
        QCOMPARE(m.sharedExperts, 1);
        int chunked = 0;
        for (const auto& g : m.attention)
            if (g.kind == AttnKind::Chunked) {
                chunked = g.layers;
                QCOMPARE(g.window, 8192.0);
            }
        QCOMPARE(chunked, 36); // no_rope_layers default: every 4th layer is global
        QVERIFY(std::abs(m.paramsActive - 17.17e9) < 0.01e9);
    }

    void addressedAsFolderAndHfCache() {
        QTemporaryDir tmp;
        const QString src =
            QStringLiteral(KVBE_SOURCE_DIR "/resources/models/meta-llama__Llama-3.2-3B.json");
        // A plain folder holding config.json.
        QDir(tmp.path()).mkpath("plain");
        QVERIFY(QFile::copy(src, tmp.path() + "/plain/config.json"));
        auto a = readModelConfig((tmp.path() + "/plain").toStdString());
        QVERIFY2(a.ok(), a.ok() ? "" : a.message().c_str());
        QCOMPARE(a->kvBytesPerToken(KvDtype::BF16), 114688.0);
        // A Hugging Face cache entry: refs/main names the snapshot.
        const QString entry = tmp.path() + "/hub/models--meta-llama--Llama-3.2-3B";
        QDir().mkpath(entry + "/snapshots/0cb88a4f/");
        QDir().mkpath(entry + "/refs");
        QVERIFY(QFile::copy(src, entry + "/snapshots/0cb88a4f/config.json"));
        test::writeFile(entry + "/refs/main", "0cb88a4f\n");
        auto b = readModelConfig(entry.toStdString());
        QVERIFY2(b.ok(), b.ok() ? "" : b.message().c_str());
        QCOMPARE(b->id, std::string("meta-llama/Llama-3.2-3B"));
        auto c = readModelConfig((entry + "/snapshots/0cb88a4f/config.json").toStdString());
        QVERIFY(c.ok());
        QCOMPARE(c->id, std::string("meta-llama/Llama-3.2-3B"));
        // ... and found by id through HF_HUB_CACHE.
        qputenv("HF_HUB_CACHE", (tmp.path() + "/hub").toUtf8());
        auto found = findInHfCache("meta-llama/Llama-3.2-3B");
        QVERIFY(found.has_value());
        QCOMPARE(listHfCache().size(), size_t(1));
        qunsetenv("HF_HUB_CACHE");
    }

    // Bad input: each gives a sentence that names the file and the field, never a crash.
    void badConfigs_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("fragment");
        QTest::newRow("not JSON") << QByteArray("this is not json") << "not valid JSON";
        QTest::newRow("empty file") << QByteArray("") << "empty";
        QTest::newRow("an array") << QByteArray("[1, 2]") << "expected a config.json object";
        QTest::newRow("missing num_hidden_layers")
            << QByteArray(
                   R"({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 10})")
            << "'num_hidden_layers' is missing";
        QTest::newRow("zero heads")
            << QByteArray(
                   R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 0, "vocab_size": 10})")
            << "'num_attention_heads'";
        QTest::newRow("negative kv heads")
            << QByteArray(
                   R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": -2, "vocab_size": 10})")
            << "'num_key_value_heads'";
        QTest::newRow("heads not divisible")
            << QByteArray(
                   R"({"model_type": "llama", "hidden_size": 96, "num_hidden_layers": 2, "num_attention_heads": 6, "num_key_value_heads": 4, "vocab_size": 10})")
            << "not divisible by num_key_value_heads";
        QTest::newRow("string for a number")
            << QByteArray(
                   R"({"model_type": "llama", "hidden_size": "4096", "num_hidden_layers": 2, "vocab_size": 10})")
            << "'hidden_size' is a string";
        QTest::newRow("fractional layers")
            << QByteArray(
                   R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2.5, "vocab_size": 10})")
            << "'num_hidden_layers'";
        QTest::newRow("duplicate key")
            << QByteArray(
                   R"({"model_type": "llama", "hidden_size": 64, "hidden_size": 128, "num_hidden_layers": 2})")
            << "appears twice";
        QTest::newRow("a scenario") << QByteArray(R"({"kvbe_scenario": 1})") << "scenario";
        QTest::newRow("a tokenizer")
            << QByteArray(R"({"version": "1.0", "model": {}, "added_tokens": []})") << "tokenizer";
        QTest::newRow("unknown json")
            << QByteArray(R"({"foo": 1})") << "not a Hugging Face model config";
        QTest::newRow("deep nesting") << QByteArray(100000, '[') << "nested deeper";
        QTest::newRow("huge number")
            << QByteArray(
                   R"({"model_type": "llama", "hidden_size": 1e999, "num_hidden_layers": 2})")
            << "1e999";
        QTest::newRow("bad dtype")
            << QByteArray(
                   R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10, "torch_dtype": "quaternion"})")
            << "'torch_dtype'";
    }
    void badConfigs() {
        QFETCH(QByteArray, text);
        QFETCH(QString, fragment);
        auto r =
            parseModelConfig(std::string_view(text.constData(), static_cast<size_t>(text.size())),
                             "bad/config.json", "bad");
        QVERIFY(!r.ok());
        const QString msg = QString::fromStdString(r.message());
        QVERIFY2(msg.startsWith("bad/config.json"), qPrintable(msg));
        QVERIFY2(msg.contains(fragment), qPrintable(msg));
    }

    void missingFileAndEmptyFolder() {
        auto r = readModelConfig("/nonexistent/config.json");
        QVERIFY(!r.ok());
        QVERIFY(QString::fromStdString(r.message()).contains("no such file"));
        QTemporaryDir tmp;
        auto e = readModelConfig(tmp.path().toStdString());
        QVERIFY(!e.ok());
        QVERIFY(QString::fromStdString(e.message()).contains("no config.json"));
    }
};

QTEST_GUILESS_MAIN(TestModelConfig)
#include "tst_model_config.moc"
