// The Workload tab's Live tab (docs/trace.md, "Replaying against live servers"): a live replay's
// folder beside the model's prediction of it. The measured curve is the TTFTs the folder holds,
// the predicted hit ratio the one counted here by hand, and every figure the one core's
// compareLiveReplay gives kvbe-cli trace replay --compare (one computation); a folder or engine
// that cannot be read is a sentence on the chart, not a curve.
#include "workload_test_support.h"

#include "kvbe/trace/live_compare.h"
#include "kvbe/ui/charts/live_chart.h"
#include "kvbe/ui/window/headless_export.h"
#include "kvbe/ui/workload/live_section.h"
#include "kvbe/ui/workload/workload_view.h"

#include <QCheckBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

using namespace kvbe;
using namespace kvbe::test;

namespace {

QByteArray readText(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeText(const QString& path, const std::string& text) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(QByteArray::fromStdString(text));
}

// Six requests of two 512-token blocks, a second apart; what one server did with them live: the
// sixth failed.
const std::vector<std::vector<int>> kBlocks = {{1, 2}, {1, 2}, {1, 3}, {4, 5}, {1, 2}, {6, 7}};
const double kTtft[] = {0.5, 0.1, 0.3, 0.6, 0.1};
const int kCached[] = {0, 1023, 512, 0, 1023};

void writeLive(const QString& dir, QString* tracePath) {
    *tracePath = dir + "/trace.jsonl";
    std::string rows;
    for (std::size_t i = 0; i < kBlocks.size(); ++i)
        rows += nlohmann::json({{"timestamp", i * 1000},
                                {"input_length", 1024},
                                {"output_length", 1},
                                {"hash_ids", kBlocks[i]}})
                    .dump() +
                "\n";
    writeText(*tracePath, rows);
    QVERIFY(QDir().mkpath(dir + "/live"));
    const nlohmann::json sum = {
        {"kvbe_probe", "replay"}, {"trace", tracePath->toStdString()},
        {"limit", nullptr},       {"duration_cap_s", nullptr},
        {"rate_scale", 1},        {"block_tokens", 512},
        {"requests", 6},          {"servers", nlohmann::json::array({{{"endpoint", "a"}}})},
        {"router", "round-robin"}};
    writeText(dir + "/live/replay.json", sum.dump());
    std::string live;
    for (int i = 0; i < 5; ++i)
        live += nlohmann::json({{"request", i},
                                {"server", 0},
                                {"prompt_tokens", 1024},
                                {"cached_tokens", kCached[i]},
                                {"ttft_s", kTtft[i]}})
                    .dump() +
                "\n";
    live += R"({"request": 5, "server": 0, "prompt_tokens": 1024, "ttft_s": null, "error": "x"})"
            "\n";
    writeText(dir + "/live/requests.jsonl", live);
}

} // namespace

