// The Workload view's Capacity tab: the chart's curve, marks and sentence against D/D/n queueing
// worked out here for a trace of identical requests at a fixed rate, the search following the
// target field, the tiers and the prefill servers on a worker, Cancel, a bad target's sentence,
// and the chart's export in the window and headless.
#include "ui_test_support.h"

#include "../core/queueing_by_hand.h"

#include "kvbe/trace/trace_capacity.h"
#include "kvbe/ui/charts/capacity_chart.h"
#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/workload/capacity_panel.h"

#include <QElapsedTimer>
#include <QImage>
#include <QLineSeries>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>

#include <cmath>

using namespace kvbe;
using namespace kvbe::test;

namespace {

QString realTracePath() {
    return QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl");
}

WorkloadView* viewOf(MainWindow& w) {
    return child<WorkloadView>(&w, QStringLiteral("workloadView"));
}
CapacityPanel* panelOf(MainWindow& w) {
    return child<CapacityPanel>(&w, QStringLiteral("capacityPanel"));
}

// The window shown on the Workload tab's Capacity chart: the search runs while it is shown.
std::unique_ptr<MainWindow> shownOnCapacity() {
    auto w = makeWindow();
    w->show();
    if (!QTest::qWaitForWindowExposed(w.get())) qFatal("the window was not exposed");
    auto* v = viewOf(*w);
    tabsOf(w)->setCurrentWidget(v);
    child<QTabWidget>(v, QStringLiteral("workloadCharts"))->setCurrentWidget(panelOf(*w));
    return w;
}

// Until no read, replay, recompute or capacity search is running.
bool settle(MainWindow& w) {
    auto* v = viewOf(w);
    auto* p = panelOf(w);
    return QTest::qWaitFor(
        [&] {
            return !v->loading() && !v->replaying() && !p->computing() &&
                   !explorerOf(&w)->recomputePending();
        },
        120000);
}

// n requests of 8 blocks of their own (4,096 tokens, no reuse: every rule recomputes all of
// every prompt), one every gapMs milliseconds, as Mooncake JSON Lines.
QString writeFixedRate(const QTemporaryDir& dir, std::size_t n, int gapMs) {
    const QString path = dir.filePath(QStringLiteral("fixed-rate.jsonl"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    int block = 0;
    for (std::size_t i = 0; i < n; ++i) {
        QStringList ids;
        for (int b = 0; b < 8; ++b)
            ids << QString::number(block++);
        f.write(QStringLiteral("{\"timestamp\": %1, \"input_length\": 4096, \"output_length\": 1, "
                               "\"hash_ids\": [%2]}\n")
                    .arg(qint64(i) * gapMs)
                    .arg(ids.join(QStringLiteral(", ")))
                    .toUtf8());
    }
    return path;
}

// The small trace's queueing, set up from the window's scenario: each request takes s (the
// prefill of 4,096 tokens), and one arrives every 0.4·s (to the millisecond), so two servers
// fall behind and three keep up.
struct FixedRate {
    std::size_t n = 100;
    double s = 0;   // the prefill, seconds
    int gapMs = 0;  // between arrivals at S = 1
    double gap = 0; // the same in seconds
    double statistic(double S, int servers, double percentile) const {
        return percentileByHand(ddcTtfts(n, gap / S, s, servers), percentile);
    }
};
FixedRate fixedRateFor(MainWindow& w) {
    FixedRate f;
    f.s = reference(explorerOf(&w)->scenario()).eval.cost.tMiss(4096);
    f.gapMs = int(std::lround(0.4 * f.s * 1e3));
    if (f.gapMs < 1) qFatal("a 4,096-token prefill of %g s is too short for this test", f.s);
    f.gap = f.gapMs / 1e3;
    return f;
}

QString targetMs(const char* statistic, double seconds) {
    return QStringLiteral("%1=%2ms").arg(QLatin1String(statistic)).arg(std::lround(seconds * 1e3));
}

} // namespace

class TestUiCapacity : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }

