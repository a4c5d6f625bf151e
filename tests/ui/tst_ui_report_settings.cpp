// The report is the window (docs/report.md): every setting of the Workload view that changes a
// figure (HBM for KV, the tiers' capacities, admission, eviction, placement, servers, router,
// store-after, write queues) reaches the report's answer, and the trace replay command the
// report gives, run here against the scenario file the report holds, gives the window's figures.
#include "workload_test_support.h"

#include "kvbe/ui/window/main_window.h"
#include "kvbe/ui/workload/workload_view.h"

#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTextDocumentFragment>

#include <nlohmann/json.hpp>

using namespace kvbe;
using namespace kvbe::test;

namespace {

// The text of the code block that follows `lead` in the report's HTML: its lines, each a
// <p class="code"><code>…</code></p>, unescaped.
QString codeAfter(const QString& html, const QString& lead) {
    qsizetype at = html.indexOf(lead);
    if (at < 0) return {};
    const QString open = QStringLiteral("<p class=\"code\"><code>");
    const QString close = QStringLiteral("</code></p>");
    QStringList lines;
    at = html.indexOf(QLatin1Char('\n'), at) + 1;
    while (html.mid(at, open.size()) == open) {
        const qsizetype end = html.indexOf(close, at);
        lines << QTextDocumentFragment::fromHtml(html.mid(at + open.size(), end - at - open.size()))
                     .toPlainText();
        at = html.indexOf(QLatin1Char('\n'), end) + 1;
    }
    return lines.join(QLatin1Char('\n'));
}

// Exports the report of the window's replay, checks its answer and settings sentence, runs the
// command it gives (which must hold `flags`) against the scenario it holds, and compares.
void exportAndReplay(MainWindow* w, const WorkloadResult& res, const QString& where,
                     const QStringList& flags, const QStringList& absent, const QString& assumed) {
    QTemporaryDir dir(where + QStringLiteral("/r-XXXXXX"));
    const QString html = dir.filePath(QStringLiteral("report.html"));
    const auto st = w->exportReportTo(html);
    QVERIFY2(st, st ? "" : st.message().c_str());
    QFile f(html);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    // The answer is the window's, not the defaults'.
    QVERIFY2(text.contains(res.summary.toHtmlEscaped()), qPrintable(res.summary));
    // And it says what it assumed.
    QVERIFY2(text.contains(assumed), qPrintable(text.mid(text.indexOf("Replayed with"), 300)));

    // The scenario and the command, as the report gives them.
    const QString scenario =
        codeAfter(text, QStringLiteral("The scenario, as a .kvbe.json file holds it:"));
    QVERIFY(scenario.contains(QStringLiteral("kvbe_scenario")));
    QFile sf(dir.filePath(QStringLiteral("scenario.kvbe.json")));
    QVERIFY(sf.open(QIODevice::WriteOnly));
    sf.write(scenario.toUtf8());
    sf.close();
    QString command = codeAfter(text, QStringLiteral("with the settings the Workload view had"));
    QVERIFY2(command.startsWith(QStringLiteral("kvbe-cli trace replay")), qPrintable(command));
    for (const QString& flag : flags)
        QVERIFY2(command.contains(flag), qPrintable(flag));
    for (const QString& a : absent)
        QVERIFY2(!command.contains(a), qPrintable(a));
    command.replace(0, 8, QStringLiteral("'%1'").arg(QStringLiteral(KVBE_CLI_PATH)));
    QProcess p;
    p.setWorkingDirectory(dir.path());
    p.start(QStringLiteral("bash"),
            {QStringLiteral("-c"), command + QStringLiteral(" --output json")});
    QVERIFY(p.waitForFinished(120000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    const auto j = nlohmann::json::parse(p.readAllStandardOutput().toStdString(), nullptr, false);
    QVERIFY(j.is_object());
    // The window's figures, to the last digit the JSON carries.
    QCOMPARE(j["hits_any_tier"]["token_weighted"].get<double>(), res.replay->anyTier.tokenWeighted);
    const std::string rule(toString(res.settings.admission));
    bool found = false;
    for (const auto& r : j["rules"])
        if (r["rule"] == rule) {
            found = true;
            QCOMPARE(r["ttft_s"]["mean"].get<double>(), res.replay->rule(rule)->ttft.mean);
            QCOMPARE(r["ttft_s"]["p99"].get<double>(), res.replay->rule(rule)->ttft.p99);
        }
    QVERIFY(found);
}

} // namespace

class TestUiReportSettings : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }

    void theReportReplaysWhatTheWindowShows() {
        QTemporaryDir dir;
        auto w = makeWindow();
        auto* v = workloadViewOf(*w);
        QVERIFY(v->openTrace(conversationTracePath()));
        QVERIFY(settleWorkload(*w));
        const std::string before = v->result()->summary.toStdString();

        // Every setting moved off its default.
        WorkloadSettings s = v->settings();
        s.gpuCacheBytes = 3.0 * (1ull << 30);
        s.tierCapacityBytes = {24.0 * (1ull << 30), 0}; // the NVMe tier left out
        s.admission = Admission::Always;
        s.instances = 4;
        s.router = "sglang";
        s.storeAfter = 2;
        s.writeQueue = false;
        v->setSettings(s);
        QVERIFY(settleWorkload(*w));
        QVERIFY2(v->result()->replay && v->result()->error.isEmpty(),
                 qPrintable(v->result()->error));
        QVERIFY(v->result()->summary.toStdString() != before);
        exportAndReplay(w.get(), *v->result(), dir.path(),
                        {"--gpu-cache 3221225472B", "--admission always", "--servers 4",
                         "--router sglang", "--store-after 2", "--no-write-queue"},
                        {"nvme", "--policy s3fifo"},
                        "Replayed with 3 GiB of HBM for KV on each of 4 servers behind sglang; "
                        "Host DRAM (PCIe 5.0) 24 GiB on each node; lru, write-through, always "
                        "admission; blocks stored at their 2nd sighting; writes keep up.");
        if (QTest::currentTestFailed()) return;

        // One server: the eviction and the placement the fleet does not take.
        s = v->settings();
        s.instances = 1;
        s.policy = EvictionPolicy::S3Fifo;
        s.placement = Placement::Cascade;
        s.storeAfter = 1;
        s.writeQueue = true;
        s.sharedLinks = true;
        s.tierCapacityBytes = {2.0 * (1ull << 30), 64.0 * (1ull << 30)};
        s.admission = Admission::Breakeven;
        v->setSettings(s);
        QVERIFY(settleWorkload(*w));
        QVERIFY2(v->result()->replay && v->result()->error.isEmpty(),
                 qPrintable(v->result()->error));
        exportAndReplay(w.get(), *v->result(), dir.path(),
                        {"--policy s3fifo", "--placement cascade", "--admission breakeven",
                         "--servers 1", "--tier nvme-gen5=68719476736B",
                         "--shared-link dram-pcie5"},
                        {"--router", "--store-after"},
                        "Replayed with 3 GiB of HBM for KV on one server; Host DRAM (PCIe 5.0) 2 "
                        "GiB (reads and writes on one link), NVMe (PCIe 5.0) 64 GiB (reads and "
                        "writes on one link); s3fifo, cascade, breakeven admission; a write queue "
                        "per tier.");
    }
};

QTEST_MAIN(TestUiReportSettings)
#include "tst_ui_report_settings.moc"
