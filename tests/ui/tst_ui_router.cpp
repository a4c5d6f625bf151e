// The Workload tab's fleet (docs/workload-model.md, "The fleet"): above one prefill server the
// replay is a fleet behind the router the view names, each offload tier on every node or
// pooled; the answer names the router, and every figure is the replay core gives for the same
// request (one computation, as kvbe-cli trace replay's).
#include "workload_test_support.h"

#include "kvbe/trace/fleet.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_setup.h"
#include "kvbe/trace/trace_sim.h"
#include "kvbe/ui/charts/router_chart.h"
#include "kvbe/ui/workload/plan_section.h"
#include "kvbe/ui/workload/workload_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QScatterSeries>
#include <QSpinBox>

using namespace kvbe;
using namespace kvbe::test;

class TestUiRouter : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }

    // The conversation trace: the router and the servers per node are off without a fleet; 8
    // servers behind sglang with NVMe pooled give the replay core gives for that request, and
    // the answer says so.
    void theFleetIsTheRequestsReplay() {
        QVERIFY2(QFile::exists(conversationTracePath()),
                 qPrintable(conversationTracePath() + " is missing"));
        auto w = makeWindow();
        auto* v = workloadViewOf(*w);
        QVERIFY(v->openTrace(conversationTracePath()));
        QVERIFY(settleWorkload(*w));
        auto* router = child<QComboBox>(v, QStringLiteral("workloadRouter"));
        auto* perNode = child<QSpinBox>(v, QStringLiteral("workloadNodeServers"));
        auto* pooled = child<QCheckBox>(v, QStringLiteral("workloadTier2Pooled"));
        QVERIFY(!router->isEnabled() && !perNode->isEnabled() && !pooled->isEnabled());
        QVERIFY(!v->result()->replay->fleet);

        child<QCheckBox>(v, QStringLiteral("workloadWriteQueue"))->setChecked(false);
        child<QSpinBox>(v, QStringLiteral("workloadInstances"))->setValue(8);
        QVERIFY(settleWorkload(*w));
        QVERIFY(router->isEnabled() && perNode->isEnabled() && pooled->isEnabled());
        router->setCurrentText(QStringLiteral("sglang"));
        QVERIFY(settleWorkload(*w));
        pooled->setChecked(true);
        QVERIFY(settleWorkload(*w));

        const auto& res = *v->result();
        QVERIFY(res.replay && res.replay->fleet);
        QCOMPARE(res.replay->fleet->router, std::string("sglang"));
        QCOMPARE(res.replay->fleet->servers, 8);
        QCOMPARE(res.replay->tiers.size(), std::size_t(3));
        QVERIFY(!res.replay->tiers[1].pooled && res.replay->tiers[1].copies == 8);
        QVERIFY(res.replay->tiers[2].pooled && res.replay->tiers[2].copies == 1);
        const QString answer = child<QLabel>(v, QStringLiteral("workloadSummary"))->text();
        QVERIFY2(answer.contains(QStringLiteral("on each of 8 servers behind sglang")),
                 qPrintable(answer));

        // The same request through core: the same figures.
        ReplayRequest q = workloadRequest(res.settings, res.eval->scenario.tiers.size());
        auto setup = replaySetup(q, *res.eval, res.trace->summary.blockTokens);
        QVERIFY(setup.ok());
        QVERIFY(setup->config.fleet.enabled && setup->config.fleet.pooled[1]);
        auto r = replayTrace(*res.trace, res.eval->cost, setup->config);
        QVERIFY(r.ok());
        QCOMPARE(r->anyTier.tokenWeighted, res.replay->anyTier.tokenWeighted);
        QCOMPARE(r->fleet->requests, res.replay->fleet->requests);
        QCOMPARE(r->rule("optimal")->ttft.p99, res.replay->rule("optimal")->ttft.p99);

        // The Routers chart: a point per router, the sglang one the replay above.
        auto* chart = v->findChild<RouterChart*>(QStringLiteral("workload-routers"));
        QVERIFY(chart);
        auto* any =
            qobject_cast<QScatterSeries*>(chart->seriesByKey(QStringLiteral("routers/any")));
        QVERIFY(any);
        QCOMPARE(any->count(), int(routerNames().size()));
        QCOMPARE(res.routers.size(), routerNames().size());
        std::size_t at = 0;
        while (res.routers[at].router != "sglang")
            ++at;
        QCOMPARE(any->at(int(at)).y(), res.replay->anyTier.tokenWeighted * 100);
        QCOMPARE(any->at(int(at)).x(), res.replay->rule("optimal")->ttft.p99);
        QVERIFY(chart->csv().contains(QStringLiteral("\nsglang,")));

        // Back to one server: no fleet, the controls off again.
        child<QSpinBox>(v, QStringLiteral("workloadInstances"))->setValue(1);
        QVERIFY(settleWorkload(*w));
        QVERIFY(!v->result()->replay->fleet);
        QVERIFY(!router->isEnabled() && !pooled->isEnabled());
        QVERIFY(v->result()->routers.empty());
        QCOMPARE(chart->seriesByKey(QStringLiteral("routers/any")), nullptr);
    }
};

QTEST_MAIN(TestUiRouter)
#include "tst_ui_router.moc"
