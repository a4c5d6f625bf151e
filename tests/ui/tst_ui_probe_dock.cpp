// The Probes dock built from the probe catalog: it lists every probe kvbe-cli registers, each
// option it shows reaches the command line of the process it starts, a group (--dir or --file)
// passes the member chosen, and empty fields are left to kvbe-cli's defaults. A finished run's
// results: a table of its rows with the one that became the tier marked and why, and another row
// made the tier in one undoable edit.
#include "kvbe/probe/probe_catalog.h"
#include "kvbe/ui/probes/probe_panel.h"
#include "ui_test_support.h"

#include <QAction>

#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProcess>
#include <QPushButton>
#include <QTableWidget>
#include <QtTest>

using namespace kvbe;
using namespace kvbe::test;

namespace {

bool waitRun(ProbeRunner* r) {
    return QTest::qWaitFor([r] { return !r->isRunning(); }, 10000);
}

QStringList dockKeys(const ProbePanel& panel) {
    auto* combo = panel.findChild<QComboBox*>(QStringLiteral("probeChoice"));
    QStringList keys;
    for (int i = 0; combo && i < combo->count(); ++i)
        keys << combo->itemData(i).toString();
    return keys;
}

// A value of the option's kind that is not its default: what a person might type.
QString sampleValue(const ProbeOption& o) {
    switch (o.kind) {
    case ProbeOptionKind::Bytes:
        return o.list ? QStringLiteral("3MiB,5MiB") : "3MiB";
    case ProbeOptionKind::Tokens:
        return o.list ? QStringLiteral("3k,5k") : "3k";
    case ProbeOptionKind::Count:
        return o.list ? QStringLiteral("3,5") : "3";
    case ProbeOptionKind::Number:
        return o.list ? QStringLiteral("0.25,0.75") : "0.25";
    case ProbeOptionKind::Seconds:
        return QStringLiteral("3s");
    case ProbeOptionKind::Folder:
        return QStringLiteral("/tmp/kvbe-dock-folder");
    case ProbeOptionKind::File:
        return QStringLiteral("/tmp/kvbe-dock-file");
    case ProbeOptionKind::Model:
        return QStringLiteral("acme/dock-model");
    case ProbeOptionKind::Url:
        return QStringLiteral("http://127.0.0.1:9/v1");
    case ProbeOptionKind::Text:
        return QStringLiteral("dock-text");
    case ProbeOptionKind::Flag:
        return QStringLiteral("true");
    case ProbeOptionKind::Choice:
        for (auto c : o.choices)
            if (c != o.defaultValue) return QString::fromUtf8(c);
        return {};
    }
    return {};
}

// Whether `flag value` (or the flag alone, for a Flag) follow each other in args.
bool hasPair(const QStringList& args, const QString& flag, const QString& value, bool alone) {
    const int i = args.indexOf(flag);
    if (i < 0) return false;
    return alone || (i + 1 < args.size() && args[i + 1] == value);
}

} // namespace