class TestUiLive : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }

    void theLiveTabDrawsBothDistributions() {
        QTemporaryDir dir;
        QString trace;
        writeLive(dir.path(), &trace);
        auto w = makeWindow();
        auto* v = workloadViewOf(*w);
        QVERIFY(v->openTrace(trace));
        QVERIFY(settleWorkload(*w));
        auto* chart = v->findChild<LiveChart*>(QStringLiteral("workload-live"));
        auto* section = v->findChild<LiveSection*>(QStringLiteral("liveSection"));
        QVERIFY(chart && section);
        QVERIFY(!v->result()->live);
        QVERIFY(chart->title().contains(QStringLiteral("Live")));
        QCOMPARE(chart->seriesByKey(QStringLiteral("live/measured")), nullptr);

        WorkloadSettings s = v->settings();
        s.liveDir = (dir.path() + "/live").toStdString();
        v->setSettings(s);
        QVERIFY(settleWorkload(*w));
        const auto& res = *v->result();
        QVERIFY2(res.live, qPrintable(res.liveNote));
        const LiveComparison& c = *res.live;
        QCOMPARE(c.compared, std::size_t(5));
        QCOMPARE(c.failed, std::size_t(1));
        // By hand: one server, a GPU cache that holds all: requests 1 and 4 find both blocks
        // (1,023 tokens: the last is computed), request 2 its first; the engine said the same.
        const double hits = (1023.0 + 512 + 1023) / (5 * 1024);
        QCOMPARE(*c.predicted.tokenHitRatio, hits);
        QCOMPARE(*c.measured.tokenHitRatio, hits);
        QCOMPARE(c.measured.mean, (0.5 + 0.1 + 0.3 + 0.6 + 0.1) / 5);
        QCOMPARE(c.measured.p50, 0.3);

        // The measured curve: each request's TTFT (ms) at its share of requests.
        auto* measured =
            qobject_cast<QLineSeries*>(chart->seriesByKey(QStringLiteral("live/measured")));
        auto* predicted =
            qobject_cast<QLineSeries*>(chart->seriesByKey(QStringLiteral("live/predicted")));
        QVERIFY(measured && predicted);
        const double sortedMs[] = {100, 100, 300, 500, 600};
        QCOMPARE(measured->count(), 6); // 5 steps over 5 requests: the first twice
        for (int q = 0; q <= 5; ++q) {
            const int i = q * 4 / 5;
            QCOMPARE(measured->at(q).x(), sortedMs[i]);
            QCOMPARE(measured->at(q).y(), (i + 1) * 20.0);
        }
        QCOMPARE(predicted->at(predicted->count() - 1).x(), c.predictedSorted.back() * 1e3);

        // One computation: core's, as the CLI's --compare calls it, gives the same figures.
        auto run = readLiveReplay(s.liveDir);
        QVERIFY(run.ok());
        auto direct =
            compareLiveReplay(*run, *res.trace, *res.eval,
                              workloadRequest(res.settings, res.eval->scenario.tiers.size()),
                              std::nullopt, Admission::Always);
        QVERIFY(direct.ok());
        QCOMPARE(direct->predicted.mean, c.predicted.mean);
        QCOMPARE(direct->predicted.p90, c.predicted.p90);
        QCOMPARE(direct->mape, c.mape);
        const QString figures = section->figuresText();
        for (const auto& row : liveComparisonRows(*direct))
            for (const auto& cell : row)
                QVERIFY2(figures.contains(QString::fromStdString(cell).toHtmlEscaped()),
                         qPrintable(figures));
        QVERIFY(figures.contains(QStringLiteral("1 request failed live")));
        QVERIFY(chart->csv().startsWith(QStringLiteral("percentile,ttft_s_measured,")));
        QVERIFY(chart->csv().contains(QStringLiteral("\n100,0.6,")));

        // An engine the model does not know: a sentence, and no curve.
        auto* engine = section->findChild<QLineEdit*>(QStringLiteral("liveEngine"));
        engine->setText(QStringLiteral("vllm"));
        emit engine->editingFinished();
        QVERIFY(settleWorkload(*w));
        QVERIFY(!v->result()->live);
        QVERIFY2(v->result()->liveNote.contains(QStringLiteral("expected llama.cpp")),
                 qPrintable(v->result()->liveNote));
        QCOMPARE(chart->seriesByKey(QStringLiteral("live/measured")), nullptr);
        QVERIFY(!section->figuresText().size());

        // A folder that holds no live replay: the sentence names it.
        s = v->settings();
        s.engine.clear();
        s.liveDir = dir.path().toStdString();
        v->setSettings(s);
        QVERIFY(settleWorkload(*w));
        QVERIFY(!v->result()->live);
        QVERIFY2(v->result()->liveNote.contains(QStringLiteral("no replay.json there")),
                 qPrintable(v->result()->liveNote));
        QCOMPARE(engine->text(), QString());
    }

    // As routed live: two servers, the run sent requests 2 and 3 to server 1 and the rest to 0.
    // Ticked, the figures are compareLiveReplay's with asRouted (one computation); unticked,
    // round-robin's.
    void asRoutedFollowsTheBox() {
        QTemporaryDir dir;
        QString trace;
        writeLive(dir.path(), &trace);
        const QString live = dir.path() + "/live";
        nlohmann::json sum = nlohmann::json::parse(readText(live + "/replay.json"));
        sum["servers"] = nlohmann::json::array({{{"endpoint", "a"}}, {{"endpoint", "b"}}});
        writeText(live + "/replay.json", sum.dump());
        std::string rows;
        for (const QByteArray& line : readText(live + "/requests.jsonl").split('\n')) {
            if (line.isEmpty()) continue;
            auto row = nlohmann::json::parse(line.toStdString());
            const int i = row["request"].get<int>();
            row["server"] = i == 2 || i == 3 ? 1 : 0;
            rows += row.dump() + "\n";
        }
        writeText(live + "/requests.jsonl", rows);

        auto w = makeWindow();
        auto* v = workloadViewOf(*w);
        QVERIFY(v->openTrace(trace));
        QVERIFY(settleWorkload(*w));
        auto* section = v->findChild<LiveSection*>(QStringLiteral("liveSection"));
        auto* box = section->findChild<QCheckBox*>(QStringLiteral("liveAsRouted"));
        QVERIFY(box && !box->isChecked());
        v->setLiveReplay(live, QString());
        QVERIFY(settleWorkload(*w));
        QVERIFY2(v->result()->live, qPrintable(v->result()->liveNote));
        QVERIFY(!v->result()->live->asRouted);
        const double modelled = *v->result()->live->predicted.tokenHitRatio;

        box->setChecked(true);
        QVERIFY(settleWorkload(*w));
        QVERIFY(v->settings().liveAsRouted);
        const auto& res = *v->result();
        QVERIFY2(res.live && res.live->asRouted, qPrintable(res.liveNote));
        // By hand: server 0 takes requests 0, 1, 4 ({1,2} each) and 5 (failed): 1 and 4 find
        // 1,023 tokens; server 1 takes 2 ({1,3}) and 3 ({4,5}), cold. Round-robin puts 2 after 0
        // on server 0 (512 tokens) and 4 after 2 (1,023): 1,535 in all.
        QCOMPARE(*res.live->predicted.tokenHitRatio, (1023.0 + 1023) / (5 * 1024));
        QCOMPARE(modelled, (512.0 + 1023) / (5 * 1024));
        QVERIFY(std::abs(modelled - *res.live->predicted.tokenHitRatio) > 1e-6);
        auto run = readLiveReplay(live.toStdString());
        QVERIFY(run.ok());
        auto direct =
            compareLiveReplay(*run, *res.trace, *res.eval,
                              workloadRequest(res.settings, res.eval->scenario.tiers.size()),
                              std::nullopt, Admission::Always, true);
        QVERIFY(direct.ok());
        QCOMPARE(direct->predicted.mean, res.live->predicted.mean);
        QCOMPARE(direct->mape, res.live->mape);
        auto* chart = v->findChild<LiveChart*>(QStringLiteral("workload-live"));
        QVERIFY2(chart->plainTitle().contains(QStringLiteral("as routed live")),
                 qPrintable(chart->plainTitle()));
    }

    // kvbe --export --chart workload-live --live DIR draws it for a slide; --live on another
    // chart, or a folder with no live replay, is a sentence and no file.
    void theLiveChartExports() {
        QTemporaryDir dir;
        QString trace;
        writeLive(dir.path(), &trace);
        auto presets = Presets::loadBuiltin();
        QVERIFY(presets.ok());
        auto scenario = defaultScenario(*presets);
        QVERIFY(scenario.ok());
        HeadlessExport q;
        q.chart = QStringLiteral("workload-live");
        q.trace = trace;
        q.live = dir.path() + "/live";
        q.path = dir.path() + "/live.svg";
        const Status st = exportHeadless(*presets, *scenario, q);
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
        QFile f(q.path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll().contains("measured on the servers"));
        q.path = dir.path() + "/other.svg";
        q.chart = QStringLiteral("workload-ttft");
        const Status other = exportHeadless(*presets, *scenario, q);
        QVERIFY(!other.ok() && other.message().find("--live, --engine and --as-routed draw the "
                                                    "workload-live chart") != std::string::npos);
        q.chart = QStringLiteral("workload-live");
        q.live = dir.path();
        const Status none = exportHeadless(*presets, *scenario, q);
        QVERIFY(!none.ok() && none.message().find("no replay.json there") != std::string::npos);
        QVERIFY(!QFile::exists(q.path));
    }
};

QTEST_MAIN(TestUiLive)
#include "tst_ui_live.moc"
