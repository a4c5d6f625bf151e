// kvbe-cli trace capacity, and the load options of trace replay (--rate-scale, --duration-cap),
// as a script sees them: answers worked out in closed form on generated traces, the JSON
// contract, the table's sentences, and one sentence with exit code 1 for each bad input.
#include "cli_run.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>

namespace {

using kvbe::test::runCli;
const QString kTraces = QStringLiteral(KVBE_FIXTURES "/traces/");
QJsonObject json(const kvbe::test::CliRun& r) {
    return QJsonDocument::fromJson(r.out).object();
}
bool close(double a, double b, double rel = 1e-9) {
    return std::abs(a - b) <= rel * std::max(1.0, std::abs(b));
}

// n Mooncake requests, one every `gapMs` milliseconds, each with 8 blocks of its own (4,096
// tokens; no reuse).
QString writeFixedRate(const QTemporaryDir& dir, int n, int gapMs) {
    const QString path = dir.filePath("fixed.jsonl");
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    int id = 0;
    for (int i = 0; i < n; ++i) {
        QStringList ids;
        for (int j = 0; j < 8; ++j)
            ids << QString::number(id++);
        f.write(QString("{\"timestamp\": %1, \"input_length\": 4096, \"output_length\": 1, "
                        "\"hash_ids\": [%2]}\n")
                    .arg(i * gapMs)
                    .arg(ids.join(", "))
                    .toUtf8());
    }
    return path;
}

// The prefill time of one request of the fixed-rate trace: its TTFT without servers (every rule
// recomputes everything).
double servicePrefill(const QString& path) {
    const auto r = runCli({"trace", "replay", path, "--output", "json"});
    return json(r)["rules"].toArray()[1].toObject()["ttft_s"].toObject()["mean"].toDouble();
}

void expectBadInput(const QStringList& args, const QString& says) {
    const auto r = runCli(args);
    QVERIFY2(r.exitCode == 1, qPrintable(QString("exit %1: %2").arg(r.exitCode).arg(r.err)));
    const QString err = QString::fromUtf8(r.err).trimmed();
    QVERIFY2(err.contains(says), qPrintable(err));
    QVERIFY2(!err.contains('\n'), qPrintable("more than one line: " + err));
    QVERIFY(r.out.isEmpty());
}

} // namespace

