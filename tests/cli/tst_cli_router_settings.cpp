// kvbe-cli trace plan --emit sglang|llm-d|dynamo|production-stack: the router of a fleet plan's
// recommended configuration, as its project takes it. llm-d's configuration is checked line for
// line against the file llm-d ships (tests/fixtures/routers/llm-d); the flags against the lists
// read in each project's source at the version docs/serving-settings.md names.
#include "cli_run.h"

#include <QFile>
#include <QMap>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

namespace {

using Run = kvbe::test::CliRun;
const QString kConversation = QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl");
// GPU-only caching and one DRAM size: a plan of two configurations.
const QStringList kGrid = {"--dram", "0,256GiB", "--drives", "0", "--store-after", "1"};

Run emitSettings(const QString& router, const QString& stack, const QStringList& more = {}) {
    return kvbe::test::runCli(QStringList{"trace", "plan", kConversation, "--servers", "4",
                                          "--node-servers", "2", "--router", router, "--emit",
                                          stack} +
                              kGrid + more);
}

// The settings' lines that are not comments.
QStringList settingLines(const QByteArray& text) {
    QStringList out;
    for (const QString& line : QString::fromUtf8(text).split(QLatin1Char('\n'))) {
        QString l = line;
        const int hash = l.indexOf(QLatin1String(" #"));
        if (hash >= 0) l.truncate(hash);
        while (l.endsWith(QLatin1Char(' ')))
            l.chop(1);
        if (l.trimmed().isEmpty() || l.trimmed().startsWith(QLatin1Char('#'))) continue;
        out << l;
    }
    return out;
}

// The --flags of a command line.
QSet<QString> flagsOf(const QString& line) {
    QSet<QString> out;
    for (const QString& w : line.split(QLatin1Char(' '), Qt::SkipEmptyParts))
        if (w.startsWith(QLatin1String("--"))) out.insert(w);
    return out;
}

// A flag's value on a command line.
QString valueOf(const QString& line, const QString& flag) {
    const QStringList w = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    const auto i = w.indexOf(flag);
    return i >= 0 && i + 1 < w.size() ? w[i + 1] : QString();
}

// A command line holds exactly these flags, each with its value.
void expectFlags(const QString& cmd, const QMap<QString, QString>& want) {
    const QStringList keys = want.keys();
    QCOMPARE(flagsOf(cmd), QSet<QString>(keys.begin(), keys.end()));
    for (auto it = want.begin(); it != want.end(); ++it)
        QVERIFY2(valueOf(cmd, it.key()) == it.value(),
                 qPrintable(it.key() + QStringLiteral(": ") + valueOf(cmd, it.key())));
}

void expectRefusal(const Run& r, const QString& says) {
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.out.isEmpty(), r.out.constData());
    QVERIFY2(QString::fromUtf8(r.err).contains(says), r.err.constData());
}

} // namespace

class TestCliRouterSettings : public QObject {
    Q_OBJECT
  private slots:
    // SGLang: every threshold of the replayed router, under the gateway's own flag names
    // (sgl-model-gateway 0.3.2, src/main.rs).
    void sglangTakesTheRoutersThresholds() {
        const auto r =
            emitSettings(QStringLiteral("sglang:cache_threshold=0.5,balance_abs_threshold=16"),
                         QStringLiteral("sglang"));
        QCOMPARE(r.exitCode, 0);
        const QStringList lines = settingLines(r.out);
        QCOMPARE(lines.size(), 1);
        const QString& cmd = lines.front();
        QVERIFY2(cmd.startsWith(QLatin1String("smg launch ")), r.out.constData());
        // The gateway's flags; the CLI's shipped defaults where the plan kept them.
        expectFlags(cmd, {{"--policy", "cache_aware"},
                          {"--cache-threshold", "0.5"},
                          {"--balance-abs-threshold", "16"},
                          {"--balance-rel-threshold", "1.5"},
                          {"--eviction-interval", "120"},
                          {"--max-tree-size", "67108864"}});
        QVERIFY2(r.out.contains("# The fleet: 4 prefill servers on 2 nodes, behind "
                                "sglang:cache_threshold=0.5,balance_abs_threshold=16."),
                 r.out.constData());
        // A whole number where the gateway takes one.
        expectRefusal(emitSettings(QStringLiteral("sglang:balance_abs_threshold=16.5"),
                                   QStringLiteral("sglang")),
                      "SGLang's router takes a whole number there");
        const auto rr = emitSettings(QStringLiteral("round-robin"), QStringLiteral("sglang"));
        QCOMPARE(rr.exitCode, 0);
        QCOMPARE(settingLines(rr.out), QStringList{"smg launch --policy round_robin"});
    }

