// kvbe-cli trace sweep and trace capacity, sampled or exact, as a script sees them: the mode,
// the rate and the bound named in every format; --exact's figures those of the full sweep; the
// sampled capacity's servers those of --exact.
#include "cli_run.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using kvbe::test::runCli;

class TestCliTraceSampled : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_trace;

    QJsonObject json(const QStringList& args) {
        const auto r = runCli(args + QStringList{"--output", "json"});
        if (r.exitCode != 0) qWarning("%s", r.err.constData());
        return QJsonDocument::fromJson(r.out).object();
    }

  private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_trace = m_dir.filePath("gen.jsonl");
        // 20,000 generated requests at 40 a second (docs/trace.md, "Generated traces").
        const auto g = runCli({"trace", "generate", "--requests", "20000", "--seed", "5", "--rate",
                               "40", "--out", m_trace});
        QVERIFY2(g.exitCode == 0, g.err.constData());
    }

    void sweepSaysItsModeInEveryFormat() {
        const QStringList base{"trace", "sweep", m_trace, "--single-cache", "--points", "8"};
        const QJsonObject s = json(base + QStringList{"--sample-rate", "0.25"});
        const QJsonObject m = s["sampling"].toObject();
        QCOMPARE(m["mode"].toString(), QString("sampled"));
        QCOMPARE(m["rate"].toDouble(), 0.25);
        QVERIFY(m["error_bound"].toObject()["hits_token_weighted"].toDouble() > 0);
        QCOMPARE(m["sample_requests"].toArray().size(), 2);
        for (const auto p : s["points"].toArray())
            QVERIFY(p.toObject()["hits_error_bound"].toDouble() > 0);

        const auto csv = runCli(base + QStringList{"--sample-rate", "0.25", "--output", "csv"});
        QCOMPARE(csv.exitCode, 0);
        const QList<QByteArray> lines = csv.out.trimmed().split('\n');
        QVERIFY(lines[0].endsWith(",mode,sample_rate,hits_error_bound"));
        QCOMPARE(lines.size(), 9);
        QVERIFY(lines[1].contains(",sampled,0.250000,"));

        const auto table = runCli(base + QStringList{"--sample-rate", "0.25"});
        QCOMPARE(table.exitCode, 0);
        QVERIFY2(table.out.contains("mode: sampled at rate 0.25 ("), table.out.constData());
        QVERIFY(table.out.contains("error bound up to"));
        QVERIFY(table.out.contains("± hits"));

        const QJsonObject f = json(base);
        QCOMPARE(f["sampling"].toObject()["mode"].toString(), QString("full"));
        QCOMPARE(f["sampling"].toObject()["rate"].toDouble(), 1.0);
        QVERIFY(f["sampling"].toObject()["error_bound"].isNull());
    }

    void sweepExactIsTheFullSweep() {
        const QStringList base{"trace", "sweep", m_trace, "--single-cache", "--points", "8"};
        const QJsonObject exact = json(base + QStringList{"--exact"});
        const QJsonObject plain = json(base);
        const QJsonObject sampled = json(base + QStringList{"--sample-rate", "0.25"});
        QVERIFY(!exact["points"].toArray().isEmpty());
        // --exact: the full sweep's points, exactly; a sample's differ.
        QCOMPARE(exact["points"], plain["points"]);
        QVERIFY(exact["points"] != sampled["points"]);
        QVERIFY(exact["sampling"].toObject()["text"].toString().startsWith("--exact"));
        // --exact wins over --sample-rate.
        const QJsonObject both = json(base + QStringList{"--exact", "--sample-rate", "0.25"});
        QCOMPARE(both["points"], exact["points"]);
    }

    void capacitySampledServersAreExact() {
        const QStringList base{"trace", "capacity", m_trace, "--slo", "p99=1s"};
        const QJsonObject exact = json(base + QStringList{"--exact"});
        const QJsonObject fast = json(base + QStringList{"--sample-rate", "0.25"});
        const QJsonObject m = fast["sampling"].toObject();
        QCOMPARE(m["mode"].toString(), QString("sampled"));
        QCOMPARE(m["rate"].toDouble(), 0.25);
        QVERIFY(m["error_bound"].toObject().contains("servers"));
        QCOMPARE(m["samples"].toArray().size(), 4);
        const QJsonArray a = exact["servers_needed"].toObject()["rules"].toArray();
        const QJsonArray b = fast["servers_needed"].toObject()["rules"].toArray();
        QCOMPARE(a.size(), 4);
        QCOMPARE(a, b);
        QCOMPARE(exact["sampling"].toObject()["mode"].toString(), QString("full"));

        const auto table = runCli(base + QStringList{"--sample-rate", "0.25"});
        QCOMPARE(table.exitCode, 0);
        QVERIFY2(table.out.contains("mode      sampled at rate 0.25"), table.out.constData());
        QVERIFY(table.out.contains("samples said"));
        const auto csv = runCli(base + QStringList{"--sample-rate", "0.25", "--output", "csv"});
        QCOMPARE(csv.exitCode, 0);
        QVERIFY(csv.out.startsWith("rule,rate_scale,requests_per_s,servers,statistic_s,"
                                   "statistic_one_fewer_s,statistic_unlimited_s,mode,sample_rate,"
                                   "samples_servers\n"));
        QVERIFY(csv.out.contains(",sampled,0.25,"));
    }

    void anEmptySampleIsASentenceNotZeros() {
        for (const QStringList& args :
             {QStringList{"trace", "sweep", m_trace, "--single-cache"},
              QStringList{"trace", "capacity", m_trace, "--slo", "p99=1s"}}) {
            const auto r = runCli(args + QStringList{"--sample-rate", "1e-7"});
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains("kept none of the 20000 requests") &&
                         r.err.contains("--sample-rate"),
                     r.err.constData());
            QVERIFY(r.out.isEmpty());
        }
    }

    // A sampled plan's rows estimated from the sample had no servers counted: the table says
    // "n/c" (not ">1024", which reads as "needs more than 1,024 servers"), the JSON null, the
    // CSV nothing, and none of them fails the latency limit for want of a count.
    void sampledPlanRowsSayNotComputed() {
        const QString conversation =
            QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl");
        const QStringList base{"trace",     "plan", conversation,    "--life", "5",
                               "--slo-p99", "5s",   "--sample-rate", "0.3"};
        const auto o = json(base);
        int sampled = 0;
        for (const auto& v : o["front"].toArray()) {
            const auto p = v.toObject();
            if (!p["sampled"].toBool()) continue;
            ++sampled;
            QVERIFY(p["servers_at_slo"].isNull());
            QVERIFY(p["value_per_month_usd"].isNull());
            QVERIFY(p["net_usd_over_life"].isNull());
            for (const auto& f : p["fails"].toArray())
                QVERIFY2(!f.toString().startsWith(QStringLiteral("latency: not replayed")),
                         qPrintable(f.toString()));
        }
        QVERIFY(sampled > 0);
        const auto table = runCli(base);
        QCOMPARE(table.exitCode, 0);
        QVERIFY2(!table.out.contains(">1024"), table.out.constData());
        QVERIFY(table.out.contains(" n/c "));
        QVERIFY(table.out.contains("n/c: not computed"));
    }

    void badSampleRateIsRefused() {
        const auto r = runCli({"trace", "sweep", m_trace, "--single-cache", "--sample-rate", "2"});
        QVERIFY(r.exitCode > 0);
        QVERIFY(r.err.contains("--sample-rate"));
    }
};

QTEST_GUILESS_MAIN(TestCliTraceSampled)
#include "tst_cli_trace_sampled.moc"
