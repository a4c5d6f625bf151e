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
Run cli(const QStringList& args) {
    return kvbe::test::runCli(args);
}

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
    // The cost model page's first-order figure: 70B at 32,768 tokens, 0.88 GB/s ± 1 %.
    void breakeven70B() {
        const auto r =
            cli({"calc", "--model", "meta-llama/Llama-3.3-70B-Instruct", "--peak-tflops", "989",
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
        for (const char* key : {"model", "gpu", "tiers", "rows"})
            QVERIFY(o.contains(key));
    }

    // The article's 3B figures with --params 3.21e9 and one zero-overhead tier.
    void breakeven3B() {
        const auto r = cli({"calc", "--model", "meta-llama/Llama-3.2-3B", "--params", "3.21e9",
                            "--gpu", "h100-sxm", "--peak-tflops", "989", "--util", "50%", "--tier",
                            "ssd=13.5@0", "--lengths", "8k,80k", "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto rows = json(r)["rows"].toArray();
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[1].toObject()["tokens"].toDouble(), 81920.0);
        QVERIFY(std::abs(rows[0].toObject()["breakeven_bandwidth_Bps"].toDouble() / 1e9 - 7.24) <=
                0.005);
        QVERIFY(std::abs(rows[1].toObject()["breakeven_bandwidth_Bps"].toDouble() / 1e9 - 2.76) <=
                0.005);
        // A 13.5 GB/s drive clears 7.24 GB/s: a full hit at 8k is a speedup.
        const auto tier = rows[0].toObject()["tiers"].toObject()["ssd"].toObject();
        QVERIFY(tier["speedup"].toDouble() > 1);
        const auto tiers = json(r)["tiers"].toArray();
        QCOMPARE(tiers[0].toObject()["bandwidth_Bps"].toDouble(), 13.5e9);
        QCOMPARE(tiers[0].toObject()["t_fixed_s"].toDouble(), 0.0);
    }

    // Quantities that do not exist are null: a fixed cost longer than the whole recompute.
    void missingQuantitiesAreNull() {
        const auto r = cli({"calc", "--model", "meta-llama/Llama-3.2-3B", "--tier",
                            "slow=0.001@100000", "--lengths", "256", "--format", "json"});
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
        QVERIFY(table.out.contains("NVMe (PCIe 5.0)")); // the default scenario's tiers
        QVERIFY(cli({"calc", "--lengths", "8k", "--scenario", "illustrative"})
                    .out.contains("NVMe (PCIe 4.0)"));
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
        f.write(
            R"({"kvbe_scenario": 1, "model": "Qwen/Qwen3-4B-Instruct-2507", "gpu": "rtx-4000-ada",
                    "utilisation": 0.4, "kv_dtype": "fp16", "tiers": [{"preset": "nvme-gen4"}]})");
        f.close();
        auto r = cli({"calc", "--scenario", f.fileName(), "--lengths", "4096", "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        auto o = json(r);
        QCOMPARE(o["model"].toObject()["name"].toString(), QString("Qwen/Qwen3-4B-Instruct-2507"));
        QCOMPARE(o["gpu"].toObject()["peak_flops"].toDouble(), 81.9e12);
        QCOMPARE(o["gpu"].toObject()["utilisation"].toDouble(), 0.4);
        QCOMPARE(o["tiers"].toArray().size(), 1);
        r = cli({"calc", "--scenario", f.fileName(), "--util", "0.8", "--kv-dtype", "fp8",
                 "--format", "json"});
        o = json(r);
        QCOMPARE(o["gpu"].toObject()["utilisation"].toDouble(), 0.8);
        QCOMPARE(o["model"].toObject()["kv_bytes_per_token"].toDouble(), 147456.0 / 2);
    }

    // Past the context: refused with a sentence, or, with --allow-past-context, flagged in the
    // table, the CSV and the JSON.
    void lengthsPastTheContext() {
        auto r = cli({"calc", "--model", "meta-llama/Llama-3.2-3B", "--lengths", "8k,200k"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(
            r.err.contains(
                "204,800 tokens is past the context of meta-llama/Llama-3.2-3B (131,072 tokens"),
            r.err.constData());
        QVERIFY(r.err.contains("--allow-past-context"));
        QVERIFY(r.out.isEmpty());

        r = cli({"calc", "--lengths", "8k,200k", "--allow-past-context", "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto rows = json(r)["rows"].toArray();
        QCOMPARE(rows[0].toObject()["past_context"].toBool(), false);
        QCOMPARE(rows[1].toObject()["past_context"].toBool(), true);
        QCOMPARE(json(r)["model"].toObject()["context_limit"].toDouble(), 131072.0);

        r = cli({"calc", "--lengths", "8k,200k", "--allow-past-context", "--format", "csv"});
        QCOMPARE(r.exitCode, 0);
        const auto lines = r.out.trimmed().split('\n');
        QVERIFY(lines[0].endsWith(",past_context"));
        QVERIFY(lines[1].endsWith(",false"));
        QVERIFY(lines[2].endsWith(",true"));

        r = cli({"calc", "--lengths", "8k,200k", "--allow-past-context"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("204,800 *"), r.out.constData());
        QVERIFY(r.out.contains("* past the model's context of 131,072 tokens"));
        // Within the context nothing is flagged.
        r = cli({"calc", "--lengths", "8k,128k"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(!r.out.contains("past the model's context"));
    }

    // The default lengths stop at the context: a 32,768-token model gets no 64k row, and a
    // 40,960-token one ends on 40,960.
    void defaultLengthsEndAtTheContext_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<double>("last");
        QTest::newRow("Mistral 7B v0.3") << "mistralai/Mistral-7B-Instruct-v0.3" << 32768.0;
        QTest::newRow("Qwen3 8B") << "Qwen/Qwen3-8B" << 40960.0;
        QTest::newRow("Llama 3.2 3B") << "meta-llama/Llama-3.2-3B" << 131072.0;
    }
    void defaultLengthsEndAtTheContext() {
        QFETCH(QString, model);
        QFETCH(double, last);
        const auto r = cli({"calc", "--model", model, "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = json(r);
        QCOMPARE(o["model"].toObject()["context_limit"].toDouble(), last);
        const auto rows = o["rows"].toArray();
        QCOMPARE(rows.last().toObject()["tokens"].toDouble(), last);
        for (const auto& row : rows)
            QVERIFY(!row.toObject()["past_context"].toBool());
    }

    // A huge length with the flag: the table's columns stay apart (every '|' lines up with the
    // header's); past 2^53 it is refused outright.
    void absurdLengths() {
        auto r = cli({"calc", "--lengths", "1e12"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.contains("past the context"));
        r = cli({"calc", "--lengths", "1k,1e12", "--allow-past-context"});
        QCOMPARE(r.exitCode, 0);
        const auto lines = QString::fromUtf8(r.out).split('\n');
        qsizetype header = -1;
        for (qsizetype i = 0; i < lines.size(); ++i)
            if (lines[i].trimmed().startsWith("tokens")) header = i;
        QVERIFY(header >= 0);
        auto bars = [](const QString& line) {
            QList<qsizetype> at;
            for (qsizetype i = 0; i < line.size(); ++i)
                if (line[i] == '|') at << i;
            return at;
        };
        const auto want = bars(lines[header]);
        QCOMPARE(want.size(), 2); // two tiers in the default scenario
        for (qsizetype i = header + 1; i <= header + 3; ++i)
            QCOMPARE(bars(lines[i]), want);
        QVERIFY2(lines[header + 3].contains("1,000,000,000,000 *"), qPrintable(lines[header + 3]));
        // Every cell has a blank before it.
        QVERIFY2(lines[header + 3].contains(" 114.69 PB "), qPrintable(lines[header + 3]));

        for (const char* huge : {"1e16", "9007199254740994", "1e300"}) {
            r = cli({"calc", "--lengths", huge, "--allow-past-context"});
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains("beyond 2^53"), r.err.constData());
            QVERIFY(r.out.isEmpty());
        }
    }

    // Tensor parallel: refused where no serving stack can split the model, with the rule; sizes
    // past the KV heads replicate them.
    void tensorParallelRule() {
        auto r =
            cli({"calc", "--model", "meta-llama/Llama-3.2-3B", "--tp", "3", "--lengths", "8k"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("--tp 3: tensor parallel 3 cannot run meta-llama/Llama-3.2-3B: its "
                                "8 KV heads do not divide by 3"),
                 r.err.constData());
        QVERIFY(r.err.contains("sizes this model can run: 1, 2, 4, 8, 24"));
        r = cli({"calc", "--model", "meta-llama/Llama-3.2-3B", "--tp", "1000", "--lengths", "8k"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("its 24 query heads do not divide by 1000"), r.err.constData());
        QVERIFY(r.out.isEmpty());
        r = cli({"calc", "--model", "meta-llama/Llama-3.2-3B", "--tp", "24", "--lengths", "8k",
                 "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(json(r)["gpu"].toObject()["tensor_parallel"].toInt(), 24);
        // A scenario file with an impossible size names the file and the field.
        QTemporaryDir tmp;
        QFile f(tmp.filePath("tp.kvbe.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"kvbe_scenario": 1, "tensor_parallel": 12})");
        f.close();
        r = cli({"calc", "--scenario", f.fileName(), "--lengths", "8k"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(f.fileName().toUtf8() + ": tensor_parallel: tensor parallel 12"),
                 r.err.constData());
        QVERIFY(r.err.contains("not a multiple of 8"));
    }

    // Amplification: the same break-even prefix as a tier at B / amp, in every spelling.
    void amplification() {
        auto pstar = [](const QStringList& tierArgs) {
            QStringList args{"calc",     "--model", "meta-llama/Llama-3.2-3B", "--lengths", "32k",
                             "--format", "json"};
            args += tierArgs;
            const auto r = cli(args);
            if (r.exitCode != 0) qWarning("%s", r.err.constData());
            return json(r)["tiers"].toArray()[0].toObject();
        };
        const auto slow = pstar({"--tier", "ssd=5@1"});
        for (const QStringList& spelling :
             {QStringList{"--tier", "ssd=12.5@1×2.5"}, QStringList{"--tier", "ssd=12.5@1x2.5"},
              QStringList{"--tier", "ssd=12.5@1", "--amplification", "2.5"},
              QStringList{"--tier", "ssd=12.5@1", "--amplification", "ssd=2.5"}}) {
            const auto t = pstar(spelling);
            QCOMPARE(t["amplification"].toDouble(), 2.5);
            QCOMPARE(t["bandwidth_Bps"].toDouble(), 12.5e9);
            QCOMPARE(t["effective_bandwidth_Bps"].toDouble(), 5e9);
            QCOMPARE(t["breakeven_prefix_tokens"].toDouble(),
                     slow["breakeven_prefix_tokens"].toDouble());
        }
        QCOMPARE(slow["amplification"].toDouble(), 1.0);
        // A preset with a factor, and its write bandwidth.
        const auto preset = pstar({"--tier", "nvme-gen5×2"});
        QCOMPARE(preset["amplification"].toDouble(), 2.0);
        QCOMPARE(preset["write_bandwidth_Bps"].toDouble(), 6.75e9);
        const auto table = cli({"calc", "--lengths", "8k", "--tier", "ssd=12@1x2.5"});
        QVERIFY2(table.out.contains("12.0 GB/s × 2.5 amplification = 4.80 GB/s effective"),
                 table.out.constData());
    }

    void amplificationRefused_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("fragment");
        QTest::newRow("below 1")
            << QStringList{"--tier", "ssd=12@1×0.5"}
            << "--tier ssd: amplification 0.5; expected bytes moved per useful byte";
        QTest::newRow("empty") << QStringList{"--tier", "ssd=12@1x"} << "--tier ssd";
        QTest::newRow("text") << QStringList{"--tier", "ssd=12x"} << "--tier ssd";
        QTest::newRow("preset below 1")
            << QStringList{"--tier", "nvme-gen5x0.9"} << "amplification 0.9";
        QTest::newRow("flag unknown tier")
            << QStringList{"--amplification", "floppy=2"} << "no tier named 'floppy'";
        QTest::newRow("flag too big") << QStringList{"--amplification", "5000"} << "from 1 to 1000";
    }
    void amplificationRefused() {
        QFETCH(QStringList, args);
        QFETCH(QString, fragment);
        const auto r = cli(QStringList{"calc", "--lengths", "8k"} + args);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(QString::fromUtf8(r.err).contains(fragment), r.err.constData());
        QVERIFY(r.out.isEmpty());
    }

    // --fraction and --util are fractions as core reads them: 0.25 or 25 %.
    void fractionsTakePercent() {
        const auto r = cli(
            {"calc", "--lengths", "8k", "--fraction", "25%", "--util", "50%", "--format", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto o = json(r);
        QCOMPARE(o["cached_fraction"].toDouble(), 0.25);
        QCOMPARE(o["gpu"].toObject()["utilisation"].toDouble(), 0.5);
    }

    void modelGivenAsPath() {
        const auto r = cli({"calc", "--model",
                            KVBE_SOURCE_DIR "/resources/models/mistralai__Mixtral-8x7B-v0.1.json",
                            "--lengths", "1k", "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto m = json(r)["model"].toObject();
        QVERIFY(std::abs(m["params_active"].toDouble() - 12.88e9) < 0.005e9);
        QCOMPARE(m["params_used"].toDouble(), m["params_active"].toDouble());
    }

    void listings_data() {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QStringList>("keys");
        QTest::newRow("gpus") << "gpus" << QStringList{"h100-sxm", "h100-pcie",    "h100-nvl",
                                                       "h200",     "b200",         "a100-80gb-sxm",
                                                       "l40s",     "rtx-4000-ada", "rtx-4090",
                                                       "mi300x"};
        QTest::newRow("tiers") << "tiers"
                               << QStringList{"dram-pcie4", "dram-pcie5",      "nvme-gen4",
                                              "nvme-gen5",  "nvme-gen4-raid4", "nvme-gen5-raid4",
                                              "net-100g",   "net-200g",        "net-400g"};
        QTest::newRow("models") << "models"
                                << QStringList{"meta-llama/Llama-3.2-3B", "deepseek-ai/DeepSeek-V3",
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
        QVERIFY2(table.out.contains("52 layers: 23 Mamba-2, 23 MoE, 6 attention"),
                 table.out.constData());
        QVERIFY(table.out.contains("49.1 MB"));
        // The Qwen3.5 and Falcon-H1 presets list with their layer mix and state
        // (tst_hybrid_models: 64,389,120 B and 14,542,848 B by hand).
        QVERIFY2(table.out.contains("40 layers: 30 Gated DeltaNet, 10 attention; MLP: 40 MoE"),
                 table.out.constData());
        QVERIFY(table.out.contains("64.4 MB"));
        QVERIFY2(table.out.contains("36 layers: 36 attention + Mamba-2; MLP: 36 dense"),
                 table.out.constData());
        QVERIFY(table.out.contains("14.5 MB"));
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
        auto r = cli({"calc", "--model", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "--lengths",
                      "8k", "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(json(r)["model"].toObject()["state_bytes"].toDouble(), 49082368.0);
        r = cli({"calc", "--model", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "--lengths", "8k",
                 "--state-dtype", "bf16", "--format", "json"});
        QCOMPARE(json(r)["model"].toObject()["state_bytes"].toDouble(), 24965120.0);
        QCOMPARE(json(r)["model"].toObject()["state_dtype"].toString(), QStringLiteral("bf16"));
        r = cli(
            {"calc", "--model", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "--lengths", "8k"});
        QVERIFY2(r.out.contains("Layers  52 layers: 23 Mamba-2"), r.out.constData());
    }

    // Bad input: exit 1 and a sentence naming what is wrong; usage errors exit 2; never a signal.
    void badInput_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("fragment");
        QTest::newRow("utilisation 0") << QStringList{"calc", "--util", "0"} << 1 << "--util";
        QTest::newRow("utilisation above 1")
            << QStringList{"calc", "--util", "1.2"} << 1 << "(0, 1]";
        QTest::newRow("utilisation text") << QStringList{"calc", "--util", "most"} << 1 << "--util";
        QTest::newRow("bandwidth 0") << QStringList{"calc", "--tier", "x=0@1"} << 1
                                     << "expected a bandwidth in GB/s above 0";
        QTest::newRow("bandwidth text") << QStringList{"calc", "--tier", "x=fast"} << 1 << "GB/s";
        QTest::newRow("unknown tier")
            << QStringList{"calc", "--tier", "floppy"} << 1 << "nor a tier preset";
        QTest::newRow("unknown gpu")
            << QStringList{"calc", "--gpu", "h900"} << 1 << "not a GPU preset";
        QTest::newRow("unknown model")
            << QStringList{"calc", "--model", "acme/none"} << 1 << "acme/none";
        QTest::newRow("bad lengths") << QStringList{"calc", "--lengths", "8k,lots"} << 1 << "lots";
        QTest::newRow("negative peak")
            << QStringList{"calc", "--peak-tflops", "-5"} << 1 << "--peak-tflops";
        QTest::newRow("fraction above 1")
            << QStringList{"calc", "--fraction", "3"} << 1 << "--fraction";
        QTest::newRow("missing scenario")
            << QStringList{"calc", "--scenario", "/nonexistent.kvbe.json"} << 1
            << "/nonexistent.kvbe.json";
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
        QTest::newRow("missing layers")
            << QByteArray(R"({"model_type": "llama", "hidden_size": 64, "vocab_size": 8})")
            << "'num_hidden_layers' is missing";
        QTest::newRow("zero heads")
            << QByteArray(
                   R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 0, "vocab_size": 8})")
            << "num_attention_heads";
        QTest::newRow("indivisible heads")
            << QByteArray(
                   R"({"model_type": "llama", "hidden_size": 96, "num_hidden_layers": 2, "num_attention_heads": 6, "num_key_value_heads": 4, "vocab_size": 8})")
            << "not divisible";
        QTest::newRow("binary garbage")
            << QByteArray("\x00\xff\xfe\x01garbage", 11) << "not valid JSON";
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
