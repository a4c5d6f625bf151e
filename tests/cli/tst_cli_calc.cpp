// kvbe-cli calc, models, gpus, tiers as a script sees them: JSON contract, exit codes, messages.
#include "cli_run.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

namespace {

using Run = kvbe::test::CliRun;
Run cli(const QStringList& args) { return kvbe::test::runCli(args); }

QJsonObject json(const Run& r) {
    QJsonParseError e;
    const auto doc = QJsonDocument::fromJson(r.out, &e);
    if (e.error != QJsonParseError::NoError) qWarning("not JSON: %s", r.out.constData());
    return doc.object();
}

} // namespace

class TestCliCalc : public QObject {
    Q_OBJECT
private slots:
    // The issue's "done when": 70B at 32,768 tokens, 0.88 GB/s ± 1 %.
    void breakeven70B() {
        const auto r = cli({"calc", "--model", "meta-llama/Llama-3.3-70B-Instruct", "--peak-tflops", "989",
                            "--util", "0.5", "--flops", "simple", "--lengths", "32768", "--format", "json"});
        QCOMPARE(r.status, QProcess::NormalExit);
        QCOMPARE(r.exitCode, 0);
        const auto o = json(r);
        const auto rows = o["rows"].toArray();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0].toObject()["tokens"].toDouble(), 32768.0);
        const double b = rows[0].toObject()["breakeven_bandwidth_Bps"].toDouble();
        QVERIFY2(std::abs(b / 1e9 - 0.88) <= 0.0088, qPrintable(QString::number(b)));
        const auto m = o["model"].toObject();
        QCOMPARE(m["layers"].toInt(), 80);
        QCOMPARE(m["q_heads"].toInt(), 64);
        QCOMPARE(m["kv_heads"].toInt(), 8);
        QCOMPARE(m["head_dim"].toInt(), 128);
        QCOMPARE(m["kv_bytes_per_token"].toDouble(), 327680.0);
        QVERIFY(std::abs(m["params_total"].toDouble() - 70.554e9) < 0.0005e9);
        const auto g = o["gpu"].toObject();
        QCOMPARE(g["peak_flops"].toDouble(), 989e12);
        QCOMPARE(g["utilisation"].toDouble(), 0.5);
        for (const char* key : {"model", "gpu", "tiers", "rows"}) QVERIFY(o.contains(key));
    }

    // The article's 3B figures with --params 3.21e9 and one zero-overhead tier.
    void breakeven3B() {
        const auto r = cli({"calc", "--model", "meta-llama/Llama-3.2-3B", "--params", "3.21e9", "--gpu", "h100-sxm",
                            "--peak-tflops", "989", "--util", "50%", "--tier", "ssd=13.5@0", "--lengths", "8k,80k",
                            "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto rows = json(r)["rows"].toArray();
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[1].toObject()["tokens"].toDouble(), 81920.0);
        QVERIFY(std::abs(rows[0].toObject()["breakeven_bandwidth_Bps"].toDouble() / 1e9 - 7.24) <= 0.005);
        QVERIFY(std::abs(rows[1].toObject()["breakeven_bandwidth_Bps"].toDouble() / 1e9 - 2.76) <= 0.005);
        // A 13.5 GB/s drive clears 7.24 GB/s: a full hit at 8k is a speedup.
        const auto tier = rows[0].toObject()["tiers"].toObject()["ssd"].toObject();
        QVERIFY(tier["speedup"].toDouble() > 1);
        const auto tiers = json(r)["tiers"].toArray();
        QCOMPARE(tiers[0].toObject()["bandwidth_Bps"].toDouble(), 13.5e9);
        QCOMPARE(tiers[0].toObject()["t_fixed_s"].toDouble(), 0.0);
    }

    // Quantities that do not exist are null: a fixed cost longer than the whole recompute.
    void missingQuantitiesAreNull() {
        const auto r = cli({"calc", "--model", "meta-llama/Llama-3.2-3B", "--tier", "slow=0.001@100000",
                            "--lengths", "256", "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = json(r);
        QVERIFY(o["tiers"].toArray()[0].toObject()["breakeven_prefix_tokens"].isNull());
        const auto t = o["rows"].toArray()[0].toObject()["tiers"].toObject()["slow"].toObject();
        QVERIFY(t["min_cached_fraction"].isNull());
        QVERIFY(t["breakeven_bandwidth_Bps"].isNull());
        QVERIFY(t["speedup"].toDouble() > 0 && t["speedup"].toDouble() < 1);
        QVERIFY(!r.out.contains("inf") && !r.out.contains("nan") && !r.out.contains("NaN"));
    }

    void formats() {
        const auto table = cli({"calc", "--lengths", "8k"});
        QCOMPARE(table.exitCode, 0);
        QVERIFY(table.out.contains("Llama-3.2-3B"));
        QVERIFY(table.out.contains("NVMe (PCIe 4.0)"));
        const auto csv = cli({"calc", "--lengths", "1k,8k", "--format", "csv"});
        QCOMPARE(csv.exitCode, 0);
        const auto lines = csv.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 3);
        QVERIFY(lines[0].startsWith("tokens,kv_bytes,t_recompute_s,breakeven_bandwidth_Bps"));
        QCOMPARE(lines[1].count(','), lines[0].count(','));
    }

    void scenarioFileAndOverrides() {
        QTemporaryDir tmp;
        QFile f(tmp.filePath("s.kvbe.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"kvbe_scenario": 1, "model": "Qwen/Qwen3-4B-Instruct-2507", "gpu": "rtx-4000-ada",
                    "utilisation": 0.4, "kv_dtype": "fp16", "tiers": [{"preset": "nvme-gen4"}]})");
        f.close();
        auto r = cli({"calc", "--scenario", f.fileName(), "--lengths", "4096", "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        auto o = json(r);
        QCOMPARE(o["model"].toObject()["name"].toString(), QString("Qwen/Qwen3-4B-Instruct-2507"));
        QCOMPARE(o["gpu"].toObject()["peak_flops"].toDouble(), 81.9e12);
        QCOMPARE(o["gpu"].toObject()["utilisation"].toDouble(), 0.4);
        QCOMPARE(o["tiers"].toArray().size(), 1);
        r = cli({"calc", "--scenario", f.fileName(), "--util", "0.8", "--kv-dtype", "fp8", "--format", "json"});
        o = json(r);
        QCOMPARE(o["gpu"].toObject()["utilisation"].toDouble(), 0.8);
        QCOMPARE(o["model"].toObject()["kv_bytes_per_token"].toDouble(), 147456.0 / 2);
    }

    void modelGivenAsPath() {
        const auto r = cli({"calc", "--model", KVBE_SOURCE_DIR "/resources/models/mistralai__Mixtral-8x7B-v0.1.json",
                            "--lengths", "1k", "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto m = json(r)["model"].toObject();
        QVERIFY(std::abs(m["params_active"].toDouble() - 12.88e9) < 0.005e9);
        QCOMPARE(m["params_used"].toDouble(), m["params_active"].toDouble());
    }

    void listings_data() {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QStringList>("keys");
        QTest::newRow("gpus") << "gpus" << QStringList{"h100-sxm", "h100-pcie", "h100-nvl", "h200", "b200",
                                                       "a100-80gb-sxm", "l40s", "rtx-4000-ada", "rtx-4090", "mi300x"};
        QTest::newRow("tiers") << "tiers" << QStringList{"dram-pcie4", "dram-pcie5", "nvme-gen4", "nvme-gen5",
                                                         "nvme-gen4-raid4", "nvme-gen5-raid4", "net-100g", "net-400g"};
        QTest::newRow("models") << "models" << QStringList{"meta-llama/Llama-3.2-3B", "deepseek-ai/DeepSeek-V3",
                                                           "openai/gpt-oss-120b", "google/gemma-3-27b-it"};
    }
    void listings() {
        QFETCH(QString, command);
        QFETCH(QStringList, keys);
        const auto table = cli({command});
        QCOMPARE(table.exitCode, 0);
        const auto js = cli({command, "--format", "json"});
        QCOMPARE(js.exitCode, 0);
        const auto arr = QJsonDocument::fromJson(js.out).array();
        QStringList seen;
        for (const auto& v : arr) {
            const auto o = v.toObject();
            seen << (o.contains("key") ? o["key"].toString() : o["id"].toString());
            if (o.contains("sources")) QVERIFY(!o["sources"].toObject().isEmpty());
        }
        for (const auto& k : keys) {
            QVERIFY2(seen.contains(k), qPrintable(k));
            QVERIFY2(table.out.contains(k.toUtf8()), qPrintable(k));
        }
    }

    // Hybrids in the listing and in calc: layer mix, state bytes (tests/core/tst_hybrid_models.cpp
    // has the hand computation: 23 × (64·64·128 · 4 B + (4096 + 2·8·128)·3 · 2 B) for Nemotron 3
    // Nano), and --state-dtype.
    void hybridModelInListingAndCalc() {
        const auto table = cli({"models"});
        QCOMPARE(table.exitCode, 0);
        QVERIFY2(table.out.contains("52 layers: 23 Mamba-2, 23 MoE, 6 attention"), table.out.constData());
        QVERIFY(table.out.contains("49.1 MB"));
        const auto js = cli({"models", "--format", "json"});
        bool found = false;
        for (const auto& v : QJsonDocument::fromJson(js.out).array()) {
            const auto o = v.toObject();
            if (o["id"].toString() != "Qwen/Qwen3-Next-80B-A3B-Instruct") continue;
            found = true;
            QCOMPARE(o["kv_bytes_per_token"].toDouble(), 24576.0);
            QCOMPARE(o["state_bytes"].toDouble(), 19759104.0 * 2);
            QCOMPARE(o["attention"].toString(), QStringLiteral("hybrid"));
        }
        QVERIFY(found);
        auto r = cli({"calc", "--model", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "--lengths", "8k",
                      "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(json(r)["model"].toObject()["state_bytes"].toDouble(), 49082368.0);
        r = cli({"calc", "--model", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "--lengths", "8k",
                 "--state-dtype", "bf16", "--format", "json"});
        QCOMPARE(json(r)["model"].toObject()["state_bytes"].toDouble(), 24965120.0);
        QCOMPARE(json(r)["model"].toObject()["state_dtype"].toString(), QStringLiteral("bf16"));
        r = cli({"calc", "--model", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "--lengths", "8k"});
        QVERIFY2(r.out.contains("Layers  52 layers: 23 Mamba-2"), r.out.constData());
    }

    // Bad input: exit 1 and a sentence naming what is wrong; usage errors exit 2; never a signal.
    void badInput_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("fragment");
        QTest::newRow("utilisation 0") << QStringList{"calc", "--util", "0"} << 1 << "--util";
        QTest::newRow("utilisation above 1") << QStringList{"calc", "--util", "1.2"} << 1 << "(0, 1]";
        QTest::newRow("utilisation text") << QStringList{"calc", "--util", "most"} << 1 << "--util";
        QTest::newRow("bandwidth 0") << QStringList{"calc", "--tier", "x=0"} << 1 << "expected more than 0";
        QTest::newRow("bandwidth text") << QStringList{"calc", "--tier", "x=fast"} << 1 << "GB/s";
        QTest::newRow("unknown tier") << QStringList{"calc", "--tier", "floppy"} << 1 << "not a tier preset";
        QTest::newRow("unknown gpu") << QStringList{"calc", "--gpu", "h900"} << 1 << "not a GPU preset";
        QTest::newRow("unknown model") << QStringList{"calc", "--model", "acme/none"} << 1 << "acme/none";
        QTest::newRow("bad lengths") << QStringList{"calc", "--lengths", "8k,lots"} << 1 << "lots";
        QTest::newRow("negative peak") << QStringList{"calc", "--peak-tflops", "-5"} << 1 << "--peak-tflops";
        QTest::newRow("fraction above 1") << QStringList{"calc", "--fraction", "3"} << 1 << "--fraction";
        QTest::newRow("missing scenario") << QStringList{"calc", "--scenario", "/nonexistent.kvbe.json"} << 1 << "/nonexistent.kvbe.json";
        QTest::newRow("unknown flag") << QStringList{"calc", "--warp", "9"} << 2 << "--warp";
        QTest::newRow("bad format") << QStringList{"calc", "--format", "xml"} << 2 << "xml";
        QTest::newRow("no command") << QStringList{} << 2 << "";
        QTest::newRow("bad flop model") << QStringList{"calc", "--flops", "magic"} << 2 << "magic";
    }
    void badInput() {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, fragment);
        const auto r = cli(args);
        QCOMPARE(r.status, QProcess::NormalExit);
        QCOMPARE(r.exitCode, code);
        QVERIFY2(QString::fromUtf8(r.err).contains(fragment), r.err.constData());
        QVERIFY(r.out.isEmpty() || code == 2);
    }

    void badConfigFilesNameTheFileAndField_data() {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("fragment");
        QTest::newRow("not JSON") << QByteArray("<html>") << "not valid JSON";
        QTest::newRow("missing layers") << QByteArray(R"({"model_type": "llama", "hidden_size": 64, "vocab_size": 8})")
                                        << "'num_hidden_layers' is missing";
        QTest::newRow("zero heads") << QByteArray(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 0, "vocab_size": 8})")
                                    << "num_attention_heads";
        QTest::newRow("indivisible heads") << QByteArray(R"({"model_type": "llama", "hidden_size": 96, "num_hidden_layers": 2, "num_attention_heads": 6, "num_key_value_heads": 4, "vocab_size": 8})")
                                           << "not divisible";
        QTest::newRow("binary garbage") << QByteArray("\x00\xff\xfe\x01garbage", 11) << "not valid JSON";
    }
    void badConfigFilesNameTheFileAndField() {
        QFETCH(QByteArray, content);
        QFETCH(QString, fragment);
        QTemporaryDir tmp;
        QFile f(tmp.filePath("config.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(content);
        f.close();
        const auto r = cli({"calc", "--model", f.fileName()});
        QCOMPARE(r.status, QProcess::NormalExit);
        QCOMPARE(r.exitCode, 1);
        const auto err = QString::fromUtf8(r.err);
        QVERIFY2(err.contains(f.fileName()), qPrintable(err));
        QVERIFY2(err.contains(fragment), qPrintable(err));
    }
};

QTEST_GUILESS_MAIN(TestCliCalc)
#include "tst_cli_calc.moc"