    // llm-d: the file llm-d ships, line for line, with the engines' block size, the model's
    // name and the tier weights; the plan's weights where it changed them.
    void llmdIsTheShippedProfileWithThePlansWeights() {
        QFile f(
            QStringLiteral(KVBE_FIXTURES "/routers/llm-d/epp-precise-prefix-cache-config.yaml"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QStringList shipped = settingLines(f.readAll());
        const auto r = emitSettings(QStringLiteral("llm-d"), QStringLiteral("llm-d"),
                                    {"--served-model", "meta-llama/Llama-3.1-8B"});
        QCOMPARE(r.exitCode, 0);
        QStringList ours = settingLines(r.out);
        // What the plan sets and adds, in shipped terms.
        for (QString& l : shipped) {
            l.replace(QLatin1String("blockSize: 64"), QLatin1String("blockSize: 16"));
            l.replace(QLatin1String("modelName: hf-repo/model-name"),
                      QLatin1String("modelName: meta-llama/Llama-3.1-8B"));
            l.replace(QRegularExpression(QStringLiteral("weight: (\\d)\\.0$")),
                      QStringLiteral("weight: \\1"));
        }
        const QStringList tiers = {"        kvCacheBackendConfigs:", "          - name: gpu",
                                   "            weight: 1", "          - name: cpu",
                                   "            weight: 0.8"};
        const auto at = ours.indexOf(tiers.front());
        QVERIFY2(at > 0, r.out.constData());
        QCOMPARE(ours.mid(at, tiers.size()), tiers);
        ours.remove(at, tiers.size());
        QCOMPARE(ours, shipped);

        const auto w =
            emitSettings(QStringLiteral("llm-d:prefix_weight=3,cpu_weight=0.5,refresh=0.1"),
                         QStringLiteral("llm-d"));
        QCOMPARE(w.exitCode, 0);
        const QStringList lines = settingLines(w.out);
        const auto prefix =
            lines.lastIndexOf(QStringLiteral("      - pluginRef: precise-prefix-cache-scorer"));
        QVERIFY(prefix > 0);
        QCOMPARE(lines[prefix + 1], QStringLiteral("        weight: 3"));
        QVERIFY(lines.contains(QStringLiteral("            weight: 0.5")));
        QVERIFY2(w.out.contains("--refresh-metrics-interval 100ms"), w.out.constData());
        // The scenario's model where --served-model is not given.
        QVERIFY2(w.out.contains("modelName: "), w.out.constData());
    }

    // Dynamo: the KV router's cost with its tier credits (Dynamo 1.3.0's kv_router_args.py).
    void dynamoTakesTheTierCredits() {
        const auto r = emitSettings(QStringLiteral("dynamo:host_cache_hit_weight=0.5"),
                                    QStringLiteral("dynamo"));
        QCOMPARE(r.exitCode, 0);
        const QStringList lines = settingLines(r.out);
        QCOMPARE(lines.size(), 1);
        const QString& cmd = lines.front();
        QVERIFY(cmd.startsWith(QLatin1String("python -m dynamo.frontend ")));
        expectFlags(cmd, {{"--router-mode", "kv"},
                          {"--router-kv-overlap-score-credit", "1"},
                          {"--router-prefill-load-scale", "1"},
                          {"--router-host-cache-hit-weight", "0.5"},
                          {"--router-disk-cache-hit-weight", "0.25"},
                          {"--router-temperature", "0"}});
    }

    // production-stack: the session router, with the header the clients must send.
    void productionStackRoutesBySession() {
        const auto r = emitSettings(QStringLiteral("session:key_blocks=2"),
                                    QStringLiteral("production-stack"));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(settingLines(r.out),
                 QStringList{"vllm-router --routing-logic session --session-key x-session-id"});
        QVERIFY2(r.out.contains("keyed each request by its first 2 blocks"), r.out.constData());
    }

    // --routers: a recommended router other than the fleet's is the one written out.
    void theRecommendedRouterIsTheOneWritten() {
        const QStringList gpuOnly = {"--dram", "0", "--drives", "0", "--store-after", "1"};
        const QStringList fleet = {"trace",    "plan",        kConversation, "--servers", "4",
                                   "--router", "round-robin", "--routers",   "dynamo"};
        const auto js = kvbe::test::runCli(fleet + gpuOnly + QStringList{"--output", "json"});
        QCOMPARE(js.exitCode, 0);
        const auto o = kvbe::test::jsonOut(js);
        const QString router = o["recommended"].toObject()["router"].toString();
        QCOMPARE(router, QStringLiteral("dynamo")); // more GPU hits, no cost
        const auto r = kvbe::test::runCli(fleet + gpuOnly + QStringList{"--emit", "dynamo"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("--router-mode kv"), r.out.constData());
        QVERIFY2(r.out.contains("behind dynamo."), r.out.constData());
    }

    void refusalsNameWhatWouldDo_data() {
        QTest::addColumn<QString>("router");
        QTest::addColumn<QString>("stack");
        QTest::addColumn<QString>("says");
        QTest::newRow("another project's router")
            << "sglang"
            << "llm-d"
            << "the recommended configuration's router is sglang, which llm-d's precise "
               "prefix-cache profile does not ship: give --emit sglang";
        QTest::newRow("round-robin on llm-d") << "round-robin"
                                              << "llm-d"
                                              << "give --emit sglang, dynamo or production-stack";
        QTest::newRow("least-loaded")
            << "least-loaded"
            << "dynamo"
            << "least-loaded (the fewest outstanding requests), which no router read for "
               "docs/routers.md is known to ship as its own policy";
    }
    void refusalsNameWhatWouldDo() {
        QFETCH(QString, router);
        QFETCH(QString, stack);
        QFETCH(QString, says);
        expectRefusal(emitSettings(router, stack), says);
    }

    // Servers that share one cache have no router to set.
    void aSharedCacheHasNoRouter() {
        expectRefusal(kvbe::test::runCli(QStringList{"trace", "plan", kConversation, "--servers",
                                                     "4", "--emit", "sglang"} +
                                         kGrid),
                      "a router's settings are for a fleet");
    }
};

QTEST_GUILESS_MAIN(TestCliRouterSettings)
#include "tst_cli_router_settings.moc"
