// kvbe-cli trace plan in shards and from samples, as a script sees them: two shards run as
// separate processes at once and merged give the one run's plan (JSON and CSV, every
// configuration); the sampled mode says so in the table, the CSV and the JSON; bad shard flags
// and parts are refused with a sentence.
#include "cli_run.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {

using Run = kvbe::test::CliRun;
Run cli(const QStringList& args) {
    return kvbe::test::runCli(args);
}
QString conversation() {
    return QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl");
}
QJsonObject json(const QByteArray& b) {
    return QJsonDocument::fromJson(b).object();
}
// The grid and limits of the tests: the drive counts extended, servers counted.
const QStringList kPlan = {"--dram", "0,128GiB,512GiB", "--store-after", "1,2", "--slo-p99", "5s"};

} // namespace

class TestCliTracePlanShards : public QObject {
    Q_OBJECT
  private slots:
    void twoShardsMergedEqualOneRun() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QStringList base = QStringList{"trace", "plan", conversation()} + kPlan;
        // The shards as two processes at once, as a job array runs them.
        QProcess shard[2];
        for (int i = 0; i < 2; ++i)
            shard[i].start(QStringLiteral(KVBE_CLI_PATH),
                           base + QStringList{"--shard", QString("%1/2").arg(i), "--out",
                                              dir.filePath(QString("part-%1.json").arg(i))});
        for (auto& p : shard) {
            QVERIFY(p.waitForFinished(300000));
            QCOMPARE(p.exitCode(), 0);
        }
        const QStringList parts = {dir.filePath("part-0.json"), dir.filePath("part-1.json")};
        for (const QString format : {"json", "csv"}) {
            const Run one = cli(base + QStringList{"--exact", "--output", format});
            QCOMPARE(one.exitCode, 0);
            const Run merged = cli(QStringList{"trace", "plan", "merge"} + parts +
                                   QStringList{"--output", format});
            QVERIFY2(merged.exitCode == 0, merged.err.constData());
            if (format == "csv") {
                QCOMPARE(merged.out, one.out); // every configuration, every figure
                continue;
            }
            QJsonObject a = json(one.out), b = json(merged.out);
            QVERIFY(a.value("recommended").isObject());
            QCOMPARE(b.value("front"), a.value("front"));
            QCOMPARE(b.value("recommended"), a.value("recommended"));
            QCOMPARE(b.value("why"), a.value("why"));
            QCOMPARE(b.value("drive_needs"), a.value("drive_needs"));
            QCOMPARE(b.value("mode").toString(), QString("exact"));
            QVERIFY(b.value("sampling").toObject().value("reason").toString().contains("2 shards"));
        }
        // Every shard once: one missing, one twice, another plan's part.
        Run r = cli({"trace", "plan", "merge", parts[0]});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("part 1/2 is missing"), r.err.constData());
        r = cli({"trace", "plan", "merge", parts[0], parts[0], parts[1]});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("given twice"), r.err.constData());
        QVERIFY(QFile::copy(parts[1], dir.filePath("other.json")));
        {
            QFile f(dir.filePath("other.json"));
            QVERIFY(f.setPermissions(f.permissions() | QFileDevice::WriteOwner));
            QVERIFY(f.open(QIODevice::ReadWrite));
            QJsonObject o = json(f.readAll());
            QJsonArray cmd = o.value("command").toArray();
            cmd.append("--life");
            cmd.append("3");
            o["command"] = cmd;
            f.resize(0);
            f.write(QJsonDocument(o).toJson());
        }
        r = cli({"trace", "plan", "merge", parts[0], dir.filePath("other.json")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("not of the same plan"), r.err.constData());
    }

    void badShardFlags() {
        const QStringList base = QStringList{"trace", "plan", conversation()} + kPlan;
        Run r = cli(base + QStringList{"--shard", "2/2", "--out", "x.json"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("--shard '2/2': expected I/N"), r.err.constData());
        r = cli(base + QStringList{"--shard", "0/2"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("give --out"), r.err.constData());
        r = cli({"trace", "plan", "merge",
                 QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("not valid JSON") || r.err.contains("not a plan part"),
                 r.err.constData());
    }

    // --sample-rate samples even this small trace: the outputs say so; the recommendation is
    // one of the configurations replayed in full.
    void sampledModeIsLabelled() {
        const QStringList base = QStringList{"trace", "plan", conversation()} + kPlan +
                                 QStringList{"--sample-rate", "0.3"};
        const Run j = cli(base + QStringList{"--output", "json"});
        QVERIFY2(j.exitCode == 0, j.err.constData());
        const QJsonObject o = json(j.out);
        QCOMPARE(o.value("mode").toString(), QString("sampled"));
        const QJsonObject m = o.value("sampling").toObject();
        QCOMPARE(m.value("rate").toDouble(), 0.3);
        QCOMPARE(m.value("sample_requests").toArray().size(), 2);
        QVERIFY(m.value("error").toObject().contains("hits_token_weighted"));
        QVERIFY(m.value("replayed_in_full").toInt() > 1);
        QCOMPARE(o.value("recommended").toObject().value("sampled").toBool(), false);
        const Run t = cli(base);
        QCOMPARE(t.exitCode, 0);
        QVERIFY2(t.out.contains("mode      sampled at 30.00 %"), t.out.constData());
        const Run c = cli(base + QStringList{"--output", "csv"});
        QCOMPARE(c.exitCode, 0);
        QVERIFY(c.out.startsWith("configuration,") &&
                c.out.split('\n').first().split(',').contains("sampled"));
        // Without the flag a trace this small is planned in full, and says so.
        const Run e = cli(QStringList{"trace", "plan", conversation()} + kPlan);
        QCOMPARE(e.exitCode, 0);
        QVERIFY2(e.out.contains("mode      exact: every configuration replayed in full (below"),
                 e.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliTracePlanShards)
#include "tst_cli_trace_plan_shards.moc"