    // The chart is a tab of the Workload view, from the chart table, with its field below.
    void theChartIsAWorkloadTab() {
        auto w = makeWindow();
        auto* v = viewOf(*w);
        auto* tabs = child<QTabWidget>(v, QStringLiteral("workloadCharts"));
        auto* panel = panelOf(*w);
        const int i = tabs->indexOf(panel);
        QVERIFY(i >= 0);
        QCOMPARE(tabs->tabText(i), QStringLiteral("Capacity"));
        // The cache-size sweep, the other capacity, keeps its key under its own title.
        QCOMPARE(tabs->tabText(tabs->indexOf(child<QWidget>(v, "workload-capacity"))),
                 QStringLiteral("Cache size"));
        auto* chart = child<SloCapacityChart>(panel, QStringLiteral("capacity"));
        QCOMPARE(panel->chart(), chart);
        QCOMPARE(chart->title(), QStringLiteral("Capacity"));
        QCOMPARE(chartKeys(ChartSource::Trace).count(QStringLiteral("capacity")), 1);
        QCOMPARE(child<QLineEdit>(panel, "capacityTarget")->text(), QStringLiteral("p99=5s"));
        // The window's Export menu acts on it when its tab is shown.
        tabs->setCurrentIndex(i);
        QCOMPARE(v->visibleChart(), static_cast<WorkloadChart*>(chart));
        QVERIFY(!panel->capacity());
    }

    // The curve, the marks and the sentence on the fixed-rate trace against D/D/n in closed form.
    void pointsAreTheClosedForm() {
        auto w = shownOnCapacity();
        const FixedRate f = fixedRateFor(*w);
        QTemporaryDir dir;
        const QString trace = writeFixedRate(dir, f.n, f.gapMs);
        auto* panel = panelOf(*w);
        const QString target = targetMs("p99", 3 * f.s);
        QVERIFY(panel->setTargetText(target));
        QSignalSpy computed(panel, &CapacityPanel::computed);
        QVERIFY(viewOf(*w)->openTrace(trace));
        QVERIFY(settle(*w));
        QCOMPARE(computed.count(), 1);
        const double X = std::lround(3 * f.s * 1e3) / 1e3;
        QCOMPARE(panel->target().seconds, X);

        // The fewest servers at the trace's rate, by hand.
        int servers = 0;
        while (f.statistic(1, ++servers, 99) > X) {
        }
        QCOMPARE(servers, 3);
        const QString sentence = child<QLabel>(panel, "capacitySentence")->text();
        QVERIFY2(sentence.contains(QStringLiteral("GPU-only caching needs %1 servers and optimal "
                                                  "%1 servers")
                                       .arg(servers)),
                 qPrintable(sentence));
        QVERIFY2(sentence.contains(QStringLiteral("On %1 servers").arg(servers)),
                 qPrintable(sentence));

        // The curve is drawn on those servers; every point of every rule is the closed form.
        auto* chart = panel->chart();
        QCOMPARE(panel->capacity()->instances, servers);
        QVERIFY(!panel->capacity()->instancesSet);
        for (int k = 0; k < 4; ++k) {
            auto* curve = chart->seriesByKey(QStringLiteral("rule/%1/curve").arg(k));
            QVERIFY(curve);
            QVERIFY(curve->count() >= 20);
            for (const QPointF& p : curve->points())
                QVERIFY2(sameValue(p.y(), f.statistic(p.x(), servers, 99), 1e-6),
                         qPrintable(QStringLiteral("rule %1 at S = %2: %3, expected %4")
                                        .arg(k)
                                        .arg(p.x())
                                        .arg(p.y())
                                        .arg(f.statistic(p.x(), servers, 99))));
            // The largest load held: the closed form holds there and fails just above.
            auto* held = chart->seriesByKey(QStringLiteral("rule/%1/held").arg(k));
            QVERIFY(held && held->count() == 1);
            const QPointF h = held->at(0);
            QVERIFY(sameValue(h.y(), f.statistic(h.x(), servers, 99), 1e-6));
            QVERIFY(h.y() <= X);
            const RuleLoadHeld& r = panel->capacity()->result->loadHeld[std::size_t(k)];
            QCOMPARE(r.rateScale, h.x());
            QVERIFY(f.statistic(r.failsAt, servers, 99) > X);
            QVERIFY(r.failsAt <= h.x() * 1.001 * (1 + 1e-9));
        }
        // The target as a horizontal line, the marks labelled.
        auto* line = chart->seriesByKey(QStringLiteral("target"));
        QVERIFY(line);
        QCOMPARE(line->at(0).y(), X);
        QCOMPARE(line->at(1).y(), X);
        QVERIFY(chart->labelText(QStringLiteral("held/0"))
                    .startsWith(QStringLiteral("gpu-only, always, breakeven, optimal: S = ")));

        // Its export and its data.
        const QString png = dir.filePath(QStringLiteral("capacity.png"));
        const Status st = exportChart(*chart, png, QSize(900, 560));
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
        QCOMPARE(QImage(png).size(), QSize(900, 560));
        const QStringList csv = chart->csv().split(QLatin1Char('\n'));
        QCOMPARE(csv.front(), QStringLiteral("rate_scale,requests_per_s,p99_ttft_s_gpu-only,p99_"
                                             "ttft_s_always,p99_ttft_s_breakeven,p99_ttft_s_"
                                             "optimal"));
        const QStringList row = csv[1].split(QLatin1Char(','));
        QVERIFY(sameValue(row[2].toDouble(), f.statistic(row[0].toDouble(), servers, 99), 1e-6));
        QVERIFY(chart->csv().contains(QStringLiteral("# gpu-only servers_needed=3 ")));
    }