class TestCliTraceCapacity : public QObject {
    Q_OBJECT
  private slots:
    // --rate-scale S on one server: request i waits i·(s − T/S) (D/D/1), so the p99 of N
    // requests is r·(s − T/S) + s at rank r = 0.99·(N − 1), and the trace spans (N − 1)·T/S.
    void replayRateScaleIsTheClosedForm() {
        QTemporaryDir dir;
        const int N = 60, T = 1000;
        const QString path = writeFixedRate(dir, N, T);
        const double s = servicePrefill(path);
        QVERIFY(s > 0.01 && s < 1);
        const double S = 1.25 / s; // a request every 0.8·s
        const auto r = runCli({"trace", "replay", path, "--instances", "1", "--rate-scale",
                               QString::number(S, 'g', 17), "--output", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = json(r);
        const double gap = 1.0 / S, rank = 0.99 * (N - 1);
        QVERIFY(close(o["duration_s"].toDouble(), (N - 1) * gap));
        QVERIFY(close(o["config"].toObject()["rate_scale"].toDouble(), S));
        const auto gpuOnly = o["rules"].toArray()[1].toObject()["ttft_s"].toObject();
        QVERIFY(close(gpuOnly["p99"].toDouble(), rank * (s - gap) + s));
    }

    // --duration-cap takes the requests arriving within the first 1.5 s of hand.jsonl: two.
    void replayDurationCapTakesAPrefix() {
        const auto r = runCli({"trace", "replay", kTraces + "hand.jsonl", "--duration-cap",
                               "1500ms", "--output", "json"});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(json(r)["requests"].toInt(), 2);
    }

    // --instances 1: the largest load whose p99 is within 3·s, r·(s − T/S) + s = X, i.e.
    // S = T / (s − (X − s)/r); found to the search's precision (0.1 %), for every rule.
    void loadHeldOnOneServerIsTheClosedForm() {
        QTemporaryDir dir;
        const int N = 101;
        const QString path = writeFixedRate(dir, N, 1000);
        const double s = servicePrefill(path);
        const double X = std::round(3 * s * 1e3); // ms
        const auto r = runCli({"trace", "capacity", path, "--slo", QString("p99=%1ms").arg(X),
                               "--instances", "1", "--output", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto o = json(r);
        QCOMPARE(o["kvbe_trace_capacity"].toInt(), 1);
        QCOMPARE(o["target"].toObject()["statistic"].toString(), QString("p99"));
        QVERIFY(o["ttft_includes"].toString().contains("decode is not modelled"));
        QVERIFY(!o.contains("servers_needed"));
        const double rank = 0.99 * (N - 1);
        const double expected = 1.0 / (s - (X / 1e3 - s) / rank);
        const auto held = o["load_held"].toObject();
        QCOMPARE(held["instances"].toInt(), 1);
        const auto rules = held["rules"].toArray();
        QCOMPARE(rules.size(), 4);
        for (const auto& v : rules) {
            const auto h = v.toObject();
            QCOMPARE(h["outcome"].toString(), QString("found"));
            const double lo = h["rate_scale"].toDouble(), hi = h["fails_at_rate_scale"].toDouble();
            QVERIFY2(lo <= expected * (1 + 1e-9) && expected <= hi * (1 + 1e-9),
                     qPrintable(QString("%1 .. %2, expected %3").arg(lo).arg(hi).arg(expected)));
            QVERIFY(hi <= lo * 1.0011);
            QCOMPARE(h["rises"].toBool(), true);
            QVERIFY(close(h["vs_gpu_only"].toDouble(), 1));
        }
        QCOMPARE(held["curve_statistic_s"].toObject()["rate_scale"].toArray().size(), 25);
    }

    // At S = 3/s (a request every s/3) D/D/n gives request i = q·n + m a wait of
    // q·(s − n·s/3) for n < 3 and none from 3 servers on: p90 ≤ 1.5·s needs 3.
    void serversNeededIsTheClosedForm() {
        QTemporaryDir dir;
        const int N = 100;
        const QString path = writeFixedRate(dir, N, 1000);
        const double s = servicePrefill(path);
        const double S = 3 / s * 0.999; // just under three prefills per second-of-s
        auto p90 = [&](int n) {
            std::vector<double> t;
            for (int i = 0; i < N; ++i)
                t.push_back(std::floor(double(i) / n) * std::max(0.0, s - n / S) + s);
            std::sort(t.begin(), t.end());
            const double rank = 0.9 * (N - 1);
            const auto i = std::size_t(rank);
            return t[i] + (rank - double(i)) * (t[i + 1] - t[i]);
        };
        QVERIFY(p90(2) > 1.5 * s && p90(3) <= 1.5 * s);
        const auto r = runCli({"trace", "capacity", path, "--slo",
                               QString("p90=%1ms").arg(1.5 * s * 1e3, 0, 'f', 6), "--rate-scale",
                               QString::number(S, 'g', 17), "--output", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto need = json(r)["servers_needed"].toObject();
        QVERIFY(close(need["rate_scale"].toDouble(), S));
        for (const auto& v : need["rules"].toArray()) {
            const auto rs = v.toObject();
            QCOMPARE(rs["servers"].toInt(), 3);
            QVERIFY(close(rs["statistic_s"].toDouble(), p90(3)));
            QVERIFY(close(rs["statistic_one_fewer_s"].toDouble(), p90(2)));
        }
        QVERIFY(need["sentence"].toString().contains("GPU-only caching needs 3 servers"));
    }

    // A fleet's servers search: each count's GPU hit ratio is trace replay's for that many
    // servers behind the router, and the sentence says how it moves up to GPU-only's count.
    void aFleetsHitRatioMovesWithItsServers() {
        const QString trace = kTraces + "mooncake-conversation.jsonl";
        const auto r = runCli({"trace", "capacity", trace, "--slo", "p99=5s", "--router", "sglang",
                               "--scenario", "illustrative", "--output", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto need = json(r)["servers_needed"].toObject();
        const auto hits = need["fleet_gpu_hits"].toArray();
        QVERIFY(hits.size() >= 2);
        int gpuOnly = 0;
        for (const auto& v : need["rules"].toArray())
            if (v.toObject()["rule"].toString() == QLatin1String("gpu-only"))
                gpuOnly = v.toObject()["servers"].toInt();
        QVERIFY(gpuOnly > 1);
        double first = -1, atNeed = -1;
        for (const auto& v : hits) {
            const int n = v.toObject()["servers"].toInt();
            const double h = v.toObject()["gpu_token_weighted"].toDouble();
            if (n != 1 && n != gpuOnly) continue;
            const auto replay =
                runCli({"trace", "replay", trace, "--servers", QString::number(n), "--router",
                        "sglang", "--scenario", "illustrative", "--output", "json"});
            QCOMPARE(replay.exitCode, 0);
            const double expected = json(replay)["tiers"]
                                        .toArray()[0]
                                        .toObject()["hits"]
                                        .toObject()["token_weighted"]
                                        .toDouble();
            QVERIFY2(close(h, expected),
                     qPrintable(QString("%1 servers: %2, replay %3").arg(n).arg(h).arg(expected)));
            (n == 1 ? first : atNeed) = h;
        }
        QVERIFY(first >= 0 && atNeed > first);
        const QString want = QString("Each server adds a GPU cache: from 1 to %1 servers the GPU "
                                     "hit ratio rises from %2 % to %3 %.")
                                 .arg(gpuOnly)
                                 .arg(first * 100, 0, 'f', 1)
                                 .arg(atNeed * 100, 0, 'f', 1);
        QVERIFY2(need["sentence"].toString().contains(want),
                 qPrintable(need["sentence"].toString()));
    }

    // A fleet's floor: no count of servers gets below every prefix hit free on the GPU with no
    // wait, so a target under it is refused by every count at once, with that p99: trace
    // replay's with an unlimited GPU cache and no offload tier, no servers.
    void aFleetsFloorIsEveryHitFree() {
        const QString trace = kTraces + "mooncake-conversation.jsonl";
        const auto free =
            runCli({"trace", "replay", trace, "--gpu-cache", "unlimited", "--tier", "dram-pcie5=0",
                    "--scenario", "illustrative", "--output", "json"});
        QVERIFY2(free.exitCode == 0, free.err.constData());
        double floor = -1;
        for (const auto& v : json(free)["rules"].toArray())
            if (v.toObject()["rule"].toString() == QLatin1String("gpu-only"))
                floor = v.toObject()["ttft_s"].toObject()["p99"].toDouble();
        QVERIFY(floor > 0);
        const QString target = QString("p99=%1ms").arg(floor * 0.9 * 1e3, 0, 'f', 3);
        const auto r = runCli({"trace", "capacity", trace, "--slo", target, "--router", "sglang",
                               "--scenario", "illustrative", "--output", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto need = json(r)["servers_needed"].toObject();
        for (const auto& v : need["rules"].toArray()) {
            const auto o = v.toObject();
            QVERIFY(o["servers"].isNull());
            QVERIFY2(close(o["statistic_floor_s"].toDouble(), floor),
                     qPrintable(QString("%1: floor %2, replay %3")
                                    .arg(o["rule"].toString())
                                    .arg(o["statistic_floor_s"].toDouble())
                                    .arg(floor)));
            QVERIFY(o["statistic_unlimited_s"].isNull());
        }
        QVERIFY2(need["sentence"].toString().contains(
                     "no number of servers is enough: with every prefix hit free on the GPU and "
                     "no wait at all the p99 is "),
                 qPrintable(need["sentence"].toString()));
    }

    // The conversation trace with the default scenario: both searches' tables, what a TTFT
    // counts, that decode is not modelled, and the sentences; offload needs fewer servers.
    void conversationTraceTables() {
        const QString trace = kTraces + "mooncake-conversation.jsonl";
        // The illustrative scenario, as README and docs/trace.md quote these figures.
        const auto need =
            runCli({"trace", "capacity", trace, "--slo", "p99=5s", "--scenario", "illustrative"});
        QVERIFY2(need.exitCode == 0, need.err.constData());
        QVERIFY(need.out.contains("the wait for a prefill server"));
        QVERIFY(need.out.contains("decode is not modelled"));
        QVERIFY2(need.out.contains("GPU-only caching needs 3 servers and optimal 2 servers"),
                 need.out.constData());
        const auto held = runCli({"trace", "capacity", trace, "--slo", "p99=5s", "--instances", "4",
                                  "--scenario", "illustrative"});
        QVERIFY2(held.exitCode == 0, held.err.constData());
        QVERIFY2(held.out.contains("On 4 servers GPU-only caching holds p99 ≤ 5 s up to S = "),
                 held.out.constData());
        QVERIFY(held.out.contains("offload carries"));
        const auto csv = runCli({"trace", "capacity", trace, "--slo", "p99=5s", "--duration-cap",
                                 "10min", "--output", "csv"});
        QCOMPARE(csv.exitCode, 0);
        QVERIFY(csv.out.startsWith("rule,rate_scale,requests_per_s,servers,"));
        QCOMPARE(csv.out.count('\n'), 5);
    }

    void badInputIsOneSentence_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("says");
        const QString hand = kTraces + "hand.jsonl";
        const QStringList cap{"trace", "capacity", hand};
        QTest::newRow("SLO without a unit") << cap + QStringList{"--slo", "p99=2"} << "no unit";
        QTest::newRow("percentile 101") << cap + QStringList{"--slo", "p101=2s"} << "outside 0–100";
        QTest::newRow("percentile 0") << cap + QStringList{"--slo", "p0=2s"} << "outside 0–100";
        QTest::newRow("not a statistic")
            << cap + QStringList{"--slo", "max=2s"} << "neither mean nor a percentile";
        QTest::newRow("N = 0") << cap + QStringList{"--slo", "p99=2s", "--instances", "0"}
                               << "--instances '0': expected a whole number of servers";
        QTest::newRow("N = -2") << cap + QStringList{"--slo", "p99=2s", "--instances=-2"}
                                << "--instances '-2'";
        QTest::newRow("fleet without a router")
            << cap + QStringList{"--slo", "p99=2s", "--node-servers", "2"}
            << "--node-servers and --pooled shape a fleet: name its router (--router)";
        QTest::newRow("compare") << cap + QStringList{"--slo", "p99=2s", "--router", "compare"}
                                 << "--router compare: trace capacity takes one router";
        QTest::newRow("S = 0") << cap + QStringList{"--slo", "p99=2s", "--rate-scale", "0"}
                               << "--rate-scale '0': expected a load scale above 0";
        QTest::newRow("S < 0") << cap + QStringList{"--slo", "p99=2s", "--rate-scale=-1"}
                               << "--rate-scale '-1'";
        QTest::newRow("bound 0") << cap + QStringList{"--slo", "p99=2s", "--max-instances", "0"}
                                 << "--max-instances";
        QTest::newRow("duration cap")
            << cap + QStringList{"--slo", "p99=2s", "--duration-cap", "soon"} << "--duration-cap";
        QTest::newRow("replay S = 0")
            << QStringList{"trace", "replay", hand, "--rate-scale", "0"} << "--rate-scale '0'";
        QTest::newRow("no block ids")
            << QStringList{"trace", "capacity", kTraces + "azure.csv", "--slo", "p99=2s"}
            << "has no block ids";
    }
    void badInputIsOneSentence() {
        QFETCH(QStringList, args);
        QFETCH(QString, says);
        expectBadInput(args, says);
    }

    // Every request at one timestamp: no arrival times to scale.
    void traceWithoutArrivalTimesIsRefused() {
        QTemporaryDir dir;
        const QString path = writeFixedRate(dir, 5, 0);
        expectBadInput({"trace", "capacity", path, "--slo", "p99=2s"},
                       path + ": every request arrives at the same time");
    }
};

QTEST_GUILESS_MAIN(TestCliTraceCapacity)
#include "tst_cli_trace_capacity.moc"
