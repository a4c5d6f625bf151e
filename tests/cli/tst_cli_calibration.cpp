// kvbe-cli calibration inspect | fit | export-pykvcache, as a script runs them.
#include "cli_run.h"

#include <QDir>
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

} // namespace

class TestCliCalibration : public QObject {
    Q_OBJECT
private slots:
    void inspectAFolderAsJson() {
        QTemporaryDir tmp;
        write(tmp.filePath("a-pykvcache.json"), R"({"model_name": "meta-llama/Llama-3.2-3B", "kv_dtype": "bfloat16",
            "break_even_ssd_tokens": 6057, "break_even_mem_tokens": 736, "safety_margin_tokens": 0})");
        write(tmp.filePath("b-qwen.json"), R"({"model_name": "Qwen/Qwen3-4B-Instruct-2507", "kv_dtype": "bfloat16",
            "break_even_ssd_tokens": 6203, "break_even_mem_tokens": 825})");
        write(tmp.filePath("c-pareto.csv"), kPareto);
        const auto r = cli({"calibration", "inspect", tmp.path(), "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = QJsonDocument::fromJson(r.out).object();
        const auto cals = o["calibrations"].toArray();
        QCOMPARE(cals.size(), 3);
        QCOMPARE(cals[0].toObject()["breakeven_prefix_tokens"].toObject()["ssd"].toDouble(), 6057.0);
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
        const auto r = cli({"calibration", "fit", tmp.filePath("p.csv"), "--out", tmp.filePath("fitted.json"),
                            "--adopt", tmp.filePath("adopted.kvbe.json"), "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = QJsonDocument::fromJson(r.out).object();
        const double u = o["utilisation"].toDouble();
        QVERIFY(u > 0 && u <= 1);
        QCOMPARE(o["residuals"].toArray().size(), 7);
        const auto ssd = o["tiers"].toObject()["ssd"].toObject();
        QVERIFY(ssd["bandwidth_Bps"].toDouble() > 0);
        // The adopted scenario carries the fitted utilisation; calc reads it.
        const auto calc = cli({"calc", "--scenario", tmp.filePath("adopted.kvbe.json"), "--lengths", "8k", "--format", "json"});
        QCOMPARE(calc.exitCode, 0);
        QVERIFY(std::abs(QJsonDocument::fromJson(calc.out).object()["gpu"].toObject()["utilisation"].toDouble() - u) < 1e-12);
        // The fitted calibration exports the same p* the fit reported.
        const auto ex = cli({"calibration", "export-pykvcache", "--calibration", tmp.filePath("fitted.json")});
        QCOMPARE(ex.exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(ex.out).object()["break_even_ssd_tokens"].toDouble(),
                 ssd["breakeven_prefix_tokens"].toDouble());
    }

    // Exported from a scenario, the thresholds are calc's break-even prefixes, and they read back.
    void exportFromScenarioReadsBack() {
        QTemporaryDir tmp;
        const QString scenario = QStringLiteral(KVBE_SOURCE_DIR "/resources/scenarios/default.kvbe.json");
        const auto ex = cli({"calibration", "export-pykvcache", "--scenario", scenario, "--out", tmp.filePath("pk.json"),
                             "--safety-margin", "64"});
        QCOMPARE(ex.exitCode, 0);
        const auto calc = cli({"calc", "--scenario", scenario, "--lengths", "8k", "--format", "json"});
        const auto tiers = QJsonDocument::fromJson(calc.out).object()["tiers"].toArray();
        const auto back = cli({"calibration", "inspect", tmp.filePath("pk.json"), "--format", "json"});
        QCOMPARE(back.exitCode, 0);
        const auto c = QJsonDocument::fromJson(back.out).object()["calibrations"].toArray()[0].toObject();
        QCOMPARE(c["format"].toString(), QString("py-kvcache-v1"));
        QCOMPARE(c["breakeven_prefix_tokens"].toObject()["mem"].toDouble(), tiers[0].toObject()["breakeven_prefix_tokens"].toDouble());
        QCOMPARE(c["breakeven_prefix_tokens"].toObject()["ssd"].toDouble(), tiers[1].toObject()["breakeven_prefix_tokens"].toDouble());
        QCOMPARE(c["safety_margin_tokens"].toDouble(), 64.0);
    }

    void exportUsage_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("fragment");
        QTest::newRow("neither source") << QStringList{"calibration", "export-pykvcache"} << 1 << "exactly one";
        QTest::newRow("unknown ssd tier")
            << QStringList{"calibration", "export-pykvcache", "--scenario", KVBE_SOURCE_DIR "/resources/scenarios/default.kvbe.json",
                           "--ssd-tier", "tape"} << 1 << "no tier is named 'tape'";
        QTest::newRow("negative margin") << QStringList{"calibration", "export-pykvcache", "--safety-margin", "-5"} << 2 << "";
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
