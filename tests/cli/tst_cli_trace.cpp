// kvbe-cli trace inspect|replay|sweep as a script sees them: JSON contract, exit codes, messages.
// Expected numbers are counted by hand on the small fixtures (tests/fixtures/traces/).
#include "cli_run.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

namespace {

using Run = kvbe::test::CliRun;
Run cli(const QStringList& args) {
    return kvbe::test::runCli(args);
}
QString fixture(const char* name) {
    return QStringLiteral(KVBE_FIXTURES "/traces/") + name;
}

QJsonObject json(const Run& r) {
    QJsonParseError e;
    const auto doc = QJsonDocument::fromJson(r.out, &e);
    if (e.error != QJsonParseError::NoError)
        qWarning("not JSON: %s / %s", r.out.constData(), r.err.constData());
    return doc.object();
}

bool close(double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b));
}

} // namespace

class TestCliTrace : public QObject {
    Q_OBJECT
  private slots:
    // hand.jsonl with a 2-block GPU and a 4-block DRAM tier: r3 finds blocks 1-2 in DRAM, r4
    // finds 1 in DRAM and 2, 5 on the GPU (tst_trace works the states out step by step).
    void replayCountsHitsPerTierByHand() {
        const auto r = cli({"trace", "replay", fixture("hand.jsonl"), "--gpu-cache", "2blocks",
                            "--tier", "dram-pcie5=4blocks", "--output", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = json(r);
        QCOMPARE(o["kvbe_trace_replay"].toInt(), 1);
        QCOMPARE(o["requests"].toInt(), 4);
        const auto tiers = o["tiers"].toArray();
        QCOMPARE(tiers.size(), 2);
        QCOMPARE(tiers[0].toObject()["name"].toString(), QString("gpu"));
        QCOMPARE(tiers[1].toObject()["name"].toString(), QString("dram-pcie5"));
        const double total = 1024 + 1024 + 1500 + 2000;
        QVERIFY(close(tiers[0].toObject()["hits"].toObject()["token_weighted"].toDouble(),
                      1024 / total));
        QVERIFY(close(tiers[1].toObject()["hits"].toObject()["token_weighted"].toDouble(),
                      1536 / total));
        QVERIFY(
            close(tiers[1].toObject()["hits"].toObject()["block_weighted"].toDouble(), 3.0 / 11));
        QCOMPARE(tiers[1].toObject()["blocks_written"].toInt(), 6);
        const auto rules = o["rules"].toArray();
        QCOMPARE(rules.size(), 5);
        QStringList names;
        for (const auto& v : rules)
            names << v.toObject()["rule"].toString();
        QCOMPARE(names, QStringList({"none", "gpu-only", "always", "breakeven", "optimal"}));
        const double optimal = rules[4].toObject()["ttft_s"].toObject()["mean"].toDouble();
        QVERIFY(optimal <= rules[2].toObject()["ttft_s"].toObject()["mean"].toDouble());
        QVERIFY(optimal <= rules[1].toObject()["ttft_s"].toObject()["mean"].toDouble());
    }

    // The same with DRAM written at 1 MB/s (--tier-write): a 58.7 MB block takes a minute, so r3
    // and r4 find block 1 in DRAM still being written (two late lookups) and hit nothing; with
    // writes that keep up they would hit as above.
    void replaySlowWritesLoseHits() {
        const auto r = cli({"trace", "replay", fixture("hand.jsonl"), "--gpu-cache", "2blocks",
                            "--tier", "dram-pcie5=4blocks", "--tier-write", "dram-pcie5=0.001",
                            "--write-buffer", "1GB", "--output", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = json(r);
        QCOMPARE(o["config"].toObject()["write_queue"].toBool(), true);
        const auto dram = o["tiers"].toArray()[1].toObject();
        QCOMPARE(dram["tier_write_Bps"].toDouble(), 1e6);
        QCOMPARE(dram["write_buffer_bytes"].toDouble(), 1e9);
        QCOMPARE(dram["lookups_late"].toInt(), 2);
        QCOMPARE(dram["writes_dropped"].toInt(), 0);
        QCOMPARE(o["hits_any_tier"].toObject()["token_weighted"].toDouble(), 0.0);
        const double total = 1024 + 1024 + 1500 + 2000;
        QVERIFY(close(o["hits_any_tier_if_writes_kept_up"].toObject()["token_weighted"].toDouble(),
                      2560 / total));

        const auto free = cli({"trace", "replay", fixture("hand.jsonl"), "--gpu-cache", "2blocks",
                               "--tier", "dram-pcie5=4blocks", "--tier-write", "dram-pcie5=0.001",
                               "--no-write-queue", "--instances", "1", "--output", "json"});
        QCOMPARE(free.exitCode, 0);
        const auto f = json(free);
        QVERIFY(close(f["hits_any_tier"].toObject()["token_weighted"].toDouble(), 2560 / total));
        QCOMPARE(f["config"].toObject()["instances"].toInt(), 1);
        QVERIFY(f["rules"].toArray()[0].toObject().contains("mean_wait_s"));
    }

    // A scenario tier's own write bandwidth is the one the replay writes at (as calc reports
    // it), not its preset's: DRAM written at 1 MB/s from the scenario file loses the hits that
    // --tier-write dram-pcie5=0.001 loses above.
    void replayTakesTheScenarioTiersWriteBandwidth() {
        QTemporaryDir tmp;
        QFile f(tmp.filePath("slow.kvbe.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            R"({"kvbe_scenario": 1, "tiers": [{"preset": "dram-pcie5", "write_GBps": 0.001}]})");
        f.close();
        const auto r = cli({"trace", "replay", fixture("hand.jsonl"), "--scenario", f.fileName(),
                            "--gpu-cache", "2blocks", "--tier", "dram-pcie5=4blocks",
                            "--write-buffer", "1GB", "--output", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto dram = json(r)["tiers"].toArray()[1].toObject();
        QCOMPARE(dram["tier_write_Bps"].toDouble(), 1e6);
        QCOMPARE(dram["lookups_late"].toInt(), 2);
        QCOMPARE(dram["hits"].toObject()["token_weighted"].toDouble(), 0.0);
    }

    // --shared-link: the tier's JSON says so, and its loads delay its writes (never fewer late
    // lookups than on separate links; the hand-computed case is in tst_trace).
    void replaySharedLinkIsReported() {
        const QStringList base{"trace",
                               "replay",
                               fixture("hand.jsonl"),
                               "--gpu-cache",
                               "2blocks",
                               "--tier",
                               "dram-pcie5=4blocks",
                               "--tier-write",
                               "dram-pcie5=0.001",
                               "--output",
                               "json"};
        const auto sep = cli(base);
        const auto shared = cli(base + QStringList{"--shared-link", "dram-pcie5"});
        QCOMPARE(sep.exitCode, 0);
        QCOMPARE(shared.exitCode, 0);
        const auto a = json(sep)["tiers"].toArray()[1].toObject();
        const auto b = json(shared)["tiers"].toArray()[1].toObject();
        QCOMPARE(a["shared_link"].toBool(), false);
        QCOMPARE(b["shared_link"].toBool(), true);
        QVERIFY(b["lookups_late"].toInt() >= a["lookups_late"].toInt());
    }

    // Numbers in flags go through core's parsers: a write bandwidth with its unit (500MB/s is
    // 0.5 GB/s) and a capacity grid in token counts (10k = 10,240).
    void flagsTakeUnitsAsEverywhere() {
        const auto r =
            cli({"trace", "replay", fixture("hand.jsonl"), "--gpu-cache", "2blocks", "--tier",
                 "dram-pcie5=4blocks", "--tier-write", "dram-pcie5=500MB/s", "--output", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(json(r)["tiers"].toArray()[1].toObject()["tier_write_Bps"].toDouble(), 0.5e9);
        const auto s = cli({"trace", "sweep", fixture("hand.jsonl"), "--single-cache",
                            "--capacities", "1k:4k", "--points", "3", "--output", "json"});
        QVERIFY2(s.exitCode == 0, s.err.constData());
        const auto pts = json(s)["points"].toArray();
        QCOMPARE(pts.size(), 3);
        QVERIFY(close(pts[0].toObject()["capacity_tokens"].toDouble(), 1024));
        QVERIFY(close(pts[2].toObject()["capacity_tokens"].toDouble(), 4096));
    }

    void replayPrintsATableAndASentence() {
        const auto r = cli({"trace", "replay", fixture("hand.jsonl"), "--gpu-cache", "2blocks",
                            "--tier", "dram-pcie5=4blocks"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("of requests are faster than with GPU-only caching"),
                 r.out.constData());
        QVERIFY(r.out.contains("optimal"));
        const auto c = cli({"trace", "replay", fixture("hand.jsonl"), "--gpu-cache", "2blocks",
                            "--output", "csv"});
        QCOMPARE(c.exitCode, 0);
        QVERIFY(c.out.startsWith("section,name,metric,value\n"));
    }

    // Unlimited capacity on the Bailian file: 32 of 40 tokens for request 2, all 33 of
    // request 4: 65 of 169 tokens.
    void inspectChainsBailianIds() {
        const auto r =
            cli({"trace", "inspect", fixture("bailian-chain.jsonl"), "--output", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = json(r);
        QCOMPARE(o["trace"].toObject()["format"].toString(), QString("bailian"));
        QCOMPARE(o["trace"].toObject()["block_tokens"].toInt(), 16);
        QVERIFY(close(o["unlimited_capacity_hits"].toObject()["token_weighted"].toDouble(),
                      65.0 / 169));
        QCOMPARE(o["tiers"].toArray().size(), 2); // the default scenario's
    }

    // A folder of kv-cache-tester sessions is one trace, and one session file is one too; the
    // figures are tst_trace_kv_cache_tester's (a Python count over the same files).
    void kvCacheTesterFolderAndFile() {
        const QString dir = fixture("kv-cache-tester");
        const auto i = cli({"trace", "inspect", dir, "--output", "json"});
        QCOMPARE(i.exitCode, 0);
        const auto o = json(i);
        QCOMPARE(o["trace"].toObject()["format"].toString(), QString("kv-cache-tester"));
        QCOMPARE(o["trace"].toObject()["requests"].toInt(), 44);
        QCOMPARE(o["trace"].toObject()["distinct_blocks"].toInt(), 4808);
        QVERIFY(close(o["unlimited_capacity_hits"].toObject()["token_weighted"].toDouble(),
                      0.8727914612499218));
        const auto r = cli({"trace", "replay", dir, "--output", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto p = json(r);
        QCOMPARE(p["requests"].toInt(), 44);
        QCOMPARE(p["tokens"].toDouble(), 2429208.0);
        QCOMPARE(p["duration_s"].toDouble(), 3075.0);
        const auto f = cli({"trace", "replay", dir + "/trace_0291.json", "--output", "json"});
        QCOMPARE(f.exitCode, 0);
        QCOMPARE(json(f)["requests"].toInt(), 32);
        QCOMPARE(json(f)["tokens"].toDouble(), 2254119.0);
        // A folder of one-file formats is refused, naming it.
        const auto m = cli({"trace", "inspect", QStringLiteral(KVBE_FIXTURES "/calibration")});
        QCOMPARE(m.exitCode, 1);
        QVERIFY2(m.err.contains("calibration"), m.err.constData());
    }

    void azureHasLengthsButNoReplay() {
        const auto i = cli({"trace", "inspect", fixture("azure.csv"), "--output", "json"});
        QCOMPARE(i.exitCode, 0);
        const auto o = json(i);
        QCOMPARE(o["trace"].toObject()["format"].toString(), QString("azure"));
        QVERIFY(o["unlimited_capacity_hits"].isNull());
        QCOMPARE(o["input_tokens"].toObject()["max"].toDouble(), 879.0);
        const auto r = cli({"trace", "replay", fixture("azure.csv")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("has no block ids"), r.err.constData());
        QVERIFY(r.out.isEmpty());
    }

    void kvbeCsvInspects() {
        const auto r = cli({"trace", "inspect", fixture("kvbe.csv"), "--output", "json"});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(json(r)["trace"].toObject()["requests"].toInt(), 3);
    }

    // The single-cache curve by hand: 1 or 2 blocks hold nothing that is reused in time; 4 and
    // 8 blocks give r3 two blocks and r4 three: 2,560 of 5,548 tokens.
    void sweepSingleCacheByHand() {
        const auto r = cli({"trace", "sweep", fixture("hand.jsonl"), "--single-cache",
                            "--capacities", "512:4096", "--points", "4", "--output", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto pts = json(r)["points"].toArray();
        QCOMPARE(pts.size(), 4);
        const double expect[4] = {0, 0, 2560.0 / 5548, 2560.0 / 5548};
        for (int g = 0; g < 4; ++g)
            QVERIFY2(
                close(pts[g].toObject()["hits_any_tier"].toObject()["token_weighted"].toDouble(),
                      expect[g]),
                qPrintable(QString::number(g)));
    }

    // Llama 3.3 70B (70.55 B parameters, BF16: 141.1 GB) on one H200 (141 GB, 90 % of it
    // 126.9 GB): no room for KV. The sentence says which tensor-parallel sizes hold the weights and
    // what they leave for KV: 2 GPUs 0.9 · 282 − 141.11 = 112.69 GB, 4 GPUs 366.49 GB.
    void bigModelOnOneGpuSaysWhatFits() {
        QTemporaryDir dir;
        const QString scenario = dir.filePath(QStringLiteral("big.kvbe.json"));
        QFile f(scenario);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"kvbe_scenario": 1, "model": "meta-llama/Llama-3.3-70B-Instruct",
                    "gpu": "h200", "tiers": [{"preset": "dram-pcie5"}]})");
        f.close();
        const auto r = cli({"trace", "replay", fixture("hand.jsonl"), "--scenario", scenario});
        QCOMPARE(r.exitCode, 1);
        const QString err = QString::fromUtf8(r.err);
        for (const char* part :
             {"do not fit in 90 % of 1 × NVIDIA H200 SXM 141GB (126.90 GB)",
              "with tensor parallel 2 they leave 112.69 GB for KV, with 4 366.49 GB",
              "--gpu-cache"})
            QVERIFY2(err.contains(QString::fromUtf8(part)), qPrintable(err));
    }

    // The same 70B served with FP8 weights (--weights fp8, or weight_dtype in the scenario):
    // the decoder's 68.45 B weights take a byte each, the embeddings and untied lm_head
    // (2 · 128256 · 8192) stay in BF16, so 90 % of 141 GB leaves 54.24 GB for KV.
    void fp8WeightsLeaveRoomForKv() {
        const double decoder =
            80 * (8192.0 * 8192 * 2 + 8192.0 * 1024 * 2 + 3.0 * 8192 * 28672 + 2 * 8192) + 8192;
        const double left = 0.9 * 141e9 - (decoder + 2 * 2 * 128256.0 * 8192);
        const auto r = cli({"trace", "replay", fixture("hand.jsonl"), "--model",
                            "meta-llama/Llama-3.3-70B-Instruct", "--gpu", "h200", "--weights",
                            "fp8", "--tier", "dram-pcie5", "--output", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto gpu = json(r)["tiers"].toArray()[0].toObject();
        QCOMPARE(gpu["name"].toString(), QStringLiteral("gpu"));
        QVERIFY2(std::abs(gpu["capacity_bytes"].toDouble() - left) <= 1e-9 * left,
                 qPrintable(QString::number(gpu["capacity_bytes"].toDouble(), 'f', 0)));
        const auto bad = cli({"trace", "replay", fixture("hand.jsonl"), "--weights", "int3"});
        QVERIFY(bad.exitCode != 0);
        QVERIFY2(QString::fromUtf8(bad.err).contains(QLatin1String("--weights")),
                 bad.err.constData());
    }

    // The reads asked of a tier, by hand: on hand.jsonl (arrivals 0, 1, 2, 3 s) r3 finds 1,024
    // tokens in DRAM and r4 512; each token of Llama 3.2 3B is 28 layers x 8 KV heads x 128 x 2
    // (K, V) x 2 bytes of KV, asked over the trace's 3 s. Without prefill servers no link is
    // queued: no rule's read busy share, and the sentence says so.
    void replayReportsTheReadsAskedByHand() {
        const auto r = cli({"trace", "replay", fixture("hand.jsonl"), "--gpu-cache", "2blocks",
                            "--tier", "dram-pcie5=4blocks", "--output", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = json(r);
        QCOMPARE(o["link_bin_s"].toDouble(), 60.0);
        const auto dram = o["tiers"].toArray()[1].toObject();
        QCOMPARE(dram["read_Bps"].toDouble(), 55e9);
        const double bytes = 1536.0 * 28 * 8 * 128 * 2 * 2;
        const auto asked = dram["reads_asked"].toObject();
        QVERIFY(close(asked["mean_Bps"].toDouble(), bytes / 3));
        QVERIFY(close(asked["busiest_minute_Bps"].toDouble(), bytes / 3)); // the 3 s it covers
        QCOMPARE(asked["minutes"].toInt(), 1);
        QCOMPARE(asked["minutes_over_bandwidth"].toInt(), 0);
        for (const auto& rule : o["rules"].toArray()) {
            const auto use = rule.toObject()["tiers"].toArray()[0].toObject();
            QCOMPARE(use["name"].toString(), QString("dram-pcie5"));
            QVERIFY(close(use["hit_tokens_offered"].toDouble(), 1536));
            QVERIFY(use["read_busy"].isNull());
        }
        const auto sat = o["saturation"].toObject();
        QCOMPARE(sat["rule"].toString(), QString("optimal"));
        QVERIFY(!sat["tiers"].toArray()[0].toObject()["saturated"].toBool());
        QVERIFY2(sat["sentence"].toString().startsWith("No tier is saturated"),
                 qPrintable(sat["sentence"].toString()));
    }

    // The header names the model and GPU in use, not the scenario file's, when flags chose
    // others (it read "Llama 3.2 3B on an H100 SXM … (--model … --gpu h200)").
    void headerNamesTheModelInUse() {
        const auto r =
            cli({"trace", "replay", fixture("hand.jsonl"), "--model",
                 "meta-llama/Llama-3.3-70B-Instruct", "--gpu", "h200", "--gpu-cache", "40GiB"});
        QCOMPARE(r.exitCode, 0);
        const QString head = QString::fromUtf8(r.out).section('\n', 1, 1);
        QVERIFY2(head.startsWith(QStringLiteral(
                     "scenario  meta-llama/Llama-3.3-70B-Instruct on NVIDIA H200 SXM 141GB (")),
                 qPrintable(head));
    }

    // --router compare: every router, in the order routerNames gives, each row the figures of
    // trace replay with that router on the same fleet (one computation).
    void routerCompareIsEachRoutersReplay() {
        const QString trace = fixture("mooncake-conversation.jsonl");
        const QStringList fleet{"trace",      "replay", trace,
                                "--servers",  "8",      "--gpu-cache",
                                "4000blocks", "--tier", "dram-pcie5=512GiB",
                                "--output",   "json"};
        const auto all = cli(fleet + QStringList{"--router", "compare"});
        QCOMPARE(all.exitCode, 0);
        const auto rows = json(all)["routers"].toArray();
        QCOMPARE(rows.size(), 7);
        QCOMPARE(rows[0].toObject()["router"].toString(), QString("round-robin"));
        const auto one = cli(fleet + QStringList{"--router", "sglang"});
        QCOMPARE(one.exitCode, 0);
        const auto replay = json(one);
        QCOMPARE(replay["fleet"].toObject()["router"].toString(), QString("sglang"));
        const auto row = rows[4].toObject();
        QCOMPARE(row["router"].toString(), QString("sglang"));
        QCOMPARE(row["hits_any_tier"].toObject()["token_weighted"].toDouble(),
                 replay["hits_any_tier"].toObject()["token_weighted"].toDouble());
        QCOMPARE(row["fleet"].toObject()["requests_per_server"].toArray(),
                 replay["fleet"].toObject()["requests_per_server"].toArray());
    }

    // trace generate: the same bytes for the same seed, a trace the replay reads, with prefill
    // servers each rule's read busy share and the saturation sentence; bad flags a sentence.
    void generateWritesATraceTheReplayReads() {
        QTemporaryDir dir;
        const QString a = dir.filePath("a.jsonl"), b = dir.filePath("b.jsonl");
        for (const QString& f : {a, b}) {
            const auto g = cli({"trace", "generate", "--requests", "3000", "--seed", "5", "--rate",
                                "40", "--out", f});
            QCOMPARE(g.exitCode, 0);
            QVERIFY2(g.out.contains("wrote 3,000 requests"), g.out.constData());
        }
        QFile fa(a), fb(b);
        QVERIFY(fa.open(QIODevice::ReadOnly) && fb.open(QIODevice::ReadOnly));
        const QByteArray bytes = fa.readAll();
        QCOMPARE(bytes.count('\n'), 3000);
        QVERIFY(bytes == fb.readAll());
        const auto r = cli({"trace", "replay", a, "--tier", "nvme-gen5=8TB", "--instances", "4",
                            "--output", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = json(r);
        QCOMPARE(o["requests"].toInt(), 3000);
        const auto opt = o["rules"].toArray()[4].toObject();
        QCOMPARE(opt["rule"].toString(), QString("optimal"));
        const auto busy = opt["tiers"].toArray()[0].toObject()["read_busy"].toObject();
        QVERIFY(busy["mean_share"].toDouble() > 0 && busy["busiest_minute_share"].toDouble() <= 1);
        QVERIFY(!o["saturation"].toObject()["sentence"].toString().isEmpty());

        const auto none = cli({"trace", "generate", "--requests", "0", "--out", a});
        QVERIFY(none.exitCode != 0);
        QVERIFY2(none.err.contains("requests: expected 1 or more"), none.err.constData());
        const auto nowhere = cli({"trace", "generate", "--requests", "10", "--out",
                                  dir.filePath("no/such/dir/t.jsonl")});
        QVERIFY(nowhere.exitCode != 0);
        QVERIFY2(nowhere.err.contains("cannot be written"), nowhere.err.constData());
    }

    void badOptionsExitWithASentence_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("fragment");
        const QString hand = fixture("hand.jsonl");
        QTest::newRow("unknown tier") << QStringList{"trace", "replay", hand, "--tier", "tape=1TB"}
                                      << 1 << "--tier tape: not a tier of the scenario";
        QTest::newRow("unknown router")
            << QStringList{"trace", "replay", hand, "--servers", "4", "--router", "nginx"} << 1
            << "--router 'nginx': unknown router 'nginx'; expected one of round-robin, random, "
               "least-loaded, session, sglang, llm-d, dynamo (or compare)";
        QTest::newRow("unknown router key")
            << QStringList{"trace", "replay", hand, "--servers", "4", "--router", "sglang:foo=1"}
            << 1 << "sglang has no parameter 'foo'; it takes cache_threshold";
        QTest::newRow("pooled names no tier")
            << QStringList{"trace", "replay", hand, "--servers", "4", "--pooled", "tape"} << 1
            << "--pooled 'tape' names no tier of the replay; expected one of";
        QTest::newRow("pooled without a fleet")
            << QStringList{"trace", "replay", hand, "--pooled", "nvme-gen5"} << 1
            << "--pooled: a pooled tier needs a fleet: expected 2 or more servers (--servers)";
        QTest::newRow("compare without a fleet")
            << QStringList{"trace", "replay", hand, "--router", "compare"} << 1
            << "--router compare: expected a fleet to route to, --servers 2 or more";
        QTest::newRow("bad capacity")
            << QStringList{"trace", "replay", hand, "--tier", "dram-pcie5=lots"} << 1
            << "--tier dram-pcie5";
        QTest::newRow("unknown write tier")
            << QStringList{"trace", "replay", hand, "--tier-write", "tape=2"} << 1
            << "--tier-write tape: not a tier of this replay";
        QTest::newRow("bad write bandwidth")
            << QStringList{"trace", "replay", hand, "--tier-write", "dram-pcie5=fast"} << 1
            << "--tier-write dram-pcie5: 'fast' is not a bandwidth";
        QTest::newRow("unknown shared link")
            << QStringList{"trace", "replay", hand, "--shared-link", "tape"} << 1
            << "--shared-link tape: not a tier of this replay";
        QTest::newRow("bad write buffer")
            << QStringList{"trace", "replay", hand, "--write-buffer", "lots"} << 1
            << "--write-buffer 'lots'";
        QTest::newRow("sweep without tier")
            << QStringList{"trace", "sweep", hand} << 1 << "--tier: name the tier to sweep";
        QTest::newRow("bad grid") << QStringList{"trace",          "sweep",        hand,
                                                 "--single-cache", "--capacities", "9:1"}
                                  << 1 << "--capacities '9:1'";
        QTest::newRow("cascade sweep")
            << QStringList{"trace", "sweep", hand, "--single-cache", "--placement", "cascade"} << 1
            << "needs LRU with write-through";
        QTest::newRow("missing file") << QStringList{"trace", "inspect", "/nonexistent/t.jsonl"}
                                      << 1 << "/nonexistent/t.jsonl: cannot read the trace";
        QTest::newRow("bad format")
            << QStringList{"trace", "inspect", hand, "--format", "parquet"} << 2 << "parquet";
        QTest::newRow("wrong format forced")
            << QStringList{"trace", "inspect", hand, "--format", "azure"} << 1
            << "hand.jsonl:1: expected the Azure header";
    }
    void badOptionsExitWithASentence() {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, fragment);
        const auto r = cli(args);
        QCOMPARE(r.exitCode, code);
        QVERIFY2(QString::fromUtf8(r.err).contains(fragment), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliTrace)
#include "tst_cli_trace.moc"
