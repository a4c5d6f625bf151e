// kvbe-cli calibration inspect | fit | export-pykvcache, as a script runs them.
#include "../core/pykvcache_format_check.h"
#include "cli_run.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

namespace {

using Run = kvbe::test::CliRun;
Run cli(const QStringList& args) {
    return kvbe::test::runCli(args);
}

void write(const QString& path, const QByteArray& data) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(data);
}

const QByteArray kPareto =
    "curve,server_config,doc_size,prefix_len,prefix_frac,concurrency,ttft_mean_s,ttft_median_s\n"
    "cold_prefill,base,1024,0,0,1,0.021,0.020\n"
    "cold_prefill,base,4096,0,0,1,0.071,0.070\n"
    "cold_prefill,base,16384,0,0,1,0.33,0.32\n"
    "cold_prefill,base,65536,0,0,1,2.1,2.05\n"
    "cache_hit,ssd,4096,2048,0.5,1,0.05,0.049\n"
    "cache_hit,ssd,16384,8192,0.5,1,0.19,0.185\n"
    "cache_hit,ssd,65536,32768,0.5,1,1.2,1.15\n";

// One node measured with two models: TTFTs of the simple FLOP model at u = 0.45, a 4 ms shared
// overhead and an SSD tier of 11 GB/s whose fixed cost is 2 ms + 0.1 ms per layer (4.8 ms for
// Llama 3.2 3B's 28 layers, 5.6 ms for Qwen3 4B's 36).
const QByteArray kLlamaNode = R"({"kvbe_calibration": 1, "model": "meta-llama/Llama-3.2-3B",
    "prefill": [[1024, 0.01919], [4096, 0.069623], [16384, 0.344313], [65536, 2.610404]],
    "hits": [{"tokens": 4096, "prefix": 2048, "tier": "ssd", "seconds": 0.064586},
        {"tokens": 16384, "prefix": 8192, "tier": "ssd", "seconds": 0.290309},
        {"tokens": 65536, "prefix": 32768, "tier": "ssd", "seconds": 2.068697}]})";
const QByteArray kQwenNode = R"({"kvbe_calibration": 1, "model": "Qwen/Qwen3-4B-Instruct-2507",
    "prefill": [[1024, 0.023194], [4096, 0.089113], [16384, 0.477862], [65536, 4.03399]],
    "hits": [{"tokens": 4096, "prefix": 2048, "tier": "ssd", "seconds": 0.08239},
        {"tokens": 16384, "prefix": 8192, "tier": "ssd", "seconds": 0.400815},
        {"tokens": 65536, "prefix": 32768, "tier": "ssd", "seconds": 3.175367}]})";

} // namespace