class TestProbeDock : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        isolateSettings();
        useFakeProbe();
    }
    void init() {
        QSettings().clear();
        resetFakeProbe();
    }

    // The probes kvbe-cli has (its own `probe list`), all of them and in its order.
    void dockListsEveryRegisteredProbe() {
        QProcess cli;
        cli.start(QStringLiteral(KVBE_CLI_PATH), {"probe", "list", "--format", "json"});
        QVERIFY(cli.waitForFinished(30000));
        QCOMPARE(cli.exitCode(), 0);
        const auto listed = QJsonDocument::fromJson(cli.readAllStandardOutput())
                                .object()
                                .value(QStringLiteral("probes"))
                                .toArray();
        QStringList registered;
        for (const auto& p : listed)
            registered << p.toObject().value(QStringLiteral("key")).toString();
        const QStringList eight{"nvme-read",     "nvme-write",  "host-memcpy", "gpu-copy",
                                "gpu-gemm-peak", "gpu-prefill", "serving",     "replay"};
        QCOMPARE(registered, eight);
        ProbePanel panel;
        QCOMPARE(dockKeys(panel), registered);
        QCOMPARE(ProbePanel::probeNames(), registered);
        QVERIFY(panel.setProbe(QStringLiteral("gpu-gemm-peak")));
        QCOMPARE(panel.arguments().front(), QStringLiteral("gpu-gemm-peak"));
        QVERIFY(!panel.setProbe(QStringLiteral("no-such-probe")));
    }

    // Every option the window shows, set in the dock, is on the command line of the process the
    // dock starts (the fake kvbe-cli puts its argv in the stream's header).
    void everyShownOptionReachesTheCommandLine_data() {
        QTest::addColumn<QString>("probe");
        QTest::addColumn<QString>("flag");
        QTest::addColumn<QString>("value");
        QTest::addColumn<bool>("alone");
        int rows = 0;
        for (const auto& p : probeCatalog())
            for (const auto& o : p.options) {
                if (!o.inWindow()) continue;
                QTest::addRow("%s %s", p.key.data(), o.flag.data())
                    << QString::fromUtf8(p.key) << QString::fromUtf8(o.flag) << sampleValue(o)
                    << (o.kind == ProbeOptionKind::Flag);
                ++rows;
            }
        QVERIFY(rows >= 20);
    }
    void everyShownOptionReachesTheCommandLine() {
        QFETCH(QString, probe);
        QFETCH(QString, flag);
        QFETCH(QString, value);
        QFETCH(bool, alone);
        QVERIFY(!value.isEmpty());
        ProbePanel panel;
        QVERIFY(panel.setProbe(probe));
        QVERIFY(panel.setOption(flag, value));
        const QStringList args = panel.arguments();
        QCOMPARE(args.front(), probe);
        QVERIFY2(hasPair(args, flag, value, alone), qPrintable(args.join(' ')));

        QStringList argv;
        ProbeRunner* runner = panel.run();
        connect(runner, &ProbeRunner::header, this, [&argv](const ProbeHeader& h) {
            for (const auto& a : h.params.value("argv", nlohmann::ordered_json::array()))
                argv << QString::fromStdString(a.get<std::string>());
        });
        QVERIFY(QTest::qWaitFor([runner] { return !runner->isRunning(); }, 10000));
        QCOMPARE(argv.mid(0, 2), (QStringList{"probe", probe}));
        QVERIFY2(hasPair(argv, flag, value, alone), qPrintable(argv.join(' ')));
        QVERIFY2(hasPair(argv, "--format", "jsonl", false), qPrintable(argv.join(' ')));
    }

    // --dir and --file exclude each other: one row, the chosen one passed; --file-size is for
    // the scratch file of --dir only.
    void aGroupPassesTheMemberChosen() {
        ProbePanel panel;
        QVERIFY(panel.setProbe(QStringLiteral("nvme-read")));
        QVERIFY(panel.setOption(QStringLiteral("--file-size"), QStringLiteral("8MiB")));
        QVERIFY(panel.setOption(QStringLiteral("--dir"), QStringLiteral("/tmp/a")));
        QCOMPARE(panel.arguments().mid(0, 5),
                 (QStringList{"nvme-read", "--dir", "/tmp/a", "--file-size", "8MiB"}));
        QVERIFY(panel.setOption(QStringLiteral("--file"), QStringLiteral("/tmp/b")));
        QStringList args = panel.arguments();
        QCOMPARE(args.mid(0, 3), (QStringList{"nvme-read", "--file", "/tmp/b"}));
        QVERIFY(!args.contains(QStringLiteral("--dir")));
        QVERIFY(!args.contains(QStringLiteral("--file-size")));
        // nvme-write only ever writes its own scratch file: no --file to choose.
        QVERIFY(panel.setProbe(QStringLiteral("nvme-write")));
        QVERIFY(!panel.setOption(QStringLiteral("--file"), QStringLiteral("/tmp/b")));
        // A choice takes only the values the catalog lists.
        QVERIFY(!panel.setOption(QStringLiteral("--engine"), QStringLiteral("spdk")));
    }

    // Untouched, each form passes nothing but the scenario's model where a probe takes one.
    void emptyFieldsAreLeftToTheCliDefaults_data() {
        QTest::addColumn<QString>("probe");
        QTest::addColumn<QStringList>("args");
        const QString m = QStringLiteral("acme/scenario-model");
        QTest::newRow("nvme-read") << "nvme-read" << QStringList{"nvme-read", "--model", m};
        QTest::newRow("nvme-write") << "nvme-write" << QStringList{"nvme-write", "--model", m};
        QTest::newRow("host-memcpy") << "host-memcpy" << QStringList{"host-memcpy"};
        QTest::newRow("gpu-copy") << "gpu-copy" << QStringList{"gpu-copy", "--model", m};
        QTest::newRow("gpu-gemm-peak") << "gpu-gemm-peak" << QStringList{"gpu-gemm-peak"};
        QTest::newRow("gpu-prefill") << "gpu-prefill" << QStringList{"gpu-prefill", "--model", m};
        QTest::newRow("serving") << "serving" << QStringList{"serving", "--config", m};
    }
    void emptyFieldsAreLeftToTheCliDefaults() {
        QFETCH(QString, probe);
        QFETCH(QStringList, args);
        ProbePanel panel;
        panel.setDefaultModel(QStringLiteral("acme/scenario-model"));
        QVERIFY(panel.setProbe(probe));
        QCOMPARE(panel.arguments(), args);
    }

    void theDockShowsTheRunsTableAndWhichRowIsTheTier() {
        auto w = makeWindow();
        ProbeRunner* r = probePanelOf(w)->run();
        QVERIFY(waitRun(r));
        auto* table = probePanelOf(w)->findChild<QTableWidget*>(QStringLiteral("runResults0"));
        QVERIFY(table);
        QCOMPARE(table->rowCount(), 4); // one row per block size × queue depth the probe sent
        QStringList headers;
        for (int c = 0; c < table->columnCount(); ++c)
            headers << table->horizontalHeaderItem(c)->text();
        for (const char* h : {"GB/s", "IOPS", "p50", "p99", "QD"})
            QVERIFY2(headers.join(QLatin1Char('|')).contains(QLatin1String(h)), h);
        const int gbps = int(headers.indexOf(QStringLiteral("GB/s")));
        const int iops = int(headers.indexOf(QStringLiteral("IOPS")));
        QCOMPARE(table->item(2, gbps)->text(), QStringLiteral("6.50"));
        // IOPS = 6.5 GB/s over 4 MiB blocks.
        QCOMPARE(table->item(2, iops)->text(), QString::number(6.5e9 / 4194304, 'f', 0));
        // The row that became the tier is marked, and why is said.
        QVERIFY(table->item(2, 0)->text().contains(QStringLiteral("tier")));
        for (int row : {0, 1, 3})
            QVERIFY(!table->item(row, 0)->text().contains(QStringLiteral("tier")));
        auto* why = probePanelOf(w)->findChild<QLabel*>(QStringLiteral("runTierWhy0"));
        QVERIFY(why);
        QVERIFY2(why->text().contains(QStringLiteral("sustained")), qPrintable(why->text()));

        // Another row as the tier: the tier takes its rate, in one undoable edit.
        const int t = int(explorerOf(w)->scenario().tiers.size()) - 1;
        table->selectRow(1);
        auto* use = probePanelOf(w)->findChild<QPushButton*>(QStringLiteral("useRow0"));
        QVERIFY(use);
        use->click();
        QCOMPARE(explorerOf(w)->scenario().tiers[size_t(t)].bandwidthGBps, 5.25);
        QVERIFY(table->item(1, 0)->text().contains(QStringLiteral("tier")));
        QVERIFY(!table->item(2, 0)->text().contains(QStringLiteral("tier")));
        child<QAction>(w.get(), QStringLiteral("undo"))->trigger();
        QCOMPARE(explorerOf(w)->scenario().tiers[size_t(t)].bandwidthGBps, 6.5);
    }
};

QTEST_MAIN(TestProbeDock)
#include "tst_ui_probe_dock.moc"
