// The scenario flags (--scenario, --model, --gpu, ..., --tier, --amplification) as every command
// that evaluates a scenario takes them, and the one --tier grammar: every form, and every
// refusal as one sentence with exit code 1. Byte figures are worked out here: Llama 3.2 3B holds
// 28 layers × 8 KV heads × 128 × 2 (K, V) × 2 B = 114,688 B per token, Llama 3.3 70B
// 80 × 8 × 128 × 2 × 2 = 327,680 B; a Mooncake block is 512 tokens.
#include "cli_run.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

namespace {

using Run = kvbe::test::CliRun;
Run cli(const QStringList& args) {
    return kvbe::test::runCli(args);
}
QString hand() {
    return QStringLiteral(KVBE_FIXTURES "/traces/hand.jsonl");
}
QJsonDocument doc(const Run& r) {
    QJsonParseError e;
    const auto d = QJsonDocument::fromJson(r.out, &e);
    if (e.error != QJsonParseError::NoError)
        qWarning("not JSON: %s / %s", r.out.constData(), r.err.constData());
    return d;
}

const double k3bBlock = 512.0 * 114688;  // 58,720,256 B
const double k70bBlock = 512.0 * 327680; // 167,772,160 B
const QString k70b = QStringLiteral("meta-llama/Llama-3.3-70B-Instruct");

} // namespace