class TestCliCalibration : public QObject {
    Q_OBJECT
  private slots:
    void inspectAFolderAsJson() {
        QTemporaryDir tmp;
        write(tmp.filePath("a-pykvcache.json"),
              R"({"model_name": "meta-llama/Llama-3.2-3B", "kv_dtype": "bfloat16",
            "break_even_ssd_tokens": 6057, "break_even_mem_tokens": 736, "safety_margin_tokens": 0})");
        write(tmp.filePath("b-qwen.json"),
              R"({"model_name": "Qwen/Qwen3-4B-Instruct-2507", "kv_dtype": "bfloat16",
            "break_even_ssd_tokens": 6203, "break_even_mem_tokens": 825})");
        write(tmp.filePath("c-pareto.csv"), kPareto);
        const auto r = cli({"calibration", "inspect", tmp.path(), "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = QJsonDocument::fromJson(r.out).object();
        const auto cals = o["calibrations"].toArray();
        QCOMPARE(cals.size(), 3);
        QCOMPARE(cals[0].toObject()["breakeven_prefix_tokens"].toObject()["ssd"].toDouble(),
                 6057.0);
        QCOMPARE(cals[0].toObject()["warnings"].toArray().size(), 0);
        // Qwen against the default scenario's Llama: a warning, not silence.
        const auto w = cals[1].toObject()["warnings"].toArray();
        QCOMPARE(w.size(), 1);
        QVERIFY(w[0].toString().contains("Qwen3-4B"));
        QCOMPARE(cals[2].toObject()["format"].toString(), QString("pareto-csv"));
        QCOMPARE(cals[2].toObject()["hit_points"].toInt(), 3);
    }

    void inspectReportsBadFilesAndExitsOne() {
        QTemporaryDir tmp;
        write(tmp.filePath("bad.csv"), "curve,doc_size,ttft_median_s\ncold_prefill,abc,0.1\n");
        const auto r = cli({"calibration", "inspect", tmp.filePath("bad.csv")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("bad.csv: line 2: column 'doc_size'"), r.err.constData());
    }

    void fitWritesCalibrationAndAdoptedScenario() {
        QTemporaryDir tmp;
        write(tmp.filePath("p.csv"), kPareto);
        const auto r =
            cli({"calibration", "fit", tmp.filePath("p.csv"), "--out", tmp.filePath("fitted.json"),
                 "--adopt", tmp.filePath("adopted.kvbe.json"), "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = QJsonDocument::fromJson(r.out).object();
        const double u = o["utilisation"].toDouble();
        QVERIFY(u > 0 && u <= 1);
        QCOMPARE(o["residuals"].toArray().size(), 7);
        const auto ssd = o["tiers"].toObject()["ssd"].toObject();
        QVERIFY(ssd["bandwidth_Bps"].toDouble() > 0);
        // The adopted scenario carries the fitted utilisation; calc reads it.
        const auto calc = cli({"calc", "--scenario", tmp.filePath("adopted.kvbe.json"), "--lengths",
                               "8k", "--format", "json"});
        QCOMPARE(calc.exitCode, 0);
        QVERIFY(std::abs(QJsonDocument::fromJson(calc.out)
                             .object()["gpu"]
                             .toObject()["utilisation"]
                             .toDouble() -
                         u) < 1e-12);
        // The fitted calibration exports the same p* the fit reported.
        const auto ex =
            cli({"calibration", "export-pykvcache", "--calibration", tmp.filePath("fitted.json")});
        QCOMPARE(ex.exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(ex.out).object()["break_even_ssd_tokens"].toDouble(),
                 ssd["breakeven_prefix_tokens"].toDouble());
    }

    // One file: the fit states the per-layer form, t_layer = t_fixed / 28 on Llama 3.2 3B, and
    // the adopted scenario records the model it was fitted on.
    void fitOfOneModelIsPerLayer() {
        QTemporaryDir tmp;
        write(tmp.filePath("llama.json"), kLlamaNode);
        const auto r = cli({"calibration", "fit", tmp.filePath("llama.json"), "--adopt",
                            tmp.filePath("adopted.kvbe.json"), "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o["fixed_cost_form"].toString(), QString("per layer"));
        const auto ssd = o["tiers"].toObject()["ssd"].toObject();
        QCOMPARE(ssd["layers"].toInt(), 28);
        QVERIFY(std::abs(ssd["t_layer_s"].toDouble() * 28 / ssd["t_fixed_s"].toDouble() - 1) <
                1e-12);
        QVERIFY2(std::abs(ssd["t_fixed_s"].toDouble() - 0.0048) < 2e-5, r.out.constData());
        QFile f(tmp.filePath("adopted.kvbe.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto adopted = QJsonDocument::fromJson(f.readAll()).object();
        const auto fittedOn = adopted["fitted_on"].toArray();
        QCOMPARE(fittedOn.size(), 1);
        QCOMPARE(fittedOn[0].toObject()["layers"].toInt(), 28);
        const auto table = cli({"calibration", "fit", tmp.filePath("llama.json")});
        QCOMPARE(table.exitCode, 0);
        QVERIFY2(table.out.contains("note: fixed cost: fixed cost per layer (t0 = 0, t_layer = "
                                    "t_fixed / layers): one model cannot tell t0 from t_layer"),
                 table.out.constData());
    }

    // Two files for two models of one node: each fitted with its own model, then t0 and
    // t_layer through the two fixed costs, F = t0 + L · t_layer, solved here by hand.
    void fitAcrossTwoModels() {
        QTemporaryDir tmp;
        write(tmp.filePath("llama.json"), kLlamaNode);
        write(tmp.filePath("qwen.json"), kQwenNode);
        const auto r =
            cli({"calibration", "fit", tmp.filePath("llama.json"), tmp.filePath("qwen.json"),
                 "--adopt", tmp.filePath("node.kvbe.json"), "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = QJsonDocument::fromJson(r.out).object();
        const auto models = o["models"].toArray();
        QCOMPARE(models.size(), 2);
        auto fixed = [&](int i) {
            return models[i]
                .toObject()["fit"]
                .toObject()["tiers"]
                .toObject()["ssd"]
                .toObject()["t_fixed_s"]
                .toDouble();
        };
        const double f28 = fixed(0), f36 = fixed(1);
        const double tLayer = (f36 - f28) / (36 - 28), t0 = f28 - 28 * tLayer;
        const auto line = o["fixed_cost"].toObject()["ssd"].toObject();
        QCOMPARE(line["form"].toString(), QString("t0 + per layer"));
        QVERIFY(std::abs(line["t_layer_s"].toDouble() - tLayer) < 1e-12);
        QVERIFY(std::abs(line["t0_s"].toDouble() - t0) < 1e-12);
        // What went in: 2 ms and 0.1 ms per layer (the generator's parameter counts are rounded).
        QVERIFY2(std::abs(t0 - 0.002) < 2e-4, qPrintable(QString::number(t0)));
        QVERIFY2(std::abs(tLayer - 1e-4) < 1e-5, qPrintable(QString::number(tLayer)));
        QCOMPARE(o["fitted_on"].toArray().size(), 2);
        // The adopted scenario is the default's model, Llama 3.2 3B: t0 and t_layer as fitted.
        QFile f(tmp.filePath("node.kvbe.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const auto adopted = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(adopted["fitted_on"].toArray().size(), 2);
        bool found = false; // "ssd" is the first NVMe tier
        for (const auto& t : adopted["tiers"].toArray())
            if (!found && t.toObject()["name"].toString().contains("NVMe")) {
                found = true;
                QVERIFY(std::abs(t.toObject()["t_fixed_ms"].toDouble() - t0 * 1e3) < 1e-9);
                QVERIFY(std::abs(t.toObject()["t_layer_us"].toDouble() - tLayer * 1e6) < 1e-6);
            }
        QVERIFY(found);
        // The table says which form, and why; --out writes one file only.
        const auto table =
            cli({"calibration", "fit", tmp.filePath("llama.json"), tmp.filePath("qwen.json")});
        QCOMPARE(table.exitCode, 0);
        QVERIFY2(
            table.out.contains("Fixed cost across 2 models") &&
                table.out.contains("t0 and t_layer both fitted (least squares on [1, layers])"),
            table.out.constData());
        QVERIFY(!table.out.contains("one model cannot tell"));
        const auto refused = cli({"calibration", "fit", tmp.filePath("llama.json"),
                                  tmp.filePath("qwen.json"), "--out", tmp.filePath("x.json")});
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.contains("--out writes one calibration file"),
                 refused.err.constData());
    }

    // Exported from a scenario, the thresholds are calc's break-even prefixes, and they read back.
    void exportFromScenarioReadsBack() {
        QTemporaryDir tmp;
        const QString scenario =
            QStringLiteral(KVBE_SOURCE_DIR "/resources/scenarios/default.kvbe.json");
        const auto ex = cli({"calibration", "export-pykvcache", "--scenario", scenario, "--out",
                             tmp.filePath("pk.json"), "--safety-margin", "64"});
        QCOMPARE(ex.exitCode, 0);
        const auto calc =
            cli({"calc", "--scenario", scenario, "--lengths", "8k", "--format", "json"});
        const auto tiers = QJsonDocument::fromJson(calc.out).object()["tiers"].toArray();
        const auto back =
            cli({"calibration", "inspect", tmp.filePath("pk.json"), "--format", "json"});
        QCOMPARE(back.exitCode, 0);
        const auto c =
            QJsonDocument::fromJson(back.out).object()["calibrations"].toArray()[0].toObject();
        QCOMPARE(c["format"].toString(), QString("py-kvcache-v1"));
        QCOMPARE(c["breakeven_prefix_tokens"].toObject()["mem"].toDouble(),
                 tiers[0].toObject()["breakeven_prefix_tokens"].toDouble());
        QCOMPARE(c["breakeven_prefix_tokens"].toObject()["ssd"].toDouble(),
                 tiers[1].toObject()["breakeven_prefix_tokens"].toDouble());
        QCOMPARE(c["safety_margin_tokens"].toDouble(), 64.0);
    }

    // Every fixture (files shaped as the tools write them) reads without an error.
    void inspectTheFixtures() {
        const auto r = cli({"calibration", "inspect", KVBE_SOURCE_DIR "/tests/fixtures/calibration",
                            "--format", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o["errors"].toArray().size(), 0);
        QMap<QString, QJsonObject> byName;
        for (const auto& v : o["calibrations"].toArray())
            byName[QFileInfo(v.toObject()["source"].toString()).fileName()] = v.toObject();
        QVERIFY(byName.size() >= 13);
        const auto v2 = byName["pykvcache-v2.json"];
        QCOMPARE(v2["format"].toString(), QString("py-kvcache-v2"));
        QCOMPARE(v2["kv_dtype_as_written"].toString(), QString("auto"));
        QCOMPARE(v2["kv_dtype"].toString(), QString("bf16"));
        QCOMPARE(v2["curves"].toObject().keys(), (QStringList{"f", "g_mem", "g_ssd"}));
        QCOMPARE(v2["golden"].toArray().size(), 1);
        QCOMPARE(v2["ssd_model"].toString(), QString("Kioxia CM7-R"));
        const auto only = byName["pykvcache-v1-thresholds-only.json"];
        QCOMPARE(only["gate_tokens"].toObject()["ssd"].toDouble(), 100.0);
        QCOMPARE(byName["pykvcache-v1-schema-fp8-margin.json"]["gate_tokens"]
                     .toObject()["ssd"]
                     .toDouble(),
                 4160.0);
        QCOMPARE(byName["pykvcache-v1-schema-fp8-margin.json"]["gate_tokens"]
                     .toObject()["mem"]
                     .toDouble(),
                 0.0);
        bool named = false;
        for (const auto& w : byName["pareto-measure.csv"]["warnings"].toArray())
            named = named || w.toString().contains("1 failed run skipped");
        QVERIFY(named);
        // The table says the same in words.
        const auto table = cli({"calibration", "inspect",
                                KVBE_SOURCE_DIR "/tests/fixtures/calibration/pykvcache-v2.json"});
        QCOMPARE(table.exitCode, 0);
        QVERIFY2(table.out.contains("kv_dtype auto (the model's own: bf16)") &&
                     table.out.contains("curve g_ssd: 4 knots") &&
                     table.out.contains("1 golden points"),
                 table.out.constData());
    }

    // --schema 2: curves, golden points, thresholds by py-kvcache's rule, provenance; read back by
    // the independent reader of the format page.
    void exportSchema2ReadsBack() {
        QTemporaryDir tmp;
        // The illustrative scenario: the default's DRAM p* is the published 736 tokens to 1e-13,
        // where calc's whole tokens (737) and the curves' rule (736) round a tie apart.
        const QString scenario =
            QStringLiteral(KVBE_SOURCE_DIR "/resources/scenarios/illustrative.kvbe.json");
        const auto ex = cli({"calibration", "export-pykvcache", "--scenario", scenario, "--schema",
                             "2", "--out", tmp.filePath("v2.json")});
        QVERIFY2(ex.exitCode == 0, ex.err.constData());
        QFile f(tmp.filePath("v2.json"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        const auto page = kvbe::test::readPageFile(text);
        QVERIFY2(page.problems.isEmpty(), qPrintable(page.problems.join("; ")));
        QCOMPARE(page.schema, 2);
        QCOMPARE(page.kvDtype, QString("auto"));
        QCOMPARE(*page.ssd, kvbe::test::pageRuleThreshold(page.curves["f"], page.curves["g_ssd"]));
        QCOMPARE(*page.mem, kvbe::test::pageRuleThreshold(page.curves["f"], page.curves["g_mem"]));
        const auto o = QJsonDocument::fromJson(text).object();
        const auto prov = o["provenance"].toObject();
        QVERIFY(prov["generator"].toString().startsWith("kvbe-cli "));
        QCOMPARE(prov["scenario"].toString(), scenario);
        QVERIFY(!prov["generated"].toString().isEmpty());
        QVERIFY(!o["gpu_model"].toString().isEmpty());
        QVERIFY(!o["ssd_model"].toString().isEmpty());
        QVERIFY(o["kv_bytes_per_token"].toDouble() > 0);
        // The thresholds are calc's p*, rounded up to py-kvcache's 16-token blocks.
        const auto calc =
            cli({"calc", "--scenario", scenario, "--lengths", "8k", "--format", "json"});
        const auto tiers = QJsonDocument::fromJson(calc.out).object()["tiers"].toArray();
        QCOMPARE(double(*page.mem),
                 std::ceil(tiers[0].toObject()["breakeven_prefix_tokens"].toDouble() / 16) * 16);
        QCOMPARE(double(*page.ssd),
                 std::ceil(tiers[1].toObject()["breakeven_prefix_tokens"].toDouble() / 16) * 16);
        // And kvbe reads it back as v2 without a warning.
        const auto back = cli({"calibration", "inspect", tmp.filePath("v2.json"), "--scenario",
                               scenario, "--format", "json"});
        QCOMPARE(back.exitCode, 0);
        const auto c =
            QJsonDocument::fromJson(back.out).object()["calibrations"].toArray()[0].toObject();
        QCOMPARE(c["format"].toString(), QString("py-kvcache-v2"));
        QCOMPARE(c["warnings"].toArray().size(), 0);
    }

    // A fitted calibration of another model than the scenario's: refused unless --model says so.
    void exportRefusesAnotherModelUnlessAsked() {
        QTemporaryDir tmp;
        write(tmp.filePath("qwen.json"),
              R"({"kvbe_calibration": 1, "model": "Qwen/Qwen3-4B-Instruct-2507",
            "fitted": {"utilisation": 0.4, "overhead_s": 0.002, "tiers": {"ssd": {"bandwidth_Bps": 12e9, "t_fixed_s": 0.002}}},
            "breakeven_prefix_tokens": {"ssd": 5000, "mem": 700}})");
        const QString scenario =
            QStringLiteral(KVBE_SOURCE_DIR "/resources/scenarios/default.kvbe.json");
        for (const char* schema : {"1", "2"}) {
            const auto no =
                cli({"calibration", "export-pykvcache", "--calibration", tmp.filePath("qwen.json"),
                     "--scenario", scenario, "--schema", schema});
            QCOMPARE(no.exitCode, 1);
            QVERIFY2(no.err.contains("measured with model 'Qwen/Qwen3-4B-Instruct-2507'") &&
                         no.err.contains("--model"),
                     no.err.constData());
            const auto yes = cli({"calibration", "export-pykvcache", "--calibration",
                                  tmp.filePath("qwen.json"), "--scenario", scenario, "--schema",
                                  schema, "--model", "Qwen/Qwen3-4B-Instruct-2507"});
            QVERIFY2(yes.exitCode == 0, yes.err.constData());
            QCOMPARE(QJsonDocument::fromJson(yes.out).object()["model_name"].toString(),
                     QString("Qwen/Qwen3-4B-Instruct-2507"));
            QVERIFY2(yes.err.contains("warning"),
                     yes.err.constData()); // the mismatch is still said
        }
        // Without a scenario, a v1 export is the calibration's own thresholds under its own name.
        const auto own =
            cli({"calibration", "export-pykvcache", "--calibration", tmp.filePath("qwen.json")});
        QCOMPARE(own.exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(own.out).object()["break_even_ssd_tokens"].toInt(), 5000);
    }

    void exportUsage_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("fragment");
        QTest::newRow("neither source") << QStringList{"calibration", "export-pykvcache"} << 1
                                        << "give --scenario FILE, --calibration FILE, or both";
        QTest::newRow("schema 3") << QStringList{"calibration", "export-pykvcache", "--schema", "3"}
                                  << 2 << "";
        QTest::newRow("unknown ssd tier")
            << QStringList{"calibration", "export-pykvcache",
                           "--scenario",  KVBE_SOURCE_DIR "/resources/scenarios/default.kvbe.json",
                           "--ssd-tier",  "tape"}
            << 1 << "no tier is named 'tape'";
        QTest::newRow("negative margin")
            << QStringList{"calibration", "export-pykvcache", "--safety-margin", "-5"} << 1
            << "--safety-margin '-5' is out of range";
        QTest::newRow("no subcommand") << QStringList{"calibration"} << 2 << "";
    }
    void exportUsage() {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, fragment);
        const auto r = cli(args);
        QCOMPARE(r.exitCode, code);
        QVERIFY2(QString::fromUtf8(r.err).contains(fragment), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliCalibration)
#include "tst_cli_calibration.moc"