    // The target field re-runs the search; a newer target cancels a running search.
    void aNewTargetSearchesAgain() {
        auto w = shownOnCapacity();
        const FixedRate f = fixedRateFor(*w);
        QTemporaryDir dir;
        QVERIFY(viewOf(*w)->openTrace(writeFixedRate(dir, f.n, f.gapMs)));
        QVERIFY(settle(*w));
        auto* panel = panelOf(*w);
        auto* field = child<QLineEdit>(panel, "capacityTarget");
        auto* chart = panel->chart();
        QSignalSpy computed(panel, &CapacityPanel::computed);

        // Typed, then Enter: p50 within 1.5·s. On two servers request i waits
        // floor(i/2)·(s − 2·gap), so the median (rank 49.5) waits 24.5·0.2·s: two fail.
        field->selectAll();
        QTest::keyClicks(field, targetMs("p50", 1.5 * f.s));
        QTest::keyClick(field, Qt::Key_Return);
        QVERIFY(settle(*w));
        QCOMPARE(computed.count(), 1);
        QVERIFY(panel->capacity()->target.percentile == 50);
        QVERIFY(f.statistic(1, 2, 50) > 1.5 * f.s);
        QCOMPARE(panel->capacity()->instances, 3);
        QCOMPARE(chart->seriesByKey(QStringLiteral("target"))->at(0).y(),
                 std::lround(1.5 * f.s * 1e3) / 1e3);

        // Below the prefill itself: no number of servers holds it, and the sentence says so.
        QVERIFY(panel->setTargetText(targetMs("p99", 0.5 * f.s)));
        QVERIFY(settle(*w));
        QCOMPARE(computed.count(), 2);
        const QString sentence = child<QLabel>(panel, "capacitySentence")->text();
        QVERIFY2(sentence.contains(QStringLiteral("no number of servers is enough")),
                 qPrintable(sentence));
        QVERIFY(chart->seriesByKey(QStringLiteral("rule/0/floor")));
        QVERIFY(
            sameValue(chart->seriesByKey(QStringLiteral("rule/0/floor"))->at(0).y(), f.s, 1e-6));

        // Two targets in a row: the second stops the first's search, and only it is shown.
        QVERIFY(panel->setTargetText(QStringLiteral("p90=2s")));
        QVERIFY(panel->computing());
        QVERIFY(panel->setTargetText(targetMs("p99", 3 * f.s)));
        QVERIFY(settle(*w));
        QCOMPARE(computed.count(), 3);
        QCOMPARE(panel->capacity()->target.percentile, 99.0);
        QCOMPARE(panel->capacity()->target.seconds, std::lround(3 * f.s * 1e3) / 1e3);
        QCOMPARE(panel->capacity()->instances, 3);
        // The same target again searches nothing.
        const auto before = panel->capacity();
        QTest::keyClick(field, Qt::Key_Return);
        QVERIFY(!panel->computing());
        QCOMPARE(panel->capacity(), before);
    }