class TestCliScenarioFlags : public QObject {
    Q_OBJECT
  private slots:
    // calc's flags on the trace commands: the replay's blocks are the 70B's, and the scenario
    // the outputs name says what the flags changed.
    void traceCommandsTakeTheScenarioFlags_data() {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("inspect") << QStringList{"trace", "inspect", hand()};
        QTest::newRow("replay") << QStringList{"trace", "replay", hand(), "--gpu-cache", "2blocks"};
        QTest::newRow("sweep") << QStringList{
            "trace",    "sweep",    hand(), "--single-cache", "--capacities",
            "512:4096", "--points", "2",    "--gpu-cache",    "2blocks"};
    }
    void traceCommandsTakeTheScenarioFlags() {
        QFETCH(QStringList, args);
        const auto r = cli(args + QStringList{"--model", k70b, "--gpu", "h200", "--util", "40%",
                                              "--kv-dtype", "bf16", "--output", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto o = doc(r).object();
        QVERIFY2(o["scenario"].toString().contains("--model " + k70b + " --gpu h200 --util 40%"),
                 qPrintable(o["scenario"].toString()));
        if (args[1] == "replay")
            QCOMPARE(o["config"].toObject()["block_bytes"].toDouble(), k70bBlock);
    }

    // The same flags on calc, published and probe serving.
    void calcPublishedAndServingTakeThem() {
        auto r = cli({"calc",
                      "--model",
                      k70b,
                      "--gpu",
                      "h200",
                      "--tp",
                      "2",
                      "--shared-path",
                      "--params",
                      "70B",
                      "--flops",
                      "simple",
                      "--state-dtype",
                      "fp32",
                      "--peak-tflops",
                      "900",
                      "--lengths",
                      "8k",
                      "--format",
                      "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto o = doc(r).object();
        QCOMPARE(o["model"].toObject()["name"].toString(), k70b);
        QCOMPARE(o["gpu"].toObject()["peak_flops"].toDouble(), 900e12);

        // The built-in scenario (3B on an H100) matches the study's figures; on an H200 none do.
        r = cli({"published", "compare", "--format", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(!doc(r).array().isEmpty());
        r = cli({"published", "compare", "--gpu", "h200", "--format", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(doc(r).array().isEmpty());
        r = cli({"published", "fit", "--gpu", "h200"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("GPU 'h200'"), r.err.constData());

        // probe serving refuses a bad scenario flag before it sends anything.
        const QStringList serving{"probe",   "serving", "--endpoint", "http://127.0.0.1:9/v1",
                                  "--model", "m",       "--config",   "meta-llama/Llama-3.2-3B"};
        r = cli(serving + QStringList{"--tier", "tape"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("--tier tape: not a tier of the scenario"), r.err.constData());
        r = cli(serving + QStringList{"--util", "2"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("--util '2' is out of range"), r.err.constData());
    }

    // Every --tier form in a replay: the tiers it has, in order, and their capacities.
    void tierFormsInAReplay_data() {
        QTest::addColumn<QStringList>("tiers");
        QTest::addColumn<QStringList>("names");
        QTest::addColumn<QList<double>>("capacities"); // -1: unlimited
        QTest::newRow("no --tier: every scenario tier, unlimited")
            << QStringList{} << QStringList{"dram-pcie5", "nvme-gen5"} << QList<double>{-1, -1};
        QTest::newRow("KEY") << QStringList{"nvme-gen5"} << QStringList{"nvme-gen5"}
                             << QList<double>{-1};
        QTest::newRow("KEY=bytes, scenario order kept")
            << QStringList{"nvme-gen5=8TB", "dram-pcie5=512GiB"}
            << QStringList{"dram-pcie5", "nvme-gen5"}
            << QList<double>{512.0 * 1024 * 1024 * 1024, 8e12};
        QTest::newRow("KEY=blocks, tokens, 0")
            << QStringList{"dram-pcie5=4blocks", "nvme-gen5=0", "nvme-gen4=3e6tokens"}
            << QStringList{"dram-pcie5", "nvme-gen5", "nvme-gen4"}
            << QList<double>{4 * k3bBlock, 0, 3e6 * 114688};
        QTest::newRow("KEY×AMP=CAPACITY")
            << QStringList{"nvme-gen5×2=1TB"} << QStringList{"nvme-gen5"} << QList<double>{1e12};
        QTest::newRow("preset the scenario lacks is added")
            << QStringList{"net-100g=unlimited", "dram-pcie5=4blocks"}
            << QStringList{"dram-pcie5", "net-100g"} << QList<double>{4 * k3bBlock, -1};
        QTest::newRow("custom NAME=GBPS@MS×AMP:CAPACITY")
            << QStringList{"ssd=13.5@1x2:1GiB"} << QStringList{"ssd"}
            << QList<double>{1024.0 * 1024 * 1024};
        QTest::newRow("custom NAME=GB/s, unlimited")
            << QStringList{"ssd=500MB/s"} << QStringList{"ssd"} << QList<double>{-1};
    }
    void tierFormsInAReplay() {
        QFETCH(QStringList, tiers);
        QFETCH(QStringList, names);
        QFETCH(QList<double>, capacities);
        QStringList args{"trace", "replay", hand(), "--gpu-cache", "2blocks", "--output", "json"};
        for (const auto& t : tiers)
            args << "--tier" << t;
        const auto r = cli(args);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto got = doc(r).object()["tiers"].toArray();
        QCOMPARE(got.size(), names.size() + 1); // the GPU first
        for (int i = 0; i < names.size(); ++i) {
            const auto t = got[i + 1].toObject();
            QCOMPARE(t["name"].toString(), names[i]);
            if (capacities[i] < 0)
                QVERIFY(t["capacity_bytes"].isNull());
            else
                QCOMPARE(t["capacity_bytes"].toDouble(), capacities[i]);
        }
    }

    // The same grammar defines calc's tiers: bandwidth, fixed cost and amplification of a
    // custom tier; a preset key with a factor; --amplification on top.
    void tierFormsInCalc() {
        auto r = cli({"calc", "--lengths", "8k", "--format", "json", "--tier", "nvme-gen4",
                      "--tier", "ssd=13.5GB/s@2×2.5:8TB", "--tier", "dram-pcie5x3"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        auto tiers = doc(r).object()["tiers"].toArray();
        QCOMPARE(tiers.size(), 3);
        // The scenario's tiers keep its order (DRAM before NVMe); the custom one follows.
        QCOMPARE(tiers[0].toObject()["amplification"].toDouble(), 3.0);
        QCOMPARE(tiers[2].toObject()["name"].toString(), QString("ssd"));
        QCOMPARE(tiers[2].toObject()["bandwidth_Bps"].toDouble(), 13.5e9);
        QCOMPARE(tiers[2].toObject()["amplification"].toDouble(), 2.5);
        QCOMPARE(tiers[2].toObject()["effective_bandwidth_Bps"].toDouble(), 13.5e9 / 2.5);
        QCOMPARE(tiers[2].toObject()["t_fixed_s"].toDouble(), 2e-3);
        r = cli({"calc", "--lengths", "8k", "--format", "json", "--tier", "ssd=12",
                 "--amplification", "ssd=4"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        tiers = doc(r).object()["tiers"].toArray();
        QCOMPARE(tiers.size(), 1);
        QCOMPARE(tiers[0].toObject()["effective_bandwidth_Bps"].toDouble(), 3e9);
    }

    // sweep: the tier named without a capacity is swept, the others stay.
    void sweepSweepsTheTierWithoutACapacity() {
        const QStringList base{"trace",    "sweep",    hand(), "--capacities",
                               "512:4096", "--points", "2",    "--gpu-cache",
                               "2blocks",  "--output", "json"};
        auto r = cli(base + QStringList{"--tier", "nvme-gen5", "--with", "dram-pcie5=4blocks"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        auto o = doc(r).object();
        QCOMPARE(o["tier"].toString(), QString("nvme-gen5"));
        QCOMPARE(o["tiers"].toArray().size(), 3);
        r = cli(base + QStringList{"--tier", "nvme-gen5", "--tier", "dram-pcie5=4blocks"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(doc(r).object()["tier"].toString(), QString("nvme-gen5"));
        r = cli(base + QStringList{"--tier", "gpu", "--tier", "dram-pcie5=4blocks"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        o = doc(r).object();
        QCOMPARE(o["tier"].toString(), QString("gpu"));
        QCOMPARE(o["tiers"].toArray().size(), 2);
    }

    void refusalsAreOneSentence_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("fragment");
        const QStringList replay{"trace", "replay", hand()};
        const QStringList calc{"calc", "--lengths", "8k"};
        const QStringList sweep{"trace", "sweep", hand()};
        QTest::newRow("unknown tier") << replay + QStringList{"--tier", "tape=1TB"}
                                      << "--tier tape: not a tier of the scenario";
        QTest::newRow("unknown key in calc")
            << calc + QStringList{"--tier", "floppy"} << "nor a tier preset";
        QTest::newRow("neither capacity nor bandwidth")
            << replay + QStringList{"--tier", "dram-pcie5=lots"}
            << "--tier dram-pcie5: 'lots' is neither a capacity";
        QTest::newRow("custom bandwidth 0")
            << calc + QStringList{"--tier", "ssd=0@1"} << "--tier ssd: '0' is out of range";
        QTest::newRow("bandwidth unit") << calc + QStringList{"--tier", "ssd=13.5GiB/s"}
                                        << "--tier ssd: '13.5GiB/s' is neither a capacity";
        QTest::newRow("capacity after :")
            << replay + QStringList{"--tier", "ssd=13.5:lots"}
            << "--tier ssd: the capacity after ':': 'lots' is not a capacity";
        QTest::newRow("fixed cost")
            << calc + QStringList{"--tier", "ssd=13.5@-1"} << "--tier ssd: t_fixed -1 ms";
        QTest::newRow("fixed cost text")
            << calc + QStringList{"--tier", "ssd=13.5@soon"} << "after '@'";
        QTest::newRow("amplification") << calc + QStringList{"--tier", "nvme-gen5x0.9"}
                                       << "--tier nvme-gen5: amplification 0.9";
        QTest::newRow("empty name")
            << calc + QStringList{"--tier", "=5"} << "the name before '=' is empty";
        QTest::newRow("named twice")
            << replay + QStringList{"--tier", "dram-pcie5=1TB", "--tier", "dram-pcie5=2TB"}
            << "--tier dram-pcie5: named twice";
        QTest::newRow("two tiers to sweep")
            << sweep + QStringList{"--tier", "dram-pcie5", "--tier", "nvme-gen5"}
            << "name one tier to sweep";
        QTest::newRow("nothing to sweep")
            << sweep + QStringList{"--tier", "dram-pcie5=1TB"} << "name the one to sweep";
        QTest::newRow("gpu in calc") << calc + QStringList{"--gpu", "h900"} << "not a GPU preset";
        QTest::newRow("util in a trace")
            << QStringList{"trace", "inspect", hand(), "--util", "0"} << "--util '0'";
        QTest::newRow("peak in published")
            << QStringList{"published", "compare", "--peak-tflops", "-1"} << "--peak-tflops -1";
        QTest::newRow("params in a trace")
            << replay + QStringList{"--params", "70Q"} << "--params '70Q' has an unknown unit";
        QTest::newRow("amplification flag")
            << replay + QStringList{"--amplification", "tape=2"} << "no tier named 'tape'";
        QTest::newRow("tp in a trace")
            << QStringList{"trace", "inspect", hand(), "--tp", "3"} << "tensor";
    }
    void refusalsAreOneSentence() {
        QFETCH(QStringList, args);
        QFETCH(QString, fragment);
        const auto r = cli(args);
        QCOMPARE(r.status, QProcess::NormalExit);
        QCOMPARE(r.exitCode, 1);
        const QString err = QString::fromUtf8(r.err);
        QVERIFY2(err.contains(fragment), qPrintable(err));
        QCOMPARE(err.count('\n'), 1);
        QVERIFY(r.out.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestCliScenarioFlags)
#include "tst_cli_scenario_flags.moc"
