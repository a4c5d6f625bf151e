// The Workload tab's Plan and Capacity chart on a fleet: above one prefill server they plan and
// count the fleet the tab replays (a GPU cache on each server behind its router, each tier on
// every node), as kvbe-cli trace plan and trace capacity do with --servers N --router NAME; the
// plan's answer reads as a purchase per node.
#include "plan_test_support.h"

#include "kvbe/trace/trace_capacity.h"
#include "kvbe/ui/charts/plan_chart.h"
#include "kvbe/ui/workload/capacity_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QSpinBox>
#include <QTabWidget>

using namespace kvbe;
using namespace kvbe::test;

namespace {

QJsonObject cliJson(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(KVBE_CLI_PATH), args);
    if (!p.waitForFinished(300000) || p.exitCode() != 0)
        qFatal("kvbe-cli %s: %s", qPrintable(args.join(' ')), p.readAllStandardError().constData());
    return QJsonDocument::fromJson(p.readAllStandardOutput()).object();
}

// Where the window's plan differs from trace plan's JSON (its configurations, its front's
// descriptions, costs and mean TTFTs, its recommendation); empty where it does not.
QString sameAsCli(const QJsonObject& o, const PlanResult& r) {
    if (o["configurations"].toInt() != int(r.points.size()))
        return QStringLiteral("configurations: %1 against %2")
            .arg(o["configurations"].toInt())
            .arg(r.points.size());
    const auto front = o["front"].toArray();
    if (front.size() != qsizetype(r.front.size())) return QStringLiteral("the front's size");
    for (qsizetype i = 0; i < front.size(); ++i) {
        const auto f = front[i].toObject();
        const PlanPoint& p = r.points[r.front[std::size_t(i)]];
        const QString d = QString::fromStdString(describePlanPoint(p));
        if (f["description"].toString() != d || f["capex_usd"].toDouble() != p.capexUsd ||
            f["ttft_mean_s"].toDouble() != p.ttftMeanS)
            return QStringLiteral("front row %1: %2 against %3")
                .arg(i)
                .arg(f["description"].toString(), d);
    }
    if (!r.recommended) return QStringLiteral("no recommendation");
    const QString rec = QString::fromStdString(describePlanPoint(r.points[*r.recommended]));
    if (o["recommended"].toObject()["description"].toString() != rec)
        return QStringLiteral("recommended: %1 against %2")
            .arg(o["recommended"].toObject()["description"].toString(), rec);
    return {};
}

// The tab's fleet: 4 servers, 2 a node, behind sglang, writes keeping up.
void makeFleet(WorkloadView* v) {
    child<QCheckBox>(v, QStringLiteral("workloadWriteQueue"))->setChecked(false);
    child<QSpinBox>(v, QStringLiteral("workloadInstances"))->setValue(4);
    child<QComboBox>(v, QStringLiteral("workloadRouter"))->setCurrentText(QStringLiteral("sglang"));
    child<QSpinBox>(v, QStringLiteral("workloadNodeServers"))->setValue(2);
}

// The small shared-prefix trace (40 requests, written in dir) open on the tab's fleet, each step
// settled: its path, or empty where a step did not finish.
QString openOnFleet(MainWindow& w, const QTemporaryDir& dir) {
    const QString trace = writeSharedPrefix(dir, 40);
    if (!viewOf(w)->openTrace(trace) || !settle(w)) return {};
    makeFleet(viewOf(w));
    return settle(w) ? trace : QString();
}

} // namespace