    // The search follows the view: the tiers and the prefill servers re-run it, the admission
    // rule (which the search does not read) does not.
    void theSearchFollowsTheView() {
        auto w = shownOnCapacity();
        const FixedRate f = fixedRateFor(*w);
        QTemporaryDir dir;
        auto* v = viewOf(*w);
        QVERIFY(v->openTrace(writeFixedRate(dir, f.n, f.gapMs)));
        auto* panel = panelOf(*w);
        QVERIFY(panel->setTargetText(targetMs("p99", 3 * f.s)));
        QVERIFY(settle(*w));
        QSignalSpy computed(panel, &CapacityPanel::computed);

        child<QSlider>(v, "workloadTier1")->setValue(36); // 256 GiB of the first tier
        QVERIFY(settle(*w));
        QCOMPARE(computed.count(), 1);
        QCOMPARE(panel->capacity()->workload, v->result());
        QCOMPARE(panel->capacity()->workload->config.tiers.front().capacityBytes,
                 256.0 * 1024 * 1024 * 1024);

        child<QComboBox>(v, "workloadAdmission")->setCurrentText("always");
        QVERIFY(settle(*w));
        QCOMPARE(computed.count(), 1);

        // Four servers set in the view: the curve is drawn on them.
        child<QSpinBox>(v, "workloadInstances")->setValue(4);
        QVERIFY(settle(*w));
        QCOMPARE(computed.count(), 2);
        QCOMPARE(panel->capacity()->instances, 4);
        QVERIFY(panel->capacity()->instancesSet);
        auto* curve = panel->chart()->seriesByKey(QStringLiteral("rule/0/curve"));
        for (const QPointF& p : curve->points())
            QVERIFY(sameValue(p.y(), f.statistic(p.x(), 4, 99), 1e-6));
        // The servers needed at the trace's rate do not depend on the servers set.
        QCOMPARE(panel->capacity()->result->serversOf("gpu-only")->servers, std::optional<int>(3));

        // The scenario: a new evaluation, a new search.
        Scenario s = explorerOf(w)->scenario();
        s.utilisation = s.utilisation / 2;
        explorerOf(w)->edit(s, "u");
        w->refreshNow();
        QVERIFY(settle(*w));
        QCOMPARE(computed.count(), 3);
        QCOMPARE(panel->capacity()->workload->eval->scenario.utilisation, s.utilisation);
    }

    // Cancel stops the search on the conversation trace; it does not start again by itself,
    // and Enter in the field does.
    void cancelStopsTheSearch() {
        QVERIFY2(QFile::exists(realTracePath()), qPrintable(realTracePath() + " is missing"));
        auto w = shownOnCapacity();
        auto* panel = panelOf(*w);
        QSignalSpy computed(panel, &CapacityPanel::computed);
        QSignalSpy cancelled(panel, &CapacityPanel::cancelled);
        QVERIFY(viewOf(*w)->openTrace(realTracePath()));
        QVERIFY(QTest::qWaitFor([&] { return panel->computing(); }, 120000));
        auto* cancel = child<QPushButton>(panel, "capacityCancel");
        QVERIFY(cancel->isVisible());
        QVERIFY(child<QProgressBar>(panel, "capacityProgress")->isVisible());
        QElapsedTimer clock;
        clock.start();
        cancel->click();
        QVERIFY(QTest::qWaitFor([&] { return !panel->computing(); }, 30000));
        qInfo("the search stopped %lld ms after Cancel", clock.elapsed());
        QCOMPARE(cancelled.count(), 1);
        QCOMPARE(computed.count(), 0);
        QVERIFY(!panel->capacity());
        QVERIFY(!cancel->isVisible());
        QVERIFY(child<QLabel>(panel, "capacityStatus")->text().startsWith("Cancelled"));
        QTest::qWait(300);
        QVERIFY(!panel->computing());

        QTest::keyClick(child<QLineEdit>(panel, "capacityTarget"), Qt::Key_Return);
        QVERIFY(panel->computing());
        panel->cancel();
        QVERIFY(QTest::qWaitFor([&] { return !panel->computing(); }, 30000));
        QCOMPARE(cancelled.count(), 2);
    }