class TestUiPlanFleet : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }

    // The Plan: the same configurations, costs and recommendation as trace plan of that fleet,
    // said per node, with the fleet line.
    void thePlanIsTheFleetsPlan() {
        QTemporaryDir dir;
        auto w = shownOnPlan();
        auto* v = viewOf(*w);
        auto* s = sectionOf(*w);
        const QString trace = openOnFleet(*w, dir);
        QVERIFY(!trace.isEmpty());
        QVERIFY(s->plan() && s->plan()->result);
        const PlanResult& r = *s->plan()->result;
        QCOMPARE(r.fleetServers, 4);
        QCOMPARE(r.fleetNodes, 2);
        QCOMPARE(r.fleetRouter, std::string("sglang"));

        const auto o = cliJson({"trace", "plan", trace, "--servers", "4", "--router", "sglang",
                                "--node-servers", "2", "--no-write-queue", "--output", "json"});
        QVERIFY2(sameAsCli(o, r).isEmpty(), qPrintable(sameAsCli(o, r)));
        QCOMPARE(o["why"].toString(), QString::fromStdString(r.why));

        const QString mode = child<QLabel>(s, QStringLiteral("planMode"))->text();
        QVERIFY2(mode.contains(QStringLiteral("Fleet: 4 servers on 2 nodes (2 a node) behind "
                                              "sglang, a GPU cache each")),
                 qPrintable(mode));
        const QString sentence = child<QLabel>(s, QStringLiteral("planSentence"))->text();
        const QString lead = r.points[*r.recommended].offload()
                                 ? QStringLiteral("<b>Recommended: On each of the 2 "
                                                  "nodes, ")
                                 : QStringLiteral("<b>Recommended: GPU-only "
                                                  "caching, sglang");
        QVERIFY2(sentence.startsWith(lead), qPrintable(sentence));

        // All routers: a row of GPU-only caching behind each other router, as --routers all.
        auto* routers = child<QCheckBox>(s, QStringLiteral("planRouters"));
        QVERIFY(routers->isEnabled());
        routers->setChecked(true);
        QVERIFY(settle(*w));
        const PlanResult& all = *s->plan()->result;
        const auto o2 = cliJson({"trace", "plan", trace, "--servers", "4", "--router", "sglang",
                                 "--node-servers", "2", "--no-write-queue", "--routers", "all",
                                 "--output", "json"});
        QCOMPARE(o2["configurations"].toInt(), int(all.points.size()));
        QStringList others;
        for (const PlanPoint& p : all.points)
            if (p.otherRouter) others << QString::fromStdString(describePlanPoint(p));
        QCOMPARE(others.size(), 6); // every router but sglang
        QVERIFY(others.contains(QStringLiteral("GPU-only caching, round-robin")));
        QCOMPARE(o2["why"].toString(), QString::fromStdString(all.why));
        // Routers slower than sglang (round-robin spreads the shared prefix) are drawn but left
        // below the chart's home range (its note names them where the title has room).
        auto* chart = w->findChild<PlanChart*>();
        QVERIFY(chart);
        double worst = 0;
        QStringList slower;
        for (const PlanPoint& p : all.points)
            if (p.otherRouter && PlanChart::ttftSavedS(all, p) < 0 && !p.onTtftFront &&
                !p.onGpuHoursFront) {
                worst = std::min(worst, PlanChart::ttftSavedS(all, p) * 1e3);
                slower << QString::fromStdString(p.router);
            }
        QVERIFY(slower.contains(QStringLiteral("round-robin")));
        chart->resetZoom();
        QVERIFY2(chart->visibleRange().top() > worst && chart->visibleRange().bottom() > worst,
                 qPrintable(QStringLiteral("%1 .. %2, worst %3")
                                .arg(chart->visibleRange().top())
                                .arg(chart->visibleRange().bottom())
                                .arg(worst)));

        // One server: no fleet, no routers to compare.
        child<QSpinBox>(v, QStringLiteral("workloadInstances"))->setValue(1);
        QVERIFY(settle(*w));
        QVERIFY(!routers->isEnabled());
        QVERIFY(!s->allRouters());
        QCOMPARE(s->plan()->result->fleetServers, 0);
    }

    // A tier the tab pools: the plan asks for the price of a node's link to a pool, then weighs
    // a pool beside each tier on every node, as trace plan --placements local,pooled does with
    // the same prices (the window's scenario, saved); Undo takes the price and the pool back.
    void aPooledTierPlansAPool() {
        QTemporaryDir dir;
        auto w = shownOnPlan();
        auto* v = viewOf(*w);
        auto* s = sectionOf(*w);
        const QString trace = openOnFleet(*w, dir);
        QVERIFY(!trace.isEmpty());
        // No pool, no link to price.
        QVERIFY(!s->findChild<QLineEdit*>(QStringLiteral("planPrice-link-net-400g")));
        child<QCheckBox>(v, QStringLiteral("workloadTier2Pooled"))->setChecked(true);
        QVERIFY(settle(*w));
        auto pools = [&] {
            int n = 0;
            for (const PlanPoint& p : s->plan()->result->points)
                n += p.pooled() ? 1 : 0;
            return n;
        };
        QVERIFY(s->plan() && s->plan()->result);
        QCOMPARE(pools(), 0);
        auto* mode = child<QLabel>(s, QStringLiteral("planMode"));
        QVERIFY2(mode->text().contains(QStringLiteral("the net-400g link to a pool has no price")),
                 qPrintable(mode->text()));
        auto* link = child<QLineEdit>(s, QStringLiteral("planPrice-link-net-400g"));
        QVERIFY(link->text().isEmpty());

        const Scenario before = explorerOf(w.get())->scenario();
        link->setText(QStringLiteral("3000"));
        emit link->editingFinished();
        QVERIFY(settle(*w));
        QCOMPARE(explorerOf(w.get())->scenario().prices.link.at("net-400g").usd, 3000.0);
        const PlanResult& r = *s->plan()->result;
        QVERIFY(pools() > 0);
        for (const PlanPoint& p : r.points)
            if (p.pooled()) QCOMPARE(p.linksUsd, 2 * 3000.0); // a link on each of the 2 nodes
        QVERIFY2(mode->text().contains(QStringLiteral("also planned with a pool for the fleet")),
                 qPrintable(mode->text()));
        // The cost axis counts the links too.
        auto* chart = w->findChild<PlanChart*>();
        QVERIFY(chart);
        const QString axis = chart->chart()->axes(Qt::Horizontal).first()->titleText();
        QVERIFY2(axis.contains(QStringLiteral("links to a pool")), qPrintable(axis));

        const QString file = dir.filePath(QStringLiteral("priced.kvbe.json"));
        {
            QFile f(file);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(scenarioToJson(explorerOf(w.get())->scenario())));
        }
        const auto o = cliJson({"trace", "plan", trace, "--scenario", file, "--servers", "4",
                                "--router", "sglang", "--node-servers", "2", "--no-write-queue",
                                "--placements", "local,pooled", "--output", "json"});
        QVERIFY2(sameAsCli(o, r).isEmpty(), qPrintable(sameAsCli(o, r)));

        explorerOf(w.get())->undoStack()->undo();
        QVERIFY(settle(*w));
        QCOMPARE(explorerOf(w.get())->scenario(), before);
        QCOMPARE(pools(), 0);
        QVERIFY(link->text().isEmpty());
        QVERIFY(!chart->chart()
                     ->axes(Qt::Horizontal)
                     .first()
                     ->titleText()
                     .contains(QStringLiteral("links")));
    }

    // The Capacity chart: the load each rule holds on the tab's 4 servers is the fleet's
    // (traceCapacity on the tab's replay, a fleet), not that of 4 servers sharing one cache.
    void theCapacityIsTheFleets() {
        auto w = makeWindow();
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        auto* v = viewOf(*w);
        tabsOf(w)->setCurrentWidget(v);
        auto* panel = child<CapacityPanel>(w.get(), QStringLiteral("capacityPanel"));
        child<QTabWidget>(v, QStringLiteral("workloadCharts"))->setCurrentWidget(panel);
        auto settled = [&] {
            return QTest::qWaitFor(
                [&] {
                    return !v->loading() && !v->replaying() && !panel->computing() &&
                           !explorerOf(w.get())->recomputePending();
                },
                120000);
        };
        QVERIFY(v->openTrace(QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl")));
        QVERIFY(settled());
        makeFleet(v);
        QVERIFY(settled());
        const auto c = panel->capacity();
        QVERIFY(c && c->result && c->workload);
        QCOMPARE(c->instances, 4);
        QVERIFY(c->instancesSet);
        const ReplayConfig& fleet = c->workload->config;
        QVERIFY(fleet.isFleet());

        CapacityRequest q;
        q.target = c->target;
        q.instances = 4;
        q.serversNeeded = false;
        auto own = traceCapacity(*c->workload->trace, c->workload->eval->cost, fleet, q);
        ReplayConfig shared = fleet;
        shared.fleet.enabled = false;
        auto one = traceCapacity(*c->workload->trace, c->workload->eval->cost, shared, q);
        QVERIFY(own.ok() && one.ok());
        bool differs = false;
        for (const auto& h : c->result->loadHeld) {
            QCOMPARE(h.rateScale, own->loadHeldOf(h.rule)->rateScale);
            differs |= h.rateScale != one->loadHeldOf(h.rule)->rateScale;
        }
        QVERIFY(differs); // servers sharing one cache are another answer
    }
};

QTEST_MAIN(TestUiPlanFleet)
#include "tst_ui_plan_fleet.moc"