    // A target that does not parse: its sentence in the panel, the last target kept, no search.
    void aBadTargetGivesASentence_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("says");
        QTest::newRow("no unit") << "p99=2"
                                 << "has no unit";
        QTest::newRow("percentile 150") << "p150=2s"
                                        << "outside 0–100";
        QTest::newRow("no statistic") << "2s"
                                      << "expected STATISTIC=DURATION";
    }
    void aBadTargetGivesASentence() {
        QFETCH(QString, text);
        QFETCH(QString, says);
        auto w = shownOnCapacity();
        auto* panel = panelOf(*w);
        QVERIFY(viewOf(*w)->openTrace(QStringLiteral(KVBE_FIXTURES "/traces/hand.jsonl")));
        QVERIFY(settle(*w));
        const auto before = panel->capacity();
        QVERIFY(before);
        auto* field = child<QLineEdit>(panel, "capacityTarget");
        field->selectAll();
        QTest::keyClicks(field, text);
        QTest::keyClick(field, Qt::Key_Return);
        auto* error = child<QLabel>(panel, "capacityError");
        QVERIFY(error->isVisible());
        QVERIFY2(error->text().startsWith("Latency target '" + text + "'") &&
                     error->text().contains(says),
                 qPrintable(error->text()));
        QVERIFY(!panel->computing());
        QCOMPARE(panel->capacity(), before);
        QCOMPARE(panel->target().seconds, 5.0);
        // A search with the last target (here for new tiers) keeps the sentence while the field
        // holds the bad text.
        child<QSlider>(viewOf(*w), "workloadTier1")->setValue(36);
        QVERIFY(settle(*w));
        QVERIFY(panel->capacity() != before);
        QVERIFY2(error->isVisible() && error->text().contains(says), qPrintable(error->text()));
        // A good one clears it.
        QVERIFY(panel->setTargetText(QStringLiteral("p90=4s")));
        QVERIFY(!error->isVisible());
        QVERIFY(settle(*w));
        QCOMPARE(panel->capacity()->target.percentile, 90.0);
    }

    // kvbe --export --chart capacity, without a display; --slo sets its target, and a bad one
    // or one for another chart is refused with a sentence.
    void exportsHeadless() {
        QTemporaryDir dir;
        const QString trace = writeFixedRate(dir, 100, 40);
        const QString out = dir.filePath(QStringLiteral("capacity.png"));
        auto run = [&](const QStringList& args) {
            QProcess p;
            auto env = QProcessEnvironment::systemEnvironment();
            env.remove("DISPLAY");
            env.remove("QT_QPA_PLATFORM");
            p.setProcessEnvironment(env);
            p.start(QStringLiteral(KVBE_GUI_PATH), args);
            if (!p.waitForFinished(120000)) qFatal("kvbe --export did not finish");
            return std::pair{p.exitCode(), QString::fromUtf8(p.readAllStandardError())};
        };
        auto [rc, err] = run({"--export", out, "--chart", "capacity", "--trace", trace, "--size",
                              "800x450", "--slo", "p90=800ms"});
        QVERIFY2(rc == 0, qPrintable(err));
        QCOMPARE(QImage(out).size(), QSize(800, 450));
        std::tie(rc, err) =
            run({"--export", out, "--chart", "capacity", "--trace", trace, "--slo", "p99=2"});
        QCOMPARE(rc, 1);
        QVERIFY2(err.contains("--slo 'p99=2': the value '2' has no unit"), qPrintable(err));
        std::tie(rc, err) =
            run({"--export", out, "--chart", "workload-ttft", "--trace", trace, "--slo", "p99=2s"});
        QCOMPARE(rc, 1);
        QVERIFY2(err.contains("--slo sets the latency target of the capacity chart"),
                 qPrintable(err));
    }
};

QTEST_MAIN(TestUiCapacity)
#include "tst_ui_capacity.moc"
